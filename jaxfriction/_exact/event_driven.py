"""Exact Coulomb friction by event-driven regime switching (paper 004; Quinn 2004 Sec. 3.1.2).

A single-contact system moves in one of three regimes: slip+ (``v_rel > 0``, friction
``-mu_k N``), slip- (``v_rel < 0``, ``+mu_k N``) and stick (``v_rel = 0``: the body rides the
surface and friction equals the force balance ``f_eq``). Each regime is a smooth ODE,
integrated with diffrax to tight tolerance until an event ends it:

- in slip ``s``: ``s v_rel`` falls to 0 (paper 004: value ``v``, direction ``-s``). If then
  ``|f_eq| <= mu_s N`` the contact sticks, otherwise the slip reverses at once
  (``s = -sgn f_eq``) with no stick interval;
- in stick: ``mu_s N - |f_eq|`` falls to 0 (paper 004: value ``F_ext -+ mu N``); the new
  slip direction is ``-sgn f_eq``.

A bounded ``lax.scan`` over at most ``max_events`` segments restarts the solve in the new
regime, so the solver works under ``jit``, ``vmap`` (lanes with different event counts
finish at their own pace) and both modes of differentiation; a lane that runs out of
events reports ``STATUS_EVENT_BUDGET`` instead of failing the batch.

How event times are differentiated. Each segment is solved twice: once with
``stop_gradient`` inputs and a diffrax ``Event`` (bisection on the dense output) to locate the event time
``t_e``, and once, differentiably, from the segment start to that fixed ``t_e``. The event
time is then refined by one Newton step on the event function ``g`` along the exact flow,

    ``t* = t_e - g(t_e, y_e) / stop_gradient(dg/dt)``,   ``y* = y_e + f(t_e, y_e) (t* - t_e)``,

whose value is ``t_e`` to round-off but whose derivative is the implicit-function-theorem
sensitivity ``dt*/dp = -(dg/dp) / (dg/dt)`` of the event time to every parameter ``p``
(mu, forcing amplitude and frequency, initial state, earlier event times), and ``y*``
carries the matching ``f dt*/dp`` term. A segment that starts at a time ``t_s`` with a
gradient is integrated from ``stop_gradient(t_s)`` with the start state shifted by
``-f(t_s, y_s) (t_s - stop_gradient(t_s))``, the first-order effect of moving its start. So
derivatives are exact for the hybrid flow (to the solver tolerance), across stick-slip
transitions, as long as no event is grazing (``dg/dt = 0``).
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_int, check_real, check_time_span, is_concrete
from .._integrate.diffrax_solvers import dynamics_rms_norm
from .._integrate.status import (
    STATUS_EVENT_BUDGET,
    STATUS_NONFINITE,
    STATUS_OK,
    STATUS_SOLVER_FAILED,
)
from .._integrate.trajectory import Trajectory
from .._systems.oscillator import Oscillator
from .coulomb_params import coulomb_coefficients

#: Regime codes.
STICK, SLIP_POS, SLIP_NEG = 0, 1, -1


class _Regime(eqx.Module):
    """Vector field and event function of one system in a given regime (``args``)."""

    system: Oscillator
    mu_s: jax.Array
    mu_k: jax.Array

    def f_eq(self, t, x) -> Array:
        """Force balance with the body riding the surface (N)."""
        y = jnp.stack([x, self.system.surface_velocity(t)])
        return self.system.f_eq(t, y)

    def __call__(self, t, y, regime):
        sys = self.system
        x, v = y[0], y[1]
        vs, force = sys.surface_velocity(t), sys.external_force(t)
        stuck = regime == STICK
        nonfriction = force - sys.stiffness * x - sys.damping * v
        f_slip = -regime * self.mu_k * sys.normal
        f = jnp.where(stuck, self.f_eq(t, x), f_slip)
        acc = jnp.where(stuck, sys.surface_acceleration(t), (nonfriction + f) / sys.mass)
        dx = jnp.where(stuck, vs, v)
        return jnp.stack([dx, acc, -f * (v - vs), sys.damping * v * v, force * v + f * vs])

    def event(self, t, y, regime) -> Array:
        """Positive inside the regime, falls to 0 at its end."""
        v_rel = y[1] - self.system.surface_velocity(t)
        margin = self.mu_s * self.system.normal - jnp.abs(self.f_eq(t, y[0]))
        return jnp.where(regime == STICK, margin, regime * v_rel)

    def next_regime(self, t, y, regime) -> Array:
        """Regime after an event at ``(t, y)`` ending ``regime``."""
        f_eq = self.f_eq(t, y[0])
        holds = jnp.abs(f_eq) <= self.mu_s * self.system.normal
        slip = -jnp.sign(f_eq)
        return jnp.where(regime == STICK, slip, jnp.where(holds, STICK, slip)).astype(regime.dtype)

    def initial_regime(self, t, y) -> Array:
        v_rel = y[1] - self.system.surface_velocity(t)
        f_eq = self.f_eq(t, y[0])
        at_rest = jnp.where(jnp.abs(f_eq) <= self.mu_s * self.system.normal, STICK, -jnp.sign(f_eq))
        return jnp.where(v_rel != 0, jnp.sign(v_rel), at_rest).astype(jnp.int32)

    def enter(self, t, y, regime) -> Array:
        """State on entering ``regime``: in stick the velocity is set to the surface's exactly."""
        return y.at[1].set(jnp.where(regime == STICK, self.system.surface_velocity(t), y[1]))


class EventLog(eqx.Module):
    """Segments of an event-driven run.

    Attributes:
        times: ``(max_events + 1,)`` segment start times (``t0`` first); unused slots hold
            ``t1``.
        states: ``(max_events + 1, state_size)`` states at the segment starts.
        regimes: ``(max_events + 1,)`` int regime of each segment (1 slip+, -1 slip-, 0 stick).
        n_events: number of events that occurred before ``t1``.
        status: 0 ok, 2 diffrax failed, 3 event budget exhausted (``STATUS_EVENT_BUDGET``).
    """

    times: jax.Array
    states: jax.Array
    regimes: jax.Array
    n_events: jax.Array
    status: jax.Array


def _solve(regime_field, t0, t1, y0, regime, *, opts, event=None, save_ts=None):
    return diffrax.diffeqsolve(
        diffrax.ODETerm(regime_field),
        diffrax.Dopri8(),
        t0,
        t1,
        None,
        y0,
        args=regime,
        saveat=diffrax.SaveAt(t1=True) if save_ts is None else diffrax.SaveAt(ts=save_ts, t1=True),
        stepsize_controller=diffrax.PIDController(rtol=opts["rtol"], atol=opts["atol"], dtmax=opts["dtmax"],
                                                  norm=dynamics_rms_norm),
        event=event,
        max_steps=opts["max_steps"],
        adjoint=opts["adjoint"],
        throw=False,
    )


def _shifted_start(field, t, y, regime):
    """Start state at ``stop_gradient(t)`` carrying the sensitivity to the start time ``t``."""
    t_fixed = jax.lax.stop_gradient(t)
    return t_fixed, y - field(t, y, regime) * (t - t_fixed)


@eqx.filter_jit
def _event_log(field, y0, t0, t1, ts, max_events, opts):
    """Run the segment loop; returns the EventLog and the states at the output times ``ts``.

    Compiled once per system structure, times and options (``eqx.filter_jit``): a second call
    with the same arguments takes milliseconds instead of seconds of tracing.
    """
    # Bisection on diffrax's dense output brackets the event robustly (Newton on the interpolant
    # can stall at large t, where the event function's noise exceeds its tolerance); the Newton
    # step below then polishes the time on the true flow.
    # flip=True: the event function decreases through its root (positive inside the regime)
    root_finder = optx.Bisection(rtol=opts["rtol"], atol=opts["atol"], flip=True)
    event = diffrax.Event(lambda t, y, args, **kw: field.event(t, y, args), root_finder, direction=False)
    regime0 = field.initial_regime(t0, y0)
    y0 = field.enter(t0, y0, regime0)
    sg = jax.lax.stop_gradient

    def segment(carry, _) -> tuple[tuple, tuple]:
        t, y, regime, ok, ys_out = carry
        done = t >= t1
        t_fixed, y_start = _shifted_start(field, t, y, regime)
        locate = _solve(sg(field), t_fixed, t1, sg(y_start), regime, opts=opts, event=event)
        t_event = jnp.where(done, t1, sg(locate.ts[-1]))
        hit = (t_event < t1) & ~done
        # the differentiable solve of the segment, saving the output times that fall in it
        sol = _solve(field, t_fixed, t_event, y_start, regime, opts=opts, save_ts=jnp.clip(ts, t_fixed, t_event))
        y_event = sol.ys[-1]
        # one Newton step on g along the flow: exact value, implicit-function derivative
        g, g_dot = jax.jvp(lambda s, z: field.event(s, z, regime), (t_event, y_event),
                           (jnp.ones_like(t_event), field(t_event, y_event, regime)))
        delta = jnp.where(hit, -g / sg(g_dot), 0.0)
        t_new = t_event + delta
        # this segment owns [t_fixed, next start); times in the round-off gap between t_event
        # and the polished t_new take y(t_event)
        end = jnp.maximum(t_event, sg(t_new))
        inside = (ts >= t_fixed) & ((ts < end) | (~hit & (ts <= t_event))) & ~done
        ys_out = jnp.where(inside[:, None], sol.ys[:-1], ys_out)
        y_new = y_event + field(t_event, y_event, regime) * delta
        new_regime = jnp.where(hit, field.next_regime(t_new, y_new, regime), regime)
        y_new = jnp.where(hit, field.enter(t_new, y_new, new_regime), y_new)
        located = (locate.result == diffrax.RESULTS.successful) | (locate.result == diffrax.RESULTS.event_occurred)
        ok = ok & (located | done) & ((sol.result == diffrax.RESULTS.successful) | done)
        t_out = jnp.where(hit, t_new, t1)
        return (t_out, y_new, new_regime, ok, ys_out), (t_out, y_new, new_regime, hit)

    ys_out = jnp.full((ts.shape[0], y0.shape[0]), jnp.nan, dtype=y0.dtype)
    init = (jnp.asarray(t0, dtype=y0.dtype), y0, regime0, jnp.asarray(True), ys_out)
    (t_end, _, _, ok, ys_out), (times, states, regimes, hits) = jax.lax.scan(segment, init, None, length=max_events)
    status = jnp.where(~ok, STATUS_SOLVER_FAILED, jnp.where(t_end < t1, STATUS_EVENT_BUDGET, STATUS_OK))
    log = EventLog(
        times=jnp.concatenate([jnp.asarray(t0, y0.dtype)[None], times]),
        states=jnp.concatenate([y0[None], states]),
        regimes=jnp.concatenate([regime0[None], regimes]),
        n_events=jnp.sum(hits),
        status=status,
    )
    return log, ys_out


def simulate_event_driven(system: Oscillator, y0: ArrayLike, t0: float, t1: float,
                          ts: ArrayLike | None = None, *, n_save: int = 1000, max_events: int = 256,
                          rtol: float = 1e-12, atol: float = 1e-12, dtmax=0.1, max_steps=100_000,
                          adjoint=None) -> tuple[Trajectory, EventLog]:
    """Exact Coulomb solution of a single-contact system by event-driven regime switching.

    See the module docstring for the regimes, the events, and how event times are
    differentiated. The system's law must be :class:`~jaxfriction.Coulomb` or
    :class:`~jaxfriction.StaticKineticCoulomb` (``mu_s >= mu_k``); its ``v = 0`` force
    balance is what the stick regime enforces.

    Args:
        system: an :class:`~jaxfriction.Oscillator` (forced, under a force, on a belt).
        y0: ``(2,)`` position and velocity, or a full state ``(5,)``.
        t0, t1: concrete floats, ``t1 > t0``.
        ts: increasing times at which to return states (1-D, within ``[t0, t1]``); default
            ``n_save + 1`` equally spaced times. Each segment's solve saves the times that fall
            in it (diffrax dense output), so they cost no extra integration.
        max_events: event budget (static int >= 1); a lane needing more reports
            ``STATUS_EVENT_BUDGET`` (3) in both returned statuses.
        rtol, atol: diffrax (Dopri8) tolerances of every segment; the event time is found to
            about the same accuracy. They control the position and velocity only: the
            energy integrals are quadratures outside the step-size control
            (:func:`~jaxfriction.dynamics_rms_norm`, as in :class:`~jaxfriction.Diffrax`).
        dtmax: largest step (time units). Events are detected by a sign change of the event
            function between steps, and in stick the state is constant, so without a cap the
            controller would step over a whole breakaway window; keep ``dtmax`` well below
            the shortest time scale of the forcing (default 0.1, for periods of order 1-10).
        max_steps: diffrax step budget of one segment.
        adjoint: diffrax adjoint; default ``RecursiveCheckpointAdjoint`` (reverse mode,
            ``jax.grad``); pass ``diffrax.ForwardMode()`` for ``jax.jvp``/``jax.jacfwd``.

    Returns:
        ``(trajectory, log)``: a :class:`~jaxfriction.Trajectory` at ``ts`` (every observable
            applies; its status combines the solver's and the budget's; times not reached
            before the budget ran out hold NaN) and an :class:`EventLog`.

    Raises:
        ValueError: another law, ``t1 <= t0``, bad ``y0``, ``max_events < 1``, ``ts`` outside
            ``[t0, t1]``, non-positive tolerances.
    """
    if not isinstance(system, Oscillator):
        raise ValueError(f"system must be a single-contact Oscillator, got {type(system).__name__}")
    mu_s, mu_k = coulomb_coefficients(system)
    check_time_span(t0, t1)
    check_real("rtol", rtol, positive=True)
    check_real("atol", atol, positive=True)
    check_real("dtmax", dtmax, positive=True)
    check_int("max_events", max_events, minimum=1)
    y0 = system.as_state(y0)
    if ts is None:
        ts = jnp.linspace(t0, t1, n_save + 1)
    ts = jnp.asarray(ts, dtype=y0.dtype)
    if ts.ndim != 1:
        raise ValueError(f"ts must be 1-D, got shape {ts.shape}")
    if is_concrete(ts) and (bool(jnp.any(ts < t0)) or bool(jnp.any(ts > t1)) or bool(jnp.any(jnp.diff(ts) < 0))):
        raise ValueError(f"ts must be increasing and lie in [t0, t1] = [{t0}, {t1}]")
    # floats become arrays, so that another value of a parameter reuses the compiled solver
    arrays = jax.tree.map(lambda x: jnp.asarray(x, y0.dtype) if isinstance(x, float) else x, system)
    field = _Regime(arrays, jnp.asarray(mu_s, y0.dtype), jnp.asarray(mu_k, y0.dtype))
    opts = {"rtol": rtol, "atol": atol, "dtmax": dtmax, "max_steps": max_steps,
            "adjoint": diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint}
    log, ys = _event_log(field, y0, t0, t1, ts, max_events, opts)
    status = jnp.where((log.status == STATUS_OK) & ~jnp.all(jnp.isfinite(ys)), STATUS_NONFINITE, log.status)
    return Trajectory(ts=ts, ys=ys, system=system, status=status), eqx.tree_at(lambda l: l.status, log, status)
