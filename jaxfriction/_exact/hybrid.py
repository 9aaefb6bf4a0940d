"""Hybrid systems: smooth regimes, events that end them, resets, with exact event-time derivatives.

A hybrid system moves in one of several regimes (an int code), each a smooth ODE
``dy/dt = f(t, y, regime)``. A regime ends where its event function ``g(t, y, regime)``,
positive inside, falls to zero; the state is then mapped by a reset ``y+ = R(t, y-, new)``
(:meth:`AbstractHybridField.enter`) and the next regime starts. Coulomb stick-slip
(:func:`~jaxfriction.simulate_event_driven`) is one such system; impacts, stops, a bang-bang
drive and a terminating event (a last regime that never ends, with a zero field) are others.

A bounded ``lax.scan`` over at most ``max_events`` segments restarts the solve in each new
regime, so the engine works under ``jit``, ``vmap`` (lanes with different event counts finish
at their own pace) and both modes of differentiation; a lane that runs out of events reports
``STATUS_EVENT_BUDGET`` instead of failing the batch.

How event times are differentiated. Each segment is solved twice: once with
``stop_gradient`` inputs and a diffrax ``Event`` (bisection on the dense output) to locate
the event time ``t_e``, and once, differentiably, from the segment start to that fixed
``t_e``. The event time is then refined by one Newton step on ``g`` along the exact flow,

    ``t* = t_e - g(t_e, y_e) / stop_gradient(dg/dt)``,   ``y* = y_e + f(t_e, y_e) (t* - t_e)``,

whose value is ``t_e`` to round-off but whose derivative is the implicit-function-theorem
sensitivity ``dt*/dp = -(dg/dp) / (dg/dt)`` of the event time to every parameter ``p`` (in
the field, the initial state, earlier event times), and ``y*`` carries the matching ``f
dt*/dp`` term. A segment that starts at a time ``t_s`` with a gradient is integrated from
``stop_gradient(t_s)`` with the start state shifted by ``-f(t_s, y_s) (t_s -
stop_gradient(t_s))``, the first-order effect of moving its start. Together with the reset's
own derivative this is the saltation-matrix sensitivity of the hybrid flow (the jump
conditions of trajectory sensitivity analysis: Hiskens & Pai, IEEE Trans. Circuits Syst. I
47 (2000) 204): derivatives are those of the exact hybrid flow across any number of events,
as long as no event is grazing (``dg/dt = 0``), up to the solver's error in the state's
sensitivities, which the step-size control (on the state only) does not watch: about 1e-12
relative at the default tolerances on the tests' closed forms; a smaller ``dtmax`` tightens
them where the sensitivities grow faster than the state. Derivatives are never taken
through the bisection or the dense-output interpolant, and a located time is never treated
as a constant (``tests/test_event_derivatives.py`` runs the cases where peers' event
gradients are wrong).
"""

from __future__ import annotations

import abc

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_int, check_real, check_time_span, is_concrete
from .._integrate.status import STATUS_EVENT_BUDGET, STATUS_NONFINITE, STATUS_OK, STATUS_SOLVER_FAILED
from .._paths import traced_parameters


class AbstractHybridField(eqx.Module):
    """Vector field, event function and reset of a hybrid system; subclass it to add your own.

    Fields of the subclass are its parameters (floats or JAX arrays, differentiable). The
    regime is an int32 scalar. Every method takes a time ``t`` (scalar), a state ``y``
    (``(n,)``) and, except :meth:`initial_regime`, the regime, and must be written with
    ``jnp.where`` rather than Python branches (it runs under ``jit`` and ``vmap``).
    """

    @abc.abstractmethod
    def __call__(self, t, y, regime) -> Array:
        """``dy/dt`` in ``regime``: an ``(n,)`` array."""

    @abc.abstractmethod
    def event(self, t, y, regime) -> Array:
        """Scalar event function of ``regime``: positive inside it, falls to 0 where it ends."""

    def next_regime(self, t, y, regime) -> Array:
        """Regime after the event at ``(t, y)`` that ends ``regime``; default: the same one."""
        return regime

    def initial_regime(self, t, y) -> Array:
        """Regime at the start ``(t0, y0)``; default 0."""
        return jnp.asarray(0, jnp.int32)

    def enter(self, t, y, regime) -> Array:
        """Reset map: the state on entering ``regime`` at time ``t``; default: unchanged.
        Also applied at the start, to ``y0`` in the initial regime."""
        return y


class EventLog(eqx.Module):
    """Segments of an event-driven run.

    Attributes:
        times: ``(max_events + 1,)`` segment start times (``t0`` first); unused slots hold
            ``t1``. Entry ``i >= 1`` is the time of the ``i``-th event, differentiable.
        states: ``(max_events + 1, n)`` states at the segment starts (after the reset).
        regimes: ``(max_events + 1,)`` int regime of each segment (for Coulomb friction:
            1 slip+, -1 slip-, 0 stick).
        n_events: number of events that occurred before ``t1``.
        status: 0 ok, 1 non-finite states, 2 diffrax failed, 3 event budget exhausted
            (``STATUS_EVENT_BUDGET``).
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
                                                  norm=opts["norm"]),
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

    Compiled once per field structure, times and options (``eqx.filter_jit``): a second call
    with the same arguments takes milliseconds instead of seconds of tracing.
    """
    # Bisection on diffrax's dense output brackets the event robustly (Newton on the interpolant
    # can stall at large t, where the event function's noise exceeds its tolerance); the Newton
    # step below then polishes the time on the true flow.
    # flip=True: the event function decreases through its root (positive inside the regime)
    root_finder = optx.Bisection(rtol=opts["rtol"], atol=opts["atol"], flip=True)
    event = diffrax.Event(lambda t, y, args, **kw: field.event(t, y, args), root_finder, direction=False)
    regime0 = jnp.asarray(field.initial_regime(t0, y0), jnp.int32)
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
        # the divisor is 1 where no event ends the segment (a stuck body's g_dot is 0): an
        # unselected -g / 0 would still send NaN into the derivatives through jnp.where
        delta = jnp.where(hit, -g / jnp.where(hit, sg(g_dot), 1.0), 0.0)
        t_new = t_event + delta
        # this segment owns [t_fixed, next start); times in the round-off gap between t_event
        # and the polished t_new take y(t_event)
        end = jnp.maximum(t_event, sg(t_new))
        inside = (ts >= t_fixed) & ((ts < end) | (~hit & (ts <= t_event))) & ~done
        ys_out = jnp.where(inside[:, None], sol.ys[:-1], ys_out)
        y_new = y_event + field(t_event, y_event, regime) * delta
        new_regime = jnp.where(hit, jnp.asarray(field.next_regime(t_new, y_new, regime), jnp.int32), regime)
        y_new = jnp.where(hit, field.enter(t_new, y_new, new_regime), y_new)
        located = (locate.result == diffrax.RESULTS.successful) | (locate.result == diffrax.RESULTS.event_occurred)
        ok = ok & (located | done) & ((sol.result == diffrax.RESULTS.successful) | done)
        t_out = jnp.where(hit, t_new, t1)
        return (t_out, y_new, new_regime, ok, ys_out), (t_out, y_new, new_regime, hit)

    ys_out = jnp.full((ts.shape[0], y0.shape[0]), jnp.nan, dtype=y0.dtype)
    init = (jnp.asarray(t0, dtype=y0.dtype), y0, regime0, jnp.asarray(True), ys_out)
    (t_end, _, _, ok, ys_out), (times, states, regimes, hits) = jax.lax.scan(segment, init, None, length=max_events)
    status = jnp.where(~ok, STATUS_SOLVER_FAILED, jnp.where(t_end < t1, STATUS_EVENT_BUDGET, STATUS_OK))
    status = jnp.where((status == STATUS_OK) & ~jnp.all(jnp.isfinite(ys_out)), STATUS_NONFINITE, status)
    log = EventLog(
        times=jnp.concatenate([jnp.asarray(t0, y0.dtype)[None], times]),
        states=jnp.concatenate([y0[None], states]),
        regimes=jnp.concatenate([regime0[None], regimes]),
        n_events=jnp.sum(hits),
        status=status,
    )
    return log, ys_out


def check_output_times(ts, t0, t1, n_save, dtype) -> Array:
    """The output times: ``ts`` checked (1-D, increasing, in ``[t0, t1]``) or ``n_save + 1`` equal steps."""
    if ts is None:
        ts = jnp.linspace(t0, t1, n_save + 1)
    ts = jnp.asarray(ts, dtype=dtype)
    if ts.ndim != 1:
        raise ValueError(f"ts must be 1-D, got shape {ts.shape}")
    host = np.asarray(ts) if is_concrete(ts) else None  # checked in NumPy: no program compiled per shape
    if host is not None and (np.any(host < t0) or np.any(host > t1) or np.any(np.diff(host) < 0)):
        raise ValueError(f"ts must be increasing and lie in [t0, t1] = [{t0}, {t1}]")
    return ts


def simulate_hybrid(field: AbstractHybridField, y0: ArrayLike, t0: float, t1: float, ts: ArrayLike | None = None,
                    *, n_save: int = 1000, max_events: int = 256, rtol: float = 1e-12, atol: float = 1e-12,
                    dtmax: float = 0.1, max_steps: int = 100_000, adjoint=None, norm=None) -> tuple[Array, Array, EventLog]:
    """Solve a hybrid system event by event, with exact event-time derivatives.

    See the module docstring (:mod:`jaxfriction._exact.hybrid`) for the method. Each regime is
    solved by diffrax's Dopri8 to ``rtol``/``atol``; the event time is located by bisection on
    the dense output and polished by one Newton step on the true flow, whose derivative is the
    implicit-function (saltation) sensitivity. Forward and reverse mode, ``jit`` and ``vmap``.

    Args:
        field: an :class:`AbstractHybridField` (its array fields are the parameters).
        y0: ``(n,)`` initial state (floating point; float64 for tolerances below 1e-7).
        t0, t1: concrete floats, ``t1 > t0`` (time units of the field).
        ts: increasing times in ``[t0, t1]`` at which to return states; default ``n_save + 1``
            equally spaced times. Each segment saves the times that fall in it (dense output).
        n_save: number of output intervals when ``ts`` is not given.
        max_events: event budget (static int >= 1); a lane needing more reports
            ``STATUS_EVENT_BUDGET`` (3).
        rtol, atol: Dopri8 tolerances (positive); the event times are found to about the same.
        dtmax: largest step (positive). An event is detected by a sign change of ``g`` between
            steps, so keep it below the shortest interval in which ``g`` can dip below zero
            and come back.
        max_steps: diffrax step budget of one segment.
        adjoint: diffrax adjoint; default ``RecursiveCheckpointAdjoint`` (reverse mode,
            ``jax.grad``); pass ``diffrax.ForwardMode()`` for ``jax.jvp``/``jax.jacfwd``.
        norm: step-size control norm (default diffrax's RMS norm over the whole state).

    Returns:
        ``(ts, ys, log)``: the output times, the ``(len(ts), n)`` states at them (NaN at times not reached before the
            event budget ran out) and an :class:`EventLog` whose ``times[1:n_events + 1]`` are
            the event times and whose ``status`` is 0 when the run is complete and finite.

    Raises:
        TypeError: ``field`` is not an :class:`AbstractHybridField`.
        ValueError: ``t1 <= t0``, ``y0`` not 1-D, ``max_events < 1``, ``ts`` not 1-D or outside
            ``[t0, t1]``, non-positive tolerances or ``dtmax``.
    """
    if not isinstance(field, AbstractHybridField):
        raise TypeError(f"field must be an AbstractHybridField, got {type(field).__name__}")
    check_time_span(t0, t1)
    for name, value in (("rtol", rtol), ("atol", atol), ("dtmax", dtmax)):
        check_real(name, value, positive=True)
    check_int("max_events", max_events, minimum=1)
    check_int("max_steps", max_steps, minimum=1)
    y0 = jnp.asarray(y0)
    if y0.ndim != 1 or not jnp.issubdtype(y0.dtype, jnp.floating):
        raise ValueError(f"y0 must be a 1-D floating-point state, got shape {y0.shape} and dtype {y0.dtype}")
    ts = check_output_times(ts, t0, t1, n_save, y0.dtype)
    # floats become arrays, so that another value of a parameter reuses the compiled solver
    field = traced_parameters(field, y0.dtype)
    opts = {"rtol": rtol, "atol": atol, "dtmax": dtmax, "max_steps": max_steps,
            "adjoint": diffrax.RecursiveCheckpointAdjoint() if adjoint is None else adjoint,
            "norm": optx.rms_norm if norm is None else norm}
    log, ys = _event_log(field, y0, t0, t1, ts, max_events, opts)
    return ts, ys, log

