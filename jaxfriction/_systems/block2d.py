"""A rigid block on a floor shaken in two horizontal directions (paper 003).

The block's displacement ``u`` and velocity ``v`` are relative to the floor, whose
acceleration is ``a_g(t)`` (2,). In the floor frame ``m u'' = -m a_g(t) + f``, with the
friction force ``f`` (2,) and the normal force ``N = m g``. The force balance that keeps the
block riding the floor is ``f_eq = m a_g(t)``. Energy (floor frame): the inertial force
``-m a_g`` does the input work, ``W = int -m a_g . u' dt``, and ``E = m |u'|^2 / 2``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .._forcing.drives import AbstractDrive
from .._laws.base import AbstractFrictionLaw
from .._laws.vector import safe_norm
from .base import AbstractFrictionSystem, Rates
from .oscillator import check_law


def _check_ground(ground):
    if not isinstance(ground, AbstractDrive) or jnp.shape(ground(0.0)) != (2,):
        raise ValueError("ground must be a drive returning a (2,) floor acceleration")


class BlockOnShakingFloor(AbstractFrictionSystem):
    """Rigid block on a floor with prescribed 2-D acceleration, isotropic friction (paper 003).

    Args:
        law: a vector law (``VectorQuinn``, ``VectorCoulomb``, ``VectorThrelfall``).
        ground: drive returning the floor acceleration ``(2,)`` (m/s^2), e.g. a
            :class:`~jaxfriction.GroundMotion` or ``Harmonic`` with ``(2,)`` arrays.
        mass: m > 0 (kg).
        gravity: g > 0 (m/s^2); ``N = m g``.

    Raises:
        ValueError: a scalar law (``Quinn`` on a 2-D contact would let the friction exceed
            ``mu N`` by ``sqrt(2)``), a drive not returning (2,), or bad values.
    """

    n_dof = 2

    law: AbstractFrictionLaw
    ground: AbstractDrive
    mass: float = 1.0
    gravity: float = 9.81

    def __check_init__(self):
        check_law(self.law, vector=True)
        _check_ground(self.ground)

    def contact_mobility(self) -> tuple:
        """One body on a plane: mobility ``1 / mass``, slip direction x (see
        :meth:`AbstractFrictionSystem.contact_mobility`)."""
        return 1.0 / self.mass, self.normal, jnp.zeros(2), jnp.array([1.0, 0.0])

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("mass", self.mass), positive("gravity", self.gravity))

    @property
    def normal(self) -> ArrayLike:
        return self.mass * self.gravity

    def _forces(self, t, y):
        v = y[2:4]
        a_g = self.ground(t)
        f_eq = self.mass * a_g
        return a_g, f_eq, self.law(v, f_eq, self.normal)

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        v = y[2:4]
        a_g, _, f = self._forces(t, y)
        return Rates(v, -a_g + f / self.mass, -jnp.dot(f, v), -self.mass * jnp.dot(a_g, v))

    def mechanical_energy(self, y: Array) -> Array:
        return 0.5 * self.mass * jnp.sum(y[..., 2:4] ** 2, axis=-1)

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        return self._forces(t, y)[2]

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        return y[2:4]

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        return self._forces(t, y)[1]


class GriffinSpringBlock(AbstractFrictionSystem):
    """The block with Griffin's spring-mass friction model (SMFM; paper 003 Sec. 2.2, 2-D).

    A tangential stick spring of stiffness ``k_t`` (elongation ``e``, (2,)) carries the
    friction force ``f = -k_t e``; it stretches with the slip velocity, ``e' = v``, until the
    force reaches the Coulomb disc ``|k_t e| = mu N``; while it is there and loading
    (``v . e > 0``) the spring slides along the disc, ``e' = v - (v . e_hat) e_hat``
    (isotropic, elastic-perfectly-plastic). The state is ``[u (2), v (2), e (2), E_friction,
    E_damping, W_input]`` (``e`` is the internal variable ``z``).

    RK4 steps across the switch to sliding with one rate, so ``|e|`` can end a step past the
    disc by up to ``h |v|`` (at ``dt = 1 ms`` and 0.5 m/s, seven times the disc's radius
    ``mu N / k_t``); sliding keeps ``|e|`` constant, so that excess would stay and, repeated
    at every transition, ratchet the force far past ``mu N`` (2.5 ``mu N`` on the Kobe
    record at 1 ms, a third of the sliding). The spring therefore acts through ``e``
    projected onto the disc, ``f = -k_t P(e)``: the force never exceeds ``mu N``, and the
    excess unloads within about one step when the slip reverses. The stored energy is
    ``k_t |P(e)|^2 / 2`` (part of the mechanical energy) and ``E_friction`` integrates the
    rest of the friction power, ``k_t P(e) . (v - P(e)')`` (zero in stick; slightly
    negative while an excess unloads), so the energy balance is exact.

    Args:
        ground: the floor acceleration, a drive returning (2,) (m/s^2).
        mu: friction coefficient, >= 0.
        k_t: stick-spring stiffness, > 0 (N/m; paper 40000).
        mass: mass (kg).
        gravity: gravitational acceleration (m/s^2).

    Raises:
        ValueError: bad values.
    """

    n_dof = 2
    n_internal = 2

    ground: AbstractDrive
    mu: float = 0.3
    k_t: float = 40000.0
    mass: float = 1.0
    gravity: float = 9.81

    def __check_init__(self):
        _check_ground(self.ground)

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), positive("k_t", self.k_t), positive("mass", self.mass),
                positive("gravity", self.gravity))

    def _limit(self):
        return self.mu * self.mass * self.gravity / self.k_t

    def _spring(self, e):
        """The spring's elongation as it acts, ``e`` projected onto the disc ``|e| <= mu N / k_t``."""
        limit, n = self._limit(), safe_norm(e)
        return e * jnp.where(n > limit, limit / jnp.where(n > limit, n, 1.0), 1.0)

    def _spring_rate(self, y):
        v, e = y[2:4], y[4:6]
        n = safe_norm(e)
        unit = e / jnp.where(n > 0, n, 1.0)
        sliding = (n >= self._limit()) & (jnp.dot(v, e) > 0)
        return jnp.where(sliding, v - jnp.dot(v, unit) * unit, v)

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        v, e = y[2:4], y[4:6]
        a_g = self.ground(t)
        e_dot = self._spring_rate(y)
        spring, spring_dot = jax.jvp(self._spring, (e,), (e_dot,))
        f = -self.k_t * spring
        # dissipation = power of friction on the slip minus the spring's stored-energy rate
        return Rates(v, -a_g + f / self.mass, self.k_t * jnp.dot(spring, v - spring_dot),
                     -self.mass * jnp.dot(a_g, v), internal=e_dot)

    def mechanical_energy(self, y: Array) -> Array:
        spring = self._spring(y[..., 4:6]) if y.ndim == 1 else jax.vmap(self._spring)(y[..., 4:6])
        return 0.5 * self.mass * jnp.sum(y[..., 2:4] ** 2, axis=-1) + 0.5 * self.k_t * jnp.sum(spring**2, axis=-1)

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        return -self.k_t * self._spring(y[4:6])

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        return y[2:4]

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        return self.mass * self.ground(t)
