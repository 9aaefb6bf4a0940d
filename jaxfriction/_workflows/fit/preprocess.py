"""Pre-processing of laboratory records: resampling onto a uniform grid, detrending, offsets.

A :class:`~jaxfriction.Measurement` needs a uniform time grid, and laboratory files often
have none (a rate-and-state logger that switches from 10 Hz to 100 Hz at a velocity step);
friction records drift (a load-point slip trend from gouge thinning or a creeping
load cell) and carry offsets. Each function here returns a new record with one line added to
its ``preprocessing`` tuple saying what was done, with the numbers (the fitted slope, the
removed offset, the grid), so that the choice travels with the record into the fit. A
pre-processing choice can move a fitted quantity by more than its standard error (removing
a slip trend can flip the sign of ``a - b``): :func:`~jaxfriction.preprocessing_sensitivity`
fits the variants and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._checks import check_int, check_real
from .measurement import _CHANNEL, _COLUMN, Measurement, _as_columns, increasing_times

if TYPE_CHECKING:
    from jax.typing import ArrayLike

METHODS = ("linear", "pchip")


def finest_interval(t: np.ndarray) -> float:
    """The finest sampling interval of time stamps ``t``: the median of the intervals within
    50 % of the shortest (rounding jitter in a text file does not shrink it), to 12
    significant digits (the round-off of differences of time stamps, 0.009999999999999787 for
    0.01, does not show in the grid)."""
    steps = np.diff(t)
    return float(f"{np.median(steps[steps <= 1.5 * steps.min()]):.12g}")


def _interpolant(t, values, method):
    from scipy.interpolate import PchipInterpolator, make_interp_spline

    if method == "linear":
        return make_interp_spline(t, values, k=1, axis=0)
    return PchipInterpolator(t, values, axis=0)


def resample_values(t: ArrayLike, values: ArrayLike, grid: ArrayLike, method: str = "linear",
                    antialias: bool = True) -> np.ndarray:
    """Values sampled at the stamps ``t`` (regular or not), taken at the uniform ``grid``.

    Interpolation: ``"linear"`` (piecewise linear, scipy ``make_interp_spline(k=1)``) or
    ``"pchip"`` (piecewise cubic Hermite, monotone between samples: no overshoot at a sharp
    transient; Fritsch & Carlson 1980, scipy ``PchipInterpolator``). Anti-aliasing: where the
    grid is coarser than the samples (two samples or more within ``dt`` of a grid point),
    the grid point takes the mean of the interpolant over ``[g - dt/2, g + dt/2]`` (a moving
    average of width ``dt``, computed exactly from the interpolant's antiderivative; narrowed
    symmetrically at the record's ends) instead of its value. A moving average was chosen over
    ``scipy.signal.decimate``'s Chebyshev filter because its kernel is positive: it does not
    ring at the sharp onset of a velocity step, it keeps a linear trend exactly (the mean of a
    line over a symmetric window is its centre value), it needs neither a uniform input nor an
    integer factor, and it has zeros at every multiple of ``1 / dt`` (the frequency response
    ``sinc(f dt)``; Smith 1997, The Scientist and Engineer's Guide to DSP, ch. 15). It
    attenuates the band just below the new Nyquist frequency ``1 / (2 dt)`` only partly
    (``2 / pi`` at it).

    Args:
        t: ``(n,)`` strictly increasing sample times.
        values: ``(n,)`` or ``(n, k)`` samples.
        grid: ``(m,)`` uniform target times inside ``[t[0], t[-1]]``.
        method: ``"linear"`` or ``"pchip"``.
        antialias: average where the grid is coarser than the samples (default True).

    Returns:
        ``(m,)`` or ``(m, k)`` resampled values (the shape of ``values`` per row).

    Raises:
        ValueError: naming ``t``, ``values``, ``grid`` or ``method``.
    """
    t = increasing_times("t", t)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    y = _as_columns("values", values, t.shape[0])
    grid = _as_columns("grid", grid, None)[:, 0]
    if grid.size < 2 or grid[0] < t[0] - 1e-9 * (t[-1] - t[0]) or grid[-1] > t[-1] + 1e-9 * (t[-1] - t[0]):  # type: ignore[index, union-attr]
        raise ValueError(f"grid must hold >= 2 times inside [t[0], t[-1]] = [{t[0]}, {t[-1]}], got "
                         f"[{grid[0] if grid.size else None}, {grid[-1] if grid.size else None}]")  # type: ignore[index, union-attr]
    grid = np.clip(grid, t[0], t[-1])
    f = _interpolant(t, y, method)
    out = f(grid)
    if antialias:
        dt = (grid[-1] - grid[0]) / (grid.size - 1)
        half = np.minimum.reduce([np.full(grid.shape, 0.5 * dt), grid - t[0], t[-1] - grid])
        lo, hi = grid - half, grid + half
        count = np.searchsorted(t, hi, side="left") - np.searchsorted(t, lo, side="right")
        coarse = (count >= 2) & (half > 0)
        if np.any(coarse):
            F = f.antiderivative()
            width = (hi - lo)[coarse][:, None]
            out[coarse] = (F(hi[coarse]) - F(lo[coarse])) / width
    return out[:, 0] if np.ndim(values) == 1 else out


def _grid(t, dt, t0, t1) -> np.ndarray:
    start = t[0] if t0 is None else float(check_real("t0", t0))
    stop = t[-1] if t1 is None else float(check_real("t1", t1))
    if start < t[0] or stop > t[-1] or not stop > start:
        raise ValueError(f"t0, t1 must satisfy t[0] <= t0 < t1 <= t[-1] = {t[-1]} (t[0] = {t[0]}), got "
                         f"t0 = {start}, t1 = {stop}")
    n = int(np.floor((stop - start) / dt * (1 + 1e-12) + 1e-9)) + 1
    if n < 3:
        raise ValueError(f"dt = {dt} leaves {n} samples in [{start}, {stop}]; at least 3 are needed")
    return start + dt * np.arange(n)


def resample_record(t: ArrayLike, columns: dict, *, dt: float | None = None, method: str = "linear",
                    antialias: bool = True, t0: float | None = None, t1: float | None = None,
                    inputs: dict | None = None, y0: ArrayLike | None = None, name: str = "") -> Measurement:
    """A :class:`~jaxfriction.Measurement` on a uniform grid from samples at irregular times.

    For laboratory files whose sampling rate changes (a logger that records 10 Hz before a
    velocity step and 100 Hz after it), has gaps, or jitters: every measured column is
    interpolated onto ``t0 + k dt`` by :func:`resample_values` (``"linear"`` or
    ``"pchip"``, a moving average of width ``dt`` where the grid is coarser than the samples).
    Inputs (``inputs``) are kept at their own time stamps (a record's inputs need no uniform
    grid; see :class:`~jaxfriction.Measurement`). The record's ``preprocessing`` says what was
    done.

    The choice of ``dt``: the default, the finest interval, keeps every sample of the fast
    part and interpolates the slow part, whose interpolated samples are then not independent
    measurements (a fit weighs that part by the number of grid points, not of samples, and
    its white-noise standard errors are too small there: read the HAC column of the report).
    A coarser ``dt`` (the slow part's interval) averages the fast part down instead and
    loses its detail (the first tenths of a second after a velocity step, where ``D_c`` is
    read).

    Args:
        t: ``(n,)`` strictly increasing sample times (time units of the system).
        columns: dict column name -> ``(n,)`` samples, named as in a CSV header
            (:func:`~jaxfriction.load_measurement`): ``"q"``, ``"v"``, ``"q1"``, ``"v[2]"``
            for positions and velocities, any other lower-case identifier for a channel
            (``"mu"``).
        dt: the grid's interval (default :func:`finest_interval` of ``t``).
        method: ``"linear"`` (default) or ``"pchip"``.
        antialias: the moving average where the grid is coarser than the samples (default
            True; False takes the interpolant's value at every grid point).
        t0, t1: the grid's span (default ``t[0]``, ``t[-1]``; the grid ends at the last
            ``t0 + k dt <= t1``).
        inputs: optional dict drive path -> ``(n,)`` input samples at ``t`` (the record's
            ``inputs``, with ``input_t = t``).
        y0: optional known initial state (see :class:`~jaxfriction.Measurement`).
        name: the record's label.

    Returns:
        A :class:`~jaxfriction.Measurement` with ``preprocessing`` holding one line (the
        original rates, the grid, the method).

    Raises:
        ValueError: naming the argument: ``t`` not strictly increasing, ``columns`` empty or
            with an unknown or repeated name, a column of the wrong length or with NaN,
            ``method``, ``dt`` not positive or too large for 3 samples, ``t0``/``t1`` outside
            the record.
    """
    t = increasing_times("t", t)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(columns, dict) or not columns:
        raise ValueError(f"columns must be a non-empty dict name -> (n,) samples, got {columns!r}")
    dt = finest_interval(t) if dt is None else float(check_real("dt", dt, positive=True))
    grid = _grid(t, dt, t0, t1)
    measured: dict[str, dict[Any, np.ndarray]] = {"q": {}, "v": {}}
    channels: dict[Any, np.ndarray] = {}
    for key, values in columns.items():
        label = key.lower() if isinstance(key, str) else key
        column = _COLUMN.match(label) if isinstance(label, str) else None
        if column is None and not (isinstance(label, str) and _CHANNEL.match(label) and label != "t"):
            raise ValueError(f"columns: names must be q, v, q0, v1, q[2], ... or channel names such as mu, "
                             f"got {key!r}")
        col = _as_columns(f"columns[{key!r}]", values, t.shape[0])
        if col.shape[1] != 1:
            raise ValueError(f"columns[{key!r}] must have shape (n,), got {np.shape(values)}")
        resampled = resample_values(t, col[:, 0], grid, method, antialias)
        if column is None:
            target, dof = channels, label
        else:
            target, dof = measured[column.group(1)], int(column.group(2) or 0)
        if dof in target:
            raise ValueError(f"columns: {key!r} repeats a column")
        target[dof] = resampled
    args: dict[str, Any] = {"channels": channels or None}
    for kind, cols in measured.items():
        if cols:
            args[kind] = np.column_stack(list(cols.values()))
            args[f"{kind}_dofs"] = tuple(cols)
    steps = np.diff(t)
    rates = (f"{t.shape[0]} samples at intervals {steps.min():.4g} to {steps.max():.4g}"
             if steps.max() > steps.min() * (1 + 1e-4) else f"{t.shape[0]} samples at interval {steps.min():.4g}")
    note = (f"resampled {', '.join(columns)} from {rates} onto a uniform grid of dt = {dt:.6g} over "
            f"[{grid[0]:.6g}, {grid[-1]:.6g}] ({grid.size} samples; {method} interpolation"
            f"{', moving average of width dt where the grid is coarser than the samples' if antialias else ''})")
    return Measurement(t=grid, y0=y0, name=name, inputs=inputs, input_t=None if inputs is None else t,  # type: ignore[arg-type]
                       preprocessing=(note,), **args)


def _column(record: Measurement, channel: str) -> tuple[np.ndarray, Callable[..., dict]]:
    """``(values (n,), put)``: a record's column by name and a function returning the record's
    changed arrays (keyword arguments of ``Measurement._replace``) with new values."""
    if not isinstance(record, Measurement):
        raise ValueError(f"record must be a jaxfriction.Measurement, got {type(record).__name__}")
    if not isinstance(channel, str):
        raise ValueError(f"channel must be a column name (q, v, q1, mu, ...), got {channel!r}")
    match = _COLUMN.match(channel)
    if match is not None:
        kind, dof = match.group(1), int(match.group(2) or 0)
        dofs = getattr(record, f"{kind}_dofs") or ()
        if dof in dofs:
            j = dofs.index(dof)
            values = getattr(record, kind)

            def put(new):
                out = values.copy()
                out[:, j] = new
                return {kind: out}

            return values[:, j].copy(), put
    elif channel in (record.channels or {}):
        def put(new):
            return {"channels": {**record.channels, channel: new}}

        return record.channels[channel].copy(), put  # type: ignore[index]
    names = list(record.columns())
    raise ValueError(f"channel {channel!r} is not measured in {record.name or 'the record'}; its columns are {names}")


def _window_rows(record: Measurement, window) -> tuple[np.ndarray, str]:
    """Rows of ``record`` in ``window = (t0, t1)`` (None: all) and the words for it."""
    if window is None:
        return np.arange(len(record)), "the whole record"
    try:
        lo, hi = window
    except (TypeError, ValueError):
        raise ValueError(f"window must be (t0, t1) or None, got {window!r}") from None
    lo = record.t[0] if lo is None else float(check_real("window t0", lo))
    hi = record.t[-1] if hi is None else float(check_real("window t1", hi))
    rows = np.flatnonzero((record.t >= lo) & (record.t <= hi))
    if rows.size < 2:
        raise ValueError(f"window = {window!r} holds {rows.size} samples of {record.name or 'the record'}; "
                         f"at least 2 are needed")
    return rows, f"{lo:.6g} <= t <= {hi:.6g}"


def load_point_slip(record: Measurement, path: str = "load") -> np.ndarray:
    """The load point's displacement ``int_{t[0]}^{t} V dt`` at the record's times, from its
    measured load-point velocity input at ``path`` (trapezoidal rule on the input's own
    stamps, exact for a piecewise linear input; linear interpolation at ``t``).

    Raises:
        ValueError: naming ``against``, when the record has no input at ``path``.
    """
    if path not in (record.inputs or {}):
        raise ValueError(f"against='slip' reads the load-point velocity input {path!r} of the record, which has "
                         f"{sorted(record.inputs or {})}; give the load-point displacement as an (n,) array instead")
    from scipy.integrate import cumulative_trapezoid

    values = np.asarray(record.inputs[path], dtype=float)  # type: ignore[index, type-var]  # columns are set on this path
    if values.ndim != 1:
        raise ValueError(f"against='slip': the input {path!r} must have one column, got {values.shape}")
    slip = cumulative_trapezoid(values, record.input_t, initial=0.0)
    return np.interp(record.t, record.input_t, slip) - np.interp(record.t[0], record.input_t, slip)  # type: ignore[arg-type]


def detrend(record: Measurement, channel: str, *, against="time", order: int = 1, slope: float | None = None,
            window: tuple | None = None, label: str | None = None) -> Measurement:
    """Remove a polynomial trend (linear by default) in time or slip from one column.

    ``x`` is the time or the load point's slip (``against``). With ``slope`` None the trend
    ``p(x)`` of degree ``order`` is fitted by least squares (``numpy.polyfit``) to the
    column over ``window``; the record loses ``p(x) - p(x[0])`` everywhere (its first value
    is kept, so a fitted reference friction ``mu_0`` keeps its meaning). With ``slope`` the
    trend ``slope (x - x[0])`` is removed as given. Choose the window where the model
    predicts no trend (steady sliding before a velocity step: every slope fitted there is
    drift); over a whole velocity step the least-squares slope also takes up part of the
    transient and moves ``a - b`` (see :func:`~jaxfriction.preprocessing_sensitivity`).

    Args:
        record: a :class:`~jaxfriction.Measurement`.
        channel: the column (``"mu"``, any channel, or ``"q"``, ``"v"``, ``"q1"``, ...).
        against: ``"time"``, ``"slip"`` (the load point's displacement from the record's
            load-point velocity input ``"load"``, :func:`load_point_slip`), or an ``(n,)``
            array of the abscissa at the record's times (a displacement column of the lab
            file, units of slip).
        order: the polynomial degree (>= 1) of a fitted trend.
        slope: a given slope (units of the column per unit of ``x``) instead of a fit (only
            with ``order = 1``).
        window: ``(t0, t1)`` times of the samples the trend is fitted to (None: all; either
            end None: the record's).
        label: the abscissa's name in the record's ``preprocessing`` line (default "time",
            "load-point slip", or "the given abscissa").

    Returns:
        A new :class:`~jaxfriction.Measurement`, its ``preprocessing`` extended by a line
        such as ``"detrended mu linearly in load-point slip over 0 <= t <= 10 (least squares):
        slope -0.00012 per unit slip"``.

    Raises:
        ValueError: naming ``record``, ``channel``, ``against``, ``order``, ``slope`` or
            ``window``.
    """
    values, put = _column(record, channel)
    order = check_int("order", order, minimum=1)
    if isinstance(against, str):
        if against == "time":
            x, words = record.t - record.t[0], "time"
        elif against == "slip":
            x, words = load_point_slip(record), "load-point slip"
        else:
            raise ValueError(f"against must be 'time', 'slip' or an (n,) array, got {against!r}")
    else:
        x = _as_columns("against", against, len(record))
        if x.shape[1] != 1:
            raise ValueError(f"against must have shape (n,) = ({len(record)},), got {np.shape(against)}")
        x, words = x[:, 0], "the given abscissa"
    words = label or words
    unit = "time" if words == "time" else ("unit slip" if "slip" in words else "unit")
    x0 = x[0]
    if slope is not None:
        if order != 1:
            raise ValueError(f"slope is a linear trend's; give order=1 with it, got order={order}")
        slope = float(check_real("slope", slope))
        trend = slope * (x - x0)
        note = f"detrended {channel} linearly in {words} by a given slope {slope:.6g} per {unit}"
    else:
        rows, where = _window_rows(record, window)
        if rows.size <= order or np.ptp(x[rows]) == 0:
            raise ValueError(f"window: {rows.size} samples spanning {np.ptp(x[rows]):.3g} in {words} cannot fit "
                             f"a trend of order {order}")
        coef = np.polyfit(x[rows] - x0, values[rows], order)
        trend = np.polyval(coef, x - x0) - np.polyval(coef, 0.0)
        if order == 1:
            note = (f"detrended {channel} linearly in {words} fitted over {where} (least squares): slope "
                    f"{coef[0]:.6g} per {unit}")
        else:
            terms = ", ".join(f"{c:.6g}" for c in coef[:-1])
            note = (f"detrended {channel} by a degree-{order} polynomial in {words} fitted over {where} (least "
                    f"squares): coefficients {terms} (highest first)")
    return record._replace(slice(None), **put(values - trend),
                           preprocessing=(*record.preprocessing, note))


def remove_offset(record: Measurement, channel: str, *, value: float | None = None,
                  window: tuple | None = None) -> Measurement:
    """Subtract a constant from one column: a given ``value``, or the column's mean over
    ``window`` (a load cell's reading before loading, the friction level of a reference
    stretch).

    Args:
        record: a :class:`~jaxfriction.Measurement`.
        channel: the column (``"mu"``, any channel, or ``"q"``, ``"v"``, ``"q1"``, ...).
        value: the offset (units of the column); None: the mean over ``window``.
        window: ``(t0, t1)`` times averaged when ``value`` is None (None: the whole record).

    Returns:
        A new :class:`~jaxfriction.Measurement`, its ``preprocessing`` extended by a line
        with the offset removed.

    Raises:
        ValueError: naming ``record``, ``channel``, ``value`` or ``window`` (both ``value``
            and ``window`` given, a window with fewer than 2 samples).
    """
    values, put = _column(record, channel)
    if value is not None:
        if window is not None:
            raise ValueError("window: give value or window (the offset or where to average it), not both")
        offset = float(check_real("value", value))
        note = f"removed offset {offset:.6g} from {channel} (given)"
    else:
        rows, where = _window_rows(record, window)
        offset = float(np.mean(values[rows]))
        note = f"removed offset {offset:.6g} from {channel} (its mean over {where})"
    return record._replace(slice(None), **put(values - offset), preprocessing=(*record.preprocessing, note))
