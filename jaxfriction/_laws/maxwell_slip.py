"""The generalized Maxwell-slip model (Lampaert et al. 2003; Al-Bender, Lampaert & Swevers 2005), N elements."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_choice, nonnegative, numeric_array, positive
from .base import safe_divide
from .dynamic import AbstractDynamicLaw
from .iwan import switch_rate
from .lugre import stribeck_force

#: The 2005 variant's latch: its memory of "this element slipped since the velocity last
#: reversed" is held up to this fraction of the element's stick range ``alpha_i g_min / k_i``.
LATCH_FRACTION = 1e-6


class MaxwellSlip(AbstractDynamicLaw):
    """The generalized Maxwell-slip (GMS) friction model: ``n`` elements in parallel.

    Element ``i`` is a spring of stiffness ``k_i`` whose force ``F_i = k_i z_i`` is limited by
    the fraction ``alpha_i`` of the Stribeck curve ``s(v) = sgn(v) g(v)``, ``g(v) = N (mu_c +
    (mu_s - mu_c) exp(-|v / v_s|^delta))`` (:func:`~jaxfriction._laws.lugre.stribeck_force`).
    A sticking element loads, ``dF_i/dt = k_i v`` (``z_i' = v``); once ``|F_i|`` reaches
    ``alpha_i g(v)`` with ``v F_i > 0`` it slips, its force attracted to ``alpha_i s(v)`` at
    a rate set by the attraction parameter ``C`` (N/s), so that it follows the Stribeck
    curve's drop as the slip accelerates (the frictional lag). The two published forms differ
    in the attraction and in when a slipping element sticks again (``variant``):

    - ``"2003"`` (default; Lampaert, Al-Bender & Swevers 2003, "A generalized Maxwell-slip
      friction model appropriate for control purposes", Proc. PhysCon): ``dF_i/dt = sgn(v) C (1 - F_i / (alpha_i s(v)))``, relaxation rate ``C /
      (alpha_i g)``; the element sticks again whenever ``|F_i| < alpha_i g(v)`` or it
      unloads (``v F_i <= 0``). Memoryless: ``n`` states ``z_i``.
    - ``"2005"`` (Al-Bender, Lampaert & Swevers 2005, IEEE Trans. Autom. Control
      50(11):1883, eqs. (7)-(9)): ``dF_i/dt = sgn(v) C (alpha_i - F_i / s(v))``, relaxation
      rate ``C / g``; a slipping element keeps slipping until the velocity reverses (a
      decelerating slip whose limit ``alpha_i g(v)`` rises above ``F_i`` is attracted up to it
      at that rate instead of reloading elastically at ``k_i v``). This needs memory: ``3 n``
      states ``(z_i, p_i^+, p_i^-)``, where the latches ``p_i^+-`` (m) record a slip in the
      ``+-`` direction. A latch grows at ``|v|`` while its element is on its limit in its
      direction (held at ``LATCH_FRACTION alpha_i g_min / k_i``), unwinds at ``|v|`` while
      the velocity points the other way, and is held otherwise; the element slips while
      it is on its limit or ``p_i^{sgn v} > 0``. The reset at a reversal is exact (the latch
      of the new direction is the one read); a latch overshoots its hold or zero by one step's
      slip, so a second reversal within one step's slip of the first may still find it set.

    Default ``"2003"``: the memoryless switch is the form most implementations and
    identifications of the GMS model use, the one this class had before ``variant`` existed
    (its results and its fits stay as they were), and it needs no latch states. The two
    forms give the same steady state and, for a constant ``g`` (``mu_s = mu_c``), the same
    Masing hysteresis; with the Stribeck effect they differ while the slip decelerates (by
    8.6e-2 of ``N mu_c`` on the sine velocity below, by both this class and the scipy
    reference).

    The friction force on the body is ``f = -(sum_i k_i z_i + sigma2 v)``. The stick/slip
    switch is exact, and fixed-step RK4 keeps it so: the elements are marched
    (:attr:`marched_in_rk4`; :func:`~jaxfriction._integrate.marched.marched_rk4_step`), each
    stage's states the closed-form :meth:`interval_update` from the step's start along the
    slip the stage has made, at its mean speed, instead of an integration of
    :meth:`state_rate` (whose switch costs a first-order error ``O(k_i |v| dt)`` per
    switch, which no rule at the saved states bounds). What is left is first order where the
    limit ``alpha_i g(v)`` moves within a step (the march takes it at the mean speed).
    Fixed-step accuracy, measured (:func:`~jaxfriction.drive_law`, which marches alike;
    ``tests/test_maxwell_slip.py``), as a fraction of ``N mu_c``:

    - against an event-located scipy Radau solve written in the test, elements ``k = (2e3,
      1e3)`` N/m, ``alpha = (0.6, 0.4)``, ``mu_s / mu_c = 1.5``, ``v_s = 3`` mm/s, ``C = 20``
      N/s, velocity ``1e-2 sin(t)`` m/s over ``1.5 pi`` s: 2003 7.0e-4 at ``dt = 1e-3`` s,
      7.0e-5 at ``1e-4``; 2005 2.7e-4 and 2.1e-5 (through the state rate: 1.1e-2, 1.1e-3,
      9.9e-4 and 1.1e-4);
    - a triangular displacement (+-1 mm/s, reversals every 2 s, ``k = (1e3, 3e2, 1e2)``,
      ``alpha = (0.5, 0.3, 0.2)``) with ``mu_s = mu_c``, whose exact answer is piecewise
      linear: round-off (1.7e-14) with either form at ``dt = 5e-4`` s (through the state
      rate: 1.9e-4 and 1.1e-4).

    Adaptive diffrax solvers integrate :meth:`state_rate` (a large ``C`` wants an implicit
    one, ``jf.Diffrax(diffrax.Kvaerno5())``).

    Closed forms (``tests/test_maxwell_slip.py``): in steady sliding every element holds
    ``alpha_i g(v)``, so the force is ``sum_i alpha_i s(v) + sigma2 v``, the Stribeck curve
    plus viscous friction when the fractions sum to 1; under a monotonic displacement from rest
    at constant speed ``v`` the virgin curve is ``F(x) = sum_i min(k_i x, alpha_i g(v)) +
    sigma2 v``, piecewise linear with breakpoints ``x_i = alpha_i g(v) / k_i`` (the presliding
    hysteresis with non-local memory of the 2005 paper's Sec. III).

    Step rule (:meth:`limit_motion_rate`): the march relaxes a slipping element exactly at
    any ``C``, so the attraction sets no step; fixed-step RK4 runs in which a loading element
    at least halfway to its limit sees that limit move by more than 0.3 of itself within one
    step (``h |g'(v) v'| / g(v) > 0.3`` at a saved state: a steep or cusped Stribeck curve)
    get ``STATUS_UNSTABLE_STEP``. On ``scripts/studies/step_honesty.py``'s draws at ``dt =
    1e-3`` s (256 lanes, seeds 0 and 1) 22-23 % of the lanes are flagged and none is wrong at
    status 0 (before the march: 44-46 % flagged, 2 % wrong). The springs store ``sum_i k_i
    z_i^2 / 2``; the dissipated power is ``sum_i k_i z_i (v - z_i') + sigma2 v^2`` (the march
    books the springs' slip past their elongation at their mean force, and ``sigma2 v^2``).

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
        variant: ``"2003"`` (default) or ``"2005"`` (static): the published form, above.

    Raises:
        ValueError: shapes that differ, values out of range, an unknown ``variant``.
    """

    stiffness: jnp.ndarray = eqx.field(converter=numeric_array("stiffness"))
    alpha: jnp.ndarray = eqx.field(converter=numeric_array("alpha"))
    C: float = 20.0
    sigma2: float = 0.0
    mu_c: float = 1.0
    mu_s: float = 1.5
    v_s: float = 1e-3
    delta: float = 2.0
    variant: str = eqx.field(default="2003", static=True)

    marched_in_rk4: ClassVar[bool] = True

    def __check_init__(self):
        check_choice("variant", self.variant, ("2003", "2005"))  # the paper's year
        if jnp.ndim(self.stiffness) < 1 or jnp.shape(self.stiffness)[-1:] != jnp.shape(self.alpha)[-1:]:
            raise ValueError("stiffness and alpha must be arrays (n,) of the same length, got shapes "
                             f"{jnp.shape(self.stiffness)} and {jnp.shape(self.alpha)}")
        super().__check_init__()

    @property
    def n_state(self) -> int:
        n = jnp.shape(self.stiffness)[-1]
        return n if self.variant == "2003" else 3 * n

    def _springs(self, z: Array) -> Array:
        return z[..., :jnp.shape(self.stiffness)[-1]]

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("stiffness", self.stiffness), positive("alpha", self.alpha), positive("C", self.C),
                nonnegative("sigma2", self.sigma2), positive("mu_c", self.mu_c), positive("mu_s", self.mu_s),
                positive("v_s", self.v_s), positive("delta", self.delta))

    def steady_level(self, v: ArrayLike, normal: ArrayLike) -> Array:
        """``g(v)`` (N): the Stribeck level with this law's parameters."""
        return stribeck_force(v, normal, self.mu_c, self.mu_s, self.v_s, self.delta)

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        v = jnp.asarray(v)[..., None]
        g = self.steady_level(v, jnp.asarray(normal)[..., None])  # (..., 1): one level per contact
        limit = self.alpha * g  # alpha_i g(v), (..., n)
        x = self._springs(z)
        spring = self.stiffness * x
        on_limit = (jnp.abs(spring) >= limit) & (v * x > 0)
        sticking = v + 0.0 * x
        if self.variant == "2003":
            attraction = jnp.sign(v) * safe_divide(self.C, self.stiffness) * (1.0 - safe_divide(jnp.abs(spring), limit))
            return jnp.where(on_limit, attraction, sticking)
        plus, minus = z[..., x.shape[-1]:2 * x.shape[-1]], z[..., 2 * x.shape[-1]:]
        latched = ((v > 0) & (plus > 0)) | ((v < 0) & (minus > 0))
        attraction = jnp.sign(v) * safe_divide(self.C, self.stiffness) * (
            self.alpha - jnp.sign(v) * safe_divide(spring, g))
        hold = LATCH_FRACTION * safe_divide(self.alpha * self._g_min(normal), self.stiffness)

        def latch(p, direction):  # grows on the limit in its direction, unwinds against it, else held
            grow = on_limit & (direction * v > 0) & (p < hold)
            unwind = (direction * v < 0) & (p > 0)
            return jnp.where(grow | unwind, direction * v, 0.0 * p)

        rate = jnp.where(on_limit | latched, attraction, sticking)
        return jnp.concatenate([rate, latch(plus, 1.0), latch(minus, -1.0)], axis=-1)

    def interval_update(self, z: Array, slip: ArrayLike, dt: ArrayLike, normal: ArrayLike) -> Array:
        """The state after an interval ``dt`` > 0 (s), ``(...)``, of slip ``slip`` (m), ``(...)``,
        at the constant speed ``v = slip / dt``, from ``z`` ``(..., n_state)``: the exact
        solution of :meth:`state_rate` over it, element by element. At constant speed the level
        ``g(v)`` is constant, so an element that slips at the start (on its limit ``|z_i| >=
        z_l = alpha_i g(v) / k_i`` with ``v z_i > 0``, or, in the 2005 form, latched in the
        direction of ``v``) relaxes to ``sgn(v) z_l`` at its rate ``r`` (``C / (alpha_i g)``
        in 2003, ``C / g`` in 2005): ``z_i = sgn(v) z_l + (z_i - sgn(v) z_l) exp(-r dt)``;
        any other element sticks, ``z_i' = v``, until it reaches ``sgn(v) z_l``, where the
        attraction is 0 and it stays: ``z_i + slip`` clipped at ``z_l`` in the direction of
        ``v`` (at ``v = 0``, ``z_i + slip``: its derivative in the slip is 1 there). The
        2005 latches follow their rates in closed form: the latch of ``sgn(v)`` grows by the
        slip made on the limit, up to its hold, the other unwinds by ``|slip|`` to 0.

        Harmonic balance marches the elements with it through the period, ``v`` the mean slip
        speed of each increment: second order in the increment where an element relaxes, first
        order where a 2003 element follows its rising limit as the slip decelerates
        (hence 16 increments per sample interval there);
        ``check_dynamic_law`` compares it with the integrated :meth:`state_rate`.

        Returns:
            ``(..., n_state)``; nothing raises (``dt`` is the caller's, > 0).
        """
        slip = jnp.asarray(slip)[..., None]
        dt = jnp.asarray(dt)[..., None]
        v = safe_divide(slip, dt)
        d = jnp.sign(v)
        g = self.steady_level(v, jnp.asarray(normal)[..., None])
        limit = self.alpha * g
        reach = safe_divide(limit, self.stiffness)  # z_l
        x = self._springs(z)
        on_limit = (jnp.abs(self.stiffness * x) >= limit) & (v * x > 0)
        loaded = x + slip
        stuck = jnp.where(d > 0, jnp.minimum(loaded, reach), jnp.where(d < 0, jnp.maximum(loaded, -reach), loaded))
        rate = safe_divide(self.C + 0.0 * limit, limit if self.variant == "2003" else g)
        relaxed = d * reach + (x - d * reach) * jnp.exp(-rate * dt)
        if self.variant == "2003":
            return jnp.where(on_limit, relaxed, stuck)
        n = x.shape[-1]
        plus, minus = z[..., n:2 * n], z[..., 2 * n:]
        latched = ((d > 0) & (plus > 0)) | ((d < 0) & (minus > 0))
        slipping = on_limit | latched
        # the slip made on the limit: all of it from the limit, the rest after reaching it from a stick
        on_limit_slip = jnp.where(on_limit, jnp.abs(slip),
                                  jnp.where(slipping, 0.0, jnp.maximum(jnp.abs(slip) - (reach - d * x), 0.0)))
        hold = LATCH_FRACTION * safe_divide(self.alpha * self._g_min(normal), self.stiffness)

        def latch(p, direction):
            grown = jnp.where(p < hold, jnp.minimum(p + on_limit_slip, hold), p)
            unwound = jnp.where(p > 0, jnp.maximum(p - jnp.abs(slip), 0.0), p)
            return jnp.where(direction * d > 0, grown, jnp.where(direction * d < 0, unwound, p))

        return jnp.concatenate([jnp.where(slipping, relaxed, stuck), latch(plus, 1.0), latch(minus, -1.0)], axis=-1)

    def _g_min(self, normal: ArrayLike) -> Array:
        return jnp.asarray(normal)[..., None] * jnp.minimum(self.mu_s, self.mu_c)

    def limit_motion_rate(self, v: ArrayLike, acceleration: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """``|g'(v) v'| / g(v)`` (1/time), ``(...)``, the rate at which the slip limits ``alpha_i
        g(v)`` move relative to themselves as the slip speed changes at ``v' = acceleration``,
        where an element loads (``v z_i > 0``) and is at least halfway to its limit (``|k_i z_i|
        >= alpha_i g(v) / 2``), else 0 (an unloading element sticks, whatever its limit does).
        The march takes each stage's limit at its mean slip speed, which errs where the limit
        moves by a large part of itself within a step (a steep or cusped Stribeck curve,
        ``delta`` far from 1-2). ``g'`` is taken by ``jax.jvp`` (finite at ``v = 0``, where
        :func:`~jaxfriction._laws.lugre.stribeck_force` gives a finite slope)."""
        v, acceleration = jnp.asarray(v), jnp.asarray(acceleration)
        g, dg = jax.jvp(lambda u: self.steady_level(u, normal), (v,), (acceleration + 0.0 * v,))
        x = self._springs(z)
        loading = (jnp.abs(self.stiffness * x) >= 0.5 * self.alpha * g[..., None]) & (v[..., None] * x > 0)
        near = jnp.any(loading, axis=-1)
        return jnp.where(near, jnp.abs(safe_divide(dg, g)), 0.0)

    def max_state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """The largest of ``max_i C / (alpha_i g_min)`` (2003) or ``C / g_min`` (2005), the
        attraction rate of a slipping element (whether it slips or not), the switch's rate
        (:func:`~jaxfriction._laws.iwan.switch_rate` with the limits ``alpha_i g_min``) and
        the state Jacobian's diagonal (1/time). ``g_min = N min(mu_s, mu_c)``, the lowest
        level of the Stribeck curve: the limits a step crosses are those of every slip speed
        it passes through, down to rest (``g(v)`` at the saved speed alone let a lane with
        ``mu_s = 0.15``, ``mu_c = 1`` through 7 % off). It bounds an integration of
        :meth:`state_rate` (:func:`~jaxfriction.passivity`'s drive); fixed-step RK4 marches the
        elements and asks :meth:`limit_motion_rate` instead."""
        g_min = self._g_min(normal)
        limit = self.alpha * g_min
        relaxing = limit if self.variant == "2003" else g_min + 0.0 * limit
        attraction = jnp.max(safe_divide(self.C + 0.0 * limit, relaxing), axis=-1)
        switch = switch_rate(v, self.stiffness, limit)
        return jnp.maximum(jnp.maximum(attraction, switch), super().max_state_rate(v, z, normal))

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -(jnp.sum(self.stiffness * self._springs(z), axis=-1) + self.sigma2 * v)

    def viscous_force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """``-sigma2 v``: the springs carry the rest of the force."""
        return -(self.sigma2 * v) + jnp.zeros(jnp.shape(z)[:-1], jnp.result_type(v, z))

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        return 0.5 * jnp.sum(self.stiffness * self._springs(z)**2, axis=-1)
