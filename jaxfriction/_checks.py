"""Argument validation shared by every module.

Checks run on concrete values (Python numbers, NumPy arrays, concrete JAX arrays) when a
module is built or a function is called. Values that are JAX tracers (inside ``jit``,
``vmap`` or ``grad``) cannot be inspected at trace time and are passed through; the
integrators flag non-finite trajectories in their ``status`` instead of failing a batch.
"""

from __future__ import annotations

import jax
import numpy as np


def is_concrete(value) -> bool:
    """True when ``value`` (or every leaf of it) can be read at trace time."""
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(value))


def check_real(name: str, value, *, positive: bool = False, nonnegative: bool = False):
    """Raise ``ValueError`` naming ``name`` unless ``value`` is finite (and > 0 or >= 0).

    Tracers are skipped (see module docstring). Returns ``value`` unchanged.
    """
    if value is None or not is_concrete(value):
        return value
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and not np.all(arr > 0):
        raise ValueError(f"{name} must be > 0, got {value!r}")
    if nonnegative and not np.all(arr >= 0):
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return value


def check_time_span(t0, t1, dt=None):
    """Validate an integration window: finite ``t0 < t1`` and, if given, ``dt > 0``."""
    check_real("t0", t0)
    check_real("t1", t1)
    if dt is not None:
        check_real("dt", dt, positive=True)
    if is_concrete((t0, t1)) and not float(t1) > float(t0):
        raise ValueError(f"t1 must be greater than t0, got t0={t0!r}, t1={t1!r}")


def check_not_above(name: str, value, other_name: str, other):
    """Raise ``ValueError`` unless ``value <= other`` (e.g. ``mu_k <= mu_s``)."""
    if is_concrete((value, other)) and np.any(np.asarray(value) > np.asarray(other)):
        raise ValueError(f"{name} must be <= {other_name}, got {name}={value!r}, {other_name}={other!r}")
