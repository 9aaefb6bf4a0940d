"""Iwan models: parallel Jenkins elements, and Segalman's four-parameter Iwan model."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_int, check_real, nonnegative, numeric_array, positive
from .dynamic import AbstractDynamicLaw


def jenkins_rate(v: ArrayLike, z: Array, stiffness: ArrayLike, slip_force: ArrayLike,
                 smoothing: ArrayLike = 0.0) -> Array:
    """Elongation rate of Jenkins elements (linear spring in series with a Coulomb slider).

    ``z' = v`` while the spring force is inside the slider's limit, ``|k z| < phi``, or the
    element unloads (``v z <= 0``); ``z' = 0`` while it slides (``|k z| >= phi`` and ``v z >
    0``). The switch is exact (no regularization): an integrator of this rate overshoots the
    limit by at most one step's slip, and the element's force error is ``O(k |v| dt)``.
    Fixed-step RK4 therefore does not integrate it: it marches the elements by
    :func:`jenkins_update` (:attr:`Iwan.marched_in_rk4`), whose clip to the limit is exact
    within a step. Adaptive solvers integrate this rate.

    Integrated through this rate, the exact switch is invisible to automatic
    differentiation: the slip threshold enters only through *when* an element stops, so AD
    derivatives of a simulation in the slip forces are zero (measured on the jointed
    oscillator: ``d D / d chi`` by AD 4e-20 against -1.3e-4 by finite differences); marched,
    they are the derivatives of the return map (``d x / d F_S`` by AD within 5e-12 of finite
    differences, ``tests/test_fit_report.py``). ``smoothing = eps > 0`` replaces the switch by
    a ramp in the normalized elongation ``w = k |z| / phi``: while loading (``v z > 0``) ``z' = v
    clip((1 - w) / eps, 0, 1)``, so the element is elastic up to ``w = 1 - eps`` and then
    approaches its slip force exponentially over a slip of about ``eps phi / k``. The state
    is then a Lipschitz function of the parameters and AD derivatives agree with finite
    differences once the step resolves the ramp (``|v| dt < eps phi / k``); a step that
    jumps the ramp overshoots by at most one step's slip, as the exact switch does. The
    element's force lags the exact one by at most ``eps phi`` while it yields.

    Args:
        v: slip velocity ``(...)`` (m/s).
        z: spring elongations ``(..., n)`` (m).
        stiffness: element stiffnesses ``k`` ``(n,)`` (N/m).
        slip_force: element slip forces ``phi`` ``(n,)`` (N).
        smoothing: ``eps >= 0`` (a Python float; 0: the exact switch).

    Returns:
        ``z'`` ``(..., n)`` (m/s).
    """
    v = jnp.asarray(v)[..., None]
    if smoothing == 0.0:
        sliding = (stiffness * jnp.abs(z) >= slip_force) & (v * z > 0)
        return jnp.where(sliding, 0.0, v + 0.0 * z)
    positive = slip_force > 0
    scale = jnp.where(positive, smoothing * slip_force, 1.0)
    gate = jnp.where(positive, jnp.clip((slip_force - stiffness * jnp.abs(z)) / scale, 0.0, 1.0), 0.0)
    return jnp.where(v * z > 0, v * gate, v + 0.0 * z)


def jenkins_update(z: Array, slip: ArrayLike, stiffness: ArrayLike, slip_force: ArrayLike,
                   smoothing: ArrayLike = 0.0) -> Array | None:
    """Elongations of Jenkins elements after a monotone slip increment ``slip`` (m), the exact
    solution of :func:`jenkins_rate` along it: ``clip(z + slip, -phi / k, phi / k)`` (an
    element loads elastically until its slider's limit, then slides), for elongations within
    their limits; None with ``smoothing > 0`` (the ramp's state depends on the path's detail).

    Args:
        z: ``(..., n)`` elongations (m); slip: ``(...)`` (m); stiffness, slip_force: ``(n,)``.

    Returns:
        ``(..., n)`` or None.
    """
    if smoothing != 0.0:
        return None
    stiff = stiffness > 0  # an element of zero stiffness carries no force: its elongation stays 0
    limit = jnp.where(stiff, slip_force / jnp.where(stiff, stiffness, 1.0), 0.0)
    return jnp.clip(z + jnp.asarray(slip)[..., None], -limit, limit)


#: A run with an exact stick/slip switch is flagged once one step's slip loads the springs by
#: more than this fraction of their slip force (:func:`switch_rate`).
SWITCH_OVERSHOOT = 0.1
#: RK4's stability limit on the real axis (``jaxfriction._integrate.stability``, not imported:
#: the laws come before the integrators), the bound every rate is held to.
_RK4_LIMIT = 2.785293563405282


def switch_rate(v, stiffness, slip_force):
    """The step rule of parallel elements whose stick/slip switch is integrated through its
    rate (the smoothing ramp; Maxwell-slip's state rate under ``passivity``'s drive), 1/time,
    ``(...)``: ``2.785 sum_i k_i |v| / (SWITCH_OVERSHOOT sum_i phi_i)`` (so that the rule ``h
    rate <= 2.785`` is ``h sum_i k_i |v| / sum_i phi_i <= SWITCH_OVERSHOOT``). With an exact
    switch integrated through its rate (not marched) the state Jacobian is zero (``z' = v`` or
    0), so nothing at a saved state shows the step's overshoot past a slip limit, ``O(k_i |v|
    h)`` per element, a first-order error; runs with ``h sum_i k_i |v| / sum_i phi_i > 0.1``
    (one step's slip loads the springs by more than a tenth of the joint's slip force) get
    ``STATUS_UNSTABLE_STEP``. Zero where every slip force is 0 (the joint is a free slider).
    """
    total = jnp.sum(jnp.atleast_1d(slip_force), axis=-1)
    ok = total > 0
    rate = jnp.sum(jnp.atleast_1d(stiffness), axis=-1) * jnp.abs(v) / jnp.where(ok, total, 1.0)
    return jnp.where(ok, rate * (_RK4_LIMIT / SWITCH_OVERSHOOT), 0.0)


def _check_smoothing(smoothing):
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float)) or not 0.0 <= smoothing < float("inf"):
        raise ValueError(f"smoothing must be a finite Python float >= 0, got {smoothing!r}")


def _no_viscous_force(v, z) -> Array:
    """Zeros of the force's shape, ``(...)``: Jenkins elements have no viscous part
    (:meth:`~jaxfriction.AbstractDynamicLaw.viscous_force`)."""
    return jnp.zeros(jnp.broadcast_shapes(jnp.shape(v), jnp.shape(z)[:-1]), jnp.result_type(v, z))


def _marched_with_the_exact_switch(law) -> bool:
    """True with the exact switch (``smoothing == 0``): fixed-step RK4 advances the elements by
    :func:`jenkins_update` along each stage's slip
    (:func:`~jaxfriction._integrate.marched.marched_rk4_step`), so a switch costs no first-order
    error; the ramp (``smoothing > 0``) is integrated through its rate."""
    return law.smoothing == 0.0


class Iwan(AbstractDynamicLaw):
    """A parallel-series Iwan model: ``n`` Jenkins elements in parallel (``n`` states).

    Iwan 1966 (J. Appl. Mech. 33:893). Element ``i`` is a spring of stiffness ``k_i`` in series
    with a Coulomb slider of slip force ``phi_i``; its state is the spring's elongation ``z_i``
    (:func:`jenkins_rate`), its force ``k_i z_i``, and the joint's friction force on the body
    is ``f = -sum_i k_i z_i``. One element (``Iwan([k], [phi])``) is a Jenkins element: the
    elastic-perfectly-plastic loop of slope ``k`` between ``+-phi``. The model obeys Masing's
    rules: after a reversal at ``(x_r, F_r)`` the branch is ``F = F_r - 2 F_v((x_r - x) /
    2)`` (the virgin curve ``F_v`` scaled by 2 about the turning point).

    The springs store ``sum_i k_i z_i^2 / 2``; the sliders dissipate ``sum_i k_i z_i (v -
    z_i')`` >= 0. Fixed-step RK4 marches the elements with the exact switch
    (:attr:`marched_in_rk4`): every stage sets them to :func:`jenkins_update` from the step's
    start along the stage's slip, so a switch costs no first-order error and nothing is
    flagged for it (against an event-located scipy solve of a forced oscillator with three
    elements, ``tests/test_maxwell_slip.py``: position 1.6e-4, 2.3e-6, 6.2e-8 m and
    dissipation 4.5e-4, 3.3e-6, 7.6e-8 J of 1.238 J at dt 1e-2, 1e-3, 1e-4, second order;
    integrated through the rate: 1.2e-2, 7.2e-4, 1.1e-4 J). Step rule of the rate-integrated
    ramp (``smoothing > 0``; :meth:`max_state_rate`, :func:`switch_rate`): RK4 runs with
    ``h sum_i k_i |v| / sum_i phi_i > 0.1`` at a saved state get ``STATUS_UNSTABLE_STEP``.
    The slip forces are forces (N) and do not scale with the ``normal`` argument (joint models
    are identified at their preload).

    Args:
        stiffness: ``k_i`` ``(n,)`` > 0 (N/m).
        slip_force: ``phi_i`` ``(n,)`` >= 0 (N).
        smoothing: ``eps >= 0`` (static): 0 is the exact switch (marched by fixed-step RK4,
            differentiable there), ``eps > 0`` the ramp of :func:`jenkins_rate` that makes the
            slip forces differentiable by AD under the adaptive solvers too.

    Raises:
        ValueError: shapes that differ, values out of range.
    """

    stiffness: jnp.ndarray = eqx.field(converter=numeric_array("stiffness"))
    slip_force: jnp.ndarray = eqx.field(converter=numeric_array("slip_force"))
    smoothing: float = eqx.field(default=0.0, static=True)

    def __check_init__(self):
        _check_smoothing(self.smoothing)
        if jnp.ndim(self.stiffness) < 1 or jnp.shape(self.stiffness)[-1:] != jnp.shape(self.slip_force)[-1:]:
            raise ValueError("stiffness and slip_force must be arrays (n,) of the same length, got shapes "
                             f"{jnp.shape(self.stiffness)} and {jnp.shape(self.slip_force)}")
        super().__check_init__()

    @property
    def n_state(self) -> int:
        return jnp.shape(self.stiffness)[-1]

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("stiffness", self.stiffness), nonnegative("slip_force", self.slip_force))

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return jenkins_rate(v, z, self.stiffness, self.slip_force, self.smoothing)

    marched_in_rk4 = property(_marched_with_the_exact_switch)

    def slip_update(self, z: Array, slip: ArrayLike, normal: ArrayLike) -> Array | None:
        """:func:`jenkins_update` (the exact switch; None with ``smoothing > 0``)."""
        return jenkins_update(z, slip, self.stiffness, self.slip_force, self.smoothing)

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -jnp.sum(self.stiffness * z, axis=-1) + 0.0 * v

    def viscous_force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """Zeros: the elements' springs carry all of the force."""
        return _no_viscous_force(v, z)

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        return 0.5 * jnp.sum(self.stiffness * z**2, axis=-1)

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return jnp.sum(self.slip_force, axis=-1) + 0.0 * v

    def max_state_rate(self, v, z, normal):
        """:func:`switch_rate`, or the state Jacobian's diagonal (the smoothing ramp) if larger:
        the rule of the rate-integrated ramp (``smoothing > 0``; the exact switch is marched,
        :attr:`marched_in_rk4`)."""
        switch = switch_rate(v, self.stiffness, self.slip_force)
        return jnp.maximum(switch, super().max_state_rate(v, z, normal))


class SegalmanIwan(AbstractDynamicLaw):
    """Segalman's four-parameter Iwan model (Segalman 2005, J. Appl. Mech. 72:752), discretized.

    The continuous model is a population of Jenkins elements of unit stiffness whose slip
    displacements ``phi`` have the density (Segalman 2005, Sec. 2)::

        rho(phi) = R phi^chi [H(phi) - H(phi - phi_max)] + S delta(phi - phi_max),
        phi_max = F_S (1 + beta) / (K_T (beta + (chi + 1) / (chi + 2))),
        R = F_S (chi + 1) / (phi_max^(chi + 2) (beta + (chi + 1) / (chi + 2))),
        S = (F_S / phi_max) beta / (beta + (chi + 1) / (chi + 2)),

    so that ``K_T = int rho`` is the joint's stiffness at rest and ``F_S = int phi rho`` its
    macroslip force. Under a small force amplitude ``F_0`` the dissipation per cycle is
    ``D = 4 R (F_0 / K_T)^(chi + 3) / ((chi + 2)(chi + 3))`` (Segalman 2005's small-amplitude
    result, re-derived here by integrating the Jenkins loop area ``4 phi (u_0 - phi)`` against
    ``rho`` with ``u_0 = F_0 / K_T``), the power law of exponent ``3 + chi`` measured on lap
    joints. (The paper is not among the project's source files; the relations above were
    checked by their defining moments ``K_T = int rho``, ``F_S = int phi rho``.)

    Quadrature (this library's): the continuous part is cut at ``phi_j = phi_max (j /
    n)^(1 / (chi + 1))``, ``j = 0..n``, which gives every interval the same stiffness ``R
    phi_max^(chi + 1) / ((chi + 1) n)``; each interval becomes one Jenkins element with that
    stiffness and the interval's exact slip force ``int phi R phi^chi dphi``, and the atom
    ``S`` one more element (stiffness ``S``, slip force ``S phi_max``). The discrete model has
    the continuous model's ``K_T`` and ``F_S`` exactly, and its elements crowd towards small
    ``phi`` where the density is singular (``chi < 0``): the smallest slip displacement is
    about ``phi_max n^(-1 / (chi + 1))``, below which the discrete model is linear (no
    dissipation). The state is the elongations of the ``n + 1`` springs (:class:`Iwan`).
    Measured (``tests/test_dynamic_laws.py``, ``chi = -0.5``, ``beta = 0.1``): over displacement
    amplitudes ``u_0 = 1e-3 .. 1e-2 phi_max`` the discrete model's dissipation per cycle is
    within 18 % of the continuous ``4 R u_0^(chi + 3) / ((chi + 2)(chi + 3))`` for ``n = 64``,
    1.1 % for ``n = 256`` and 0.03 % for ``n = 1024`` (log-log slope 2.456, 2.498, 2.500).
    In terms of the force amplitude the power law is only asymptotic (``F_0 = K_T u_0`` up to
    a relative ``O(u_0^(chi + 1))``): the slope of ``D(F_0)`` is 2.547 over that range and
    2.494 over ``u_0 = 1e-5 .. 1e-4 phi_max`` (``n = 1024``).

    Args:
        F_S: macroslip force > 0 (N).
        K_T: joint stiffness at rest > 0 (N/m).
        chi: exponent of the density, > -1 (Segalman: ``-1 < chi < 0``; ``3 + chi`` is the
            dissipation exponent).
        beta: weight of the atom at ``phi_max`` >= 0 (dimensionless; it sets the drop of
            stiffness at macroslip).
        n_elements: number of elements of the continuous part (static, default 256).
        smoothing: ``eps >= 0`` (static, default 0: the exact switch, which fixed-step RK4
            marches as :class:`Iwan` does, and through which AD derivatives in ``F_S``,
            ``K_T``, ``chi``, ``beta`` are those of the return map); ``eps > 0`` is the ramp
            of :func:`jenkins_rate`, needed for AD derivatives under adaptive solvers (they
            integrate the rate, and through the exact switch the derivatives are zero).
            With the ramp the derivatives are reliable only where the step resolves the ramp of the
            element with the smallest slip displacement, ``|v| dt < eps min_i(phi_i / k_i)``
            (:meth:`elements`); a step that jumps it gives RK4 tangents amplified by up to
            ``|v| dt k_i / (eps phi_i)`` each time a stage lands inside the ramp, which
            depends on round-off (the smallest slip displacement, element ``j = 1``, is
            ``phi_max (chi + 1) / (chi + 2) n^(-1 / (chi + 1))``).

    Raises:
        ValueError: parameters out of range or non-finite.
    """

    F_S: float = 1.0
    K_T: float = 1.0
    chi: float = -0.5
    beta: float = 0.1
    n_elements: int = eqx.field(default=256, static=True)
    smoothing: float = eqx.field(default=0.0, static=True)

    def __check_init__(self):
        check_int("n_elements", self.n_elements, minimum=1)
        for name in ("F_S", "K_T", "chi", "beta"):  # before constraints() computes chi + 1
            if getattr(self, name) is None:
                raise ValueError(f"{name} must be a real number, got None")
            check_real(name, getattr(self, name), scalar=True)
        _check_smoothing(self.smoothing)

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("F_S", self.F_S), positive("K_T", self.K_T), positive("chi + 1", self.chi + 1.0),
                nonnegative("beta", self.beta))

    @property
    def n_state(self) -> int:
        return self.n_elements + 1

    def density(self) -> tuple[Array, Array, Array]:
        """``(phi_max (m), R (N/m^(chi+2)), S (N/m))`` of Segalman 2005 (Sec. 2)."""
        c = (self.chi + 1.0) / (self.chi + 2.0)
        phi_max = self.F_S * (1.0 + self.beta) / (self.K_T * (self.beta + c))
        r = self.F_S * (self.chi + 1.0) / (phi_max ** (self.chi + 2.0) * (self.beta + c))
        s = self.F_S / phi_max * self.beta / (self.beta + c)
        return phi_max, r, s

    def elements(self) -> tuple[Array, Array]:
        """The Jenkins elements of the quadrature: ``(stiffness (n + 1,), slip_force (n + 1,))``."""
        phi_max, r, s = self.density()
        n = self.n_elements
        p = (self.chi + 2.0) / (self.chi + 1.0)
        frac = jnp.arange(1, n + 1) / n
        moments = jnp.concatenate([jnp.zeros(1), frac**p])  # (phi_j / phi_max)^(chi + 2), 0 at j = 0
        slip = r * phi_max ** (self.chi + 2.0) / (self.chi + 2.0) * jnp.diff(moments)
        k = r * phi_max ** (self.chi + 1.0) / ((self.chi + 1.0) * n) * jnp.ones(n)
        atom = jnp.reshape(s, (1,))
        return jnp.concatenate([k, atom]), jnp.concatenate([slip, atom * phi_max])

    def small_amplitude_dissipation(self, force_amplitude: ArrayLike) -> Array:
        """Dissipation per cycle of the continuous model at small force amplitude (J).

        ``D = 4 R (F_0 / K_T)^(chi + 3) / ((chi + 2)(chi + 3))`` (Segalman 2005; see the class docstring).

        Args:
            force_amplitude: ``F_0`` (N), any shape, ``F_0 << F_S``.

        Returns:
            ``D`` (J), shaped like ``force_amplitude``.
        """
        _, r, _ = self.density()
        return 4.0 * r * (force_amplitude / self.K_T) ** (self.chi + 3.0) / ((self.chi + 2.0) * (self.chi + 3.0))

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        k, phi = self.elements()
        return jenkins_rate(v, z, k, phi, self.smoothing)

    marched_in_rk4 = property(_marched_with_the_exact_switch)

    def slip_update(self, z: Array, slip: ArrayLike, normal: ArrayLike) -> Array | None:
        """:func:`jenkins_update` of the elements (the exact switch; None with ``smoothing > 0``)."""
        k, phi = self.elements()
        return jenkins_update(z, slip, k, phi, self.smoothing)

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        k, _ = self.elements()
        return -jnp.sum(k * z, axis=-1) + 0.0 * v

    def viscous_force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """Zeros: the elements' springs carry all of the force."""
        return _no_viscous_force(v, z)

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        k, _ = self.elements()
        return 0.5 * jnp.sum(k * z**2, axis=-1)

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return self.F_S + 0.0 * v

    def max_state_rate(self, v, z, normal):
        """``K_T |v| / F_S`` (:func:`switch_rate` of the elements), or the state Jacobian's
        diagonal (the smoothing ramp) if larger: the rule of the rate-integrated ramp
        (``smoothing > 0``; the exact switch is marched, :attr:`marched_in_rk4`)."""
        return jnp.maximum(switch_rate(v, self.K_T, self.F_S), super().max_state_rate(v, z, normal))
