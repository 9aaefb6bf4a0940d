"""Stroboscopic (Poincare) and peak samples for bifurcation diagrams, and stick-slip periods."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_real
from .._integrate.grid import fixed_grid
from .._integrate.rk4 import rk4_scan
from .._observables.stick import STICK_TOL
from .lyapunov import system_dynamics

if TYPE_CHECKING:
    from .._integrate.trajectory import Trajectory
    from .._systems.base import AbstractFrictionSystem


def stroboscopic_samples(system: AbstractFrictionSystem, y0: ArrayLike, period: float, *, dt: float,
                         transient_periods: int, n_samples: int, coordinate: int = 0) -> Array:
    """Position ``coordinate`` once per forcing period after a transient (Poincare section).

    The RK4 grid is aligned to the period (``h = T / ceil(T / dt)``), so samples fall exactly
    at ``t = (transient_periods + k) T``, ``k = 1..n_samples``.

    Args:
        system: the system.
        y0: initial state (2 n_dof or full state).
        period: forcing period T > 0.
        dt: step bound, > 0.
        transient_periods: number of transient periods (int >= 0).
        n_samples: number of samples (int >= 1).
        coordinate: index of the sampled position.

    Returns:
        ``(n_samples,)`` array. ``vmap`` over systems for a bifurcation diagram.
    """
    check_real("period", period, positive=True)
    if not (isinstance(n_samples, int) and n_samples >= 1 and isinstance(transient_periods, int)
            and transient_periods >= 0):
        raise ValueError("n_samples must be an int >= 1 and transient_periods an int >= 0")
    _, per, h = fixed_grid(0.0, period, dt, None)
    f, d = system_dynamics(system)  # the energy integrals are not needed here
    x0 = jnp.asarray(y0, dtype=jnp.result_type(float))[:d]
    _, xs = rk4_scan(f, x0, 0.0, h, transient_periods + n_samples, per)
    return xs[transient_periods + 1 :, coordinate]


def peak_samples(values: Array, n_peaks: int) -> Array:
    """The last ``n_peaks`` local maxima of a series (for autonomous systems), NaN-padded.

    Args:
        values: ``(n,)`` samples.
        n_peaks: number of maxima (static int).

    Returns:
        ``(n_peaks,)`` array.
    """
    mid = values[1:-1]
    is_peak = (mid > values[:-2]) & (mid >= values[2:])
    order = jnp.argsort(jnp.where(is_peak, -jnp.arange(mid.shape[0]), 1))  # peaks, latest first
    idx = order[:n_peaks]
    return jnp.where(is_peak[idx], mid[idx], jnp.nan)


def stick_slip_period(traj: Trajectory, v_tol: float = STICK_TOL, skip: int = 1) -> tuple[float, float]:
    """Period of a periodic stick-slip motion from the spacing of its stick onsets.

    Host-side. An onset is where the largest slip speed falls through ``v_tol``, located by
    linear interpolation between the saved points around it (so the period is resolved
    below the save spacing). ``skip`` first onsets are dropped as transient.

    Args:
        traj: the trajectory.
        v_tol: the stick tolerance (default :data:`~jaxfriction.STICK_TOL`; a tolerance at the
            scale of the law's band, e.g. ``1e-3`` for paper 002's disc, times the onsets more
            sharply, since the slip speed decays slowly below it, and Leine's switch model
            needs it: its velocity relaxes over the band).
        skip: number of first onsets dropped as transient, >= 0.

    Returns:
        ``(period, spread)``: mean and standard deviation of the onset spacings (time units);
            NaN when fewer than three onsets remain.
    """
    check_real("v_tol", v_tol, positive=True)
    ts = np.asarray(traj.ts)
    slip = np.abs(np.asarray(traj.slip_velocity)).reshape(ts.shape[0], -1).max(axis=1)
    k = np.flatnonzero((slip[1:] <= v_tol) & (slip[:-1] > v_tol)) + 1  # first stuck sample of each onset
    frac = (slip[k - 1] - v_tol) / (slip[k - 1] - slip[k])
    starts = (ts[k - 1] + frac * (ts[k] - ts[k - 1]))[skip:]
    if starts.size < 3:
        return float("nan"), float("nan")
    gaps = np.diff(starts)
    return float(gaps.mean()), float(gaps.std())
