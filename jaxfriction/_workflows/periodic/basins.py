"""Basins of attraction: each lane's attractor from its window, basin-stability fractions.

A sweep varies initial conditions as paths ``"y0[0]"``, ``"y0[1]"`` (alone, crossed with
parameters, or as ``samples=True`` points: a Monte-Carlo sample of initial conditions;
:mod:`jaxfriction._lanes.program`). :func:`attractor` is a window observable that
classifies where the lane ended: a fixed point (rest, or steady sliding on a belt), a
period-``k`` oscillation (``k <= 4``: the last ``k`` peaks of the first position repeat the
``k`` before them) or none of these (non-periodic: chaotic, quasi-periodic, or a transient
that has not settled in the window). It works for forced and autonomous systems alike (the
peaks of a position are a Poincare section; no period is needed). Whether a periodic lane
sticks is the window's ``stick_fraction``. :func:`basin_stability` turns a sweep's classes into
basin-stability fractions (Menck et al. 2013, Nature Physics 9, 89: the fraction of sampled
initial conditions that reach each attractor) with their binomial standard errors
``sqrt(p (1 - p) / n)``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array

#: The classes of :func:`attractor`, by code: ``ATTRACTORS[code]``.
ATTRACTORS = ("fixed point", "period-1", "period-2", "period-3", "period-4", "non-periodic")

#: the code of a lane that is neither at a fixed point nor periodic with period <= 4
NON_PERIODIC = len(ATTRACTORS) - 1
_MAX_PERIOD = NON_PERIODIC - 1


def _peaks(q, n):
    """The last ``n`` local maxima of ``q`` (latest first; each refined by the parabola
    through its neighbours) and how many there are (at most ``n``)."""
    inner = (q[1:-1] > q[:-2]) & (q[1:-1] >= q[2:])
    rev = inner[::-1]
    (idx,) = jnp.nonzero(rev, size=n, fill_value=0)
    count = jnp.minimum(jnp.sum(rev), n)
    j = q.shape[0] - 2 - idx  # index into q of each peak
    a, b, c = q[j - 1], q[j], q[j + 1]
    curvature = a - 2 * b + c
    safe = jnp.where(curvature == 0, 1.0, curvature)
    return jnp.where(curvature == 0, b, b - (c - a) ** 2 / (8 * safe)), count


def attractor(traj, tol: float = 1e-3, dof: int = 0) -> Array:
    """The attractor a window shows, as a code into :data:`ATTRACTORS` (int32 scalar).

    A window observable (``observables={..., "attractor": jf.attractor}`` in
    :func:`~jaxfriction.sweep`): the window should hold several oscillations of the
    settled motion (pyBasin's friction case measures the last 100 of 500 s).

    - ``0``, fixed point: the position and velocity of ``dof`` vary by at most ``tol max(1,
      |x|)`` over the window (rest, or steady sliding on a moving surface);
    - ``k = 1 .. 4``, period-``k``: the smallest ``k`` for which the last ``k`` peaks of the
      position repeat the ``k`` before them within ``tol`` times the position's range (the
      peaks: local maxima of the saved points, each refined by a parabola);
    - ``5``, non-periodic: neither (chaos, a quasi-periodic motion, a transient longer than the
      run, or fewer than ``2 k`` peaks in the window).

    Args:
        traj: the window (:class:`~jaxfriction.Trajectory`, saved densely enough to resolve
            the peaks).
        tol: relative tolerance (dimensionless).
        dof: the degree of freedom whose position and velocity are read.

    Returns:
        Int32 scalar code.

    Raises:
        TypeError: naming ``traj`` when it is not a trajectory (an array, say).

    Source: the classification by the motion's extremes is pyBasin's / bSTAB's (Stender
    and Hoffmann 2022, "bSTAB: an open-source software for computing the basin stability of
    multi-stable dynamical systems", Nonlinear Dyn. 107, 1451), refined here to period-k.
    """
    if not (hasattr(traj, "system") and hasattr(traj, "ys")):
        raise TypeError(f"traj must be a jf.Trajectory (a sweep's window, or jf.simulate's result), "
                        f"got {type(traj).__name__}")
    n_dof = traj.system.n_dof
    ys = traj.ys
    q, v = ys[:, dof], ys[:, n_dof + dof]
    span_q = jnp.max(q) - jnp.min(q)
    span_v = jnp.max(v) - jnp.min(v)
    scale = jnp.maximum(1.0, jnp.max(jnp.abs(q)))
    fixed = (span_q <= tol * scale) & (span_v <= tol * jnp.maximum(1.0, jnp.max(jnp.abs(v))))
    peaks, count = _peaks(q, 2 * _MAX_PERIOD)
    code = jnp.asarray(NON_PERIODIC, dtype=jnp.int32)
    gate = tol * jnp.maximum(span_q, 1e-300)
    for k in range(_MAX_PERIOD, 0, -1):  # the smallest k that repeats wins
        repeats = jnp.all(jnp.abs(peaks[:k] - peaks[k: 2 * k]) <= gate) & (count >= 2 * k)
        code = jnp.where(repeats, k, code)
    return jnp.where(fixed, 0, code).astype(jnp.int32)


def basin_stability(ds, dims=None, variable: str = "attractor"):
    """Basin-stability fractions of a sweep over initial conditions, with standard errors.

    Args:
        ds: the ``xarray.Dataset`` of :func:`~jaxfriction.sweep` with an :func:`attractor`
            observable (``variable``).
        dims: the dimensions that sample the initial conditions (default: every ``"y0[i]"``
            dimension, or ``"sample"`` for a ``samples=True`` sweep); the others (swept
            parameters) are kept.
        variable: the name of the class codes.

    Returns:
        ``ds`` with ``basin_stability`` and ``basin_stability_stderr`` (``(basin, *kept
            dims)``: the fraction of the lanes with status 0 that reached each class, and
            ``sqrt(p (1 - p) / n)``), ``basin_lanes`` (``n`` per kept point) and the
            coordinate ``basin`` (the names of :data:`ATTRACTORS`). Lanes with a non-zero
            status are left out of ``n``.

    Raises:
        ValueError: naming ``variable`` or ``dims`` when missing from ``ds``.
        TypeError: naming ``ds`` when it is not an ``xarray.Dataset``.
    """
    import xarray as xr

    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds must be the xarray.Dataset of jf.sweep (with an attractor observable), "
                        f"got {type(ds).__name__}")
    if variable not in ds:
        raise ValueError(f"variable: the dataset has no {variable!r} (add observables={{..., {variable!r}: "
                         f"jf.attractor}} to the sweep)")
    if dims is None:
        dims = [d for d in ds[variable].dims if str(d).startswith("y0[") or d == "sample"]
    dims = [dims] if isinstance(dims, str) else list(dims)
    if not dims or any(d not in ds[variable].dims for d in dims):
        raise ValueError(f"dims must name dimensions of {variable!r} ({list(ds[variable].dims)}), got {dims!r}")
    ok = ds["status"] == 0 if "status" in ds else xr.ones_like(ds[variable], dtype=bool)
    n = ok.sum(dims)
    codes = ds[variable]
    fractions = xr.concat([((codes == c) & ok).sum(dims) / n for c in range(len(ATTRACTORS))], dim="basin")
    fractions = fractions.assign_coords(basin=list(ATTRACTORS))
    stderr = np.sqrt(fractions * (1 - fractions) / n)
    out = ds.assign(basin_stability=fractions, basin_stability_stderr=stderr, basin_lanes=n)
    out["basin_stability"].attrs["long_name"] = "fraction of the sampled initial conditions reaching each attractor"
    out["basin_stability_stderr"].attrs["long_name"] = "binomial standard error sqrt(p (1 - p) / n)"
    return out
