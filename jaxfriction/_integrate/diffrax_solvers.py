"""diffrax back end: any diffrax solver, plus the classical RK4 diffrax lacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import diffrax
import jax.numpy as jnp
import numpy as np

_RK4_TABLEAU = diffrax.ButcherTableau(
    c=np.array([0.5, 0.5, 1.0]),
    b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
    b_error=np.zeros(4),
    a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
)


class ClassicRK4(diffrax.AbstractERK):
    """The classical fourth-order Runge-Kutta method as a diffrax solver.

    diffrax 0.7 ships no classical RK4; this is its Butcher tableau. It has no error
    estimate, so use it with a fixed step (``simulate(..., solver=ClassicRK4(), dt=...)``).
    """

    tableau: ClassVar[diffrax.ButcherTableau] = _RK4_TABLEAU
    interpolation_cls: ClassVar[Callable[..., diffrax.ThirdOrderHermitePolynomialInterpolation]] = (
        diffrax.ThirdOrderHermitePolynomialInterpolation.from_k
    )

    def order(self, terms):
        del terms
        return 4


def is_adaptive(solver) -> bool:
    """True when ``solver`` provides an error estimate (adaptive step control makes sense)."""
    return isinstance(solver, diffrax.AbstractAdaptiveSolver) and not isinstance(solver, ClassicRK4)


def diffrax_solve(system, y0, t0, t1, solver, save_ts, *, step_ts=None, dt0=None, rtol, atol, max_steps, args,
                  adjoint=None):
    """Run ``diffrax.diffeqsolve`` on ``system.vector_field``.

    Fixed-step solvers step exactly through ``step_ts`` (``diffrax.StepTo``); adaptive ones
    use a PID controller with ``rtol``/``atol``. ``adjoint`` is diffrax's (None: its
    default, reverse mode only). Never throws: failures are returned.

    Returns:
        ``(ys, ok)``: states at ``save_ts`` and a boolean, True when diffrax succeeded.
    """
    if step_ts is not None:
        controller = diffrax.StepTo(ts=step_ts)
        dt0 = None
    else:
        controller = diffrax.PIDController(rtol=rtol, atol=atol)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(system.vector_field),
        solver,
        t0,
        t1,
        dt0,
        y0,
        args=args,
        saveat=diffrax.SaveAt(ts=save_ts),
        stepsize_controller=controller,
        max_steps=max_steps,
        adjoint=diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint,
        throw=False,
    )
    return sol.ys, jnp.asarray(sol.result == diffrax.RESULTS.successful)
