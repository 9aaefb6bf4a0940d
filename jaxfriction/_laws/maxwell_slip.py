"""The generalized Maxwell-slip model (Al-Bender, Lampaert & Swevers 2005), N elements."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import safe_divide
from .dynamic import AbstractDynamicLaw
from .iwan import switch_rate
from .lugre import stribeck_force


class MaxwellSlip(AbstractDynamicLaw):
    """The generalized Maxwell-slip (GMS) friction model: ``n`` elements in parallel (``n`` states).

    Al-Bender, Lampaert & Swevers 2005, IEEE Trans. Autom. Control 50(11):1883, eqs. (7)-(9)
    (the form of Lampaert, Al-Bender & Swevers 2003, with a rate-state slipping law). Element
    ``i`` is a spring of stiffness ``k_i`` whose force ``F_i = k_i z_i`` is limited by the
    fraction ``alpha_i`` of the Stribeck curve ``s(v) = sgn(v) g(v)``, ``g(v) = N (mu_c +
    (mu_s - mu_c) exp(-|v / v_s|^delta))`` (:func:`~jaxfriction._laws.lugre.stribeck_force`):

    - sticking: ``dF_i/dt = k_i v``, i.e. ``z_i' = v``, while ``|F_i| < alpha_i g(v)`` or the
      element unloads (``v F_i <= 0``);
    - slipping (``|F_i| >= alpha_i g(v)`` and ``v F_i > 0``): ``dF_i/dt = sgn(v) C (1 - F_i /
      (alpha_i s(v)))``, i.e. ``z_i' = sgn(v) (C / k_i) (1 - |F_i| / (alpha_i g(v)))``: the
      element's force is attracted to ``alpha_i s(v)`` at the rate set by the attraction
      parameter ``C`` (N/s), so it follows the Stribeck curve's drop as the slip accelerates
      (the frictional lag); ``C`` large is the original Maxwell-slip model, whose slipping
      element holds ``F_i = alpha_i s(v)`` exactly;

    and the friction force on the body is ``f = -(sum_i k_i z_i + sigma2 v)``. The stick/slip
    switch is exact, as in :class:`~jaxfriction.Iwan` (a fixed-step integrator overshoots
    the limit by ``O(k_i |v| dt)``, which the attraction then removes at rate ``C / (alpha_i
    g)``).

    Closed forms (``tests/test_maxwell_slip.py``): in steady sliding every element holds
    ``alpha_i g(v)``, so the force is ``sum_i alpha_i s(v) + sigma2 v``, the Stribeck curve
    plus viscous friction when the fractions sum to 1; under a monotonic displacement from rest
    at constant speed ``v`` the virgin curve is ``F(x) = sum_i min(k_i x, alpha_i g(v)) +
    sigma2 v``, piecewise linear with breakpoints ``x_i = alpha_i g(v) / k_i`` (the presliding
    hysteresis with non-local memory of the paper's Sec. III).

    Step rule (:meth:`max_state_rate`): a slipping element's force relaxes at ``C / (alpha_i
    g(v))``, and the exact switch hides it at the saved states (a state inside the limit is
    sticking), so the bound ``max_i C / (alpha_i g_min)`` (``g_min = N min(mu_s, mu_c)``, the
    curve's lowest level) is taken whatever the elements do, with the switch's rate
    (:func:`~jaxfriction._laws.iwan.switch_rate`): fixed-step RK4 runs with ``h C / (min_i
    alpha_i g_min) > 2.785`` or ``h sum_i k_i |v| / sum_i alpha_i g_min > 0.1`` at a saved state get ``STATUS_UNSTABLE_STEP``; a large ``C`` needs an implicit
    solver (``jf.Diffrax(diffrax.Kvaerno5())``). The springs store ``sum_i k_i z_i^2 / 2``;
    the dissipated power is ``sum_i k_i z_i (v - z_i') + sigma2 v^2``.

    Args:
        stiffness: ``k_i`` ``(n,)`` > 0 (N/m).
        alpha: fractions ``alpha_i`` ``(n,)`` > 0 of the Stribeck curve (dimensionless; sum 1
            for a steady state on the curve).
        C: attraction parameter > 0 (N/s).
        sigma2: viscous coefficient >= 0 (N s/m).
        mu_c: Coulomb coefficient > 0 (``F_c = mu_c N``).
        mu_s: static coefficient > 0 (``F_s = mu_s N``): with ``mu_s = 0`` the Stribeck level
            ``g(0) = 0``, so the slip limit ``alpha_i g(v)`` and the attraction time
            ``alpha_i g / C`` vanish at rest and the attraction rate ``C / (alpha_i g)`` is
            unbounded (an RK4 step is always too long there).
        v_s: Stribeck velocity > 0 (m/s).
        delta: Stribeck exponent > 0.

    Raises:
        ValueError: shapes that differ, values out of range.
    """

    stiffness: jnp.ndarray = eqx.field(converter=jnp.asarray)
    alpha: jnp.ndarray = eqx.field(converter=jnp.asarray)
    C: float = 20.0
    sigma2: float = 0.0
    mu_c: float = 1.0
    mu_s: float = 1.5
    v_s: float = 1e-3
    delta: float = 2.0

    def __check_init__(self):
        if jnp.ndim(self.stiffness) < 1 or jnp.shape(self.stiffness)[-1:] != jnp.shape(self.alpha)[-1:]:
            raise ValueError("stiffness and alpha must be arrays (n,) of the same length, got shapes "
                             f"{jnp.shape(self.stiffness)} and {jnp.shape(self.alpha)}")
        super().__check_init__()

    @property
    def n_state(self) -> int:
        return jnp.shape(self.stiffness)[-1]

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("stiffness", self.stiffness), positive("alpha", self.alpha), positive("C", self.C),
                nonnegative("sigma2", self.sigma2), positive("mu_c", self.mu_c), positive("mu_s", self.mu_s),
                positive("v_s", self.v_s), positive("delta", self.delta))

    def steady_level(self, v: ArrayLike, normal: ArrayLike) -> Array:
        """``g(v)`` (N): the Stribeck level with this law's parameters."""
        return stribeck_force(v, normal, self.mu_c, self.mu_s, self.v_s, self.delta)

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        v = jnp.asarray(v)[..., None]
        limit = self.alpha * self.steady_level(v, normal)  # alpha_i g(v), (..., n)
        spring = self.stiffness * z
        slipping = (jnp.abs(spring) >= limit) & (v * z > 0)
        attraction = jnp.sign(v) * safe_divide(self.C, self.stiffness) * (1.0 - safe_divide(jnp.abs(spring), limit))
        return jnp.where(slipping, attraction, v + 0.0 * z)

    def max_state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """The largest of ``max_i C / (alpha_i g_min)``, the attraction rate of a slipping
        element (whether it slips or not), the switch's rate
        (:func:`~jaxfriction._laws.iwan.switch_rate` with the limits ``alpha_i g_min``) and
        the state Jacobian's diagonal (1/time). ``g_min = N min(mu_s, mu_c)``, the lowest
        level of the Stribeck curve: the limits a step crosses are those of every slip speed
        it passes through, down to rest (``g(v)`` at the saved speed alone let a lane with
        ``mu_s = 0.15``, ``mu_c = 1`` through 7 % off)."""
        normal = jnp.asarray(normal)[..., None]
        limit = self.alpha * normal * jnp.minimum(self.mu_s, self.mu_c)
        attraction = jnp.max(safe_divide(self.C + 0.0 * limit, limit), axis=-1)
        switch = switch_rate(v, self.stiffness, limit)
        return jnp.maximum(jnp.maximum(attraction, switch), super().max_state_rate(v, z, normal))

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -(jnp.sum(self.stiffness * z, axis=-1) + self.sigma2 * v)

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        return 0.5 * jnp.sum(self.stiffness * z**2, axis=-1)
