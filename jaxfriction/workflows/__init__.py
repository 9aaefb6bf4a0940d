"""Workflows built on the core: batched parameter sweeps."""

from .dissipation_sweep import SweepConfig, cycle_metrics, dissipation_sweep, make_law

__all__ = ["SweepConfig", "cycle_metrics", "dissipation_sweep", "make_law"]
