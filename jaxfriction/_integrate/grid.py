"""Step-aligned fixed-step grids."""

from __future__ import annotations

import math

from .._checks import check_choice, check_int, check_time_span, is_concrete

#: Step-count conventions of fixed-step grids: ``"ceil"`` (the library's: the step never
#: exceeds ``dt``) and ``"round"`` (the papers': the nearest step count, ``h`` within half a
#: step of ``dt`` on either side).
ROUNDINGS = ("ceil", "round")


def check_rounding(rounding: str) -> str:
    """Raise ValueError naming ``rounding`` unless it is one of :data:`ROUNDINGS`."""
    check_choice("rounding", rounding, ROUNDINGS)
    return rounding


def fixed_grid(t0: float, t1: float, dt: float, save_every: int | None,
               rounding: str = "ceil") -> tuple[int, int, float]:
    """Fixed-step grid from ``t0`` to ``t1`` that lands exactly on ``t1``.

    The step actually used is ``h = (t1 - t0) / n_steps``. With ``rounding="ceil"`` (the
    default) ``n_steps`` is the smallest multiple of ``save_every`` for which ``h <= dt``; with
    ``"round"`` (the papers' convention, e.g. Quinn's ``T / dt`` steps per period) it is the
    multiple of ``save_every`` nearest to ``(t1 - t0) / dt``, so ``h`` may exceed ``dt``
    slightly. Either way ``h = dt`` whenever ``t1 - t0`` is a multiple of ``dt``, and keeping
    every segment step-aligned avoids the drifting step grid of accumulating ``t += dt``
    over long spans.

    Args:
        t0, t1: concrete floats, ``t1 > t0`` (time units).
        dt: concrete float > 0, the step (largest allowed with ``"ceil"``).
        save_every: int >= 1, or None to save only ``t0`` and ``t1``.
        rounding: ``"ceil"`` or ``"round"`` (:data:`ROUNDINGS`).

    Returns:
        ``(n_saves, save_every, h)``: ``n_saves * save_every`` steps of size ``h``.

    Raises:
        ValueError: non-concrete or invalid ``t0``, ``t1``, ``dt``, ``save_every`` or
            ``rounding``.
    """
    if not is_concrete((t0, t1, dt)):
        raise ValueError("t0, t1 and dt must be concrete numbers for fixed-step integration")
    check_time_span(t0, t1, dt)
    check_rounding(rounding)
    span = float(t1) - float(t0)
    ratio = span / float(dt)
    if save_every is None:
        save_every, saves = 1, False
    else:
        saves = True
        check_int("save_every", save_every, minimum=1)
    if rounding == "ceil":
        n_saves = math.ceil(max(1, math.ceil(ratio * (1.0 - 1e-12))) / save_every)
    else:
        n_saves = max(1, round(ratio / save_every))
    n_steps = n_saves * save_every
    return (n_saves, save_every, span / n_steps) if saves else (1, n_steps, span / n_steps)
