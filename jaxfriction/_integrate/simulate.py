"""One entry point for every integrator: ``simulate(system, y0, t0, t1, dt, solver=..., saveat=...)``."""

from __future__ import annotations

import inspect
import sys

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._checks import check_field_shape, check_time_span, is_concrete
from .._paths import traced_parameters
from .._systems.base import AbstractFrictionSystem, AdaptiveSolve
from .resolution import check_step_resolution
from .saveat import SaveAt
from .solvers import RK4, AbstractSolver, Diffrax
from .trajectory import Trajectory

_UNSET = object()


def as_solver(solver) -> AbstractSolver:
    """The solver object for ``solver``: None -> :class:`RK4`, a diffrax solver -> :class:`Diffrax`,
    an :class:`~jaxfriction.AdaptiveSolve` (a system's ``default_solver()``) -> the
    :class:`Diffrax` it names.

    Raises:
        ValueError: for anything else.
    """
    if solver is None:
        return RK4()
    if isinstance(solver, AbstractSolver):
        return solver
    if isinstance(solver, AdaptiveSolve):
        import diffrax

        method = getattr(diffrax, str(solver.method), None)
        if not (isinstance(method, type) and issubclass(method, diffrax.AbstractSolver)
                and not inspect.isabstract(method)):
            raise ValueError(f"solver: AdaptiveSolve(method={solver.method!r}) names no diffrax solver class")
        return Diffrax(method(), rtol=solver.rtol, atol=solver.atol)
    diffrax = sys.modules.get("diffrax")  # type: ignore[assignment]  # the module or None: a diffrax solver means diffrax is imported already
    if diffrax is not None and isinstance(solver, diffrax.AbstractSolver):
        return Diffrax(solver)
    raise ValueError(f"solver must be a jaxfriction solver (RK4(), Diffrax(...), MoreauJean(), EventDriven()) "
                     f"or a diffrax solver, got {solver!r}")


def _run(solver, system, y0, t0, t1, dt, saveat, args):
    return solver.integrate(system, y0, t0, t1, dt, saveat, args)


@eqx.filter_jit
def _compiled_run(solver, system, y0, t0, h, n_saves, every, args):
    """The run of a fixed-step solver on its grid, compiled: one program per system structure
    and step count (``n_saves``, ``every`` and the solver static; ``t0`` and ``h`` arrays)."""
    return solver.integrate_on_grid(system, y0, t0, h, n_saves, every, args)


def simulate(system: AbstractFrictionSystem, y0, t0: float, t1: float, dt: float | None = None, *, solver=None,
             saveat: SaveAt | None = None, save_every=_UNSET, args=None) -> Trajectory:
    """Integrate ``system`` from ``(t0, y0)`` to ``t1``.

    Solvers (objects; :mod:`jaxfriction._integrate.solvers`):

    - :class:`~jaxfriction.RK4` (default, ``solver=None``): classical RK4 in ``lax.scan``
      with fixed step ``dt``, the method of the papers (Quinn 2004 Sec. 3; paper 002 Sec. 4);
      fastest, no step limit; ``RK4(checkpoint=True)`` bounds reverse-mode memory;
    - :class:`~jaxfriction.Diffrax` (or a bare diffrax solver): fixed-step solvers step
      through the same grid with ``diffrax.StepTo``; adaptive ones (``diffrax.Tsit5()``,
      ``diffrax.Kvaerno5()``) use PID step control with the wrapper's ``rtol``/``atol``,
      first step ``dt``;
    - :class:`~jaxfriction.MoreauJean` and :class:`~jaxfriction.EventDriven`: exact
      (set-valued) Coulomb friction, for systems whose law is ``Coulomb``,
      ``StaticKineticCoulomb`` or ``VectorCoulomb``.

    Fixed-step grids land exactly on ``t1``: the step used is ``(t1 - t0) / n_steps`` with
    ``n_steps`` the smallest multiple of the save interval that keeps it ``<= dt`` (see
    :func:`~jaxfriction.fixed_grid`).

    Args:
        system: any jaxfriction system.
        y0: ``(2 n_dof,)`` positions and velocities (internal variables start at the
            system's ``initial_internal()``, integrals at 0), or a full state
            ``(state_size,)`` (to continue a run with its energy integrals).
        t0, t1: concrete floats, ``t1 > t0`` (time units of the system).
        dt: fixed step (required for fixed-step solvers), or the first adaptive step.
        solver: a solver object (above) or None for :class:`~jaxfriction.RK4` (without
            ``dt``: the system's own ``default_solver()`` where it has one,
            :class:`~jaxfriction.QuasiStaticSlider`'s adaptive run).
        saveat: a :class:`~jaxfriction.SaveAt` (default: every step for fixed-step
            solvers, 1001 equally spaced times for adaptive ones).
        save_every: shortcut: ``save_every=k`` is ``SaveAt(every=k)``, ``save_every=None``
            is ``SaveAt(n=1)`` (end points only).
        args: passed to ``system.vector_field``.

    Returns:
        The run, a :class:`Trajectory`; its ``status`` flags non-finite states, solver
            failure or an unstable step instead of raising (:mod:`jaxfriction._integrate.status`),
            so a ``vmap`` batch is never lost to one bad lane.

    Raises:
        ValueError: ``t1 <= t0``, ``dt <= 0`` or missing for a fixed-step solver,
            non-finite inputs, ``y0`` of the wrong shape, a ``saveat`` the solver cannot
            honour or times ``SaveAt(ts=...)`` outside ``[t0, t1]``, ``saveat`` together with
            ``save_every``, an unknown solver; for a fixed-step solver, a step ``min(dt, t1 -
            t0)`` longer than the sample interval of a ground-motion record, or fewer than 20
            steps per forcing period (:mod:`jaxfriction._integrate.resolution`).

    Works under ``jax.jit`` (with ``t0``, ``t1``, ``dt`` static), ``jax.vmap`` over
    systems and initial states, and forward- and reverse-mode differentiation. With the
    fixed-step solvers (:class:`~jaxfriction.RK4`, :class:`~jaxfriction.MoreauJean`,
    :class:`~jaxfriction.WestermoUdwadia`, :class:`~jaxfriction.NaEltawil2D`) the run is
    compiled once per system structure and step count: the system's float parameters, ``t0``
    and the step enter the program as arrays, so a second call at other parameter values,
    another ``y0``, or another ``t0``, ``t1`` or ``dt`` with the same number of steps and saves
    (a frequency sweep at a fixed number of steps per period) does not compile again (a literal
    zero, such as no damping, stays part of the structure).

    Examples:
        Quinn 2004 Fig. 5: the unforced oscillator ``x'' + x = f`` from ``(2.75, 0)`` with
        Quinn's law comes to rest at the paper's ``-0.750090`` (``eps = dt = 0.01``; in
        float64, which your script turns on with JAX's x64 flag):

        >>> import jax.numpy as jnp
        >>> import jaxfriction as jf
        >>> system = jf.Oscillator(law=jf.Quinn(mu=1.0, eps=0.01))
        >>> traj = jf.simulate(system, jnp.array([2.75, 0.0]), 0.0, 50.0, dt=0.01)
        >>> round(float(traj.position[-1]), 6), int(traj.status)
        (-0.75009, 0)
    """
    if not isinstance(system, AbstractFrictionSystem):
        raise ValueError(f"system must be a jaxfriction system, got {type(system).__name__}")
    if save_every is not _UNSET:
        if saveat is not None:
            raise ValueError("give saveat or its shortcut save_every, not both")
        saveat = SaveAt(n=1) if save_every is None else SaveAt(every=save_every)
    saveat = SaveAt() if saveat is None else saveat
    if not isinstance(saveat, SaveAt):
        raise ValueError(f"saveat must be a jaxfriction.SaveAt, got {saveat!r}")
    if solver is None and dt is None:
        solver = system.default_solver()  # None (RK4), or the system's own (QuasiStaticSlider: adaptive)
    solver = as_solver(solver)
    check_time_span(t0, t1, dt)
    if solver.steps_with_dt() and getattr(system, "reset_times", tuple)():
        from .diffrax_solvers import jumps_need_adaptive

        raise ValueError(jumps_need_adaptive(system, type(getattr(solver, "solver", solver)).__name__))
    if solver.steps_with_dt():
        check_step_resolution(system, dt, span=float(t1) - float(t0) if is_concrete((t0, t1)) else None)
    if saveat.ts is not None and is_concrete(saveat.ts) and is_concrete((t0, t1)):
        ts = np.asarray(saveat.ts, dtype=float)
        if ts.size and not (ts.min() >= float(t0) and ts.max() <= float(t1)):
            raise ValueError(f"saveat: SaveAt(ts=...) must lie in [t0, t1] = [{t0}, {t1}], got times from "
                             f"{ts.min():g} to {ts.max():g}")
    y0 = system.as_state(y0)
    solver.check_system(system)
    try:
        if solver.compiles_whole() and is_concrete((t0, t1, 0.0 if dt is None else dt)):
            n_saves, every, h = solver.step_grid(float(t0), float(t1), None if dt is None else float(dt), saveat)
            # t0 and h as (weakly typed) arrays: another start or step of the same count compiles nothing
            ts, ys, status = _compiled_run(solver, traced_parameters(system, keep_zeros=True), y0,
                                           jnp.asarray(float(t0)), jnp.asarray(h), n_saves, every, args)
        else:
            ts, ys, status = _run(solver, system, y0, t0, t1, dt, saveat, args)
    except (TypeError, ValueError):
        check_field_shape(system, y0)  # a parameter of the wrong shape: say which, not where it broke
        raise
    return Trajectory(ts=ts, ys=ys, system=system, status=status)
