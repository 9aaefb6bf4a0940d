"""The interface of dynamic friction laws: laws with internal state (issue 13).

A dynamic law has ``n_state`` internal variables ``z`` per contact (bristle deflection,
spring elongations of Jenkins elements, the log state of rate-and-state friction) that
evolve by ``dz/dt = law.state_rate(v, z, normal)``; the friction force on the body is
``f = law.force(v, z, normal)``. It is a function of the slip velocity and the state only:
the force balance ``f_eq`` of the static laws (:class:`~jaxfriction.AbstractFrictionLaw`)
plays no part, which is why a dynamic law is not a static law with an extra argument but
its own base class (a system asks ``isinstance(law, AbstractDynamicLaw)`` once, at trace
time, and carries the states in its internal block ``z``).

Energy. ``law.stored_energy(z, normal)`` is the energy held by the contact's internal
springs (J). A system counts it in its mechanical energy and integrates only the
dissipated part,

    ``P_friction = -f v - d/dt stored_energy(z) = -f v - grad_z stored . z'``,

so the energy balance ``W_input = Delta E_mech + E_friction + E_damping`` holds to the
integrator's accuracy for every law (:func:`friction_power`).

Shapes: ``v`` is ``(...)`` (a scalar for one contact), ``z`` is ``(..., n_state)`` and
``normal`` broadcasts against ``v``; the force and the stored energy are ``(...)``, the rate
``(..., n_state)``.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_constraints


def safe_power(x: ArrayLike, p: ArrayLike) -> Array:
    """``x ** p`` for ``x >= 0`` with finite derivatives in ``x`` and ``p`` at ``x = 0``.

    ``0 ** p`` is 0 (``p > 0``); the derivative in ``p`` there (``x^p ln x``) is 0, its limit,
    instead of ``0 * -inf = nan``.

    Args:
        x: array ``>= 0`` (negative entries are treated as 0).
        p: exponent ``> 0`` (broadcasts against ``x``).

    Returns:
        Array of the broadcast shape.
    """
    ok = x > 0
    return jnp.where(ok, jnp.where(ok, x, 1.0) ** p, 0.0)


class AbstractDynamicLaw(eqx.Module):
    """Base class of friction laws with internal state: ``f = law.force(v, z, normal)``.

    Subclasses are final equinox modules whose fields are the law's parameters (pytree
    leaves, so ``"law.sigma0"`` is a path for sweep, fit and sensitivity) and implement:

    - ``n_state``: internal variables per contact (a Python int, fixed by the law's
      structure or the length of its element arrays);
    - ``init_state()``: the state of a relaxed contact, ``(n_state,)``;
    - ``state_rate(v, z, normal)``: ``dz/dt``, ``(..., n_state)``;
    - ``force(v, z, normal)``: friction force on the body (N), opposing the slip;
    - ``stored_energy(z, normal)``: energy in the internal springs (J), 0 for laws
      without elastic state;
    - ``constraints()``: the parameters' valid ranges, as for static laws (checked when
      the law is built, flagged per lane in sweeps).

    Gradients must stay finite at ``v = 0`` and with ``z`` on any bound (double ``where``
    around divisions, roots and powers: :func:`safe_power`,
    :func:`~jaxfriction._laws.base.safe_divide`). :func:`jaxfriction.testing.check_dynamic_law`
    tests the contract.

    Class attributes ``vector`` (False: scalar slip) and ``keeps_coulomb_structure`` (False:
    no force balance at zero slip) answer the questions observables and workflows ask of
    static laws.
    """

    vector: ClassVar[bool] = False
    keeps_coulomb_structure: ClassVar[bool] = False
    #: True for a law whose states fixed-step RK4 advances by :meth:`interval_update` along
    #: each stage's slip instead of by :meth:`state_rate` (its exact stick/slip switch would
    #: otherwise cost a first-order error per switch:
    #: :func:`~jaxfriction._integrate.marched.marched_rk4_step`); such a law must define
    #: :meth:`interval_update`, and its states must follow the slip while they stick (``z' =
    #: v``: the march books as dissipated only their slip past that). Adaptive diffrax solvers
    #: integrate :meth:`state_rate`.
    marched_in_rk4: ClassVar[bool] = False

    def __check_init__(self):
        check_constraints(self)

    def constraints(self) -> tuple[Constraint, ...]:
        """The parameters' valid ranges, a sequence of :class:`~jaxfriction.Constraint`."""
        return ()

    @property
    @abc.abstractmethod
    def n_state(self) -> int:
        """Internal variables per contact (a Python int)."""

    def init_state(self) -> ArrayLike:
        """State of a relaxed contact, ``(n_state,)``: zeros (unloaded springs), a NumPy array
        in the default float type (no XLA op is dispatched to make it)."""
        return np.zeros(self.n_state, jnp.result_type(float))

    @abc.abstractmethod
    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """``dz/dt`` at slip velocity ``v`` (m/s), state ``z`` ``(..., n_state)``, normal
        force ``normal`` (N); returns ``(..., n_state)``."""

    @abc.abstractmethod
    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """Friction force on the body (N), ``(...)``; it opposes the slip velocity ``v``."""

    def stored_energy(self, z: Array, normal: ArrayLike) -> Array:
        """Energy stored in the contact's internal springs (J), ``(...)``; default 0."""
        return jnp.zeros(jnp.shape(z)[:-1])

    def viscous_force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """The part of :meth:`force` (N) that the internal springs do not carry, ``(...)``:
        ``force + sum_i d stored / d z_i`` at slip velocity ``v``, state ``z`` ``(..., n_state)``
        and normal force ``normal``. Fixed-step RK4 books this part's power ``-f_visc v`` by
        its quadrature where it marches the states (:attr:`marched_in_rk4`;
        :class:`~jaxfriction._integrate.marched.MarchedStages`: the springs' part is booked by
        the march). The default computes it from :meth:`force` and :meth:`stored_energy`; a law
        whose springs carry all of its force (Jenkins elements) returns zeros, one with a
        viscous term that term (Maxwell-slip's ``-sigma2 v``), which spares the stages a
        second sum over the elements that cancels the first."""
        return self.force(v, z, normal) + jnp.sum(self.spring_forces(z, normal), axis=-1)

    def spring_forces(self, z: Array, normal: ArrayLike) -> Array:
        """``d stored_energy / d z`` (N per unit of state), ``(..., n_state)``: the internal
        springs' forces at state ``z`` (0 for a state that stores nothing)."""
        return jax.grad(lambda z: jnp.sum(self.stored_energy(z, normal)))(z)

    def slip_update(self, z: Array, slip: ArrayLike, normal: ArrayLike) -> Array | None:
        """The state after a monotone slip increment ``slip`` (m), ``(...)``, from ``z``
        ``(..., n_state)``, for a rate-independent law whose state follows the slip path
        exactly (a return map: Jenkins, Iwan and Segalman elements, Dahl's model), or None (the default:
        the state depends on the rate, or the law has no closed update). Harmonic balance
        marches such a law's state through the period sample by sample
        (:func:`~jaxfriction.harmonic_balance`)."""
        return None

    def interval_update(self, z: Array, slip: ArrayLike, dt: ArrayLike, normal: ArrayLike) -> Array | None:
        """The state after an interval of ``dt`` (time) > 0, ``(...)``, over which the contact
        slipped by ``slip`` (m), ``(...)``, at the constant speed ``slip / dt``, from ``z``
        ``(..., n_state)``: the exact solution of :meth:`state_rate` over the interval, or None
        (no closed form). The default is :meth:`slip_update` (a rate-independent law's state
        does not depend on ``dt``); a rate-dependent law with a closed form overrides it
        (:class:`~jaxfriction.MaxwellSlip`). Harmonic balance marches a law that has one
        through the period (:func:`~jaxfriction.harmonic_balance`), and
        :meth:`~jaxfriction.ModalStructure.stuck_frequencies` reads a contact's stuck stiffness
        from it.

        Returns:
            ``(..., n_state)``, or None.
        """
        return self.slip_update(z, slip, normal)

    def limit_motion_rate(self, v: ArrayLike, acceleration: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """The step rule of a law that RK4 marches (:attr:`marched_in_rk4`), 1/time, ``(...)``:
        how fast the slip limits of the elements at or near them move, relative to those limits,
        at slip velocity ``v`` and slip acceleration ``acceleration`` (m/s^2), both ``(...)``.
        The march takes a stage's limit at the stage's mean slip speed, so a limit that moves
        by a large part of itself within one step is where the march errs (fixed-step RK4 runs
        whose ``h`` times this passes ``LIMIT_MOTION_STEP_LIMIT`` at a saved state get
        ``STATUS_UNSTABLE_STEP``: :func:`~jaxfriction._integrate.stability.internal_state_rate`).
        The default is 0 (a rate-independent law's limits do not move with the speed);
        :class:`~jaxfriction.MaxwellSlip` overrides it."""
        return jnp.zeros(jnp.shape(jnp.asarray(v) + jnp.asarray(acceleration)))

    def stick_band(self) -> ArrayLike:
        """0: a dynamic law has no stick band (its sticking is elastic, in the state)."""
        return 0.0

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array | None:
        """Largest force magnitude the law can return at slip velocity ``v`` (N), or None
        when the law has no bound of its own (rate-and-state)."""
        return None

    def max_state_rate(self, v, z, normal):
        """Fastest rate of the internal states at slip velocity ``v`` and state ``z`` (1/time), ``(...)``.

        Fixed-step RK4 is stable only while ``h`` times this rate stays below
        ``RK4_STABILITY_LIMIT`` (2.785); runs where it passes that at a saved state get
        ``STATUS_UNSTABLE_STEP`` (``jaxfriction._integrate.stability.internal_state_rate``
        takes it at every saved state, with the slip-rate stiffness of the contact). The
        default is ``|d z_i'/d z_i|`` by one ``jax.jvp`` of :meth:`state_rate` along ``z``
        with all-ones tangents: the diagonal of the state Jacobian for laws whose states
        each relax on their own (every law of the library); a law with coupled states, or
        with a rate that the state at one instant does not show (an exact stick/slip
        switch), overrides it with a bound (:class:`~jaxfriction.MaxwellSlip`,
        :class:`~jaxfriction.Iwan`).
        """
        z = jnp.asarray(z)
        dz = jax.jvp(lambda s: self.state_rate(v, s, normal), (z,), (jnp.ones_like(z),))[1]
        return jnp.max(jnp.abs(dz), axis=-1)


def friction_power(law: AbstractDynamicLaw, v: ArrayLike, z: Array,
                   normal: ArrayLike) -> tuple[Array, Array, Array]:
    """Power dissipated by a dynamic law, ``-f v - d/dt stored_energy`` (W), and ``dz/dt``.

    Args:
        law: an :class:`AbstractDynamicLaw`.
        v: slip velocity ``(...)`` (m/s).
        z: state ``(..., n_state)``.
        normal: normal force (N), broadcasting against ``v``.

    Returns:
        ``(force (...), power (...), z_dot (..., n_state))``.
    """
    z_dot = law.state_rate(v, z, normal)
    f = law.force(v, z, normal)
    stored_rate = jax.jvp(lambda s: law.stored_energy(s, normal), (z,), (z_dot,))[1]
    return f, -f * v - stored_rate, z_dot


def drive_law(law: AbstractDynamicLaw, velocity, ts: ArrayLike, normal: ArrayLike = 1.0,
              z0=None) -> tuple[Array, Array]:
    """Drive a dynamic law with a prescribed slip velocity: states and forces on a grid.

    Classical RK4 on the grid ``ts`` for ``dz/dt = law.state_rate(velocity(t), z, normal)``
    (the contact of a body whose motion is prescribed: a displacement-controlled test).
    The stages of a step are taken inside ``[t_i, t_{i+1})``, the last one a rounding unit
    before ``t_{i+1}``, so a velocity that jumps at grid points (a triangular displacement, a
    velocity step) is integrated to RK4's order when ``velocity`` takes its new value from the
    jump on (``t >= t_jump``).

    Args:
        law: an :class:`AbstractDynamicLaw`.
        velocity: ``t -> v``, the slip velocity (m/s), a JAX-traceable function of a scalar.
        ts: grid ``(n,)`` (s), increasing.
        normal: normal force (N).
        z0: initial state ``(n_state,)`` (default ``law.init_state()``).

    A law that declares :attr:`~AbstractDynamicLaw.marched_in_rk4` (Maxwell-slip) is
    advanced by its :meth:`~AbstractDynamicLaw.interval_update` along RK4's slip over each
    step, ``h/6 (v(t) + 4 v(t + h/2) + v(t + h))`` (Simpson's rule, the slip RK4 makes with
    a prescribed velocity), as fixed-step RK4 advances it in a system
    (:func:`~jaxfriction._integrate.marched.marched_rk4_step`).

    Returns:
        ``(z (n, n_state), force (n,))``: the state and the friction force on the body at
            every grid time.
    """
    ts = jnp.asarray(ts, dtype=jnp.result_type(float))
    z0 = law.init_state() if z0 is None else jnp.asarray(z0, dtype=ts.dtype)

    def rate(t, z) -> Array:
        return law.state_rate(velocity(t), z, normal)

    def step(z, interval) -> tuple[Array, Array]:
        t, h = interval
        if law.marched_in_rk4:
            slip = h / 6 * (velocity(t) + 4 * velocity(t + h / 2) + velocity(jnp.nextafter(t + h, t)))
            z = law.interval_update(z, slip, h, normal)
            return z, z
        k1 = rate(t, z)
        k2 = rate(t + h / 2, z + h / 2 * k1)
        k3 = rate(t + h / 2, z + h / 2 * k2)
        k4 = rate(jnp.nextafter(t + h, t), z + h * k3)  # the left limit at the step's end
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return z, z

    _, zs = jax.lax.scan(step, z0, (ts[:-1], jnp.diff(ts)))
    zs = jnp.concatenate([z0[None], zs])
    vs = jax.vmap(velocity)(ts)
    return zs, jax.vmap(lambda v, z: law.force(v, z, normal))(vs, zs)
