"""Observables: functions of a trajectory."""

from .dissipation import dissipation_per_cycle, friction_dissipation_at
from .energy import energy_balance_residual, relative_energy_residual
from .stick import (
    STICK_TOL,
    chatter_count,
    rest_position,
    rk4_stage_forces,
    stick_fraction,
    stick_intervals,
    stick_mask,
)
from .window import (
    WINDOW_OBSERVABLES,
    final_position,
    peak_slip,
    window_dissipation,
    window_energy_residual,
)

__all__ = [
    "STICK_TOL",
    "WINDOW_OBSERVABLES",
    "final_position",
    "peak_slip",
    "window_dissipation",
    "window_energy_residual",
    "chatter_count",
    "dissipation_per_cycle",
    "energy_balance_residual",
    "friction_dissipation_at",
    "relative_energy_residual",
    "rest_position",
    "rk4_stage_forces",
    "stick_fraction",
    "stick_intervals",
    "stick_mask",
]
