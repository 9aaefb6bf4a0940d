"""Dissipated energy over time windows and per forcing cycle (Quinn 2004 Sec. 3.1.2)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import check_real, is_concrete


def friction_dissipation_at(traj, t):
    """Running friction dissipation ``E_friction`` at times ``t`` (J).

    Cubic Hermite interpolation between saved points using the exact dissipation rate
    ``-f v_slip`` at each saved point, so a window boundary between samples costs an
    O(h^4) interpolation error; at a saved time it returns the saved value exactly.

    Args: ``traj`` a trajectory with increasing ``ts``; ``t`` scalar or array inside
        ``[ts[0], ts[-1]]``.
    Returns: array shaped like ``t``.
    """
    ts, e, p = traj.ts, traj.friction_dissipation, traj.friction_power
    i = jnp.clip(jnp.searchsorted(ts, t, side="right") - 1, 0, ts.shape[0] - 2)
    h = ts[i + 1] - ts[i]
    s = (t - ts[i]) / h
    h00 = (1 + 2 * s) * (1 - s) ** 2
    h10 = s * (1 - s) ** 2
    h01 = s * s * (3 - 2 * s)
    h11 = s * s * (s - 1)
    return h00 * e[i] + h10 * h * p[i] + h01 * e[i + 1] + h11 * h * p[i + 1]


def dissipation_per_cycle(traj, period, n_cycles=None):
    """Friction dissipation in each forcing cycle, ``D = -int_cycle v f dt`` (Quinn Sec. 3.1.2).

    Cycle ``k`` spans ``[ts[0] + k T, ts[0] + (k+1) T]``. Exact when the cycle boundaries
    are saved points (e.g. ``save_every`` = steps per cycle), else Hermite-interpolated.

    Args:
        traj: a trajectory (one contact or many: the dissipation is the total).
        period: forcing period ``T = 2 pi / omega`` > 0 (time units).
        n_cycles: number of whole cycles; default all that fit (needs concrete ``ts``).

    Returns:
        array ``(n_cycles,)`` (J). For Quinn's chain normalisation divide by ``n``.

    Raises:
        ValueError: ``period <= 0``, or ``n_cycles`` missing under ``jit``/``vmap``.
    """
    check_real("period", period, positive=True)
    if n_cycles is None:
        if not is_concrete(traj.ts):
            raise ValueError("n_cycles must be given when the trajectory is traced (jit/vmap)")
        span = float(traj.ts[-1] - traj.ts[0])
        n_cycles = int(np.floor(span / float(period) * (1 + 1e-12)))
    bounds = traj.ts[0] + period * jnp.arange(n_cycles + 1)
    bounds = jnp.minimum(bounds, traj.ts[-1])
    return jnp.diff(friction_dissipation_at(traj, bounds))
