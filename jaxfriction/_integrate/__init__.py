"""Integrators: RK4 in ``lax.scan`` and diffrax, behind :func:`simulate`."""

from .diffrax_solvers import ClassicRK4
from .grid import fixed_grid
from .rk4 import rk4_scan, rk4_step
from .simulate import simulate
from .trajectory import STATUS_NONFINITE, STATUS_OK, STATUS_SOLVER_FAILED, Trajectory

__all__ = [
    "STATUS_NONFINITE",
    "STATUS_OK",
    "STATUS_SOLVER_FAILED",
    "ClassicRK4",
    "Trajectory",
    "fixed_grid",
    "rk4_scan",
    "rk4_step",
    "simulate",
]
