"""Workflows built on the core: batched parameter sweeps."""

from .dissipation_sweep import SweepConfig, batch_dissipation, cycle_metrics, dissipation_sweep, make_law
from .sharding import lane_devices, sharded_vmap
from .sensitivity import finite_difference_gradient, parameter_names, sensitivity, sensitivity_map
from .engine import run_sweep
from .registry import SYSTEMS, SystemSpec, system_spec
from .system_sweep import system_sweep
from .metrics import window_metrics
from .._applications.quake import default_eps, find_record, fragility_sweep, quake_response
from .fit import FIT_SYSTEMS, FitResult, fit
from .measurement import Measurement, load_measurement

__all__ = ["SYSTEMS", "SystemSpec", "system_spec", "system_sweep", "window_metrics", "SweepConfig", "batch_dissipation", "lane_devices", "sharded_vmap", "cycle_metrics", "default_eps", "dissipation_sweep", "finite_difference_gradient",
           "find_record", "fragility_sweep", "make_law", "parameter_names", "quake_response", "run_sweep", "sensitivity",
           "sensitivity_map", "FIT_SYSTEMS", "FitResult", "Measurement", "fit", "load_measurement"]
