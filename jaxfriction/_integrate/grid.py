"""Step-aligned fixed-step grids."""

from __future__ import annotations

import math

from .._checks import check_time_span, is_concrete


def fixed_grid(t0, t1, dt, save_every):
    """Fixed-step grid from ``t0`` to ``t1`` that lands exactly on ``t1``.

    The step actually used is ``h = (t1 - t0) / n_steps`` with ``n_steps`` the smallest
    multiple of ``save_every`` for which ``h <= dt`` (so ``h = dt`` whenever ``t1 - t0`` is a
    multiple of ``dt``). Keeping every segment step-aligned avoids the drifting step grid
    of accumulating ``t += dt`` over long spans.

    Args:
        t0, t1: concrete floats, ``t1 > t0`` (time units).
        dt: concrete float > 0, the largest step allowed.
        save_every: int >= 1, or None to save only ``t0`` and ``t1``.

    Returns:
        ``(n_saves, save_every, h)``: ``n_saves * save_every`` steps of size ``h``.

    Raises:
        ValueError: non-concrete or invalid ``t0``, ``t1``, ``dt`` or ``save_every``.
    """
    if not is_concrete((t0, t1, dt)):
        raise ValueError("t0, t1 and dt must be concrete numbers for fixed-step integration")
    check_time_span(t0, t1, dt)
    span = float(t1) - float(t0)
    n_min = max(1, math.ceil(span / float(dt) * (1.0 - 1e-12)))
    if save_every is None:
        return 1, n_min, span / n_min
    if isinstance(save_every, bool) or not isinstance(save_every, int) or save_every < 1:
        raise ValueError(f"save_every must be a positive int or None, got {save_every!r}")
    n_saves = math.ceil(n_min / save_every)
    return n_saves, save_every, span / (n_saves * save_every)
