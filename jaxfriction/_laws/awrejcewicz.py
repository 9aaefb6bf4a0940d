"""The continuous switch-like friction model of Awrejcewicz, Grzelczyk and Pyryev (2007)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import AbstractFrictionLaw


def smoothstep(s: ArrayLike, eps: ArrayLike) -> Array:
    """Approximating function A of paper 002 eq. (2): ``(s/eps)^2 (3 - 2|s|/eps)``.

    A(0) = 0, A(+-eps) = 1, A'(0) = A'(+-eps) = 0. Valid for ``|s| <= eps``.
    """
    r = jnp.abs(jnp.clip(s, -eps, eps)) / eps
    return r * r * (3.0 - 2.0 * r)


def awrejcewicz(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu_s: ArrayLike, delta: ArrayLike,
                eps: ArrayLike) -> Array:
    """Continuous friction model of paper 002, eqs. (1)-(4), in this library's convention.

    The paper writes the force in terms of the relative velocity of the *surface* with
    respect to the body, ``v_rel = -v``, and the external force ``F_ex``, which is exactly
    our force balance ``f_eq`` (paper: ``M_ex = k phi - M0 cos(Omega t)``, the moment
    friction must supply for zero acceleration). With ``F_s = mu_s N``:

    - V1 ``|v_rel| > eps``: ``F_k sgn(v_rel)``, ``F_k = F_s / (1 + delta (|v_rel| - eps))``
      (eq. 4, velocity weakening);
    - V2 ``v_rel`` and ``F_ex`` of one sign, ``|F_ex| > F_s``: ``F_s Sgn_X(v_rel, F_ex)``
      (eq. 3);
    - V3 ``v_rel != 0`` and ``F_ex`` of opposite signs, ``|F_ex| > F_s``:
      ``(2A - 1) F_s sgn(v_rel)``;
    - V4 ``|F_ex| <= F_s``: ``A (-F_ex + F_s sgn(v_rel)) + F_ex``,

    all in the band ``|v_rel| <= eps``, with ``A`` of eq. (2). Gap in the paper: the point
    ``v_rel = 0, F_ex < -F_s`` belongs to none of V1-V4 as printed (V2's first clause needs
    ``F_ex > F_s``, its second ``v_rel < 0``). We put it in V2, where ``Sgn_X(0, F_ex) =
    sgn(F_ex)`` gives ``-F_s``: the force balance, which makes the law continuous there
    and odd, ``law(-v, -f_eq) = -law(v, f_eq)``.

    Args:
        v: slip velocity of the body.
        f_eq: force balance (N).
        normal: normal force N (N).
        mu_s: static coefficient, >= 0 (static level ``F_s = mu_s N``).
        delta: velocity-weakening coefficient, >= 0 (1/units of ``v``; paper: 3 s/rad).
        eps: steepness, > 0 (units of ``v``).

    Returns:
        Friction force on the body (N); ``|f| <= mu_s N`` everywhere.
    """
    f_s = mu_s * normal
    s = -v
    sgn = jnp.sign(s)
    a = smoothstep(s, eps)
    f_k = f_s / (1.0 + delta * (jnp.maximum(jnp.abs(s), eps) - eps))
    v1 = f_k * sgn
    v2 = f_s * jnp.where(s == 0, jnp.sign(f_eq), sgn)
    v3 = (2.0 * a - 1.0) * f_s * sgn
    v4 = a * (-f_eq + f_s * sgn) + f_eq
    beyond = jnp.abs(f_eq) > f_s
    opposite = (s * f_eq) < 0
    band = jnp.where(beyond, jnp.where(opposite, v3, v2), v4)
    return jnp.where(jnp.abs(s) > eps, v1, band)


class Awrejcewicz(AbstractFrictionLaw):
    """Continuous friction model of Awrejcewicz, Grzelczyk, Pyryev 2007 (paper 002).

    Keeps Coulomb's structure at ``v = 0`` (returns ``force_balance(f_eq, F_s)``) and is
    continuous in ``v``; the slip level weakens with speed as eq. (4).

    Args:
        mu_s: static coefficient, >= 0 (``F_s = mu_s N``).
        delta: velocity-weakening coefficient >= 0 (1/velocity; paper 3 s/rad).
        eps: steepness of the band, > 0 (units of velocity; paper 1e-3 rad/s).

    Raises:
        ValueError: negative or non-finite parameters, ``eps <= 0``.
    """

    mu_s: float = 1.0
    delta: float = 3.0
    eps: float = 1e-3

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu_s", self.mu_s), nonnegative("delta", self.delta), positive("eps", self.eps))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return awrejcewicz(v, f_eq, normal, self.mu_s, self.delta, self.eps)

    def stick_band(self) -> ArrayLike:
        return self.eps

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu_s * normal


