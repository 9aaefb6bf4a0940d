"""The spring-slider pulled by a load point: the classic rate-and-state experiment."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .._forcing.drives import AbstractDrive, Constant
from .._laws.base import AbstractFrictionLaw
from .._laws.dynamic import AbstractDynamicLaw, friction_power
from .._laws.rate_state import RateState
from .base import AbstractFrictionSystem, Rates
from .law_state import LawStateMixin
from .oscillator import check_law, check_one_contact_law


class SpringSlider(LawStateMixin, AbstractFrictionSystem):  # type: ignore[override]
    """A block on a fixed floor pulled through a spring by a load point of prescribed velocity.

    The experiment of rate-and-state friction (Rice & Ruina 1983; Gu, Rice, Ruina & Tse
    1984, J. Mech. Phys. Solids 32:167): a block of mass ``m`` slides on a fixed floor under
    the normal force ``N``; a spring of stiffness ``k`` connects it to a load point moving at
    the velocity ``V(t)`` of the drive ``load`` (``Constant(V)``, a velocity step
    ``Step(V, e V, t_step)``, ``Harmonic``, ...). With the spring's stretch ``delta`` (load-point
    displacement minus block displacement, m) and the block's velocity ``v`` (m/s)::

        delta' = V(t) - v,
        m v'   = k delta + f,      f = law.force(v, z, N)  (dynamic law)  or  law(v, -k delta, N),
        z'     = law.state_rate(v, z, N).

    State ``[delta, v, z, E_friction, E_damping, W_input]``: the coordinate is the stretch, not
    the block's position, so steady sliding at a constant ``V`` is a fixed point of an
    autonomous vector field (``delta_ss = mu_ss N / k``, ``v = V``, ``z = z_ss``) whose
    Jacobian gives the linear stability directly, and long runs keep full precision (the
    block's position grows like ``V t``). ``positions`` therefore returns the stretch and
    ``velocities`` the block's velocity (which is not ``d delta/dt``). Energy: the load point
    does the work ``W_input = int k delta V dt``; the mechanical energy is ``m v^2 / 2 + k
    delta^2 / 2`` plus what the law stores, and ``E_friction`` integrates the dissipated
    power (``-f v`` for rate-and-state), so ``W_input = Delta E_mech + E_friction`` holds to
    the integrator's accuracy. The force balance reported (``f_eq``) is ``-k delta``, the
    friction that holds the block still.

    Linear stability of steady sliding for :class:`~jaxfriction.RateState` (both evolution
    laws linearize to the same equations, ``psi' = -(V/D_c) dpsi - dv/D_c``; derivation in
    :meth:`linear_coefficients`): the characteristic polynomial is ``lambda^3 + A lambda^2 +
    B lambda + C`` with ``A = N a/(m V) + V/D_c``, ``B = (k - N (b - a)/D_c)/m``, ``C = k V/(m
    D_c)``; steady sliding is stable for ``A B > C``, i.e. for ``k > k_c`` with::

        k_c = N (b - a) / D_c * (1 + m V^2 / (N a D_c))

    (Rice & Ruina 1983; the quasi-static ``m -> 0`` limit is ``N (b - a) / D_c``), and at
    ``k = k_c`` the perturbations oscillate at ``omega_c = (V / D_c) sqrt((b - a) / a)``
    (Hopf bifurcation: the pair ``+- i omega_c`` crosses the imaginary axis).

    Rate-and-state steady sliding is stiff when ``N a / (m V) >> V / D_c`` (a light block:
    the velocity relaxes much faster than the state): explicit RK4 then needs ``dt < 2.8 m V
    / (N a)``; ``simulate(..., solver=diffrax.Kvaerno5())`` (implicit, adaptive) takes steps
    of the slow time scale ``D_c / V``.

    Parameter paths: ``"law.<field>"`` (``"law.a"``, ``"law.b"``, ``"law.D_c"``, ...),
    ``"load.value"`` (a ``Constant`` load), ``"load.before"``, ``"load.after"`` (a ``Step``),
    ``"mass"``, ``"stiffness"``, ``"normal"``.

    For a vanishing mass (``m = 1e-9`` in laboratory units of um and s) the acceleration
    ``(k delta + f) / m`` amplifies the force balance's round-off beyond what an implicit
    solver's Newton test can meet, and adaptive runs stall (status 2); use
    :class:`~jaxfriction.QuasiStaticSlider`, the ``m -> 0`` limit (docs/howto/rate-and-state.md).

    Args:
        law: a dynamic law (:class:`~jaxfriction.RateState`, LuGre, ...) or a scalar static law.
        load: drive ``V(t)``, the load point's velocity (m/s); default ``Constant(1.0)``.
        mass: ``m > 0`` (kg).
        stiffness: ``k > 0`` (N/m).
        normal: normal force ``N >= 0`` (N; a normal stress times the contact area).

    Raises:
        ValueError: a vector law or no law, a load that is not a drive, ``mass <= 0``,
            ``stiffness <= 0``, a negative normal force, non-finite values.
    """

    n_dof = 1

    law: AbstractFrictionLaw | AbstractDynamicLaw
    load: AbstractDrive = Constant(1.0)
    mass: float = 1.0
    stiffness: float = 1.0
    normal: float = 1.0

    def __check_init__(self):
        check_law(self.law, vector=False, dynamic=True)
        check_one_contact_law(self.law, self.n_internal)
        if not isinstance(self.load, AbstractDrive):
            raise ValueError(f"load must be a jaxfriction drive (Constant, Step, Harmonic, ...), got {self.load!r}")

    def contact_mobility(self) -> tuple:
        """One body: mobility ``1 / mass`` (see :meth:`AbstractFrictionSystem.contact_mobility`)."""
        return 1.0 / self.mass, self.normal, jnp.zeros(()), jnp.ones(())

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("mass", self.mass), positive("stiffness", self.stiffness),
                nonnegative("normal", self.normal))

    def load_velocity(self, t: ArrayLike) -> Array:
        """Velocity of the load point ``V(t)`` (m/s)."""
        return self.load(t)

    def _forces(self, t, y):
        stretch, v = y[0], y[1]
        spring = self.stiffness * stretch
        if self.dynamic:
            f = self.law.force(v, y[2 : 2 + self.n_internal], self.normal)
        else:
            f = self.law(v, -spring, self.normal)
        return spring, f

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        v = y[1]
        spring, f = self._forces(t, y)
        load = self.load_velocity(t)
        work = spring * load  # the load point pulls the spring's end at V
        if self.dynamic:
            _, dissipated, z_dot = friction_power(self.law, v, y[2 : 2 + self.n_internal], self.normal)  # type: ignore[arg-type]
            return Rates(load - v, (spring + f) / self.mass, dissipated, work, internal=z_dot)
        return Rates(load - v, (spring + f) / self.mass, -f * v, work)

    def mechanical_energy(self, y: Array) -> Array:
        return 0.5 * self.mass * y[..., 1] ** 2 + 0.5 * self.stiffness * y[..., 0] ** 2 + self.law_energy(y)

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        return self._forces(t, y)[1]

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        return y[..., 1]  # a fixed floor

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        return -self.stiffness * y[..., 0]

    # -------------------------------------------------------------------------------------
    # steady sliding and its linear stability (rate-and-state)

    def _velocity(self, velocity):
        return self.load_velocity(0.0) if velocity is None else velocity

    def steady_sliding(self, velocity: float | None = None) -> Array:
        """The state of steady sliding at the load velocity ``V``: ``[delta_ss, V, z_ss]``.

        ``z_ss = law.steady_state(V)`` for laws that have one (:class:`~jaxfriction.RateState`:
        ``psi_ss = ln(V_0 / |V|)``), nothing for static laws; ``delta_ss = -f / k`` with ``f``
        the friction at ``(V, z_ss)`` (a static law is taken at ``f_eq = 0``, its kinetic
        branch, valid outside its stick band).

        Args:
            velocity: ``V`` (m/s), ``!= 0``; default ``load(0)``.

        Returns:
            ``(2 + n_internal,)``, a ``y0`` for :func:`~jaxfriction.simulate`.

        Raises:
            ValueError: a dynamic law without a ``steady_state`` method.
        """
        V = jnp.asarray(self._velocity(velocity), dtype=float)
        if self.dynamic:
            if not hasattr(self.law, "steady_state"):
                raise ValueError(f"{type(self.law).__name__} has no steady_state(v) method")
            z = jnp.reshape(self.law.steady_state(V), (self.n_internal,))
            f = self.law.force(V, z, self.normal)  # type: ignore[union-attr]
        else:
            z = jnp.zeros(0)
            f = self.law(V, 0.0 * V, self.normal)  # type: ignore[operator]
        return jnp.concatenate([jnp.stack([-f / self.stiffness, V]), z])

    def _rate_state(self):
        if not isinstance(self.law, RateState):
            raise ValueError(f"the closed-form stability is for RateState laws, got {type(self.law).__name__}")
        return self.law

    def linear_coefficients(self, velocity: float | None = None) -> tuple[Array, Array, Array]:
        """``(A, B, C)`` of the characteristic polynomial ``lambda^3 + A lambda^2 + B lambda + C``
        of steady sliding at ``V`` (rate-and-state law).

        Derivation: with ``mu = mu_0 + a ln(v/V_0) + b psi`` (the regularized law agrees to
        round-off away from ``v = 0``) the perturbations ``(d delta, dv, dpsi)`` of steady
        sliding obey ``d delta' = -dv``, ``m dv' = k d delta - (N a / V) dv - N b dpsi`` and,
        for both the aging law (``psi' = (V_0 e^-psi - v)/D_c``) and the slip law (``psi' =
        -(v/D_c)(psi + ln(v/V_0))``), ``dpsi' = -(V/D_c) dpsi - dv/D_c``. The determinant of
        ``lambda I - J`` gives ``A = N a/(m V) + V/D_c``, ``B = (k - N (b - a)/D_c)/m``,
        ``C = k V/(m D_c)``.

        Args:
            velocity: ``V`` (m/s), ``!= 0``; default ``load(0)``.

        Returns:
            ``(A (1/s), B (1/s^2), C (1/s^3))``.

        Raises:
            ValueError: a law that is not :class:`~jaxfriction.RateState`.
        """
        law = self._rate_state()
        V = jnp.abs(self._velocity(velocity))
        m, k, N = self.mass, self.stiffness, self.normal
        return N * law.a / (m * V) + V / law.D_c, (k - N * (law.b - law.a) / law.D_c) / m, k * V / (m * law.D_c)

    def linear_eigenvalues(self, velocity: float | None = None) -> np.ndarray:
        """Eigenvalues of the linearization of steady sliding at ``V`` (1/s), closed form.

        The roots of ``lambda^3 + A lambda^2 + B lambda + C`` (:meth:`linear_coefficients`),
        by numpy (concrete parameters): a real negative root and a complex pair whose real
        part is positive for ``k < k_c`` (growing oscillations) and negative above.

        Returns:
            ``(3,)`` complex numpy array, sorted by decreasing real part.
        """
        coefficients = [1.0, *(float(c) for c in self.linear_coefficients(velocity))]
        roots = np.roots(coefficients)
        return roots[np.argsort(-roots.real, kind="stable")]

    def critical_stiffness(self, velocity: float | None = None) -> Array:
        """The critical stiffness ``k_c = N (b - a)/D_c (1 + m V^2/(N a D_c))`` (N/m).

        Steady sliding at ``V`` is linearly stable for ``k > k_c`` and oscillates with growing
        amplitude below (Rice & Ruina 1983; Gu et al. 1984); the ``A B = C`` Routh-Hurwitz
        boundary of :meth:`linear_coefficients`. A velocity-strengthening law (``b <= a``)
        gives ``k_c <= 0``: stable for every spring.
        """
        law = self._rate_state()
        V = self._velocity(velocity)
        m, N = self.mass, self.normal
        return N * (law.b - law.a) / law.D_c * (1.0 + m * V**2 / (N * law.a * law.D_c))

    def critical_frequency(self, velocity: float | None = None) -> Array:
        """The angular frequency of the neutral oscillation at ``k = k_c``,
        ``omega_c = (V / D_c) sqrt((b - a)/a)`` (rad/s), for ``b > a``; the same with and
        without inertia (``omega_c^2 = C/A = B`` at ``k_c``)."""
        law = self._rate_state()
        V = jnp.abs(self._velocity(velocity))
        return V / law.D_c * jnp.sqrt((law.b - law.a) / law.a)

