"""Stick detection, chatter, and rest position."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from .._checks import check_real

if TYPE_CHECKING:
    from .._integrate.trajectory import Trajectory

#: The default slip speed below which a contact counts as stuck (velocity units), for every
#: stick observable (:func:`stick_mask`, :func:`stick_fraction`, :func:`stick_intervals`,
#: :func:`~jaxfriction.stick_slip_period`). Laws that keep Coulomb's structure settle far
#: below it in stick; models whose stick is not exact (Leine's switch model relaxes the
#: velocity over its band) need a tolerance of their own, e.g. ``1e-3``.
STICK_TOL = 1e-6


def _window_weights(ts, t_start, t_end):
    """Trapezoid weights of the segments between saved points, clipped to ``[t_start, t_end]``."""
    lo = ts[:-1] if t_start is None else jnp.clip(ts[:-1], t_start, None)
    hi = ts[1:] if t_end is None else jnp.clip(ts[1:], None, t_end)
    return jnp.maximum(hi - lo, 0.0)


def stick_mask(traj: Trajectory, v_tol: float = STICK_TOL, contact: int | None = None) -> Array:
    """True at saved points where every contact's ``|slip velocity| <= v_tol``.

    ``contact`` (int) restricts the test to one contact (or one slip component).

    ``v_tol`` (units of velocity, > 0) separates stick from slip; regularized laws that keep
    Coulomb's structure (Quinn, Awrejcewicz) decay to ``|v| ~ 0`` in stick, while the
    classical law chatters at ``|v| ~ dt mu N / m`` and the velocity-limited and Threlfall
    laws creep, so they are (rightly) not counted as sticking at a small ``v_tol``.

    Returns:
        Bool array ``(n,)``.
    """
    check_real("v_tol", v_tol, positive=True)
    slip = jnp.reshape(jnp.abs(traj.slip_velocity), (traj.ts.shape[0], -1))
    if contact is not None:
        slip = slip[:, contact : contact + 1]
    return jnp.all(slip <= v_tol, axis=-1)


def stick_fraction(traj: Trajectory, v_tol: float = STICK_TOL, contact: int | None = None,
                   t_start: float | None = None, t_end: float | None = None) -> Array:
    """Fraction of a time window spent sticking (trapezoidal in time; in ``[0, 1]``).

    Args:
        traj: the trajectory.
        v_tol: stick tolerance (:data:`STICK_TOL`).
        contact: as :func:`stick_mask`.
        t_start: start of the window (default: the start of the run; a boundary between saved
            points weights the segment it cuts in proportion).
        t_end: end of the window (default: the end of the run; likewise).

    Returns:
        Scalar (NaN for an empty window).
    """
    m = stick_mask(traj, v_tol, contact).astype(traj.ts.dtype)
    w = _window_weights(traj.ts, t_start, t_end)
    return jnp.sum(w * 0.5 * (m[1:] + m[:-1])) / jnp.sum(w)


def stick_intervals(traj: Trajectory, v_tol: float = STICK_TOL, contact: int | None = None) -> np.ndarray:
    """Maximal runs of stuck saved points, as ``(k, 2)`` NumPy array of ``[t_start, t_end]``.

    Host-side (not jittable): for reports and plots. Times are saved points, so interval
    ends are resolved to the save spacing.
    """
    mask = np.asarray(stick_mask(traj, v_tol, contact))
    ts = np.asarray(traj.ts)
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return np.stack([ts[starts], ts[ends]], axis=-1) if starts.size else np.zeros((0, 2))


def rk4_stage_forces(traj: Trajectory) -> Array:
    """Friction forces at the four RK4 stages of every step, shape ``(n - 1, 4, ...)``.

    Recomputed from the saved states, so the trajectory must be a fixed-step RK4 run saved
    at every step (``save_every=1``). These are the forces the integrator actually applied;
    the classical law's chatter (Quinn Fig. 5a) happens between stages, where the trial
    velocity crosses zero, even when the velocity at step ends keeps one sign.
    """
    sys, ts, ys = traj.system, traj.ts, traj.ys
    h = ts[1:] - ts[:-1]

    def stages(t, y, h) -> Array:
        k1 = sys.vector_field(t, y)
        y2 = y + 0.5 * h * k1
        y3 = y + 0.5 * h * sys.vector_field(t + 0.5 * h, y2)
        y4 = y + h * sys.vector_field(t + 0.5 * h, y3)
        times, states = jnp.stack([t, t + 0.5 * h, t + 0.5 * h, t + h]), jnp.stack([y, y2, y3, y4])
        return jax.vmap(sys.friction_force)(times, states)

    return jax.vmap(stages)(ts[:-1], ys[:-1], h)


def chatter_count(traj: Trajectory, stages: bool = False) -> Array:
    """Number of sign changes of the friction force along the run (force chatter).

    Args:
        traj: a trajectory.
        stages: False counts changes between saved points; True counts them along the
            sequence of RK4 stage forces (:func:`rk4_stage_forces`; needs an RK4 run saved
            every step), which is where the classical law chatters.

    Returns:
        Int array (summed over contacts).
    """
    f = rk4_stage_forces(traj) if stages else traj.friction_force
    n_contacts = int(np.prod(jnp.shape(traj.system.friction_force(traj.ts[0], traj.ys[0]))))
    f = jnp.reshape(f, (-1, n_contacts))
    return jnp.sum(f[1:] * f[:-1] < 0)


def rest_position(traj: Trajectory) -> Array:
    """Position(s) at the end of the run (where an unforced system has come to rest)."""
    return traj.position[-1]
