"""Velocity-limited regularization of Martins and Oden (Quinn 2004 eq. 3)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import AbstractFrictionLaw, broadcast_like, safe_divide


def velocity_limited(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike,
                     eps: ArrayLike) -> Array:
    """Martins-Oden law, Quinn 2004 eq. (3): ``-mu N clip(v / eps, -1, 1)``.

    A viscous damper of coefficient ``mu N / eps`` for ``|v| <= eps`` that saturates at the
    Coulomb value beyond. ``f_eq`` only sets the output shape (common call shape): the
    force vanishes at ``v = 0``, so this law does not keep Coulomb's structure there.

    Args:
        v: slip velocity.
        f_eq: force balance (N, unused).
        normal: normal force N (N).
        mu: friction coefficient, >= 0.
        eps: regularization width, > 0 (units of ``v``).

    Returns:
        Friction force on the body (N).
    """
    return broadcast_like(-mu * normal * jnp.clip(v / eps, -1.0, 1.0), f_eq)


class VelocityLimited(AbstractFrictionLaw):
    """Velocity-limited (Martins-Oden) regularization, Quinn 2004 eq. (3).

    Under a constant load below the static limit the block does not stick: it creeps at
    the velocity where ``f = f_eq``, ``v_creep = -eps f_eq / (mu N)`` (see
    :meth:`creep_velocity`), approached exponentially at rate ``mu N / (m eps)``.

    Args:
        mu: friction coefficient, >= 0.
        eps: regularization width, > 0 (units of velocity).

    Raises:
        ValueError: ``mu < 0``, ``eps <= 0`` or non-finite values.
    """

    keeps_coulomb_structure = False

    mu: float = 1.0
    eps: float = 0.02

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), positive("eps", self.eps))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return velocity_limited(v, f_eq, normal, self.mu, self.eps)

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu * normal

    def creep_velocity(self, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        """Steady creep velocity under a constant force balance ``|f_eq| < mu N``.

        Solves ``velocity_limited(v) = f_eq``: ``v = -eps f_eq / (mu N)`` (units of v).
        """
        return -self.eps * safe_divide(f_eq, self.mu * normal)
