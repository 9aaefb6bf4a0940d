"""The period map of a system's fixed-step RK4 flow, and its one-period trajectory.

The shooting unknowns are the *dynamical* state ``x = y[:dynamical_size]`` (positions,
velocities, internal variables of dynamic laws): the three energy integrals of the state
never feed back into the motion, so they are not part of a periodic orbit (they grow by the
dissipation per cycle). :func:`period_map` appends zero integrals, takes ``n_steps`` classical
RK4 steps of ``h = period / n_steps`` from ``t0`` (the arithmetic of
:func:`~jaxfriction.rk4_scan`, so a 50-cycle sweep's window and the orbit are the same
discrete map) and returns the end state, whose integrals are the friction, damping and
input energy of one period. :func:`exact_period_run` is the period of the exact
event-driven flow (``periodic_orbit(..., integrator=EventDriven(...))``).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import Array

from ..._integrate.rk4 import rk4_scan
from ..._integrate.solvers import rk4_status
from ..._integrate.trajectory import Trajectory
from ..._systems.base import N_INTEGRALS


def steps_per_period(period: float, dt: float) -> int:
    """The fewest RK4 steps per period with ``h = period / n <= dt`` (the ``"ceil"`` rule of
    :func:`~jaxfriction.fixed_grid`, which a sweep's window uses too)."""
    return max(1, math.ceil(float(period) / float(dt) * (1.0 - 1e-12)))


def full_state(system, x: Array) -> Array:
    """The state of ``system`` with dynamical part ``x`` and zero energy integrals."""
    return jnp.concatenate([x, jnp.zeros(N_INTEGRALS, x.dtype)])


def period_map(system, x: Array, t0, period, n_steps: int) -> Array:
    """The full state after one period from the dynamical state ``x`` at time ``t0``.

    Args:
        system: a jaxfriction system.
        x: ``(dynamical_size,)`` dynamical state.
        t0: start time (the forcing phase; time units).
        period: the period ``T`` (time units; may be a tracer: the shooting unknown of an
            autonomous system, or ``2 pi / omega`` of a traced ``omega``).
        n_steps: RK4 steps per period (Python int).

    Returns:
        ``(state_size,)``: the dynamical state at ``t0 + T`` and the energy integrals over the
            period (``E_friction`` is the dissipation per cycle).
    """
    _, ys = rk4_scan(system.vector_field, full_state(system, x), t0, period / n_steps, 1, n_steps)
    return ys[-1]


def period_trajectory(system, x: Array, t0, period, n_steps: int) -> Trajectory:
    """One period from ``x`` saved at every RK4 step (``n_steps + 1`` points), with the
    status of a fixed-step run (:func:`~jaxfriction._integrate.solvers.rk4_status`: non-finite
    states, a step unstable for a stick band or an internal state)."""
    h = period / n_steps
    ts, ys = rk4_scan(system.vector_field, full_state(system, x), t0, h, n_steps, 1)
    return Trajectory(ts=ts, ys=ys, system=system, status=rk4_status(system, ts, ys, h))


def exact_period_run(system, x: Array, t0, period, n_save: int, integrator):
    """One period of the exact event-driven flow (:class:`~jaxfriction.EventDriven`) from ``x``.

    The shooting flow of an exact-stick orbit: set-valued Coulomb friction integrated regime
    by regime (:func:`~jaxfriction.simulate_event_driven`), always with diffrax's
    ``ForwardMode`` adjoint (whatever ``integrator.adjoint`` says), since the monodromy and
    Newton's Jacobian are forward-mode Jacobians. Differentiating through the located events
    gives the saltation matrices (Leine & Nijmeijer 2004, Sec. 7.2; the module docstring of
    :mod:`jaxfriction._exact.event_driven`): each event time's implicit-function derivative
    ``dt*/dx = -(dg/dx) / (dg/dt)`` enters through the old regime's field at the event and
    leaves through the new one's, which is ``(f- - f+) dt*/dx``, and entering stick sets the
    relative velocity exactly, so its derivative is zero there (a sticking orbit has a
    multiplier 0). A traced ``period`` (an autonomous orbit's unknown) carries its
    derivative ``f(t0 + T, y(t0 + T))`` in the end state; the saved times do not.

    Args:
        system: a single-contact :class:`~jaxfriction.Oscillator` with ``Coulomb`` or
            ``StaticKineticCoulomb`` friction.
        x: ``(2,)`` position and velocity at ``t0``.
        t0: start time (the forcing phase; time units).
        period: ``T`` (time units; may be a tracer).
        n_save: saved intervals over the period (Python int).
        integrator: a :class:`~jaxfriction.EventDriven` (its ``max_events`` is the budget of
            one period; tolerances, ``dtmax`` and ``max_steps`` as given).

    Returns:
        ``(trajectory, event_positions)``: the period saved at ``n_save + 1`` equally spaced
            times (a :class:`~jaxfriction.Trajectory` whose last state carries the
            derivative of the end state; its status reports an exhausted event budget or a
            failed solve) and ``(max_events + 1,)`` positions at the segment starts (exact
            extremes of the motion: a velocity zero of a still surface is an event).
    """
    import diffrax
    import jax

    from ..._exact.coulomb_params import coulomb_coefficients
    from ..._exact.event_driven import _Regime, simulate_event_driven

    sg = jax.lax.stop_gradient
    t_end = t0 + sg(period)
    ts = t0 + sg(period) * jnp.linspace(0.0, 1.0, n_save + 1, dtype=x.dtype)
    traj, log = simulate_event_driven(system, full_state(system, x), t0, t_end, ts,
                                      max_events=integrator.max_events, rtol=integrator.rtol,
                                      atol=integrator.atol, dtmax=integrator.dtmax,
                                      max_steps=integrator.max_steps, adjoint=diffrax.ForwardMode())
    ys = traj.ys
    mu_s, mu_k = coulomb_coefficients(system)
    field = _Regime(system, jnp.asarray(mu_s, x.dtype), jnp.asarray(mu_k, x.dtype))
    last = log.regimes[jnp.minimum(log.n_events, log.regimes.shape[0] - 1)]
    end = ys[-1] + field(t_end, ys[-1], last) * (period - sg(period))
    ys = ys.at[-1].set(end)
    return Trajectory(ts=traj.ts, ys=ys, system=system, status=traj.status), log.states[:, 0]
