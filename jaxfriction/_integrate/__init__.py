"""Integrators: solver objects behind :func:`simulate`, the RK4 scan, grids, status codes."""

from .grid import fixed_grid
from .rk4 import rk4_scan, rk4_step
from .saveat import SaveAt
from .simulate import as_solver, simulate
from .solvers import MAX_SAVED_BYTES, RK4, AbstractSolver, Diffrax, FixedStepSolver
from .stability import RK4_STABILITY_LIMIT, stick_band_rate
from .status import (
    STATUS_EVENT_BUDGET,
    STATUS_INVALID_PARAMETER,
    STATUS_MEANINGS,
    STATUS_NONFINITE,
    STATUS_NONFINITE_GRADIENT,
    STATUS_NOT_PERIODIC,
    STATUS_OK,
    STATUS_SOLVER_FAILED,
    STATUS_UNSTABLE_STEP,
)
from .trajectory import Trajectory

__all__ = [
    "MAX_SAVED_BYTES",
    "RK4",
    "RK4_STABILITY_LIMIT",
    "STATUS_EVENT_BUDGET",
    "STATUS_INVALID_PARAMETER",
    "STATUS_MEANINGS",
    "STATUS_NONFINITE",
    "STATUS_NONFINITE_GRADIENT",
    "STATUS_NOT_PERIODIC",
    "STATUS_OK",
    "STATUS_SOLVER_FAILED",
    "STATUS_UNSTABLE_STEP",
    "AbstractSolver",
    "FixedStepSolver",
    "Diffrax",
    "SaveAt",
    "Trajectory",
    "as_solver",
    "fixed_grid",
    "rk4_scan",
    "rk4_step",
    "simulate",
    "stick_band_rate",
]
