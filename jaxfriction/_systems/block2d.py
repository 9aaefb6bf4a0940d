"""A rigid block on a floor shaken in two horizontal directions (paper 003).

The block's displacement ``u`` and velocity ``v`` are relative to the floor, whose
acceleration is ``a_g(t)`` (2,). In the floor frame ``m u'' = -m a_g(t) + f``, with the
friction force ``f`` (2,) and the normal force ``N = m g``. The force balance that keeps the
block riding the floor is ``f_eq = m a_g(t)``. Energy (floor frame): the inertial force
``-m a_g`` does the input work, ``W = int -m a_g . u' dt``, and ``E = m |u'|^2 / 2``.
"""

import jax.numpy as jnp

from .._checks import nonnegative, positive
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

    def constraints(self):
        return (positive("mass", self.mass), positive("gravity", self.gravity))

    @property
    def normal(self):
        return self.mass * self.gravity

    def _forces(self, t, y):
        v = y[2:4]
        a_g = self.ground(t)
        f_eq = self.mass * a_g
        return a_g, f_eq, self.law(v, f_eq, self.normal)

    def rates(self, t, y):
        v = y[2:4]
        a_g, _, f = self._forces(t, y)
        return Rates(v, -a_g + f / self.mass, -jnp.dot(f, v), -self.mass * jnp.dot(a_g, v))

    def mechanical_energy(self, y):
        return 0.5 * self.mass * jnp.sum(y[..., 2:4] ** 2, axis=-1)

    def friction_force(self, t, y):
        return self._forces(t, y)[2]

    def slip_velocity(self, t, y):
        return y[2:4]

    def f_eq(self, t, y):
        return self._forces(t, y)[1]


class GriffinSpringBlock(AbstractFrictionSystem):
    """The block with Griffin's spring-mass friction model (SMFM; paper 003 Sec. 2.2, 2-D).

    A tangential stick spring of stiffness ``k_t`` (elongation ``e``, (2,)) carries the
    friction force ``f = -k_t e``; it stretches with the slip velocity, ``e' = v``, until the
    force reaches the Coulomb disc ``|k_t e| = mu N``; while it is there and loading
    (``v . e > 0``) the spring slides along the disc, ``e' = v - (v . e_hat) e_hat``
    (isotropic, elastic-perfectly-plastic). The state is ``[u (2), v (2), e (2), E_friction,
    E_damping, W_input]`` (``e`` is the internal variable ``z``); the spring's stored energy ``k_t |e|^2 / 2`` belongs to the
    mechanical energy, and ``E_friction`` integrates ``k_t e . (v - e')`` (>= 0, zero in stick).

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

    def constraints(self):
        return (nonnegative("mu", self.mu), positive("k_t", self.k_t), positive("mass", self.mass),
                positive("gravity", self.gravity))

    def _spring_rate(self, y):
        v, e = y[2:4], y[4:6]
        limit = self.mu * self.mass * self.gravity
        n = safe_norm(e)
        unit = e / jnp.where(n > 0, n, 1.0)
        sliding = (self.k_t * n >= limit) & (jnp.dot(v, e) > 0)
        return jnp.where(sliding, v - jnp.dot(v, unit) * unit, v)

    def rates(self, t, y):
        v, e = y[2:4], y[4:6]
        a_g = self.ground(t)
        f = -self.k_t * e
        e_dot = self._spring_rate(y)
        return Rates(v, -a_g + f / self.mass, self.k_t * jnp.dot(e, v - e_dot), -self.mass * jnp.dot(a_g, v),
                     internal=e_dot)

    def mechanical_energy(self, y):
        return 0.5 * self.mass * jnp.sum(y[..., 2:4] ** 2, axis=-1) + 0.5 * self.k_t * jnp.sum(y[..., 4:6] ** 2, axis=-1)

    def friction_force(self, t, y):
        return -self.k_t * y[4:6]

    def slip_velocity(self, t, y):
        return y[2:4]

    def f_eq(self, t, y):
        return self.mass * self.ground(t)
