"""Dahl's friction model (Dahl 1968, 1976), with its exponent."""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import safe_divide
from .dynamic import AbstractDynamicLaw, safe_power


class Dahl(AbstractDynamicLaw):
    """Dahl's model: friction as a hysteretic function of displacement (one state).

    Dahl 1968 (Aerospace Corp. report TOR-158(3107-18)) and Dahl 1976 (AIAA J. 14(9):1675),
    in the form of Olsson et al. 1998 (Eur. J. Control 4:176, eq. 7)::

        dF/dx = sigma (1 - (F / F_c) sgn(v))^alpha,   F_c = mu N,

    written with the state ``z = F / sigma`` (m, the deflection of an equivalent spring)::

        z' = v (1 - sigma z sgn(v) / F_c)^alpha,      F = sigma z,

    and the friction force on the body ``f = -F``. ``sigma`` is the rest stiffness (N/m), the
    slope of the force-displacement curve at zero force; ``|F| -> F_c`` in steady sliding.
    From ``|F| <= F_c`` the force stays there (the base of the power is clipped at 0, so
    non-integer ``alpha`` stay real). ``alpha = 1`` gives the exponential approach
    ``F = F_c - (F_c - F_0) exp(-sigma (x - x_0) / F_c)`` (loading branch); in general the
    branch solves ``u^(1 - alpha) = u_0^(1 - alpha) + (alpha - 1) sigma (x - x_0) / F_c``
    with ``u = 1 - F sgn(v) / F_c``. The equivalent spring stores ``sigma z^2 / 2`` and the
    dissipated power ``sigma z v (1 - (1 - sigma z sgn(v) / F_c)^alpha)`` is >= 0 for ``|F|
    <= F_c`` (the model is passive).

    Args:
        sigma: rest stiffness > 0 (N/m).
        mu: Coulomb coefficient >= 0 (``F_c = mu N``).
        alpha: exponent > 0 (Dahl: 1 for ductile, about 2 for brittle materials;
            ``alpha < 1`` has infinite slope at ``|F| = F_c``).

    Raises:
        ValueError: parameters out of range or non-finite.
    """

    sigma: float = 1e3
    mu: float = 1.0
    alpha: float = 1.0

    n_state = 1

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("sigma", self.sigma), nonnegative("mu", self.mu), positive("alpha", self.alpha))

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        ratio = safe_divide(self.sigma * z[..., 0], self.mu * normal)
        base = jnp.maximum(1.0 - ratio * jnp.sign(v), 0.0)
        return (v * safe_power(base, self.alpha))[..., None]

    def slip_update(self, z: Array, slip: ArrayLike, normal: ArrayLike) -> Array:
        """The state after a monotone slip increment ``slip`` (m), ``(...)``, from ``z``
        ``(..., 1)``: the loading branch of the class docstring in closed form (Olsson et al.
        1998, eq. 7, integrated in the displacement). With ``s = sgn(slip)``, ``u = 1 - sigma z
        s / F_c`` and ``k = sigma |slip| / F_c``: ``u = u_0 exp(-k)`` for ``alpha = 1``, else
        ``u^(1 - alpha) = u_0^(1 - alpha) + (alpha - 1) k``, clipped at ``u = 0`` (``|F| =
        F_c``, where the state stays); ``u_0`` is clipped at 0 as in :meth:`state_rate`. Dahl's
        model is rate-independent, so this is exact for any speed along the increment; harmonic
        balance marches the state with it. ``F_c = 0`` follows :meth:`state_rate` there
        (``z' = v``). At zero slip the value is ``z`` (to round-off) and the derivative in the
        slip that of a loading in the positive direction."""
        slip = jnp.asarray(slip)
        f_c = self.mu * jnp.asarray(normal)
        # zero slip as the loading side: the value is z again (to round-off) and the derivative
        # in the slip is the branch's slope u_0^alpha there (the march's Jacobian at rest)
        s, k_ok = jnp.where(slip >= 0, 1.0, -1.0), f_c != 0
        fc = jnp.where(k_ok, f_c, 1.0)
        unclipped = 1.0 - self.sigma * z[..., 0] * s / fc
        u0 = jnp.maximum(unclipped, 0.0)
        k = self.sigma * jnp.abs(slip) / fc
        alpha = jnp.asarray(self.alpha, u0.dtype)
        one = alpha == 1.0
        p = jnp.where(one, 1.0, 1.0 - alpha)  # 1 - alpha, kept off 0
        loaded = u0 > 0
        w = safe_power(jnp.where(loaded, u0, 1.0), p) + (alpha - 1.0) * k  # u^(1 - alpha), > 0 for alpha > 1
        reached = w > 0  # alpha < 1 reaches the limit after a finite slip
        power = jnp.where(loaded & reached, safe_power(jnp.where(reached, w, 1.0), 1.0 / p), 0.0)
        u = jnp.where(one, u0 * jnp.exp(-k), power)
        z_new = (1.0 - u) * f_c * s / self.sigma
        moved = jnp.where((slip == 0) & (unclipped < 0), z[..., 0], z_new)  # past the limit at rest: held
        return jnp.where(k_ok, moved, z[..., 0] + slip)[..., None]

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -self.sigma * z[..., 0] + 0.0 * v

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        return 0.5 * self.sigma * z[..., 0] ** 2

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return self.mu * normal + 0.0 * v

    def max_state_rate(self, v, z, normal):
        """The largest ``|dz'/dz|`` the state can reach at slip velocity ``v`` (1/time), ``(...)``.

        ``|dz'/dz| = alpha sigma |v| u^(alpha - 1) / F_c`` with ``u = 1 - F sgn(v) / F_c`` in
        ``[0, 2]``; for ``alpha >= 1`` its largest value, ``2^(alpha - 1) alpha sigma |v| /
        F_c``, is reached right after a reversal from ``|F| = F_c``. A bound, not the value at
        ``z``: a stiff Dahl element (``sigma |v| h / F_c`` of order 1) swings from one limit to
        the other within a step, so the saved states sit at the limits where the slope is 0
        for ``alpha > 1`` (``alpha = 14``: D 1.8x the converged value with status 0 before).
        For ``alpha < 1`` the slope is unbounded at the limit; the value at ``z`` is taken.
        """
        at_z = super().max_state_rate(v, z, normal)
        limit = safe_divide(self.alpha * self.sigma * jnp.abs(v), self.mu * normal)
        reversal = limit * 2.0 ** jnp.maximum(self.alpha - 1.0, 0.0)
        return jnp.maximum(at_z, jnp.where(self.alpha >= 1.0, reversal, 0.0))
