"""The LuGre model (Canudas de Wit, Olsson, Astrom & Lischinsky 1995)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import safe_divide
from .dynamic import AbstractDynamicLaw, safe_power


def stribeck_force(v: ArrayLike, normal: ArrayLike, mu_c: ArrayLike, mu_s: ArrayLike, v_s: ArrayLike,
                   delta: ArrayLike) -> Array:
    """LuGre's steady-state friction level ``g(v) = N (mu_c + (mu_s - mu_c) exp(-|v / v_s|^delta))`` (N).

    Canudas de Wit et al. 1995 (Sec. 2) with ``F_c = mu_c N``, ``F_s = mu_s N``; ``g(v) / sigma0``
    is the bristle deflection in steady sliding. Finite derivatives at ``v = 0`` for every
    ``delta > 0`` (:func:`~jaxfriction._laws.dynamic.safe_power`).

    Args:
        v: slip velocity (m/s), any shape.
        normal: normal force N (N), broadcasting against ``v``.
        mu_c, mu_s: Coulomb and static coefficients (dimensionless).
        v_s: Stribeck velocity > 0 (m/s).
        delta: Stribeck exponent > 0.

    Returns:
        ``g(v)`` (N), the broadcast shape.
    """
    return normal * (mu_c + (mu_s - mu_c) * jnp.exp(-safe_power(jnp.abs(v) / v_s, delta)))


class LuGre(AbstractDynamicLaw):
    """The LuGre friction model: bristles with an internal deflection ``z`` (one state).

    Canudas de Wit, Olsson, Astrom & Lischinsky 1995, IEEE Trans. Autom. Control 40(3):419,
    Sec. 2 (the model and its velocity-dependent micro-damping variant):

    - ``z' = v - sigma0 |v| z / g(v)``,
    - ``g(v) = F_c + (F_s - F_c) exp(-|v / v_s|^delta)``, with ``F_c = mu_c N``,
      ``F_s = mu_s N`` (the library's normal-force scaling; the paper's forces are those at
      ``N = 1``),
    - ``F = sigma0 z + sigma1(v) z' + sigma2 v``, ``sigma1(v) = sigma1 exp(-(v / v_d)^2)``
      (``v_d = None``: constant ``sigma1``, the paper's basic model),

    and the friction force on the body is ``f = -F``. In steady sliding (``z' = 0``) ``F = g(v)
    sgn(v) + sigma2 v``, the Stribeck curve plus viscous friction; for small displacements
    from rest the contact is a spring of stiffness ``sigma0`` (presliding). The bristles store
    ``sigma0 z^2 / 2``; the dissipated power is ``sigma0 z (v - z') + sigma1(v) z' v + sigma2
    v^2``; its middle term can be negative, so a large ``sigma1`` makes the model active
    (Barabanov & Ortega 2000, IEEE TAC 45(4):830, give the passivity condition); the energy
    balance stays exact either way. The bristles are stiff: the relaxation rate of
    ``z`` is ``sigma0 |v| / g(v)`` and the coupled mass-bristle frequency ``sqrt(sigma0 / m)``,
    so use small steps or an implicit solver (``diffrax.Kvaerno5()``). Step rule
    (:meth:`~jaxfriction.AbstractDynamicLaw.max_state_rate`): fixed-step RK4 runs with
    ``h sigma0 |v| / g(v) > 2.785`` at a saved state, or ``h`` times the slip-rate stiffness
    ``(sigma1 + sigma2) / m`` past 1, get ``STATUS_UNSTABLE_STEP``.

    With ``N = 0`` (``g = 0``) the bristle law is undefined; the rate then falls back to ``z' =
    v`` (finite).

    Args:
        sigma0: bristle stiffness > 0 (N/m; paper 1e5).
        sigma1: bristle damping >= 0 (N s/m; paper sqrt(1e5)).
        sigma2: viscous coefficient >= 0 (N s/m; paper 0.4).
        mu_c: Coulomb coefficient > 0 (``F_c = mu_c N``; paper F_c = 1 N).
        mu_s: static coefficient > 0 (``F_s = mu_s N``; paper F_s = 1.5 N): with ``mu_s = 0``
            the level ``g(v)`` vanishes at rest, so the bristle rate ``sigma0 |v| / g(v)``
            grows without bound as ``v -> 0`` (``~ sigma0 v_s^delta / (F_c |v|^(delta - 1))``)
            and no step is stable there.
        v_s: Stribeck velocity > 0 (m/s; paper 0.001).
        delta: Stribeck exponent > 0 (paper 2).
        v_d: velocity scale of the micro-damping's decay > 0 (m/s), or None (constant).

    Raises:
        ValueError: parameters out of range or non-finite.
    """

    sigma0: float = 1e5
    sigma1: float = 316.2
    sigma2: float = 0.4
    mu_c: float = 1.0
    mu_s: float = 1.5
    v_s: float = 1e-3
    delta: float = 2.0
    v_d: float | None = None

    n_state = 1

    def constraints(self) -> tuple[Constraint, ...]:
        out = (positive("sigma0", self.sigma0), nonnegative("sigma1", self.sigma1),
               nonnegative("sigma2", self.sigma2), positive("mu_c", self.mu_c), positive("mu_s", self.mu_s),
               positive("v_s", self.v_s), positive("delta", self.delta))
        return out if self.v_d is None else (*out, positive("v_d", self.v_d))

    def steady_level(self, v: ArrayLike, normal: ArrayLike) -> Array:
        """``g(v)`` (N): :func:`stribeck_force` with this law's parameters."""
        return stribeck_force(v, normal, self.mu_c, self.mu_s, self.v_s, self.delta)

    def micro_damping(self, v: ArrayLike) -> Array:
        """``sigma1(v)`` (N s/m): ``sigma1``, times ``exp(-(v / v_d)^2)`` when ``v_d`` is set."""
        if self.v_d is None:
            return self.sigma1 + 0.0 * v
        return self.sigma1 * jnp.exp(-((v / self.v_d) ** 2))

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        zz = z[..., 0]
        rate = v - self.sigma0 * jnp.abs(v) * safe_divide(zz, self.steady_level(v, normal))
        return rate[..., None]

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        zz = z[..., 0]
        rate = self.state_rate(v, z, normal)[..., 0]
        return -(self.sigma0 * zz + self.micro_damping(v) * rate + self.sigma2 * v)

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        return 0.5 * self.sigma0 * z[..., 0] ** 2
