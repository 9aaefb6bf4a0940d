"""What :func:`~jaxfriction.simulate` saves: a small option object, like ``diffrax.SaveAt``."""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np

from .._checks import check_int


class SaveAt(eqx.Module):
    """Which states a run returns. Give at most one of:

    - ``every=k``: every ``k``-th step of a fixed-step solver (``k = 1``: every step);
    - ``n=k``: ``k + 1`` equally spaced times from ``t0`` to ``t1`` (``n=1``: the end points
      only). Fixed-step solvers align their grid so that these are steps (the step is
      ``(t1 - t0) / (k m) <= dt`` with the smallest such ``m``);
    - ``ts=array``: the given increasing times in ``[t0, t1]`` (adaptive diffrax solvers and
      the event-driven solver, which interpolate their dense output).

    ``SaveAt()`` means the solver's default: every step for fixed-step solvers, ``n=1000``
    for adaptive and event-driven ones.

    Raises:
        ValueError: more than one choice, or a non-positive ``every`` / ``n``.
    """

    every: int | None = eqx.field(default=None, static=True)
    n: int | None = eqx.field(default=None, static=True)
    ts: jax.Array | None = None

    def __check_init__(self):
        given = [name for name in ("every", "n", "ts") if getattr(self, name) is not None]
        if len(given) > 1:
            raise ValueError(f"SaveAt takes one of every, n and ts, got {given}")
        if self.every is not None:
            check_int("SaveAt: every", self.every, minimum=1)
        if self.n is not None:
            check_int("SaveAt: n", self.n, minimum=1)
        if self.ts is not None and np.ndim(self.ts) != 1:
            raise ValueError(f"SaveAt: ts must be 1-D, got shape {np.shape(self.ts)}")
