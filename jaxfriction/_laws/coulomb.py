"""Coulomb friction with Karnopp's force balance at zero slip velocity.

Sources: Quinn 2004 eqs. (1)-(2); Ratel "Friction Models", Coulomb and viscous damping
(their ``F_e`` is the external tangential force, so their stick value ``min(F_C,|F_e|)
sgn(F_e)`` is our ``force_balance(f_eq, mu N)`` with ``f_eq = -F_e``; Ratel's ``F`` is the
resisting force, so its sign is flipped relative to the force on the body used here).
The comparison ``v == 0`` is exact, as in the papers: in floating point a trajectory
rarely lands on exactly zero, which is why the classical law chatters (Quinn Fig. 5a).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, at_most, nonnegative
from .base import AbstractFrictionLaw, force_balance


def static_kinetic_coulomb(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu_s: ArrayLike,
                           mu_k: ArrayLike) -> Array:
    """Coulomb friction with static ``mu_s`` and kinetic ``mu_k`` coefficients.

    ``-mu_k N sgn(v)`` for ``v != 0``; ``f_eq`` clipped to ``[-mu_s N, mu_s N]`` at
    ``v = 0`` (Quinn eqs. 1-2; paper 004, "Aside" on static vs kinetic coefficients).

    All arguments broadcast elementwise.

    Args:
        v: slip velocity.
        f_eq: force balance (N).
        normal: normal force N (N).
        mu_s: static coefficient (dimensionless).
        mu_k: kinetic coefficient (dimensionless).

    Returns:
        Friction force on the body (N), broadcast shape.
    """
    slip = -mu_k * normal * jnp.sign(v)
    return jnp.where(v == 0, force_balance(f_eq, mu_s * normal), slip)


def coulomb(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike) -> Array:
    """Classical Coulomb friction with force balance at ``v = 0`` (Quinn eqs. 1-2).

    Same as :func:`static_kinetic_coulomb` with ``mu_s = mu_k = mu``.
    """
    return static_kinetic_coulomb(v, f_eq, normal, mu, mu)


def viscous_coulomb(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike,
                    viscous: ArrayLike) -> Array:
    """Coulomb friction plus a viscous term ``-F_v v`` in slip (Ratel, viscous damping).

    Args:
        v: slip velocity (as :func:`coulomb`).
        f_eq: force balance (N).
        normal: normal force N (N).
        mu: friction coefficient (dimensionless).
        viscous: viscous coefficient ``F_v`` >= 0 (N s/m).

    Returns:
        ``-mu N sgn(v) - F_v v`` for ``v != 0``, ``force_balance(f_eq, mu N)`` at 0.
    """
    slip = -mu * normal * jnp.sign(v) - viscous * v
    return jnp.where(v == 0, force_balance(f_eq, mu * normal), slip)


class Coulomb(AbstractFrictionLaw):
    """Classical Coulomb friction with Karnopp's force balance (Quinn eqs. 1-2).

    Args:
        mu: friction coefficient, >= 0 (dimensionless).

    Raises:
        ValueError: if ``mu`` is negative or not finite.
    """

    mu: float = 1.0

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu),)

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return coulomb(v, f_eq, normal, self.mu)

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu * normal


class StaticKineticCoulomb(AbstractFrictionLaw):
    """Coulomb friction with static ``mu_s`` and kinetic ``mu_k <= mu_s`` coefficients.

    Slip force ``mu_k N``; stick holds up to ``mu_s N`` (paper 004, "Aside").

    Args:
        mu_s: static coefficient, >= 0.
        mu_k: kinetic coefficient, 0 <= mu_k <= mu_s.

    Raises:
        ValueError: negative or non-finite coefficients, or ``mu_k > mu_s``.
    """

    mu_s: float = 1.0
    mu_k: float = 0.8

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu_s", self.mu_s), nonnegative("mu_k", self.mu_k), at_most("mu_k", self.mu_k, "mu_s", self.mu_s))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return static_kinetic_coulomb(v, f_eq, normal, self.mu_s, self.mu_k)

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu_s * normal


class ViscousCoulomb(AbstractFrictionLaw):
    """Coulomb friction with a viscous slip term (Ratel "Coulomb friction, viscous damping").

    Args:
        mu: friction coefficient, >= 0 (Ratel default ``mu_k = 0.1``).
        viscous: viscous coefficient ``F_v`` >= 0 (N s/m; Ratel default 0).

    Raises:
        ValueError: negative or non-finite parameters.
    """

    mu: float = 0.1
    viscous: float = 0.0

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), nonnegative("viscous", self.viscous))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return viscous_coulomb(v, f_eq, normal, self.mu, self.viscous)

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu * normal

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return self.mu * normal + self.viscous * jnp.abs(v)

