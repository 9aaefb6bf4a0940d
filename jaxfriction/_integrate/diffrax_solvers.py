"""diffrax back end: any diffrax solver, plus the classical RK4 diffrax lacks."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .._systems.base import N_INTEGRALS
from .rk4 import ROW_STATE_LIMIT, ComponentField

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


def dynamics_rms_norm(error):
    """RMS norm of a scaled error state over its dynamical entries: the energy books left out.

    Step-size controllers (``diffrax.PIDController(norm=...)``) choose the step so that
    ``norm(error / (atol + rtol |y|))`` is about 1 (diffrax's implicit solvers also stop
    their Newton iterations with the controller's norm, unless their root finder has one of
    its own; :class:`~jaxfriction.Diffrax` gives them one over the whole state). This norm is ``optimistix.rms_norm`` (diffrax's
    default) of the entries before the last ``N_INTEGRALS = 3``, which are
    ``E_friction``, ``E_damping`` and ``W_input`` in every jaxfriction state (layout in
    :mod:`jaxfriction._systems.base`): positions, velocities and the internal variables of
    dynamic laws (LuGre ``z``, ...) stay under control. The energy integrals are
    quadratures of the trajectory (their rates depend on the motion, the motion never on
    them), so their error follows the steps the motion needs; leaving them out makes a run
    take the steps of the same equations integrated without them.
    :class:`~jaxfriction.Diffrax`'s default controller uses it; pass it to a controller of
    your own to get the same (``diffrax.PIDController(rtol=..., atol=...,
    norm=jf.dynamics_rms_norm)``).

    Args:
        error: one state-shaped error (per lane under ``vmap``; no units, already divided
            by ``atol + rtol |y|``): a flat array ``(state_size,)`` or, as diffrax hands
            it for states of at most ``ROW_STATE_LIMIT = 32`` entries (see
            :class:`~jaxfriction.Diffrax`), a tuple of its ``state_size`` scalar components.

    Returns:
        The scalar ``sqrt(mean(error[:-3]^2))`` (zero derivative at 0, as diffrax's norm);
            ``inf`` where that is NaN, so that a step that overflowed is rejected.

    Raises:
        ValueError: an error with at most 3 entries, or neither a 1-D array nor a tuple
            of scalars.
    """
    leaves = jax.tree.leaves(error)
    if len(leaves) == 1 and jnp.ndim(leaves[0]) == 1:
        entries = leaves[0]
    elif leaves and all(jnp.ndim(leaf) == 0 for leaf in leaves):
        entries = leaves
    else:
        entries = None
    if entries is None or len(entries) <= N_INTEGRALS:
        raise ValueError(f"dynamics_rms_norm needs a jaxfriction state (more than {N_INTEGRALS} entries, "
                         f"the last {N_INTEGRALS} the energy integrals, flat or as a tuple of scalars), got "
                         f"{jax.tree.map(jnp.shape, error)}")
    norm = optx.rms_norm(entries[: len(entries) - N_INTEGRALS])
    # a NaN error (a trial step that overflowed: inf - inf) counts as infinite, so the
    # controller rejects the step and shrinks it; diffrax replaces a NaN candidate by the
    # previous state per leaf only, and on a tuple state an overflowing component (inf, not
    # NaN) beside a NaN one made the scaled error NaN and the step size NaN: the run stalled
    # until max_steps (a sharp velocity step of QuasiStaticSlider under Tsit5)
    return jnp.where(jnp.isnan(norm), jnp.inf, norm)


def default_controller(rtol, atol):
    """:class:`~jaxfriction.Diffrax`'s step-size controller: ``diffrax.PIDController`` with
    ``rtol``/``atol`` and the error norm :func:`dynamics_rms_norm` (energy books left out)."""
    return diffrax.PIDController(rtol=rtol, atol=atol, norm=dynamics_rms_norm)


def newton_on_whole_state(solver, rtol, atol):
    """``solver`` with its Newton iterations stopped on the whole state, books included.

    diffrax's implicit solvers (Kvaerno5, ...) take their root finder's ``rtol``, ``atol``
    and norm from the step-size controller unless they were given (diffrax's
    ``use_stepsize_tol`` placeholders). With the default controller that norm would be
    :func:`dynamics_rms_norm`, and the books' stage values would then carry the last
    iteration's change of the motion times the powers' sensitivity: the energy residual of
    a stiff LuGre oscillator rose from 2.6e-8 to 1.6e-6 (``rtol = 1e-8``). So the
    placeholders get ``rtol``, ``atol`` and diffrax's default ``optimistix.rms_norm`` over
    the whole state; tolerances given to the root finder are kept. Explicit solvers are
    returned as they are.
    """
    if not isinstance(solver, diffrax.AbstractImplicitSolver):
        return solver
    try:
        from diffrax._root_finder import use_stepsize_tol
    except ImportError:  # another diffrax: its own rule applies (the controller's norm)
        return solver
    finder = solver.root_finder
    names = [name for name in ("rtol", "atol", "norm") if getattr(finder, name, None) is use_stepsize_tol]
    if not names:
        return solver
    values = {"rtol": rtol, "atol": atol, "norm": optx.rms_norm}
    return eqx.tree_at(lambda s: tuple(getattr(s.root_finder, name) for name in names), solver,
                       tuple(values[name] for name in names))


def diffrax_solution(system, y0, t0, t1, solver, save_ts, *, step_ts=None, dt0=None, rtol, atol, max_steps,
                     args, adjoint=None, controller=None, resets=True):
    """Run ``diffrax.diffeqsolve`` on ``system.vector_field`` and return diffrax's solution.

    Fixed-step solvers step exactly through ``step_ts`` (``diffrax.StepTo``); adaptive ones
    use ``controller``, by default :func:`default_controller` of ``rtol``/``atol`` (and then
    implicit solvers get :func:`newton_on_whole_state`), clipped to the drives' jumps
    (``system.jump_times()``, ``diffrax.ClipStepSizeController(jump_ts=...)``).
    ``adjoint`` is diffrax's (None: its default, reverse mode only). Never throws: failures
    are in ``sol.result``. ``sol.stats`` holds diffrax's step counts
    (``num_accepted_steps``, ``num_rejected_steps``).

    For explicit Runge-Kutta solvers (``diffrax.AbstractERK``: Tsit5, Dopri5, Dopri8,
    :class:`ClassicRK4`, ...) states of at most
    :data:`~jaxfriction._integrate.rk4.ROW_STATE_LIMIT` entries go to diffrax as a tuple of
    their scalar components, as :func:`~jaxfriction.rk4_scan` steps them: under ``vmap`` a
    stacked ``(batch, n)`` state makes every stage, the error estimate and the
    interpolation work on an interleaved array (for a 5,000-lane batch of the 1-dof
    oscillator, 5 entries, a Dopri5 run took 1.7-2.4x as long as the same run on
    components, ``scripts/benchmarks/bench_adaptive.py``; up to about 16 lanes the components cost
    more, per-operation overhead: 0.09 s against 0.05 s at 16 lanes, 0.03 s against
    0.01 s for one lane of 3,600 steps). The controller's norm then sees the tuple. Implicit
    solvers (Kvaerno5) keep the flat array: on the tuple their Newton iterations failed
    (the rate-and-state velocity step of ``tests/test_spring_slider.py`` ran out of steps).

    A system with state jumps (``system.reset_times()``, a normal-force step) runs one solve
    per interval between them (:func:`_segmented_solution`; ``resets=False`` runs one
    interval).

    Returns:
        The ``diffrax.Solution``; ``sol.ys`` are the states ``(len(save_ts), state_size)``.
    """
    resets = system.reset_times() if resets and hasattr(system, "reset_times") else ()
    if resets:
        if step_ts is not None:
            raise ValueError(jumps_need_adaptive(system, type(solver).__name__))
        return _segmented_solution(system, y0, t0, t1, solver, save_ts, resets, dt0=dt0, rtol=rtol, atol=atol,
                                   max_steps=max_steps, args=args, adjoint=adjoint, controller=controller)
    if step_ts is not None:
        controller = diffrax.StepTo(ts=step_ts)
        dt0 = None
    elif controller is None:
        controller = default_controller(rtol, atol)
        solver = newton_on_whole_state(solver, rtol, atol)
        jumps = system.jump_times()
        if jumps:  # the drives' discontinuities as breakpoints: a step ends there, the solver restarts
            controller = diffrax.ClipStepSizeController(controller, jump_ts=jnp.stack([jnp.asarray(t, float) for t in jumps]))
    by_rows = isinstance(solver, diffrax.AbstractERK) and jnp.size(y0) <= ROW_STATE_LIMIT
    field = ComponentField(system.vector_field, jnp.shape(y0)) if by_rows else system.vector_field
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(field),
        solver,
        t0,
        t1,
        dt0,
        tuple(jnp.ravel(y0)) if by_rows else y0,
        args=args,
        saveat=diffrax.SaveAt(ts=save_ts),
        stepsize_controller=controller,
        max_steps=max_steps,
        adjoint=diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint,
        throw=False,
    )
    if by_rows:
        sol = eqx.tree_at(lambda s: s.ys, sol, jnp.stack(sol.ys, axis=-1).reshape((-1, *jnp.shape(y0))))
    return sol


def jumps_need_adaptive(system, solver_name: str) -> str:
    """The error of a fixed-step solver (``solver_name``) given a system that jumps its state
    (``system.reset_times()``, a normal-force step of :class:`~jaxfriction.QuasiStaticSlider`)."""
    return (f"{type(system).__name__} jumps its state at {system.reset_times()} (a normal-force step): give it "
            f"an adaptive diffrax solver (diffrax.Tsit5(); simulate's solver=None and dt=None use "
            f"system.default_solver()), not the fixed steps of {solver_name}")


def _segmented_solution(system, y0, t0, t1, solver, save_ts, resets, **kwargs):
    """A run that restarts at the system's state jumps: one diffrax solve per interval between
    the reset times ``system.reset_times()`` inside ``(t0, t1)``, the state mapped by
    ``system.reset_state(t, y)`` at each (a normal-force step of
    :class:`~jaxfriction.QuasiStaticSlider`). A saved time equal to a reset time gets the state
    after the jump (as a :class:`~jaxfriction.Steps` drive takes its new value there); a reset
    time outside ``(t0, t1)`` (traced times included) gives an empty interval and no jump.
    Returns the last interval's ``diffrax.Solution`` with the saved states of all intervals,
    the first failure's result and the summed step counts."""
    t0 = jnp.asarray(t0, dtype=jnp.result_type(float))
    t1 = jnp.asarray(t1, dtype=t0.dtype)
    edges = [t0, *(jnp.clip(jnp.asarray(t, t0.dtype), t0, t1) for t in resets), t1]
    ys = jnp.zeros((jnp.size(save_ts), jnp.size(y0)), dtype=jnp.result_type(y0))
    y, result, stats, sol = y0, None, None, None
    for i, (lo, hi) in enumerate(itertools.pairwise(edges)):
        if i > 0:  # the jump at lo, when it lies inside (t0, t1)
            y = jnp.where((lo > t0) & (lo < t1), system.reset_state(lo, y), y)
        hi = jnp.maximum(lo, hi)
        ts = jnp.concatenate([jnp.clip(save_ts, lo, hi), hi[None]])
        sol = diffrax_solution(system, y, lo, hi, solver, ts, resets=False, **kwargs)
        last = i == len(edges) - 2
        inside = (save_ts >= lo) & ((save_ts <= hi) if last else (save_ts < hi))
        ys = jnp.where(inside[:, None], sol.ys[:-1], ys)
        y = sol.ys[-1]
        result = sol.result if result is None else diffrax.RESULTS.where(
            result == diffrax.RESULTS.successful, sol.result, result)
        counts = {key: value for key, value in sol.stats.items() if key.startswith("num_")}
        stats = counts if stats is None else {key: stats[key] + counts[key] for key in counts}
    return eqx.tree_at(lambda s: (s.ys, s.result, s.stats), sol, (ys, result, {**sol.stats, **stats}))

