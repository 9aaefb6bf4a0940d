"""Classical fixed-step fourth-order Runge-Kutta in ``lax.scan`` (the papers' method)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def rk4_step(vector_field, t, y, h, args=None):
    """One classical RK4 step; the friction law is evaluated at all four stages.

    Args: ``vector_field(t, y, args)``, time ``t``, state ``y`` (any shape), step ``h``.
    Returns: the state at ``t + h``.
    """
    k1 = vector_field(t, y, args)
    k2 = vector_field(t + 0.5 * h, y + (0.5 * h) * k1, args)
    k3 = vector_field(t + 0.5 * h, y + (0.5 * h) * k2, args)
    k4 = vector_field(t + h, y + h * k3, args)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def rk4_scan(vector_field, y0, t0, h, n_saves, save_every, args=None):
    """Integrate ``n_saves * save_every`` RK4 steps of size ``h`` from ``(t0, y0)``.

    Times are formed as ``t0 + k h`` from the integer step count ``k`` (no accumulated
    rounding). ``n_saves`` and ``save_every`` must be Python ints.

    Returns:
        ``(ts, ys)`` with ``ts`` of shape ``(n_saves + 1,)`` and ``ys`` of shape
        ``(n_saves + 1,) + y0.shape``, including the initial point.
    """

    offsets = jnp.arange(save_every)

    def one_save(y, i):
        def one_step(y, j):
            return rk4_step(vector_field, t0 + (i * save_every + j) * h, y, h, args), None

        y, _ = jax.lax.scan(one_step, y, offsets)
        return y, y

    _, ys = jax.lax.scan(one_save, y0, jnp.arange(n_saves))
    ks = jnp.arange(n_saves + 1) * save_every
    return t0 + ks * h, jnp.concatenate([y0[None], ys], axis=0)
