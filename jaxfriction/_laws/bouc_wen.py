"""Bouc-Wen hysteresis as a friction law (Bouc 1967; Wen 1976)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, at_least, at_most, nonnegative, positive
from .dynamic import AbstractDynamicLaw, safe_power


class BoucWen(AbstractDynamicLaw):
    """Bouc-Wen hysteresis: a smooth elastic-plastic friction contact with one state.

    Wen 1976 (J. Eng. Mech. Div. 102(2):249, eq. 3), written for the slip of a contact with
    yield force ``F_y = mu N`` and yield displacement ``D_y``::

        z' = (v / D_y) (A - |z|^n (beta sgn(v z) + gamma)),     F = mu N z,

    and the friction force on the body ``f = -F``. ``z`` is dimensionless; loaded in one
    direction it tends to ``z_u = (A / (beta + gamma))^(1/n)``, so the sliding force is
    ``mu N z_u`` (1 with the defaults ``A = 1``, ``beta = gamma = 1/2``). The initial stiffness
    is ``A mu N / D_y``; ``n`` sets the sharpness of the elastic-plastic transition (large
    ``n`` tends to an elastic-perfectly-plastic Jenkins element). With ``n = 1`` the loading
    branch from ``z_0`` has the closed form ``z = z_u - (z_u - z_0) exp(-(beta + gamma) x /
    D_y)``.

    Energy: the elastic part is the spring of the initial stiffness, ``stored = mu N D_y
    z^2 / (2 A)``; the dissipated power is then ``mu N |z|^n (beta |z v| + gamma z v) / A``,
    which is >= 0 for every motion when ``beta >= |gamma|`` (the model's passivity
    condition; only ``gamma <= beta`` is enforced, ``gamma < -beta`` is the user's choice).

    Args:
        mu: yield force coefficient >= 0 (``F_y = mu N``).
        D_y: yield displacement > 0 (m).
        A: initial-stiffness factor > 0.
        beta: >= 0.
        gamma: <= beta.
        n: sharpness exponent >= 1. Wen's model is defined for ``n > 0``; jaxfriction
            requires ``n >= 1`` (a decision, issue 25): for ``n < 1`` the state equation is
            not Lipschitz at ``z = 0`` (slope ``n |z|^(n-1)``), so no fixed step resolves
            the zero crossing of ``z`` that every load reversal has, and a sweep lane with
            ``n = 0.1`` at ``dt = 1e-3`` returned D 13x the converged value with status 0
            (``scripts/studies/step_honesty.py``). The smooth-to-sharp range the model is used for
            (``n = 1`` .. large) is kept.

    Raises:
        ValueError: parameters out of range or non-finite, ``n < 1``.
    """

    mu: float = 1.0
    D_y: float = 1e-3
    A: float = 1.0
    beta: float = 0.5
    gamma: float = 0.5
    n: float = 1.0

    n_state = 1

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), positive("D_y", self.D_y), positive("A", self.A),
                nonnegative("beta", self.beta), at_most("gamma", self.gamma, "beta", self.beta),
                at_least("n", self.n, 1.0, "for n < 1 the state rate's slope n |z|^(n-1) is unbounded at z = 0"))

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        s = z[..., 0]
        hysteresis = safe_power(jnp.abs(s), self.n) * (self.beta * jnp.sign(v * s) + self.gamma)
        return ((v / self.D_y) * (self.A - hysteresis))[..., None]

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -self.mu * normal * z[..., 0] + 0.0 * v

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        return 0.5 * self.mu * normal * self.D_y * z[..., 0] ** 2 / self.A
