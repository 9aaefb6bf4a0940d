"""Karnopp's threshold-velocity (force-balance band) law.

Source: Karnopp 1985, as described by Quinn 2004 Sec. 2 and Fig. 2. Inside the band
``|v| < eta`` the contact is treated as stuck and the friction force is the force balance
``f_eq`` clipped to the static limit; outside it Coulomb slip friction applies.

Note: Karnopp's original scheme also resets the velocity to zero in the band. An ODE
integrator cannot reset state, so a contact that enters the band with ``0 < |v| < eta``
keeps that small velocity (the force balance cancels its acceleration) and drifts slowly;
started at exactly ``v = 0`` it holds still to round-off.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, at_most, nonnegative, positive
from .base import AbstractFrictionLaw, force_balance


def karnopp(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu_s: ArrayLike, mu_k: ArrayLike,
            eta: ArrayLike) -> Array:
    """Karnopp's law: ``force_balance(f_eq, mu_s N)`` for ``|v| < eta``, else ``-mu_k N sgn(v)``.

    Args:
        v: slip velocity.
        f_eq: force balance (N).
        normal: normal force N (N).
        mu_s: static coefficient (dimensionless).
        mu_k: kinetic coefficient (dimensionless).
        eta: threshold velocity, > 0 (units of ``v``).

    Returns:
        Friction force on the body (N).
    """
    slip = -mu_k * normal * jnp.sign(v)
    return jnp.where(jnp.abs(v) < eta, force_balance(f_eq, mu_s * normal), slip)


class Karnopp(AbstractFrictionLaw):
    """Karnopp threshold-velocity law (Quinn 2004 Sec. 2, Fig. 2).

    Args:
        mu_s: static coefficient, >= 0.
        eta: threshold velocity of the stick band, > 0.
        mu_k: kinetic coefficient, ``0 <= mu_k <= mu_s``; ``None`` (default) means ``mu_s``.

    Raises:
        ValueError: negative/non-finite coefficients, ``eta <= 0``, ``mu_k > mu_s``.
    """

    mu_s: float = 1.0
    eta: float = 1e-3
    mu_k: float | None = None

    def constraints(self) -> tuple[Constraint, ...]:
        fixed = (nonnegative("mu_s", self.mu_s), positive("eta", self.eta))
        if self.mu_k is None:
            return fixed
        return (*fixed, nonnegative("mu_k", self.mu_k), at_most("mu_k", self.mu_k, "mu_s", self.mu_s))

    @property
    def kinetic(self) -> ArrayLike:
        """The kinetic coefficient actually used (``mu_s`` when ``mu_k`` is None)."""
        return self.mu_s if self.mu_k is None else self.mu_k

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return karnopp(v, f_eq, normal, self.mu_s, self.kinetic, self.eta)

    def stick_band(self) -> ArrayLike:
        return self.eta

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu_s * normal
