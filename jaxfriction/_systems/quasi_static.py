"""The quasi-static and quasi-dynamic spring-slider of rate-and-state friction (no inertia)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, is_concrete, nonnegative, positive
from .._forcing.drives import AbstractDrive, Constant
from .._laws.dynamic import AbstractDynamicLaw
from .._laws.rate_state import RateState
from .base import AbstractFrictionSystem, AdaptiveSolve, Rates


class QuasiStaticSlider(AbstractFrictionSystem):
    """A spring-slider without inertia: friction equals the spring force (quasi-static), less
    the radiation damping ``eta v`` (quasi-dynamic).

    The model of rate-and-state laboratory analyses (Dieterich 1979; Ruina 1983; Reinen &
    Weeks 1993; the rsfmodel package) and, with radiation damping, of earthquake-cycle codes
    (Rice 1993, J. Geophys. Res. 98:9885, eq. 7; QDYN; the SCEC SEAS benchmarks): a spring of
    stiffness ``k`` pulled by a load point of velocity ``V(t)`` (the drive ``load``) holds a
    block on a rate-and-state interface under the normal force ``N``; with the spring's stretch
    ``delta`` (m)::

        k delta = N mu(v, psi) + eta v,     delta' = V(t) - v,     psi' = law.state_rate(v, psi),

    where ``eta`` is the radiation damping (``damping``, N s/m; Rice 1993: shear modulus over
    twice the shear-wave speed, times the contact area) and ``mu`` the law's friction
    coefficient. ``eta = 0`` is the quasi-static slider (rsfmodel's ``mu' = k (V - v)``,
    with ``k`` there in friction per displacement, i.e. ``k / N`` here).

    Why a sibling class and not ``SpringSlider(mass=0)``: without inertia the slip rate is
    no longer a state but follows from the force balance, so the state and its layout
    differ. The state is ``[ln(v / V_0), psi, E_friction, E_damping, W_input]`` (no positions
    or velocities: ``n_dof = 0``; the two internal entries first): the logarithm of the slip
    rate and the log state, both of order one over the decades a run spans (a velocity step,
    a hold, an earthquake cycle from plate rate to seismic slip) and with no algebraic
    constraint to drift. Differentiating the force balance in time gives the slip rate's
    equation (the standard quasi-dynamic form, e.g. Rice 1993; Lapusta et al. 2000)::

        d ln v / dt = (k (V - v) - N dmu/dpsi psi') / (N dmu/d ln v + eta v),

    with ``dmu/d ln v = a``, ``dmu/dpsi = b`` for the log form and their asinh analogues
    (by ``jax.value_and_grad`` of :meth:`~jaxfriction.RateState.coefficient_at_log_rate`) for
    the regularized form. The slip rate stays positive (a hold, ``V = 0``, lets it decay,
    never reach 0), so the log form of the law is exact here; a negative slip rate cannot be
    represented and is refused (:meth:`state`).

    Energy books as for every system: the load point does the work ``W_input = int k delta V
    dt``; the spring stores ``k delta^2 / 2`` (:meth:`mechanical_energy`); friction dissipates
    ``E_friction = int N mu v dt`` and the radiation damping ``E_damping = int eta v^2 dt``,
    so ``W_input = Delta E_mech + E_friction + E_damping`` to the solver's accuracy.

    Solver: :meth:`default_solver` (``simulate(slider, y0, t0, t1)`` with no solver), an
    adaptive diffrax run (``Tsit5``, ``rtol = atol = 1e-10``) that stops at the load's jumps (sharp :class:`~jaxfriction.Step`, :class:`~jaxfriction.Steps`;
    :meth:`~jaxfriction.AbstractFrictionSystem.jump_times`).

    Linear stability of steady sliding at ``V`` (aging, slip and Perrin laws linearize
    alike, ``dpsi' = -(V / D_c)(dpsi + d ln v)``): the Jacobian in ``(ln v, psi)`` has trace
    ``(N b - k D_c) V / (D_c (N a + eta V)) - V / D_c`` and determinant ``k V^2 / (D_c (N a +
    eta V))``, so steady sliding is stable for ``k > k_c`` with::

        k_c = (N (b - a) - eta V) / D_c

    (Ruina 1983; Rice & Ruina 1983 for ``eta = 0``) and at ``k_c`` oscillates at ``omega_c =
    (V / D_c) sqrt((N (b - a) - eta V) / (N a + eta V))`` (the period ``2 pi / omega_c``).

    Parameter paths: ``"law.a"``, ``"law.b"``, ``"law.D_c"``, ``"law.mu_0"``, ``"law.V_0"``,
    ``"stiffness"``, ``"normal"``, ``"damping"``, ``"load.value"`` / ``"load.before"``,
    ``"load.after"`` / ``"load.values[i]"``.

    Normal-force histories (Linker & Dieterich 1992, J. Geophys. Res. 97:4923): ``normal`` may
    be a drive ``N(t)`` (N; :class:`~jaxfriction.Steps` for normal-stress steps, any drive for
    a smooth history). The state then ends with ``ln_N = ln(N / 1 N)``, carried so that every
    observable follows from the state alone; the force balance ``k delta = N mu + eta v``
    holds throughout, the law's ``alpha`` adds ``-(alpha / b) d ln N / dt`` to ``psi'`` (its
    Linker-Dieterich term; ``d ln N / dt`` by ``jax.jvp`` of the drive) and the slip rate's
    equation gains ``- N' mu`` in its numerator. At a sharp step ``N_0 -> N_1`` (the drive's
    :meth:`~jaxfriction.AbstractDrive.jump_times`, :meth:`reset_times`) the run stops and
    restarts from :meth:`reset_state`: ``psi -> psi - (alpha / b) ln(N_1 / N_0)`` (``theta ->
    theta (N_0 / N_1)^(alpha / b)``), the stretch (the shear force ``k delta``) continuous, and
    the slip rate from the force balance at the new normal force (Newton on ``ln v``,
    optimistix): the instantaneous response. With ``eta = 0`` the friction coefficient jumps
    to ``mu_0 N_0 / N_1``, the slip rate by ``exp((mu N_0 / N_1 - mu + alpha ln(N_1 / N_0)) /
    a)`` in the log form. A run with such steps needs an adaptive diffrax solver (the
    default); ``N`` must stay ``> 0``.

    Nagata's law (``RateState(evolution="nagata", c=...)``; Nagata et al. 2012) needs the
    friction rate, which the spring gives: ``N dmu/dt = k (V - v) - eta v d ln v/dt - N' mu``;
    with ``psi' = R - (c / b) dmu/dt`` (``R`` the aging rate) and ``dmu/dt = mu_{ln v} d ln
    v/dt + mu_psi psi'`` the three equations are linear in ``(dmu/dt, d ln v/dt, psi')`` and
    solved in closed form (``dmu/dt = k (V - v) / N`` for ``eta = 0``, N constant: rsfmodel's
    ``NagataState``).

    Two state variables (:class:`~jaxfriction.TwoStateRateState`, Ruina 1983) need nothing
    more: the state is then ``[ln(v / V_0), psi_1, psi_2, ...]`` and ``dmu/dpsi psi'`` above a
    sum over the states; the closed forms of linear stability below are the one-state law's
    and refuse it.

    Args:
        law: a :class:`~jaxfriction.RateState` or :class:`~jaxfriction.TwoStateRateState`
            law (a dynamic law with ``coefficient_at_log_rate(log_v, z)``,
            ``steady_state(v)`` and a ``V_0``).
        load: drive ``V(t)``, the load point's velocity (m/s), ``>= 0`` in use; default
            ``Constant(1e-6)``.
        stiffness: ``k > 0`` (N/m).
        normal: normal force ``N > 0`` (N; normal stress times area), a number or a drive
            ``N(t)`` (:class:`~jaxfriction.Steps`, :class:`~jaxfriction.Step`, ...; above).
        damping: radiation damping ``eta >= 0`` (N s/m); 0 (default) is quasi-static.

    Raises:
        ValueError: a law without the log-rate coefficient, a load that is not a drive,
            ``stiffness <= 0``, ``normal <= 0`` (a drive's values, where they are numbers:
            ``Constant``, ``Step``, ``Steps``), ``damping < 0``, non-finite values.
    """

    n_dof = 0
    #: the internal block is ``[ln(v / V_0), law state]``, not the law's state alone
    internal_is_law_state = False

    law: RateState
    load: AbstractDrive = Constant(1e-6)
    stiffness: float = 1.0
    normal: float | AbstractDrive = 1.0
    damping: float = 0.0

    def __check_init__(self):
        if not (isinstance(self.law, AbstractDynamicLaw) and hasattr(self.law, "coefficient_at_log_rate")
                and hasattr(self.law, "steady_state")):
            raise ValueError(f"law must be a rate-and-state law (jaxfriction.RateState), got {self.law!r}")
        if not isinstance(self.load, AbstractDrive):
            raise ValueError(f"load must be a jaxfriction drive (Constant, Step, Steps, ...), got {self.load!r}")
        if self.varying_normal:
            for name in ("value", "before", "after", "values"):
                value = getattr(self.normal, name, None)
                if value is not None and is_concrete(value) and not np.all(np.asarray(value, dtype=float) > 0):
                    raise ValueError(f"normal (the normal force, a {type(self.normal).__name__} drive) must stay "
                                     f"> 0, got {name}={value!r}")

    def constraints(self) -> tuple[Constraint, ...]:
        normal = () if self.varying_normal else (positive("normal", self.normal),)
        return (positive("stiffness", self.stiffness), *normal, nonnegative("damping", self.damping))

    @property
    def varying_normal(self) -> bool:
        """Whether ``normal`` is a drive ``N(t)`` (the state then carries ``ln_N``)."""
        return isinstance(self.normal, AbstractDrive)

    def reset_times(self) -> tuple:
        """Times where the state jumps: the sharp steps of a normal-force drive, ``()`` if
        none. Adaptive diffrax runs stop there and restart from :meth:`reset_state`."""
        return self.normal.jump_times() if self.varying_normal else ()  # type: ignore[union-attr]

    def reset_state(self, t: ArrayLike, y: Array) -> Array:
        """The state just after a normal-force step at ``t`` from the state ``y`` just before
        (Linker & Dieterich 1992; class docstring), ``(state_size,)``.

        ``ln_N`` takes ``ln N(t)``; the law's state ``psi -> psi - (alpha / b) ln(N_1 / N_0)``
        (``alpha`` of a :class:`~jaxfriction.RateState`, 0 for other laws); ``ln(v / V_0)``
        solves ``N_1 mu(v, psi_1) + eta v = k delta`` with the stretch ``delta`` of ``y``
        (``optimistix.Newton`` from the old value; ``N mu + eta v`` increases with ``ln v``,
        so the root is unique). Energy integrals unchanged (the normal force does no work).
        """
        import optimistix as optx

        n = self.n_internal
        log_v0, z0, v0, N0 = self._parts(y)
        N1 = jnp.asarray(self.normal(t), dtype=jnp.result_type(y))  # type: ignore[operator]
        ratio = jnp.log(N1) - jnp.log(N0)
        alpha = getattr(self.law, "alpha", 0.0)
        z1 = z0.at[..., 0].add(-alpha / self.law.b * ratio) if isinstance(self.law, RateState) else z0
        shear = N0 * self.law.coefficient_at_log_rate(log_v0, z0) + self.damping * v0
        mu_of = self.law.coefficient_at_log_rate

        def balance(log_v, _):
            return N1 * mu_of(log_v, z1) + self.damping * self.law.V_0 * jnp.exp(log_v) - shear

        # scaled by N1 a: the residual in units of the direct effect
        solver: optx.Newton = optx.Newton(rtol=1e-13, atol=1e-13 * N1 * self.law.a)  # type: ignore[arg-type]  # an array tolerance, traced
        log_v1 = optx.root_find(balance, solver, log_v0, max_steps=100, throw=False).value
        return jnp.concatenate([jnp.reshape(log_v1, (1,)), z1, jnp.reshape(jnp.log(N1), (1,)), y[n:]])
    @property
    def n_internal(self) -> int:  # type: ignore[override]
        """``1 + law.n_state`` (+ 1 for a normal-force drive): the log slip rate, the law's
        state (and ``ln_N``)."""
        return 1 + self.law.n_state + int(self.varying_normal)

    def internal_names(self) -> list[str]:
        """``["ln_v", *law.state_names]`` (``ln_v = ln(v / V_0)``; RateState: ``psi``)."""
        names = getattr(self.law, "state_names", None) or [f"z[{j}]" for j in range(self.law.n_state)]
        return ["ln_v", *names, *(["ln_N"] if self.varying_normal else [])]

    def state_names(self) -> list[str]:
        return [*self.internal_names(), "E_friction", "E_damping", "W_input"]

    def default_solver(self) -> AdaptiveSolve:
        """The solve ``simulate`` uses when given no solver and no step:
        ``AdaptiveSolve("Tsit5", rtol=1e-10, atol=1e-10)``, that is ``Diffrax(diffrax.Tsit5(),
        rtol=1e-10, atol=1e-10)``, adaptive, stopping at the load's jumps.

        Why explicit: in the log-slip-rate form the equations are accuracy-limited, not
        stability-limited (their fast rates are those of the motion itself), as the
        earthquake-cycle codes that use adaptive Runge-Kutta find (QDYN; SEAS); an implicit
        solver takes several times the steps for the same values (the counts are in
        ``docs/performance.md``, "Numbers behind the defaults"). The tolerances apply to
        ``ln(v / V_0)`` and ``psi``, numbers of order one, so one
        absolute tolerance fits every unit system."""
        return AdaptiveSolve("Tsit5", rtol=1e-10, atol=1e-10)

    # ------------------------------------------------------------------------------------
    # the force balance and the rates

    def _parts(self, y):
        # a trial step far out (a step-size controller's first try after a jump) must give
        # large finite rates, which it rejects, never inf: diffrax's controller stalls on a NaN
        # error, and reverse-mode gradients turn the rejected step's 0 cotangent times an
        # infinite derivative into NaN. So ln(v / V_0) and the law's state are clipped at
        # 0.25 ln(largest float) (177 in float64, 22 in float32), far beyond any physical
        # slip rate or state, where every rate (Perrin's v^2 exp(psi) included) stays finite
        limit = 0.25 * float(np.log(jnp.finfo(jnp.result_type(y)).max))
        log_v = jnp.clip(y[..., 0], -limit, limit)
        m = 1 + self.law.n_state
        z = jnp.clip(y[..., 1:m], -limit, limit)
        v = self.law.V_0 * jnp.exp(log_v)
        N = jnp.exp(jnp.clip(y[..., m], -limit, limit)) if self.varying_normal else self.normal
        return log_v, z, v, N

    def friction_coefficient(self, y: Array) -> Array:
        """``mu`` from states ``(..., state_size)``, ``(...)``."""
        log_v, z, _, _ = self._parts(y)
        return self.law.coefficient_at_log_rate(log_v, z)

    def stretch(self, y: Array) -> Array:
        """The spring's stretch ``delta = (N mu + eta v) / k`` (m), ``(...)``."""
        _, _, v, N = self._parts(y)
        return (N * self.friction_coefficient(y) + self.damping * v) / self.stiffness

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        log_v, z, v, N = self._parts(y)
        mu_of = self.law.coefficient_at_log_rate
        mu, (mu_log_v, mu_z) = jax.value_and_grad(mu_of, argnums=(0, 1))(log_v, z)
        k, eta = self.stiffness, self.damping
        nagata = isinstance(self.law, RateState) and self.law.evolution == "nagata"
        if nagata:  # its dmu/dt part is added below
            z_dot = jnp.reshape(self.law.state_rate_given_friction_rate(v, z, 0.0), (1,))
        else:
            z_dot = jnp.reshape(self.law.state_rate(v, z, N), (self.law.n_state,))
        load = self.load(t)
        tail = []
        N_dot = 0.0
        if self.varying_normal:  # d ln N / dt of the drive; the Linker-Dieterich term of the state
            value, slope = jax.jvp(self.normal, (jnp.asarray(t, dtype=jnp.result_type(y)),),  # type: ignore[arg-type]
                                   (jnp.ones((), dtype=jnp.result_type(y)),))
            log_N_dot = jnp.reshape(slope / value, ())
            if isinstance(self.law, RateState):
                z_dot = z_dot.at[0].add(-self.law.alpha / self.law.b * log_N_dot)
            tail = [jnp.reshape(log_N_dot, (1,))]
            N_dot = N * log_N_dot
        shear_rate = k * (load - v) - N_dot * mu  # N dmu/dt + eta v dln v/dt
        if nagata:
            # psi' = R - (c/b) M with M = dmu/dt = mu_l x + mu_p psi' and N M + eta v x = shear_rate
            # (x = dln v/dt): linear in (M, x), solved in closed form (M = shear_rate / N for eta = 0)
            R, mu_p, g = z_dot[0], mu_z[0], self.law.c / self.law.b
            M = (shear_rate + eta * v * mu_p * R / mu_log_v) / (N + eta * v * (1.0 + g * mu_p) / mu_log_v)
            z_dot = jnp.reshape(R - g * M, (1,))
            log_v_dot = (M - mu_p * z_dot[0]) / mu_log_v
        else:
            log_v_dot = (shear_rate - N * jnp.dot(mu_z, z_dot)) / (N * mu_log_v + eta * v)
        delta = (N * mu + eta * v) / k
        empty = jnp.zeros(0, dtype=jnp.result_type(y))
        return Rates(empty, empty, N * mu * v, k * delta * load, eta * v**2,
                     internal=jnp.concatenate([jnp.reshape(log_v_dot, (1,)), z_dot, *tail]))

    def mechanical_energy(self, y: Array) -> Array:
        """``k delta^2 / 2`` (J), the spring's energy."""
        return 0.5 * self.stiffness * self.stretch(y) ** 2

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        """``-N mu`` (N), on the block."""
        return -self._parts(y)[3] * self.friction_coefficient(y)

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        return self._parts(y)[2]

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        """``-k delta`` (N): the spring force the friction and the damping balance."""
        return -self.stiffness * self.stretch(y)

    def positions(self, y: Array) -> Array:
        """The spring's stretch ``delta`` (m), ``(...)``, as for :class:`~jaxfriction.SpringSlider`."""
        return self.stretch(y)

    def velocities(self, y: Array) -> Array:
        """The slip rate ``v = V_0 exp(ln_v)`` (m/s), ``(...)``."""
        return self._parts(y)[2]

    def internal(self, ys: Array, name: str) -> Array:
        """A named internal variable from states ``(..., state_size)``: ``"ln_v"``, ``"psi"``,
        ``"theta"`` (``D_c exp(psi) / V_0``, s), ``"v"`` (the slip rate, m/s), ``"mu"``."""
        if name == "v":
            return self.velocities(ys)
        if name == "mu":
            return self.friction_coefficient(ys)
        return super().internal(ys, name)

    # ------------------------------------------------------------------------------------
    # initial states and steady sliding

    def _velocity(self, velocity):
        return self.load(0.0) if velocity is None else velocity

    def state(self, v: ArrayLike, z: ArrayLike | None = None, t: float = 0.0) -> Array:
        """The internal state ``[ln(v / V_0), z]`` from a slip rate and the law's state
        (``[ln(v / V_0), z, ln N(t)]`` for a normal-force drive).

        Args:
            v: slip rate ``> 0`` (m/s).
            z: the law's state ``(n_state,)`` (RateState: ``psi``); default its steady state
                at ``v``.
            t: the start time (s), where a normal-force drive is read; default 0.

        Returns:
            ``(n_internal,)``, a ``y0`` for :func:`~jaxfriction.simulate`.

        Raises:
            ValueError: a slip rate that is not positive (the log form cannot hold it).
        """
        if is_concrete(v) and not np.all(np.asarray(v, dtype=float) > 0):
            raise ValueError(f"v (the initial slip rate) must be > 0 for the quasi-static slider's log-slip-rate "
                             f"state, got {v!r}")
        v = jnp.asarray(v, dtype=jnp.result_type(float))
        z = self.law.steady_state(v) if z is None else z
        z = jnp.reshape(jnp.asarray(z, dtype=v.dtype), (self.law.n_state,))
        tail = [jnp.reshape(jnp.log(jnp.asarray(self.normal(t), v.dtype)), (1,))] if self.varying_normal else []  # type: ignore[operator]
        return jnp.concatenate([jnp.reshape(jnp.log(v / self.law.V_0), (1,)), z, *tail])

    def steady_sliding(self, velocity: float | None = None) -> Array:
        """Steady sliding at the load velocity ``V``: ``[ln(V / V_0), psi_ss(V)]``.

        Args:
            velocity: ``V > 0`` (m/s); default ``load(0)``.

        Returns:
            ``(n_internal,)``.

        Raises:
            ValueError: ``V <= 0``.
        """
        return self.state(self._velocity(velocity))

    def _normal_at_start(self):
        return self.normal(0.0) if self.varying_normal else self.normal

    def _one_state_law(self, what):
        if not isinstance(self.law, RateState):
            raise TypeError(f"{what} is the closed form of a one-state law (jaxfriction.RateState); for "
                            f"{type(self.law).__name__} linearize jax.jacobian(slider.vector_field, "
                            f"argnums=1) at steady sliding")
        return self.law

    def critical_stiffness(self, velocity: float | None = None) -> Array:
        """``k_c = (N (b - a) - eta V) / D_c`` (N/m): steady sliding at ``V`` is linearly stable
        for ``k > k_c`` (Ruina 1983; Rice & Ruina 1983; with radiation damping, from the
        Jacobian's trace, class docstring). ``<= 0`` for velocity strengthening."""
        law, V = self._one_state_law("critical_stiffness"), jnp.abs(self._velocity(velocity))
        return (self._normal_at_start() * (law.b - law.a) - self.damping * V) / law.D_c

    def critical_frequency(self, velocity: float | None = None) -> Array:
        """``omega_c = (V / D_c) sqrt((N (b - a) - eta V) / (N a + eta V))`` (rad/s), the
        angular frequency of the neutral oscillation at ``k = k_c`` (``b > a``)."""
        law, V = self._one_state_law("critical_frequency"), jnp.abs(self._velocity(velocity))
        N, eta = self._normal_at_start(), self.damping
        return V / law.D_c * jnp.sqrt((N * (law.b - law.a) - eta * V) / (N * law.a + eta * V))

    def linear_eigenvalues(self, velocity: float | None = None) -> np.ndarray:
        """The two eigenvalues (1/s) of steady sliding at ``V`` in ``(ln v, psi)``, closed form
        (class docstring), sorted by decreasing real part; complex numpy ``(2,)``."""
        law, V = self._one_state_law("linear_eigenvalues"), float(abs(self._velocity(velocity)))
        N, k, eta = float(self._normal_at_start()), float(self.stiffness), float(self.damping)
        a, b, D_c = float(law.a), float(law.b), float(law.D_c)
        trace = (N * b - k * D_c) * V / (D_c * (N * a + eta * V)) - V / D_c
        det = k * V**2 / (D_c * (N * a + eta * V))
        roots = np.roots([1.0, -trace, det]).astype(complex)
        return roots[np.argsort(-roots.real, kind="stable")]
