"""Dissipated energy over time windows and per forcing cycle (Quinn 2004 Sec. 3.1.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_real, is_concrete

if TYPE_CHECKING:
    from .._integrate.trajectory import Trajectory


def friction_dissipation_at(traj: Trajectory, t: ArrayLike) -> Array:
    """Running friction dissipation ``E_friction`` at times ``t`` (J).

    Cubic Hermite interpolation between saved points using the exact dissipation rate
    ``-f v_slip`` at each saved point, so a window boundary between samples costs an
    O(h^4) interpolation error; at a saved time it returns the saved value exactly.

    Args:
        traj: a trajectory with increasing ``ts``.
        t: scalar or array inside ``[ts[0], ts[-1]]``.

    Returns:
        Array shaped like ``t``.
    """
    ts, e, p = traj.ts, traj.friction_dissipation, traj.friction_power
    i = jnp.clip(jnp.searchsorted(ts, t, side="right") - 1, 0, ts.shape[0] - 2)
    h = ts[i + 1] - ts[i]
    s = (t - ts[i]) / h
    h00 = (1 + 2 * s) * (1 - s) ** 2
    h10 = s * (1 - s) ** 2
    h01 = s * s * (3 - 2 * s)
    h11 = s * s * (s - 1)
    return h00 * e[i] + h10 * h * p[i] + h01 * e[i + 1] + h11 * h * p[i + 1]  # type: ignore[return-value]


def dissipation_per_cycle(traj: Trajectory, period: float, n_cycles: int | None = None,
                          weights: ArrayLike | None = None) -> Array:
    """Friction dissipation in each forcing cycle, ``D = -int_cycle v f dt`` (Quinn Sec. 3.1.2).

    Cycle ``k`` spans ``[ts[0] + k T, ts[0] + (k+1) T]``. By default the running integral
    ``E_friction`` of the state is read at the cycle boundaries: exact when they are saved
    points (e.g. ``save_every`` = steps per cycle), else Hermite-interpolated. For the
    Burridge-Knopoff chain this is the physical dissipation, which is Quinn's ``D = -(1/n)
    sum_i int u_i' f_i dt`` (his scaled forces) except that his sum weights the last block
    like the others while its physical normal force, and so its dissipation, is 3/4 of theirs
    (:class:`~jaxfriction.BurridgeKnopoffChain`): the two agree while the last block sticks.
    Quinn's definition is ``weights=chain.quinn_weights()``.

    Args:
        traj: a trajectory (one contact or many: the dissipation is the total).
        period: forcing period ``T = 2 pi / omega`` > 0 (time units).
        n_cycles: number of whole cycles; default all that fit (needs concrete ``ts``).
        weights: optional ``(c,)`` weights of the contacts' dissipation. The cycle integrals
            of ``-sum_c w_c f_c v_c`` are then the trapezoid rule over the saved points (error
            O(h^2) in the save spacing: save every step), with the cycle boundaries on saved
            points.

    Returns:
        array ``(n_cycles,)`` (J).

    Raises:
        ValueError: ``period <= 0``, ``n_cycles`` missing under ``jit``/``vmap``, weights of
            the wrong shape.
    """
    check_real("period", period, positive=True)
    if weights is not None:
        return _weighted_per_cycle(traj, period, n_cycles, jnp.asarray(weights, dtype=traj.ts.dtype))
    if n_cycles is None:
        if not is_concrete(traj.ts):
            raise ValueError("n_cycles must be given when the trajectory is traced (jit/vmap)")
        span = float(traj.ts[-1] - traj.ts[0])
        n_cycles = int(np.floor(span / float(period) * (1 + 1e-12)))
    bounds = traj.ts[0] + period * jnp.arange(n_cycles + 1)
    bounds = jnp.minimum(bounds, traj.ts[-1])
    return jnp.diff(friction_dissipation_at(traj, bounds))


def _weighted_per_cycle(traj, period, n_cycles, weights):
    n = traj.ts.shape[0]
    power = -jnp.reshape(traj.friction_force * traj.slip_velocity, (n, -1))
    if weights.shape != power.shape[1:]:
        raise ValueError(f"weights must have shape {power.shape[1:]} (one per contact), got {weights.shape}")
    p = power @ weights
    running = jnp.concatenate([jnp.zeros(1, p.dtype), jnp.cumsum(0.5 * jnp.diff(traj.ts) * (p[1:] + p[:-1]))])
    if n_cycles is None:
        n_cycles = int(np.floor(float(traj.ts[-1] - traj.ts[0]) / float(period) * (1 + 1e-12)))
    bounds = traj.ts[0] + period * jnp.arange(n_cycles + 1)
    idx = jnp.clip(jnp.searchsorted(traj.ts, bounds - 1e-9 * period), 0, n - 1)  # boundaries on saved points
    return jnp.diff(running[idx])
