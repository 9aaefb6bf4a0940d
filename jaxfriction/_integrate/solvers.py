"""Solver objects of :func:`~jaxfriction.simulate`: RK4 in ``lax.scan`` and any diffrax solver.

A solver is a small equinox module with its options as fields and one method,
``integrate(system, y0, t0, t1, dt, saveat, args) -> (ts, ys, status)``; the exact Coulomb
solvers (:class:`~jaxfriction.MoreauJean`, :class:`~jaxfriction.EventDriven`) follow the
same interface. diffrax is imported only when a diffrax solver is used.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_int, check_real, check_time_span
from .grid import check_rounding, fixed_grid
from .rk4 import rk4_legs, rk4_scan
from .saveat import SaveAt
from .stability import RK4_STABILITY_LIMIT, saved_state_rate, stick_band_rate
from .status import (
    STATUS_NONFINITE,
    STATUS_OK,
    STATUS_SOLVER_FAILED,
    STATUS_UNSTABLE_STEP,
    combine_status,
)

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem


class AbstractSolver(eqx.Module):
    """A way to integrate a system: ``integrate(...) -> (ts, ys, status)``."""

    @abc.abstractmethod
    def integrate(self, system: AbstractFrictionSystem, y0: Array, t0: float, t1: float, dt: float,
                  saveat: SaveAt, args) -> tuple[Array, Array, Array]:
        """Integrate from the full state ``y0`` at ``t0`` to ``t1``.

        Returns:
            ``(ts (k,), ys (k, state_size), status)`` with the status codes of
                :mod:`jaxfriction._integrate.status`.
        """

    def steps_with_dt(self) -> bool:
        """True for a solver that steps with ``dt`` on a fixed grid (RK4, a diffrax solver without
        an error estimate, MoreauJean); False where it chooses its own steps (an adaptive diffrax
        solver, an event-driven solver): ``dt`` is then at most a first step."""
        return True

    def check_system(self, system: AbstractFrictionSystem) -> None:
        """Raise ValueError naming the field where this solver cannot integrate ``system``
        (called by :func:`~jaxfriction.simulate` on the concrete system before it compiles the
        run, where a parameter's value is still known). Default: any system."""

    def compiles_whole(self) -> bool:
        """True for a :class:`FixedStepSolver` (the fixed-step scans): :func:`~jaxfriction.simulate`
        then compiles :meth:`FixedStepSolver.integrate_on_grid` once per system structure and
        step count, with the system's floats, ``t0`` and the step ``h`` as arrays, so a call at
        other parameter values, another ``t0`` or another step of the same count compiles
        nothing. False (the default) runs ``integrate`` as it is (diffrax compiles its own
        solve)."""
        return False

    def step_grid(self, t0: float, t1: float, dt: float, saveat: SaveAt) -> tuple[int, int, float] | None:
        """The fixed grid this solver steps on from ``t0`` to ``t1``: ``(n_saves, every, h)``
        (:func:`fixed_step_grid`, ``n_saves * every`` steps of ``h``), or None where the
        solver chooses its own steps or has no grid convention of its own (the default)."""
        return None

    def for_forward_mode(self) -> AbstractSolver:
        """This solver set up to be differentiated by ``jax.jvp`` (forward mode). Default:
        itself; a solver whose derivatives go through a diffrax adjoint returns a copy with
        ``diffrax.ForwardMode()`` (diffrax's default adjoint is reverse mode only)."""
        return self


class FixedStepSolver(AbstractSolver):
    """A solver that steps with ``dt`` on a step-aligned fixed grid: :class:`~jaxfriction.RK4`
    (Quinn 2004 Sec. 3), :class:`~jaxfriction.MoreauJean`, :class:`~jaxfriction.WestermoUdwadia`,
    :class:`~jaxfriction.NaEltawil2D`.

    A subclass has a static ``rounding`` field (the step-count convention of
    :func:`~jaxfriction.fixed_grid`, ``"ceil"`` or ``"round"``) and writes
    :meth:`integrate_on_grid`; ``integrate`` is that method on the grid of ``(t0, t1, dt,
    saveat)`` (:meth:`step_grid`). :func:`~jaxfriction.simulate` compiles a run once per system
    structure and step count, with ``t0`` and the step ``h`` as arrays: another span or step of
    the same count compiles nothing. That is how a user's own fixed-step scheme joins in.

    Raises:
        ValueError: from :meth:`step_grid`: ``SaveAt(ts=...)`` (fixed-step solvers save on
            their grid), a missing or non-positive ``dt``, an invalid span.
    """

    rounding: eqx.AbstractVar[str]

    @abc.abstractmethod
    def integrate_on_grid(self, system: AbstractFrictionSystem, y0: Array, t0: ArrayLike, h: ArrayLike,
                          n_saves: int, every: int, args) -> tuple[Array, Array, Array]:
        """Integrate ``n_saves * every`` steps of ``h`` from the full state ``y0`` at ``t0``,
        saving every ``every`` steps.

        Args:
            system: the system (its floats may be arrays).
            y0: ``(state_size,)`` full state.
            t0, h: start time and step (time units): floats or scalar arrays (traced in
                :func:`~jaxfriction.simulate`'s compiled run).
            n_saves, every: concrete ints (the program's length).
            args: passed to ``system.vector_field``.

        Returns:
            ``(ts (n_saves + 1,), ys (n_saves + 1, state_size), status)``.
        """

    def integrate(self, system: AbstractFrictionSystem, y0: Array, t0: float, t1: float, dt: float,
                  saveat: SaveAt, args) -> tuple[Array, Array, Array]:
        n_saves, every, h = self.step_grid(t0, t1, dt, saveat)
        return self.integrate_on_grid(system, y0, t0, h, n_saves, every, args)

    def compiles_whole(self) -> bool:
        return True

    def step_grid(self, t0: float, t1: float, dt: float, saveat: SaveAt) -> tuple[int, int, float]:
        return fixed_step_grid(t0, t1, dt, saveat, self.rounding)


def fixed_step_grid(t0: float, t1: float, dt: float, saveat: SaveAt,
                    rounding: str = "ceil") -> tuple[int, int, float]:
    """``(n_saves, save_every, h)`` of a step-aligned fixed-step run for ``saveat``
    (``rounding``: the step-count convention of :func:`~jaxfriction.fixed_grid`).

    Raises:
        ValueError: ``saveat.ts`` (fixed-step solvers save on their grid), a missing or
            invalid ``dt``, or an invalid span.
    """
    if saveat.ts is not None:
        raise ValueError("SaveAt(ts=...) needs an adaptive or event-driven solver; fixed-step solvers save "
                         "on their grid: use SaveAt(every=k) or SaveAt(n=k)")
    if dt is None:
        raise ValueError("dt is required for fixed-step integration")
    if saveat.n is None:
        return fixed_grid(t0, t1, dt, saveat.every or 1, rounding)
    n_min = fixed_grid(t0, t1, dt, None, rounding)[1]
    every = math.ceil(n_min / saveat.n) if rounding == "ceil" else max(1, round(n_min / saveat.n))
    return saveat.n, every, (float(t1) - float(t0)) / (saveat.n * every)


def transient_step(t_measure: float, t_end: float, dt: float, saveat: SaveAt, rounding: str = "ceil") -> float:
    """The step bound of a sweep's unsaved transient ``[0, t_measure]`` before its window
    ``[t_measure, t_end]``.

    When the transient is a whole number ``k`` of windows (the cycle-count default: 49
    forcing periods before the last), the transient takes the window's own step ``h``
    (``k`` times the window's step count), so the window repeats the discrete map of the
    transient: a transient that has died out leaves the window on the periodic orbit of the
    same RK4 map that :func:`~jaxfriction.periodic_orbit` solves for, and the two give the
    same dissipation. (With ``dt`` itself the two grids differ by a fraction of a step per
    period, and so do the maps: on Quinn's oscillator D differed by up to 4e-6 after 3,200
    cycles.) Otherwise ``dt``.
    """
    if saveat.ts is not None or dt is None or not t_measure > 0:
        return dt
    n_saves, every, _ = fixed_step_grid(t_measure, t_end, dt, saveat, rounding)
    span = float(t_end) - float(t_measure)
    k = round(float(t_measure) / span)
    if k >= 1 and abs(k * span - float(t_measure)) <= 1e-9 * float(t_measure):
        return float(t_measure) / (k * n_saves * every)
    return dt


#: Largest saved trajectory one run may hold (bytes). A run that would save more is refused
#: before it starts, with the figures, instead of running out of memory after seconds.
MAX_SAVED_BYTES = 2 * 1024**3


def check_saved_size(
    n_saved: int, state_size: int, dtype, what: str = "dt/saveat: the run",
    remedy: str = "save less often (SaveAt(every=k), SaveAt(n=k)) or use a larger dt",
) -> None:
    """Raise ValueError (``what`` names the arguments) when ``n_saved`` states would exceed
    :data:`MAX_SAVED_BYTES`."""
    size = int(n_saved) * int(state_size) * jnp.dtype(dtype).itemsize
    if size > MAX_SAVED_BYTES:
        raise ValueError(f"{what} would save {int(n_saved):,} states of {state_size} numbers, "
                         f"{size / 1024**3:.1f} GiB (more than {MAX_SAVED_BYTES / 1024**3:.0f} GiB): {remedy}")


def finite_status(ys: Array, ok: ArrayLike = True) -> Array:
    """``STATUS_OK``, ``STATUS_NONFINITE`` for a non-finite state, ``STATUS_SOLVER_FAILED`` if not ``ok``."""
    finite = jnp.all(jnp.isfinite(ys))
    return jnp.where(ok, jnp.where(finite, STATUS_OK, STATUS_NONFINITE), STATUS_SOLVER_FAILED)


def unstable_step_status(status: Array, h: ArrayLike, rates) -> Array:
    """``status``, turned to ``STATUS_UNSTABLE_STEP`` where it is OK but ``h`` times one of
    ``rates`` (relaxation rates, 1/time; None entries are skipped) passes RK4's stability
    limit :data:`~jaxfriction._integrate.stability.RK4_STABILITY_LIMIT`. A NaN rate is
    unstable too."""
    for rate in rates:
        if rate is not None:
            unstable = ~(h * rate <= RK4_STABILITY_LIMIT)
            status = jnp.where((status == STATUS_OK) & unstable, STATUS_UNSTABLE_STEP, status)
    return status


def rk4_status(system: AbstractFrictionSystem, ts: Array, ys: Array, h: ArrayLike, peak=None) -> Array:
    """The status of a fixed-step RK4 run of ``system`` with step ``h`` saved at ``(ts, ys)``:
    :func:`finite_status` of the states, turned unstable where ``h`` is too long for a
    contact's stick band (:func:`~jaxfriction.stick_band_rate`), for a dynamic law's
    internal states or for the stick of a law with a jump at zero slip at the saved points
    (:func:`~jaxfriction._integrate.stability.saved_state_rate`), or for ``peak``, the same
    rate's largest value at points that were not saved (a transient's)."""
    band = stick_band_rate(system)
    return unstable_step_status(finite_status(ys), h, (band, saved_state_rate(system, ts, ys, band), peak))


def fixed_step_scan(step, y0: Array, t0: ArrayLike, h: ArrayLike, n_saves: int,
                    every: int) -> tuple[Array, Array, Array]:
    """Run ``step(t, y) -> (y_next, ok)`` over ``n_saves * every`` steps of size ``h``, saving every ``every``.

    Times are ``t0 + k h`` from the integer step count. The solvers that step by their own
    rules (:class:`~jaxfriction.MoreauJean`, :class:`~jaxfriction.WestermoUdwadia`,
    :class:`~jaxfriction.NaEltawil2D`) share it.

    Returns:
        ``(ts (n_saves + 1,), ys (n_saves + 1, state_size), status)``: ``status`` is
            :func:`finite_status` of the states with ``ok`` the conjunction over all steps.
    """

    def one_save(carry, i) -> tuple[tuple[Array, Array], Array]:
        def one_step(carry, j) -> tuple[tuple[Array, Array], None]:
            y, ok = carry
            y, step_ok = step(t0 + (i * every + j) * h, y)
            return (y, ok & step_ok), None

        carry, _ = jax.lax.scan(one_step, carry, jnp.arange(every))
        return carry, carry[0]

    (_, ok), ys = jax.lax.scan(one_save, (y0, jnp.array(True)), jnp.arange(n_saves))
    ys = jnp.concatenate([y0[None], ys])
    return t0 + jnp.arange(n_saves + 1) * (every * h), ys, finite_status(ys, ok)  # type: ignore[return-value]


class RK4(FixedStepSolver):
    """Classical fixed-step RK4 in ``lax.scan``: the papers' method and the default.

    Quinn 2004 Sec. 3 and paper 002 Sec. 4 integrate with it; it is the fastest path (small
    states are stepped component by component, :func:`~jaxfriction.rk4_scan`), works under
    ``jit``/``vmap``/``grad`` and needs concrete ``t0``, ``t1`` and ``dt``. Grids are
    step-aligned: the step is ``(t1 - t0) / n_steps <= dt`` (:func:`~jaxfriction.fixed_grid`).
    A run whose step makes RK4 unstable inside a contact's stick band gets
    ``STATUS_UNSTABLE_STEP`` (:func:`~jaxfriction.stick_band_rate`), and so does one whose
    step is too long for a dynamic law's internal states at the saved points
    (``internal_state_rate`` in :mod:`jaxfriction._integrate.stability`).

    Args:
        checkpoint: bound the memory of reverse-mode gradients to O(n_saves
            sqrt(save_every)) states for about one extra forward run (values unchanged;
            reverse-mode gradients differ from unchecked ones by round-off, up to ~1e-11
            relative, because XLA fuses the recomputed steps differently).
        rounding: the step count, ``"ceil"`` (default: ``h <= dt``) or ``"round"`` (the
            papers' nearest count, :func:`~jaxfriction.fixed_grid`).
    """

    checkpoint: bool = eqx.field(default=False, static=True)
    rounding: str = eqx.field(default="ceil", static=True)

    def __check_init__(self):
        check_rounding(self.rounding)

    def integrate_on_grid(self, system: AbstractFrictionSystem, y0: Array, t0: ArrayLike, h: ArrayLike,
                          n_saves: int, every: int, args) -> tuple[Array, Array, Array]:
        check_saved_size(n_saves + 1, y0.size, y0.dtype)
        ts, ys = rk4_scan(system.vector_field, y0, t0, h, n_saves, every, args, checkpoint=self.checkpoint)
        return ts, ys, rk4_status(system, ts, ys, h)

    def transient_and_window(self, system: AbstractFrictionSystem, y0: Array, t_measure: float, t_end: float,
                             dt: float, saveat: SaveAt, args=None) -> tuple[Array, Array, Array]:
        """A run from ``(0, y0)`` whose window ``[t_measure, t_end]`` alone is saved, as
        ``simulate`` to ``t_measure`` (end point only) followed by ``simulate`` of the window
        gives it, value for value, with the step compiled once (:func:`~jaxfriction._integrate.rk4.rk4_legs`;
        forward mode only, so not with ``checkpoint``). The transient is judged by the
        step-size rules at the window's cadence (every ``every`` steps, the window's save
        interval), not at its end points alone: a lane whose step is too long only during
        the transient is flagged too.

        Returns:
            ``(status, ts, ys)``: the combined status of the two runs and the window's
                saved times and states.
        """
        y0 = system.as_state(y0)
        _, n_pre, h_pre = fixed_step_grid(0.0, t_measure, transient_step(t_measure, t_end, dt, saveat, self.rounding),
                                          SaveAt(n=1), self.rounding)
        n_saves, every, h = fixed_step_grid(t_measure, t_end, dt, saveat, self.rounding)
        check_saved_size(n_saves + 1, y0.size, y0.dtype)
        legs = [(0.0, h_pre, n_pre, every, False), (t_measure, h, n_saves * every, every, True)]
        monitored = saved_state_rate(system, jnp.zeros(1), y0[None]) is not None
        band = stick_band_rate(system)  # parameters only: once, not at every marked step
        rate = (lambda t, y: saved_state_rate(system, jnp.reshape(t, (1,)), y[None], band)) if monitored else None
        out = rk4_legs(system.vector_field, y0, legs, args, monitor=rate)
        ys, peak = out if monitored else (out, None)
        pre = rk4_status(system, jnp.asarray([0.0, n_pre * h_pre]), ys[:2], h_pre, None if peak is None else peak[0])
        ts = t_measure + jnp.arange(n_saves + 1) * every * h
        return combine_status(pre, rk4_status(system, ts, ys[1:], h)), ts, ys[1:]


class Diffrax(AbstractSolver):
    """Any diffrax solver, fixed-step or adaptive (``diffrax.Tsit5()``, ``diffrax.Kvaerno5()``, ...).

    A solver without an error estimate (``diffrax.Euler()``, :class:`~jaxfriction.ClassicRK4`)
    steps exactly through the fixed step-aligned grid (``diffrax.StepTo``); an adaptive one
    uses a PID controller with ``rtol``/``atol`` and first step ``dt`` (or diffrax's
    choice if None). Passing a bare diffrax solver to ``simulate`` means ``Diffrax(solver)``.

    The energy books are quadratures outside the step-size control. The state's three
    running integrals (``E_friction``, ``E_damping``, ``W_input``) are integrated by the
    same solver, at the same steps, but the default controller's error norm is
    :func:`~jaxfriction.dynamics_rms_norm`, the RMS over the dynamical entries only
    (positions, velocities, internal variables of dynamic laws): a run takes the steps of
    the same equations integrated without the books. With explicit solvers the books are
    as accurate as the motion: the energy balance residual
    (:func:`~jaxfriction.relative_energy_residual`) is of the order of ``rtol``.

    Implicit solvers (``Kvaerno5``) stop their Newton iterations with the controller's
    norm unless their root finder has tolerances of its own; with the default controller
    they get ``rtol``, ``atol`` and ``optimistix.rms_norm`` over the whole state, books
    included. Out of Newton's norm the books' stage values would carry the last
    iteration's change of the motion times the powers' sensitivity: on a stiff LuGre
    oscillator (``rtol = 1e-8``) the energy residual was 1.6e-6 against 2.6e-8, for 9 %
    fewer steps; on Quinn's oscillator 1.9e-7 against 7.4e-8, for 4.5x fewer steps
    (``scripts/benchmarks/bench_adaptive.py --implicit``). To leave the books out of Newton's norm
    too, give the root finder that norm: ``diffrax.Kvaerno5(root_finder=
    diffrax.VeryChord(rtol=..., atol=..., norm=jf.dynamics_rms_norm))``.

    A ``stepsize_controller`` of your own is used as given, its norm included (diffrax's
    default norm puts the books back under control; add ``norm=jf.dynamics_rms_norm`` to
    keep them out). It is not wrapped because a norm of your own may need the whole state.
    Explicit Runge-Kutta solvers get small states (at most 32 entries) as a tuple of their
    scalar components, which is faster under ``vmap`` on CPU, so a norm then receives the
    error as that tuple (``optimistix.rms_norm`` and ``max_norm`` give the same value on the
    tuple as on the flat array); implicit solvers and larger states get the flat array.

    Args:
        solver: a ``diffrax.AbstractSolver`` instance.
        rtol, atol: adaptive tolerances (> 0) of the default controller (unused when
            ``stepsize_controller`` is given).
        max_steps: diffrax step budget (a lane that needs more gets ``STATUS_SOLVER_FAILED``).
        adjoint: a diffrax adjoint; None is diffrax's default (``RecursiveCheckpointAdjoint``,
            reverse mode only). Forward-mode derivatives (``jax.jvp``, ``jax.jacfwd``) need
            ``diffrax.ForwardMode()``; :func:`~jaxfriction.sweep` sets it by itself.
        stepsize_controller: a ``diffrax.AbstractStepSizeController`` for an adaptive
            ``solver``, used instead of the default
            ``diffrax.PIDController(rtol=rtol, atol=atol, norm=jf.dynamics_rms_norm)``;
            None (default) for that one.

    Raises:
        ValueError: a solver that is not a diffrax solver, bad tolerances, a
            ``stepsize_controller`` that is not a diffrax step-size controller or is given
            with a fixed-step solver (which steps through the step-aligned grid).
    """

    solver: object
    rtol: float = 1e-8
    atol: float = 1e-10
    max_steps: int = eqx.field(default=1_000_000, static=True)
    adjoint: object = None
    stepsize_controller: object = None

    def __check_init__(self):
        import diffrax

        from .diffrax_solvers import is_adaptive

        if not isinstance(self.solver, diffrax.AbstractSolver):
            raise ValueError(f"solver must be a diffrax solver, got {self.solver!r}")
        check_real("rtol", self.rtol, positive=True)
        check_real("atol", self.atol, positive=True)
        if self.stepsize_controller is not None:
            if not isinstance(self.stepsize_controller, diffrax.AbstractStepSizeController):
                raise ValueError(f"stepsize_controller must be a diffrax step-size controller, "
                                 f"got {self.stepsize_controller!r}")
            if not is_adaptive(self.solver):
                raise ValueError(f"stepsize_controller needs an adaptive solver; {type(self.solver).__name__} "
                                 f"has no error estimate and steps through the step-aligned grid of dt")
        check_int("max_steps", self.max_steps, minimum=1)

    def steps_with_dt(self) -> bool:
        from .diffrax_solvers import is_adaptive

        return not is_adaptive(self.solver)

    def for_forward_mode(self) -> Diffrax:
        import diffrax

        return dataclasses.replace(self, adjoint=diffrax.ForwardMode())

    def integrate(self, system, y0, t0, t1, dt, saveat, args):
        import diffrax

        ts, sol = self.solution(system, y0, t0, t1, dt, saveat, args)
        return ts, sol.ys, finite_status(sol.ys, sol.result == diffrax.RESULTS.successful)

    def solution(self, system, y0, t0, t1, dt=None, saveat=None, args=None):
        """The run as diffrax returns it, for its step counts: what :meth:`integrate` does.

        Args:
            system: any jaxfriction system.
            y0: full state ``(state_size,)`` (``system.as_state(...)``).
            t0, t1: concrete floats, ``t1 > t0``.
            dt: first step of an adaptive solver (None: diffrax's choice), the fixed step
                of a fixed-step one.
            saveat: a :class:`~jaxfriction.SaveAt` (None: 1001 equally spaced times for
                adaptive solvers, every step for fixed-step ones).
            args: passed to ``system.vector_field``.

        Returns:
            ``(ts (k,), sol)``: the save times and the ``diffrax.Solution`` (``sol.ys``
                ``(k, state_size)``, ``sol.result``, ``sol.stats["num_accepted_steps"]``,
                ``sol.stats["num_rejected_steps"]``).

        Raises:
            ValueError: a ``saveat`` the solver cannot honour, a missing ``dt`` for a
                fixed-step solver, an invalid span.
        """
        from .diffrax_solvers import diffrax_solution, is_adaptive

        saveat = SaveAt() if saveat is None else saveat
        if is_adaptive(self.solver):
            check_time_span(t0, t1, dt)
            ts = saveat.ts if saveat.ts is not None else jnp.linspace(t0, t1, (saveat.n or 1000) + 1)
            if saveat.every is not None:
                raise ValueError("SaveAt(every=...) needs a fixed-step solver; use SaveAt(n=...) or SaveAt(ts=...)")
            ts = jnp.asarray(ts)
            sol = diffrax_solution(system, y0, t0, t1, self.solver, ts, dt0=dt, rtol=self.rtol, atol=self.atol,
                                   max_steps=self.max_steps, args=args, adjoint=self.adjoint,
                                   controller=self.stepsize_controller)
        else:
            n_saves, every, h = fixed_step_grid(t0, t1, dt, saveat)
            check_saved_size(n_saves + 1, y0.size, y0.dtype)
            ts = t0 + jnp.arange(n_saves + 1) * (every * h)
            step_ts = t0 + jnp.arange(n_saves * every + 1) * h
            sol = diffrax_solution(system, y0, t0, t1, self.solver, ts, step_ts=step_ts, rtol=self.rtol,
                                   atol=self.atol, max_steps=max(self.max_steps, n_saves * every + 1), args=args,
                                   adjoint=self.adjoint)
        return ts, sol
