"""Workflows built on the core: batched parameter sweeps."""

from .dissipation_sweep import SweepConfig, cycle_metrics, dissipation_sweep, make_law
from .quake import default_eps, find_record, fragility_sweep, quake_response

__all__ = ["SweepConfig", "cycle_metrics", "default_eps", "dissipation_sweep", "find_record", "fragility_sweep",
           "make_law", "quake_response"]
