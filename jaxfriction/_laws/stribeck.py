"""Stribeck friction with force balance at zero slip velocity."""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, at_most, nonnegative, positive
from .base import AbstractFrictionLaw, force_balance


def stribeck_coefficient(v: ArrayLike, mu_s: ArrayLike, mu_k: ArrayLike, v_s: ArrayLike,
                         delta: ArrayLike) -> Array:
    """Stribeck curve ``mu_k + (mu_s - mu_k) exp(-(|v| / v_s)^delta)`` (dimensionless).

    Safe at ``v = 0`` for any ``delta > 0`` (double-``where``: the power never sees 0).
    """
    a = jnp.abs(v)
    nonzero = a > 0
    r = jnp.where(nonzero, a, v_s) / v_s
    decay = jnp.where(nonzero, jnp.exp(-(r**delta)), 1.0)
    return mu_k + (mu_s - mu_k) * decay


def stribeck(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu_s: ArrayLike, mu_k: ArrayLike,
             v_s: ArrayLike, delta: ArrayLike) -> Array:
    """Stribeck law: ``-N mu(v) sgn(v)`` in slip, ``force_balance(f_eq, mu_s N)`` at 0.

    ``mu(v)`` is :func:`stribeck_coefficient` (the issue's form; Stribeck velocity
    ``v_s``, shape exponent ``delta``, usually 1 or 2).

    Args:
        v: slip velocity.
        f_eq: force balance (N).
        normal: normal force N (N).
        mu_s: static coefficient, ``mu_s >= mu_k``.
        mu_k: kinetic coefficient, ``mu_k >= 0``.
        v_s: Stribeck velocity, > 0 (units of ``v``).
        delta: shape exponent, > 0.

    Returns:
        Friction force on the body (N).
    """
    slip = -normal * stribeck_coefficient(v, mu_s, mu_k, v_s, delta) * jnp.sign(v)
    return jnp.where(v == 0, force_balance(f_eq, mu_s * normal), slip)


class Stribeck(AbstractFrictionLaw):
    """Coulomb friction with a Stribeck curve in slip and force balance in stick.

    Args:
        mu_s: static coefficient, >= 0.
        mu_k: kinetic coefficient, ``0 <= mu_k <= mu_s``.
        v_s: Stribeck velocity, > 0 (units of velocity).
        delta: shape exponent, > 0.

    Raises:
        ValueError: negative/non-finite values, ``v_s <= 0``, ``delta <= 0``,
            ``mu_k > mu_s``.
    """

    mu_s: float = 1.0
    mu_k: float = 0.8
    v_s: float = 0.1
    delta: float = 2.0

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu_s", self.mu_s), nonnegative("mu_k", self.mu_k), positive("v_s", self.v_s), positive("delta", self.delta), at_most("mu_k", self.mu_k, "mu_s", self.mu_s))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return stribeck(v, f_eq, normal, self.mu_s, self.mu_k, self.v_s, self.delta)

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu_s * normal
