"""Workflows built on the core: batched parameter sweeps."""

from .dissipation_sweep import SweepConfig, cycle_metrics, dissipation_sweep, make_law
from .sensitivity import finite_difference_gradient, parameter_names, sensitivity, sensitivity_map
from .engine import run_sweep
from .quake import default_eps, find_record, fragility_sweep, quake_response

__all__ = ["SweepConfig", "cycle_metrics", "default_eps", "dissipation_sweep", "finite_difference_gradient",
           "find_record", "fragility_sweep", "make_law", "parameter_names", "quake_response", "run_sweep", "sensitivity",
           "sensitivity_map"]
