"""Threlfall's exponential friction law (Ratel "Friction Models", Threlfall friction)."""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import AbstractFrictionLaw, broadcast_like, safe_divide

_NORM = -math.expm1(-3.0)  # 1 - exp(-3), a Python float: takes the precision active at call time


def _odd_exponential(v, v0):
    """``sgn(v) (1 - exp(-3|v|/v0)) / (1 - exp(-3))`` without |v|, so d/dv is right at 0."""
    return jnp.where(v >= 0, -jnp.expm1(-3.0 * v / v0), jnp.expm1(3.0 * v / v0)) / _NORM


def threlfall(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike, v0: ArrayLike,
              viscous: ArrayLike = 0.0) -> Array:
    """Threlfall law (Ratel): exponential rise below the tolerance velocity ``v0``.

    ``|f| = mu N (1 - exp(-3|v|/v0)) / (1 - exp(-3))`` for ``|v| <= v0`` and
    ``mu N + F_v (|v| - v0)`` beyond, opposing ``v``. Ratel prints the viscous branch as
    ``F_C + (|v_t| - v0)`` without ``F_v``; its text says the damping is "rescaled to
    |v_t| - v0", so we read it as ``F_v (|v| - v0)`` (with ``F_v = 0``, the default, both
    readings agree). ``f_eq`` only sets the output shape: the force vanishes at ``v = 0``.

    Args:
        v: slip velocity.
        f_eq: force balance (N, unused).
        normal: normal force N (N).
        mu: friction coefficient, >= 0.
        v0: tolerance velocity, > 0 (units of ``v``).
        viscous: viscous coefficient ``F_v`` >= 0 (N s/m).

    Returns:
        Friction force on the body (N).
    """
    limit = mu * normal
    inside = limit * _odd_exponential(jnp.clip(v, -v0, v0), v0)
    outside = jnp.sign(v) * (limit + viscous * (jnp.abs(v) - v0))
    return broadcast_like(-jnp.where(jnp.abs(v) <= v0, inside, outside), f_eq)

class Threlfall(AbstractFrictionLaw):
    """Threlfall exponential law with optional viscous term (Ratel; defaults from Ratel).

    Under a constant load below ``mu N`` the block creeps at ``|v| = -(v0/3)
    ln(1 - |f_eq| (1 - e^-3) / (mu N))``, opposite to ``f_eq`` (:meth:`creep_velocity`).

    Args:
        mu: kinetic coefficient, >= 0 (Ratel default 0.1).
        v0: tolerance velocity, > 0 (Ratel default 0.05; units of velocity).
        viscous: viscous coefficient ``F_v`` >= 0 (Ratel default 0; N s/m).

    Raises:
        ValueError: negative or non-finite parameters, ``v0 <= 0``.
    """

    keeps_coulomb_structure = False

    mu: float = 0.1
    v0: float = 0.05
    viscous: float = 0.0

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), positive("v0", self.v0), nonnegative("viscous", self.viscous))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return threlfall(v, f_eq, normal, self.mu, self.v0, self.viscous)

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu * normal

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return self.mu * normal + self.viscous * jnp.maximum(jnp.abs(v) - self.v0, 0.0)

    def creep_velocity(self, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        """Steady creep velocity for a constant force balance ``|f_eq| < mu N`` (units of v)."""
        ratio = safe_divide(f_eq, self.mu * normal)
        return -jnp.sign(ratio) * (-self.v0 / 3.0) * jnp.log1p(-jnp.abs(ratio) * _NORM)
