"""How many multiple-shooting segments a record needs: one per period of its oscillation."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .measurement import Measurement

#: Samples a segment keeps at least, so that its start state is determined by its own data.
MIN_SEGMENT_SAMPLES = 20


def dominant_period(t: np.ndarray, x: np.ndarray) -> float | None:
    """The period of a record's dominant oscillation from its autocorrelation (time units).

    The record is detrended (least-squares line); the period is the lag of the largest
    autocorrelation after its first zero crossing. None when the autocorrelation never
    crosses zero (no oscillation within the record) or does not rise again.

    Args:
        t: ``(n,)`` uniform sample times.
        x: ``(n,)`` samples.
    """
    t, x = np.asarray(t, dtype=float), np.asarray(x, dtype=float)
    x = x - np.polyval(np.polyfit(t, x, 1), t)
    n = x.shape[0]
    spectrum = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(spectrum * np.conj(spectrum))[:n]
    if acf[0] <= 0:
        return None
    acf = acf / acf[0]
    negative = np.flatnonzero(acf < 0)
    if negative.size == 0:
        return None
    lag = negative[0] + int(np.argmax(acf[negative[0] :]))
    if acf[lag] <= 0:
        return None
    return float(lag * (t[1] - t[0]))


def auto_segments(m: Measurement) -> int:
    """Shooting segments of a :class:`~jaxfriction.Measurement`: one per period of its
    dominant oscillation (:func:`dominant_period` of its first measured column), at most one
    per ``MIN_SEGMENT_SAMPLES`` samples, and 1 for a record shorter than two periods or
    without an oscillation.

    A stick-slip or forced record's misfit is a rugged function of the parameters when one
    simulation spans many periods (every period shifts the phase of all later ones); with
    one segment per period the misfit of each segment is nearly convex around the truth.

    Returns:
        An int >= 1.
    """
    x = m.q[:, 0] if m.q is not None else m.v[:, 0] if m.v is not None else next(iter(m.channels.values()))  # type: ignore[union-attr]
    period = dominant_period(m.t, x)
    if period is None:
        return 1
    duration = float(m.t[-1] - m.t[0])
    count = int(duration // period)
    if count < 2:
        return 1
    return max(1, min(count, (len(m) - 1) // MIN_SEGMENT_SAMPLES))
