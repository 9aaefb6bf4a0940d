"""Systems with many frictional contacts: masses, potential, contact Jacobian."""

import abc

import jax
import jax.numpy as jnp
from equinox import AbstractVar

from .._checks import check_real
from .._laws.base import AbstractFrictionLaw
from .base import AbstractFrictionSystem
from .force_balance import coupled_force_balance


class AbstractContactSystem(AbstractFrictionSystem):
    """``n`` lumped masses with ``c`` frictional contacts: ``M q'' = F(t, q, q') + W^T f``.

    A concrete system gives the physics, the library does the rest:

    - ``masses`` ``(n,)`` (kg), ``normal`` ``(c,)`` normal forces (N) and ``law`` (one law;
      its parameters may be ``(c,)`` arrays, one value per contact);
    - :meth:`potential_energy` ``V(q)``; spring forces are ``-grad V`` (``jax.grad``);
    - :meth:`external_force` ``(n,)`` prescribed forces and :attr:`damping` ``(n,)``;
    - :meth:`contact_jacobian` ``W`` ``(c, n)``: contact slip velocities are
      ``z' = W q' - v_s(t)`` (:meth:`surface_velocity`), and contact forces act on the bodies
      as ``W^T f``;
    - ``independent_contacts``: True when no two contacts share a body (then ``W M^-1 W^T``
      is diagonal and ``f_eq`` costs O(c); override :meth:`contact_velocity`,
      :meth:`generalized_force` and :meth:`delassus_diagonal` to keep a large system O(n));
      otherwise ``f_eq`` comes from the coupled solve
      of :func:`coupled_force_balance` over the near-sticking set ``|z'| <= law.stick_band()``.

    State: ``[q (n), q' (n), E_friction, E_damping, W_input]`` as every system.
    """

    law: AbstractVar[AbstractFrictionLaw]
    masses: AbstractVar[jax.Array]
    normal: AbstractVar[jax.Array]

    @property
    @abc.abstractmethod
    def n_dof(self) -> int:
        """Number of bodies (degrees of freedom)."""

    @property
    @abc.abstractmethod
    def independent_contacts(self) -> bool:
        """True when every contact acts on its own body (diagonal Delassus operator)."""

    @abc.abstractmethod
    def potential_energy(self, q):
        """Elastic potential energy ``V(q)`` (J)."""

    @abc.abstractmethod
    def contact_jacobian(self):
        """``W`` ``(c, n)``: contact slip velocities are ``W q' - v_s``."""

    def external_force(self, t):
        """Prescribed forces on the bodies ``(n,)`` (N); zero by default."""
        return jnp.zeros(self.n_dof) + 0.0 * t

    @property
    def damping(self):
        """Viscous damping coefficients ``(n,)`` (N s/m); zero by default."""
        return jnp.zeros(self.n_dof)

    def surface_velocity(self, t):
        """Velocity ``(c,)`` of the surface each contact slides on (0: fixed floor)."""
        return jnp.zeros(jnp.shape(self.normal)) + 0.0 * t

    def surface_acceleration(self, t):
        """Acceleration ``(c,)`` of the surfaces."""
        return jnp.zeros(jnp.shape(self.normal)) + 0.0 * t

    def __check_init__(self):
        if not isinstance(self.law, AbstractFrictionLaw):
            raise ValueError(f"law must be a jaxfriction friction law, got {self.law!r}")
        check_real("masses", self.masses, positive=True)
        check_real("normal", self.normal, nonnegative=True)
        n, c = self.n_dof, jnp.shape(self.normal)[0] if jnp.ndim(self.normal) else 0
        if jnp.shape(self.masses) != (n,):
            raise ValueError(f"masses must have shape ({n},), got {jnp.shape(self.masses)}")
        if jnp.shape(self.normal) != (c,) or c < 1:
            raise ValueError(f"normal must be a 1-D array with one entry per contact, got {jnp.shape(self.normal)}")
        if jnp.shape(self.contact_jacobian()) != (c, n):
            raise ValueError(f"contact_jacobian must have shape ({c}, {n}), got {jnp.shape(self.contact_jacobian())}")
        try:
            out = jax.eval_shape(self.law, jnp.zeros(c), jnp.zeros(c), jnp.zeros(c))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"law parameters do not match the {c} contacts: {exc}") from None
        if out.shape != (c,):
            raise ValueError(f"law parameters do not match the {c} contacts: law output shape {out.shape}")

    def nonfriction_force(self, t, q, v):
        """``-grad V(q) + F_ext(t) - c q'`` ``(n,)`` (N)."""
        return -jax.grad(self.potential_energy)(q) + self.external_force(t) - self.damping * v

    def contact_velocity(self, v):
        """``W v`` ``(c,)``; override with a matrix-free form for large systems."""
        return self.contact_jacobian() @ v

    def generalized_force(self, f):
        """``W^T f`` ``(n,)``; override with a matrix-free form for large systems."""
        return self.contact_jacobian().T @ f

    def delassus(self):
        """Delassus operator ``W M^-1 W^T`` ``(c, c)`` (1/kg)."""
        w = self.contact_jacobian()
        return (w / self.masses) @ w.T

    def delassus_diagonal(self):
        """Diagonal of the Delassus operator ``(c,)``; override for large systems."""
        return jnp.diagonal(self.delassus())

    def _contact_state(self, t, y):
        n = self.n_dof
        q, v = y[:n], y[n : 2 * n]
        nonfriction = self.nonfriction_force(t, q, v)
        slip = self.contact_velocity(v) - self.surface_velocity(t)
        free = self.contact_velocity(nonfriction / self.masses) - self.surface_acceleration(t)
        if self.independent_contacts:
            f_eq = -free / self.delassus_diagonal()
        else:
            sliding = self.law(slip, jnp.zeros_like(slip), self.normal)
            sticking = jnp.abs(slip) <= self.law.stick_band()
            f_eq = coupled_force_balance(self.delassus(), free, sliding, sticking)
        return q, v, nonfriction, slip, f_eq, self.law(slip, f_eq, self.normal)

    def vector_field(self, t, y, args=None):
        q, v, nonfriction, slip, _, f = self._contact_state(t, y)
        acc = (nonfriction + self.generalized_force(f)) / self.masses
        power = jnp.stack([
            -jnp.sum(f * slip),
            jnp.sum(self.damping * v * v),
            jnp.sum(self.external_force(t) * v) + jnp.sum(f * self.surface_velocity(t)),
        ])
        return jnp.concatenate([v, acc, power])

    def mechanical_energy(self, y):
        n = self.n_dof
        return 0.5 * jnp.sum(self.masses * y[n : 2 * n] ** 2) + self.potential_energy(y[:n])

    def friction_force(self, t, y):
        return self._contact_state(t, y)[5]

    def slip_velocity(self, t, y):
        return self._contact_state(t, y)[3]

    def f_eq(self, t, y):
        return self._contact_state(t, y)[4]
