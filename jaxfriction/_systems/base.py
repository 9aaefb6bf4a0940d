"""State layout and the single-contact, one-degree-of-freedom system base.

Every system's state is a flat array ``y = [q (n), v (n), E_friction, E_damping, W_input]``:
positions, velocities, and three running integrals,

- ``E_friction = int -f . v_slip dt`` (energy dissipated by friction, >= 0),
- ``E_damping  = int c v^2 dt``       (energy dissipated by viscous damping, >= 0),
- ``W_input    = int P_in dt``        (work done by the prescribed drives),

so every run carries its energy balance ``W_input = Delta E_mech + E_friction +
E_damping`` (see :mod:`jaxfriction.observables.energy`). Because the integrals are
integrated by the same scheme as the motion, the balance residual measures the scheme's
accuracy.
"""


import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from equinox import AbstractVar

from .._checks import check_real, is_concrete
from .._laws.base import AbstractFrictionLaw

N_INTEGRALS = 3


class AbstractFrictionSystem(eqx.Module):
    """Base of every system: a ``vector_field(t, y, args)`` that diffrax accepts.

    Subclasses set ``n_dof`` and implement the physics; this class owns the state layout.
    """

    n_dof: ClassVar[int]

    @property
    def state_size(self) -> int:
        """Length of the state vector, ``2 n_dof + 3``."""
        return 2 * self.n_dof + N_INTEGRALS

    def initial_state(self, q, v):
        """Full state from positions ``q`` and velocities ``v`` (integrals start at 0)."""
        q = jnp.reshape(jnp.asarray(q, dtype=float), (self.n_dof,))
        v = jnp.reshape(jnp.asarray(v, dtype=float), (self.n_dof,))
        return jnp.concatenate([q, v, jnp.zeros(N_INTEGRALS, dtype=q.dtype)])

    def as_state(self, y0):
        """Full state from ``y0``: positions and velocities ``(2 n_dof,)`` get zero integrals
        appended; a full state ``(state_size,)`` is returned as is (to continue a run).

        Raises: ValueError naming ``y0`` for a wrong shape or non-finite values.
        """
        if is_concrete(y0) and not np.all(np.isfinite(np.asarray(y0, dtype=float))):
            raise ValueError(f"y0 must be finite, got {y0}")
        y0 = jnp.asarray(y0)
        n = self.n_dof
        if y0.ndim != 1 or y0.shape[0] not in (2 * n, self.state_size):
            raise ValueError(
                f"y0 must have shape ({2 * n},) (positions, velocities) or ({self.state_size},) "
                f"(full state), got shape {y0.shape}"
            )
        y0 = y0.astype(jnp.result_type(float))
        return self.initial_state(y0[:n], y0[n:]) if y0.shape[0] == 2 * n else y0

    def positions(self, y):
        """Positions from a state ``(..., state_size)``: ``(...)`` for 1 dof, else ``(..., n)``."""
        q = y[..., : self.n_dof]
        return q[..., 0] if self.n_dof == 1 else q

    def velocities(self, y):
        """Velocities from a state, shaped like :meth:`positions`."""
        v = y[..., self.n_dof : 2 * self.n_dof]
        return v[..., 0] if self.n_dof == 1 else v

    @staticmethod
    def friction_dissipation(y):
        """Running friction dissipation ``E_friction`` from a state (J)."""
        return y[..., -3]

    @staticmethod
    def damping_dissipation(y):
        """Running viscous dissipation ``E_damping`` from a state (J)."""
        return y[..., -2]

    @staticmethod
    def input_work(y):
        """Running work of the prescribed drives ``W_input`` from a state (J)."""
        return y[..., -1]

    @abc.abstractmethod
    def vector_field(self, t, y, args=None):
        """Time derivative of the state ``y`` at time ``t`` (diffrax ``ODETerm`` shape)."""

    @abc.abstractmethod
    def mechanical_energy(self, y):
        """Kinetic plus potential energy of a state (J)."""

    @abc.abstractmethod
    def friction_force(self, t, y):
        """Friction force(s) on the body(ies) at ``(t, y)`` (N)."""

    @abc.abstractmethod
    def slip_velocity(self, t, y):
        """Slip velocity(ies) of the contact(s) at ``(t, y)``."""

    @abc.abstractmethod
    def f_eq(self, t, y):
        """Force balance ``f_eq`` at the contact(s) (N)."""


def _static_zero(value):
    """True for a literal Python zero (not a traced or array value)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


class AbstractOscillator(AbstractFrictionSystem):
    """One body, one contact: ``m x'' + c x' + k x = F(t) + f``.

    The friction force ``f = law(v - v_s(t), f_eq, N)`` acts on the body, ``v_s`` is the
    surface (belt) velocity, and the force balance is ``f_eq = m a_s(t) + k x + c x' -
    F(t)``, the friction force that gives the body the surface's acceleration ``a_s``
    (Quinn 2004: "the value of the friction force necessary to balance the gross force").
    Power of the drives: ``F(t) x' + f v_s(t)`` (the belt's motor supplies ``f v_s``).
    """

    n_dof = 1

    law: AbstractVar[AbstractFrictionLaw]
    mass: AbstractVar[float]
    stiffness: AbstractVar[float]
    damping: AbstractVar[float]
    normal: AbstractVar[float]

    def __check_init__(self):
        if not isinstance(self.law, AbstractFrictionLaw):
            raise ValueError(f"law must be a jaxfriction friction law, got {self.law!r}")
        check_real("mass", self.mass, positive=True)
        check_real("stiffness", self.stiffness, nonnegative=True)
        check_real("damping", self.damping, nonnegative=True)
        check_real("normal", self.normal, nonnegative=True)

    @abc.abstractmethod
    def external_force(self, t):
        """Prescribed force ``F(t)`` on the body (N)."""

    def surface_velocity(self, t):
        """Velocity of the surface under the body (0 for a fixed floor)."""
        return 0.0 * t

    def surface_acceleration(self, t):
        """Acceleration of the surface under the body (0 for a fixed floor or steady belt)."""
        return 0.0 * t

    def _moving_surface(self):
        return type(self).surface_velocity is not AbstractOscillator.surface_velocity

    def _forces(self, t, y):
        # terms that are exactly zero for a fixed floor or a damping of literal 0 are left out
        # (the same numbers; XLA cannot drop 0 * x itself, and they cost ~30 % of a sweep)
        x, v = y[0], y[1]
        nonfriction = self.external_force(t) - self.stiffness * x
        if not _static_zero(self.damping):
            nonfriction = nonfriction - self.damping * v
        f_eq = -nonfriction
        if type(self).surface_acceleration is not AbstractOscillator.surface_acceleration:
            f_eq = self.mass * self.surface_acceleration(t) + f_eq
        slip = v - self.surface_velocity(t) if self._moving_surface() else v
        return nonfriction, f_eq, slip, self.law(slip, f_eq, self.normal)

    def vector_field(self, t, y, args=None):
        v = y[1]
        nonfriction, _, slip, f = self._forces(t, y)
        dissipation = -f * slip
        damping = jnp.zeros_like(v) if _static_zero(self.damping) else self.damping * v * v
        work = self.external_force(t) * v
        if self._moving_surface():
            work = work + f * self.surface_velocity(t)
        return jnp.stack([v, (nonfriction + f) / self.mass, dissipation, damping, work])

    def mechanical_energy(self, y):
        return 0.5 * self.mass * y[..., 1] ** 2 + 0.5 * self.stiffness * y[..., 0] ** 2

    def friction_force(self, t, y):
        return self._forces(t, y)[3]

    def slip_velocity(self, t, y):
        return self._forces(t, y)[2]

    def f_eq(self, t, y):
        return self._forces(t, y)[1]
