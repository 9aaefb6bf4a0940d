"""Periodic orbits by shooting: ``phi_T(x) = x`` solved by Newton or Levenberg-Marquardt.

A forced system's orbit has the forcing period ``T = 2 pi / omega``
(:mod:`.period`); the unknowns are the dynamical state ``x`` at the forcing phase ``t0``. An
autonomous system's period is unknown too, and a phase condition fixes where on the orbit
``x`` lies (the anchor condition ``f(x_ref) . (x - x_ref) = 0``: ``x`` on the hyperplane
through the starting guess normal to the flow there; Seydel 2010, Sec. 7.3, eq. 7.11). The
Jacobian of the residual is the flow's, by forward-mode AD through the fixed-step RK4 period
map (:mod:`.flow`), for any law; the root finders are optimistix's (``optx.Newton``,
``optx.LevenbergMarquardt``), with implicit differentiation at the root
(``optx.ImplicitAdjoint``), so derivatives of an orbit with respect to the system's
parameters come from the implicit function theorem at the converged orbit, never through
the Newton iterations or the transient (:mod:`.sensitivity`).

With ``integrator=EventDriven(...)`` the period map is the exact event-driven flow of
set-valued Coulomb friction instead (:func:`.flow.exact_period_run`): the same residual, root
finders and implicit derivative, the Jacobian by forward-mode AD through the located events
(which carries the saltation matrices); its checks, transient and start are
:mod:`.exact_orbit`'s.

The guess comes from a short transient (a few periods from ``y0``). Every returned orbit
carries its residual ``|phi_T(x) - x|``; one that did not converge says so (``converged``,
``status``) and warns.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import check_int, check_real
from ..._integrate.resolution import check_step_resolution
from ..._integrate.rk4 import rk4_scan
from ..._integrate.solvers import AbstractSolver
from ..._integrate.status import STATUS_MEANINGS, STATUS_OK
from ..._integrate.trajectory import Trajectory
from ..._observables.stick import stick_fraction
from ..._paths import traced_parameters
from ..._templates import split_template
from .exact_orbit import _check_integrator, _exact_start
from .floquet import floquet_multipliers, is_stable
from .flow import exact_period_run, full_state, period_map, period_trajectory, steps_per_period
from .period import _estimated_period, _forced_period, _need_transient, forcing_frequency_path, forcing_period

#: Solver names of :func:`periodic_orbit`.
SOLVERS = ("newton", "lm")


def residual_scale(x):
    """The scale of the residual test: ``max(1, |x|_inf)``."""
    return jnp.maximum(1.0, jnp.max(jnp.abs(x)))


def amplitude(traj: Trajectory, event_positions=None):
    """Half the peak-to-peak range of the positions over a saved period (per dof), each
    extreme refined by the parabola through the saved point and its two neighbours (the
    saved period is periodic, so the neighbours wrap around). Units of the positions.
    With ``event_positions`` (one dof: an exact orbit's positions at its events, where a
    still surface's velocity zeros lie) the extremes are the largest and smallest of those and
    the saved points, unrefined: the acceleration jumps at an event, so a parabola through
    samples around it would overshoot (exact for a still surface; to the sample spacing,
    O(h^2), for an extreme inside a slip on a moving surface)."""
    q = jnp.reshape(traj.ys[:-1, : traj.system.n_dof], (traj.ys.shape[0] - 1, -1))  # (n, dof)

    def extreme(q, sign):
        i = jnp.argmax(sign * q)
        a, b, c = q[i - 1], q[i], q[(i + 1) % q.shape[0]]
        curvature = a - 2 * b + c
        safe = jnp.where(curvature == 0, 1.0, curvature)
        return jnp.where(curvature == 0, b, b - (c - a) ** 2 / (8 * safe))

    if event_positions is not None:
        top = jnp.maximum(jnp.max(q, axis=0), jnp.max(event_positions))
        bottom = jnp.minimum(jnp.min(q, axis=0), jnp.min(event_positions))
    else:
        top = jax.vmap(lambda col: extreme(col, 1.0), in_axes=1)(q)
        bottom = jax.vmap(lambda col: extreme(col, -1.0), in_axes=1)(q)
    half = 0.5 * (top - bottom)
    return half[0] if traj.system.n_dof == 1 else half


def _flow(integrator, t0, n_steps):
    """The period map ``(system, x, period) -> end state`` of the RK4 flow (``integrator``
    None) or of the exact event-driven flow (a :class:`~jaxfriction.EventDriven`)."""
    if integrator is None:
        return lambda system, x, period: period_map(system, x, t0, period, n_steps)
    return lambda system, x, period: exact_period_run(system, x, t0, period, 1, integrator)[0].ys[-1]


def _residual_fn(frequency, t0, n_steps, d, integrator=None):
    """The shooting residual ``F(z, args)``: ``z = x`` (forced, ``args = system``) or ``z =
    [x, T]`` (autonomous, ``args = (system, x_ref, f_ref)``)."""
    flow = _flow(integrator, t0, n_steps)
    if frequency is not None:
        def forced(x, system):
            return flow(system, x, forcing_period(system, frequency))[:d] - x
        return forced

    def autonomous(z, args):
        system, x_ref, f_ref = args
        x, period = z[:d], z[d]
        end = flow(system, x, period)[:d]
        return jnp.concatenate([end - x, jnp.dot(f_ref, x - x_ref)[None]])
    return autonomous


def frozen(tree):
    """``tree`` with ``stop_gradient`` on its array leaves (Python numbers and static fields
    are left as they are, so a system's literal zeros keep their fast paths)."""
    return jax.tree.map(lambda x: jax.lax.stop_gradient(x) if eqx.is_array(x) else x, tree)


def shoot(system, z0, *, frequency, t0, n_steps, tol, max_steps, solver="newton", integrator=None):
    """The traceable core: solve the shooting problem from ``z0`` (``x``, or ``[x, T]`` for an
    autonomous system) and measure the orbit (usable inside ``jit``, ``vmap`` and a sweep lane).

    The root ``z*`` is found by optimistix on the system with its derivatives stopped; the
    returned ``z = z* - J^{-1} F(z*, p)`` (``J = dF/dz`` at ``z*``, without derivatives) has the
    value of ``z*`` refined by one Newton step and, by construction, the derivative ``dz/dp =
    -J^{-1} dF/dp`` of the implicit function theorem at the root (in forward and reverse
    mode), never through the iterations or the transient. A ``z0`` that is already periodic
    (a lane at rest) is its own root; a solve that fails keeps ``z0`` and is reported
    unconverged; a singular ``J`` (a non-isolated orbit, e.g. a block stuck anywhere in its
    static band) keeps the root without the correction. Nothing raises inside a batch.

    ``integrator``: None shoots on the RK4 flow of ``n_steps`` steps per period; a
    :class:`~jaxfriction.EventDriven` on the exact event-driven flow
    (:func:`~jaxfriction._workflows.periodic.flow.exact_period_run`), whose period is then
    saved at ``n_steps + 1`` equal times and ``event_positions`` are returned too.

    Returns:
        Dict: ``z`` (the solution), ``x`` ``(d,)``, ``period``, ``residual`` (``|phi_T(x) -
            x|_inf``), ``converged`` (bool: optimistix succeeded and ``residual <= tol
            max(1, |x|)``), ``steps`` (iterations), ``end`` (the full state after one
            period: ``end[-3]`` is the dissipation per cycle), ``trajectory`` (that period
            saved at every RK4 step, a :class:`~jaxfriction.Trajectory` with the fixed-step
            run's status) and ``monodromy`` (``(d, d)``, ``d phi_T / d x`` at the root).
    """
    import optimistix as optx

    d = system.dynamical_size
    fn = _residual_fn(frequency, t0, n_steps, d, integrator)
    z0 = jax.lax.stop_gradient(z0)
    if frequency is None:
        x_ref = z0[:d]
        f_ref = frozen(system).vector_field(t0, full_state(system, x_ref))[:d]
        f_ref = f_ref / jnp.maximum(jnp.linalg.norm(f_ref), 1e-300)
        args = (system, x_ref, f_ref)
    else:
        args = system
    fixed = frozen(args)
    scale0 = residual_scale(z0[:d])
    start_ok = jnp.max(jnp.abs(fn(z0, fixed)[:d])) <= tol * scale0  # already periodic (e.g. at rest)
    # a lane that starts periodic (at rest, or a transient that has died out) solves z - z0 = 0
    # instead: one step, where its own residual could keep a batch's Newton loop going to
    # max_steps (a resting orbit's multiplier 1 makes its Jacobian singular)
    def solved(z, a):
        return jnp.where(start_ok, z - z0, fn(z, a))

    if solver == "newton":
        sol = optx.root_find(solved, optx.Newton(rtol=tol, atol=tol * scale0), z0, fixed, max_steps=max_steps,
                             throw=False)
    else:
        sol = optx.least_squares(solved, optx.LevenbergMarquardt(rtol=tol, atol=tol * scale0), z0, fixed,
                                 max_steps=max_steps, throw=False)
    found = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(sol.value))
    root = jnp.where(start_ok | ~found, z0, sol.value)
    scale = residual_scale(root[:d])
    jac = jax.jacfwd(lambda z: fn(z, fixed))(root)
    step = jnp.linalg.solve(jac, fn(root, args))  # value ~0 at a root; its derivative is the IFT's
    small = jnp.all(jnp.isfinite(jax.lax.stop_gradient(step))) & \
        (jnp.max(jnp.abs(jax.lax.stop_gradient(step))) <= jnp.sqrt(tol) * scale)
    z = jnp.where(small, root - step, root)  # a singular Jacobian (a non-isolated orbit) keeps the root
    x = z[:d]
    period = forcing_period(system, frequency) if frequency is not None else z[d]
    if integrator is None:
        traj = period_trajectory(system, x, t0, period, n_steps)  # the orbit's period, saved at every step
        events = None
    else:
        traj, events = exact_period_run(system, x, t0, period, n_steps, integrator)
    end = traj.ys[-1]
    residual = jnp.max(jnp.abs(end[:d] - x))
    ok = (start_ok | found) & (residual <= tol * scale) & jnp.all(jnp.isfinite(end))
    if frequency is None:
        ok = ok & (period > 0)
    return {"z": z, "x": x, "period": period, "residual": residual, "converged": ok,
            "steps": sol.stats["num_steps"], "end": end, "trajectory": traj, "monodromy": jac[:d, :d] + jnp.eye(d, dtype=jac.dtype),
            "event_positions": events}


@eqx.filter_jit
def _solve(system, z0, frequency, t0, n_steps, tol, max_steps, solver, integrator=None):
    out = shoot(system, z0, frequency=frequency, t0=t0, n_steps=n_steps, tol=tol, max_steps=max_steps, solver=solver,
                integrator=integrator)
    traj = out.pop("trajectory")
    out["traj_ts"], out["traj_ys"], out["traj_status"] = traj.ts, traj.ys, traj.status
    out["stick_fraction"] = stick_fraction(traj)
    out["amplitude"] = amplitude(traj, out.pop("event_positions"))
    return out


@eqx.filter_jit
def _transient(system, y, t0, h, n_steps):
    _, ys = rk4_scan(system.vector_field, y, t0, h, 1, n_steps)
    return ys[-1]


@dataclasses.dataclass(frozen=True)
class PeriodicOrbit:
    """A periodic steady state found by :func:`periodic_orbit` (host-side NumPy values).

    Attributes:
        system: the system (its parameters are the orbit's).
        y0: ``(dynamical_size,)`` dynamical state on the orbit at time ``t0`` (positions,
            velocities, internal variables).
        t0: the phase (time) of ``y0``; for a forced system the forcing phase.
        period: ``T`` (time units): the forcing period, or the solved one (autonomous).
        autonomous: whether the period was an unknown.
        residual: ``|phi_T(y0) - y0|_inf``, always reported (units of the state).
        converged: True when the solver succeeded, ``residual <= tol max(1, |y0|_inf)`` and
            the period's run is finite with a stable RK4 step.
        status: ``"converged"``, or why not (``"not converged"``, ``"non-finite"``, the RK4
            status of the period's run).
        iterations: solver iterations taken.
        n_steps: RK4 steps per period (``h = T / n_steps``).
        monodromy: ``(d, d)`` Jacobian of the period map at ``y0``.
        multipliers: ``(d,)`` complex Floquet multipliers, by decreasing modulus
            (:mod:`.floquet`).
        stable: every non-trivial multiplier inside the unit circle.
        dissipation: friction energy dissipated per period (J; Quinn 2004 Sec. 3.1.2's D).
        input_work: work of the drives per period (J).
        damping_dissipation: viscous dissipation per period (J).
        stick_fraction: fraction of the period stuck (``|slip| <= 1e-6``).
        amplitude: half the peak-to-peak range of the positions (a float for one dof,
            ``(n_dof,)`` otherwise).
        trajectory: the period saved at every RK4 step (:class:`~jaxfriction.Trajectory`).
        frequency: the path of the forcing frequency (None: autonomous).
        tol: the residual tolerance the orbit was solved to.
        integrator: None (the RK4 flow) or the :class:`~jaxfriction.EventDriven` of an
            exact-stick orbit (then ``n_steps`` counts the saved intervals of the period).
    """

    system: Any
    y0: np.ndarray
    t0: float
    period: float
    autonomous: bool
    residual: float
    converged: bool
    status: str
    iterations: int
    n_steps: int
    monodromy: np.ndarray
    multipliers: np.ndarray
    stable: bool
    dissipation: float
    input_work: float
    damping_dissipation: float
    stick_fraction: float
    amplitude: Any
    trajectory: Trajectory = dataclasses.field(repr=False)
    frequency: str | None = None
    tol: float = 1e-10
    integrator: Any = None

    def __repr__(self):
        return (f"PeriodicOrbit(status={self.status!r}, period={self.period:.6g}, residual={self.residual:.2e}, "
                f"dissipation={self.dissipation:.6g}, amplitude={self.amplitude}, stable={self.stable}, "
                f"max|multiplier|={np.max(np.abs(self.multipliers)):.4g})")


def _unpack(system, y0, dt, frequency):
    system, tpl = split_template(system)
    if tpl is not None:
        dt = tpl.dt if dt is None else dt
        y0 = tpl.y0 if y0 is None else y0
        frequency = tpl.frequency if frequency is None else frequency
    return system, y0, dt, frequency


def periodic_orbit(system, y0=None, *, dt: float | None = None, period: float | None = None,
                   frequency: str | None = None, t0: float = 0.0, transient: float | None = None,
                   tol: float = 1e-10, max_steps: int = 50, solver: str = "newton",
                   integrator=None, warn: bool = True) -> PeriodicOrbit:
    """The periodic steady state of ``system`` by shooting on its fixed-step RK4 flow, or on
    the exact event-driven flow (``integrator=jf.EventDriven(...)``).

    Forced systems (a :class:`~jaxfriction.Harmonic` drive, or ``frequency``): ``T = 2 pi /
    omega``, the unknown is the state at phase ``t0``. Autonomous systems (no forcing: the belt,
    the spring-slider): the period is solved too, with the anchor phase condition (module
    docstring). Newton (``solver="newton"``, default) or Levenberg-Marquardt (``"lm"``) from
    optimistix, Jacobian by forward-mode AD through the RK4 period map (any law, dynamic laws
    included: their internal variables are part of the orbit). The start is the state after a
    short transient from ``y0``. The step is ``h = T / n`` with ``n = ceil(T / dt)``, the grid
    of a sweep's last-cycle window, so the orbit's dissipation is the 50-cycle sweep's
    without the transient.

    Exact stick (``integrator=jf.EventDriven(...)``): the period map is the event-driven
    solution of set-valued Coulomb friction (single-contact :class:`~jaxfriction.Oscillator`,
    ``Coulomb`` or ``StaticKineticCoulomb``), and Newton's Jacobian and the monodromy are
    forward-mode Jacobians through it, the located events included, which carries the
    saltation matrices of the stick-slip transitions (Leine & Nijmeijer 2004, Sec. 7.2; see
    :func:`~jaxfriction._workflows.periodic.flow.exact_period_run`). The orbit is exact to the
    solver tolerance (no O(eps) regularization error); a sticking orbit has a zero multiplier.
    ``dt`` is then only the spacing of the saved period (default ``T / 200``), the
    transient is whole periods of the exact flow, and ``max_events`` of the integrator is the
    event budget of one period (16 is plenty for one stick-slip cycle; the default 256 costs
    time). ``t0`` should not be an event time of the orbit (the period map is not smooth
    there). The argument is ``integrator`` because ``solver`` names the root finder.

    Args:
        system: a jaxfriction system, or a :class:`~jaxfriction.Template` (its ``dt``, ``y0``
            and ``frequency`` are the defaults).
        y0: ``(2 n_dof,)`` positions and velocities (or ``(dynamical_size,)``) to start the
            transient from; default rest at the origin (internal variables at the law's).
        dt: RK4 step bound (time units), required unless a template gives it; at least 20
            steps per forcing period (:mod:`jaxfriction._integrate.resolution`).
        period: the period for an autonomous system (a guess, refined); a forced system's
            comes from its forcing and must not be given.
        frequency: path of the forcing frequency (default: the Harmonic drives'; see
            :func:`~jaxfriction._workflows.periodic.period.forcing_frequency_path`).
        t0: phase (time) at which ``y0`` of the orbit is reported (forced systems).
        transient: time run from ``y0`` before shooting (time units); default 5 periods (the
            guess for an autonomous system). An autonomous system without ``period`` needs
            it: its period is estimated from the upward crossings of the first position
            through its mean over the second half of the transient.
        tol: the residual test ``|phi_T(x) - x|_inf <= tol max(1, |x|_inf)`` (and the
            solver's step tolerance).
        max_steps: solver iterations allowed.
        solver: ``"newton"`` or ``"lm"``.
        integrator: None (or :class:`~jaxfriction.RK4`): the RK4 flow of the system's law;
            a :class:`~jaxfriction.EventDriven`: the exact event-driven flow.
        warn: warn (UserWarning) when the orbit did not converge.

    Returns:
        A :class:`PeriodicOrbit`, with the residual always and ``converged``/``status``.

    Raises:
        ValueError: naming the argument: not a system, missing or invalid ``dt``, ``period``
            for a forced system, an autonomous system with neither ``period`` nor
            ``transient``, no oscillation to estimate a period from, ``y0`` of the wrong
            shape, an unknown solver, invalid ``tol``/``max_steps``; an ``integrator`` other
            than RK4 or EventDriven, or a system or law EventDriven cannot solve exactly
            (naming ``system`` or ``law``).

    Example:
        Quinn's forced oscillator (Quinn 2004 eq. 5, Fig. 7 case a) in its sticking steady
        state: one Newton solve replaces 49 cycles of transient::

            orbit = jf.periodic_orbit(jf.template("oscillator"))
            orbit.dissipation, orbit.stick_fraction, orbit.stable
    """
    system, y0, dt, frequency = _unpack(system, y0, dt, frequency)
    if isinstance(solver, AbstractSolver):
        raise ValueError(f"solver is the root finder, one of {SOLVERS}; pass the {type(solver).__name__} "
                         f"integrator as integrator=")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    check_real("tol", tol, positive=True)
    check_int("max_steps", max_steps, minimum=1)
    check_real("t0", t0)
    integrator = _check_integrator(integrator, system)
    system = traced_parameters(system, keep_zeros=integrator is None)
    if integrator is not None:
        frequency, n, z0 = _exact_start(system, y0, dt, period, frequency, float(t0), transient, integrator)
        out = _solve(system, z0, frequency, float(t0), n, float(tol), int(max_steps), solver, integrator)
        return _finish(system, out, frequency, float(t0), n, float(tol), warn, integrator)
    if dt is None:
        raise ValueError("dt is required (the RK4 step bound), unless a Template gives it")
    check_real("dt", dt, positive=True)
    frequency = forcing_frequency_path(system, frequency)
    if transient is not None:
        check_real("transient", transient, nonnegative=True)
    d = system.dynamical_size
    y = system.as_state(jnp.zeros(2 * system.n_dof) if y0 is None else y0)
    dtype = y.dtype
    if frequency is not None:
        T = _forced_period(system, frequency, period)
        check_step_resolution(system, dt, span=T)
        n = steps_per_period(T, dt)
        run = 5 * T if transient is None else float(transient)
        cycles = math.ceil(run / T * (1 - 1e-12)) if run > 0 else 0
        if cycles:  # whole periods of the same step, ending at phase t0
            y = _transient(system, y, float(t0) - cycles * T, T / n, cycles * n)
        z0 = y[:d]
    else:
        if period is None:
            _need_transient(transient)
            n_tr = steps_per_period(float(transient), dt)  # type: ignore[arg-type]
            ts, ys = jax.jit(lambda y: rk4_scan(system.vector_field, y, float(t0) - float(transient),  # type: ignore[arg-type]
                                                float(transient) / n_tr, n_tr, 1), )(y)  # type: ignore[arg-type]
            half = n_tr // 2
            period = _estimated_period(ts[half:], ys[half:, 0])
            y, transient = ys[-1], 0.0
        check_real("period", period, positive=True)
        T = float(period)
        n = steps_per_period(T, dt)
        run = 5 * T if transient is None else float(transient)
        if run > 0:
            n_tr = steps_per_period(run, dt)
            y = _transient(system, y, float(t0) - run, run / n_tr, n_tr)
        z0 = jnp.concatenate([y[:d], jnp.asarray([T], dtype)])
    out = _solve(system, z0, frequency, float(t0), n, float(tol), int(max_steps), solver)
    return _finish(system, out, frequency, float(t0), n, float(tol), warn)


def _finish(system, out, frequency, t0, n, tol, warn, integrator=None):
    """The host-side :class:`PeriodicOrbit` of a :func:`_solve` output."""
    d = system.dynamical_size
    out = jax.tree.map(np.asarray, out)
    traj = Trajectory(ts=jnp.asarray(out["traj_ts"]), ys=jnp.asarray(out["traj_ys"]), system=system,
                      status=jnp.asarray(out["traj_status"]))
    run_status = int(out["traj_status"])
    converged = bool(out["converged"]) and run_status == STATUS_OK
    if converged:
        status = "converged"
    elif not np.all(np.isfinite(out["end"])):
        status = "non-finite"
    elif run_status != STATUS_OK:
        status = STATUS_MEANINGS[run_status]
    else:
        status = "not converged"
    multipliers = floquet_multipliers(out["monodromy"]) if np.all(np.isfinite(out["monodromy"])) else \
        np.full(d, np.nan + 0j)
    end = out["end"]
    amp = out["amplitude"]
    orbit = PeriodicOrbit(
        system=system, y0=out["x"], t0=float(t0), period=float(out["period"]), autonomous=frequency is None,
        residual=float(out["residual"]), converged=converged, status=status, iterations=int(out["steps"]),
        n_steps=n, monodromy=out["monodromy"], multipliers=multipliers,
        stable=converged and is_stable(multipliers, frequency is None),
        dissipation=float(end[-3]), damping_dissipation=float(end[-2]), input_work=float(end[-1]),
        stick_fraction=float(out["stick_fraction"]), amplitude=float(amp) if np.ndim(amp) == 0 else amp,
        trajectory=traj, frequency=frequency, tol=float(tol), integrator=integrator)
    if warn and not converged:
        warnings.warn(f"periodic_orbit did not converge ({status}): residual |phi_T(y0) - y0| = {orbit.residual:.3g} "
                      f"after {orbit.iterations} iterations; try a longer transient, another y0 or solver='lm'",
                      UserWarning, stacklevel=3)
    return orbit
