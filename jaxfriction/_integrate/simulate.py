"""One entry point for every integrator: ``simulate(system, y0, t0, t1, ...)``."""

from __future__ import annotations

import diffrax
import jax.numpy as jnp

from .._checks import check_time_span
from .._systems.base import AbstractFrictionSystem
from .diffrax_solvers import diffrax_solve, is_adaptive
from .grid import fixed_grid
from .rk4 import rk4_scan
from .trajectory import STATUS_NONFINITE, STATUS_OK, STATUS_SOLVER_FAILED, Trajectory


def simulate(
    system: AbstractFrictionSystem,
    y0,
    t0: float,
    t1: float,
    dt: float | None = None,
    *,
    solver=None,
    save_every: int | None = 1,
    n_save: int = 1000,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    max_steps: int = 1_000_000,
    args=None,
    checkpoint: bool = False,
) -> Trajectory:
    """Integrate ``system`` from ``(t0, y0)`` to ``t1``.

    Solvers:

    - ``solver=None`` (default): classical RK4 in ``lax.scan`` with fixed step ``dt``, the
      method of the papers (Quinn 2004 Sec. 3; paper 002 Sec. 4). Fastest, no step limit.
    - a fixed-step diffrax solver (e.g. :class:`ClassicRK4`, ``diffrax.Euler()``): stepped
      through the same grid with ``diffrax.StepTo``.
    - an adaptive diffrax solver (e.g. ``diffrax.Tsit5()``, ``diffrax.Kvaerno5()``): PID step
      control with ``rtol``/``atol``, first step ``dt`` (or diffrax's choice if None), saving
      at ``n_save + 1`` equally spaced times.

    Fixed-step grids land exactly on ``t1``: the step used is ``(t1 - t0) / n_steps`` with
    ``n_steps`` the smallest multiple of ``save_every`` that keeps it ``<= dt`` (see
    :func:`~jaxfriction.integrate.grid.fixed_grid`).

    Args:
        system: any jaxfriction system.
        y0: ``(2 n_dof,)`` positions and velocities, or a full state ``(2 n_dof + 3,)`` (to
            continue a run with its energy integrals).
        t0, t1: concrete floats, ``t1 > t0`` (time units of the system).
        dt: fixed step (required for fixed-step solvers), or the first adaptive step.
        solver: None for RK4 in ``lax.scan``, or a diffrax solver instance.
        save_every: fixed-step solvers save every ``save_every`` steps; None saves only the
            end points.
        n_save: adaptive solvers save at ``n_save + 1`` equally spaced times.
        rtol, atol: adaptive tolerances. max_steps: diffrax step budget.
        args: passed to ``system.vector_field``.
        checkpoint: RK4 scan only; bound the memory of reverse-mode gradients to
            O(n_saves sqrt(save_every)) states for about one extra forward run (see
            :func:`~jaxfriction.integrate.rk4.rk4_scan`). Results are unchanged.

    Returns:
        A :class:`Trajectory`; its ``status`` flags non-finite states or solver failure
        instead of raising, so a ``vmap`` batch is never lost to one bad lane.

    Raises:
        ValueError: ``t1 <= t0``, ``dt <= 0`` or missing for a fixed-step solver,
            non-finite inputs, ``y0`` of the wrong shape, bad ``save_every``/``n_save``.

    Works under ``jax.jit`` (with ``t0``, ``t1``, ``dt`` static), ``jax.vmap`` over
    systems and initial states, and forward- and reverse-mode differentiation.
    """
    if not isinstance(system, AbstractFrictionSystem):
        raise ValueError(f"system must be a jaxfriction system, got {type(system).__name__}")
    y0 = system.as_state(y0)
    if solver is not None and not isinstance(solver, diffrax.AbstractSolver):
        raise ValueError(f"solver must be None (RK4 scan) or a diffrax solver, got {solver!r}")
    solver_ok = jnp.asarray(True)
    if solver is not None and is_adaptive(solver):
        check_time_span(t0, t1, dt)
        if isinstance(n_save, bool) or not isinstance(n_save, int) or n_save < 1:
            raise ValueError(f"n_save must be a positive int, got {n_save!r}")
        ts = jnp.linspace(t0, t1, n_save + 1)
        ys, solver_ok = diffrax_solve(
            system, y0, t0, t1, solver, ts, dt0=dt, rtol=rtol, atol=atol, max_steps=max_steps, args=args
        )
    else:
        if dt is None:
            raise ValueError("dt is required for fixed-step integration")
        n_saves, every, h = fixed_grid(t0, t1, dt, save_every)
        if solver is None:
            ts, ys = rk4_scan(system.vector_field, y0, t0, h, n_saves, every, args, checkpoint=checkpoint)
        else:
            ts = t0 + jnp.arange(n_saves + 1) * (every * h)
            step_ts = t0 + jnp.arange(n_saves * every + 1) * h
            ys, solver_ok = diffrax_solve(
                system, y0, t0, t1, solver, ts, step_ts=step_ts, rtol=rtol, atol=atol,
                max_steps=max(max_steps, n_saves * every + 1), args=args,
            )
    finite = jnp.all(jnp.isfinite(ys))
    status = jnp.where(solver_ok, jnp.where(finite, STATUS_OK, STATUS_NONFINITE), STATUS_SOLVER_FAILED)
    return Trajectory(ts=ts, ys=ys, system=system, status=status)
