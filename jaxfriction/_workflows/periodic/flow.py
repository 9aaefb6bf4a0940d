"""The period map of a system's fixed-step RK4 flow, and its one-period trajectory.

The shooting unknowns are the *dynamical* state ``x = y[:dynamical_size]`` (positions,
velocities, internal variables of dynamic laws): the three energy integrals of the state
never feed back into the motion, so they are not part of a periodic orbit (they grow by the
dissipation per cycle). :func:`period_map` appends zero integrals, takes ``n_steps`` classical
RK4 steps of ``h = period / n_steps`` from ``t0`` (the arithmetic of
:func:`~jaxfriction.rk4_scan`, so a 50-cycle sweep's window and the orbit are the same
discrete map) and returns the end state, whose integrals are the friction, damping and
input energy of one period.
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
