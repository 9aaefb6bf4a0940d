"""Systems with many frictional contacts: masses, potential, contact Jacobian."""

import abc

import jax
import jax.numpy as jnp
from equinox import AbstractVar
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, is_static_zero, nonnegative, positive
from .._laws.base import AbstractFrictionLaw
from .._laws.dynamic import AbstractDynamicLaw, friction_power
from .base import AbstractFrictionSystem, Rates
from .force_balance import coupled_force_balance
from .law_state import LawStateMixin
from .oscillator import check_law


class AbstractContactSystem(LawStateMixin, AbstractFrictionSystem):  # type: ignore[override]
    """``n`` lumped masses with ``c`` frictional contacts: ``M q'' = F(t, q, q') + W^T f``.

    The way to write your own multi-body system: a final subclass gives the physics, the
    library does the rest (force balance, coupled stick, energy integrals, Moreau-Jean):

    - fields (or properties) ``law`` (one scalar law, static or dynamic; its parameters may
      be ``(c,)`` arrays, one value per contact), ``masses`` ``(n,)`` (kg), ``normal`` ``(c,)`` normal
      forces (N) and ``damping`` (``(n,)`` viscous coefficients, N s/m, or ``0.0``);
    - ``n_dof``: the number of bodies;
    - :meth:`potential_energy` ``V(q)``; spring forces are ``-grad V`` (``jax.grad``);
    - :meth:`external_force` ``(n,)`` prescribed forces (N);
    - :meth:`contact_jacobian` ``W`` ``(c, n)``: contact slip velocities are
      ``z' = W q' - v_s(t)``, and contact forces act on the bodies as ``W^T f``. Return
      ``None`` when contact ``i`` acts on body ``i`` alone (``W = I``, ``c = n``): then
      ``f_eq`` and every step cost O(n);
    - :meth:`surface_velocity` ``(c,)`` velocities of the surfaces the contacts slide on
      (m/s), or ``None`` for a fixed floor.

    With a dense ``W`` the force balance of the near-sticking contacts (``|z'| <=
    law.stick_band()``) is the coupled solve of :func:`coupled_force_balance` (Quinn 2004
    Sec. 3.3); with ``W = I`` it is each contact's own. State: ``[q (n), q' (n),
    E_friction, E_damping, W_input]``.

    A dynamic law (:class:`~jaxfriction.AbstractDynamicLaw`: LuGre, Dahl, Iwan,
    rate-and-state) gives every contact its own ``n_state`` internal variables, stored
    contact by contact in the internal block ``z`` (``c n_state`` entries, state ``[q, q',
    z, E_friction, E_damping, W_input]``); the friction force is ``law.force(z', z_c,
    N)``, the energy in the law's springs is part of :meth:`mechanical_energy` and
    ``E_friction`` integrates only the dissipated power. ``f_eq`` is then reported (the
    force balance with every contact stuck) but not used.
    """

    law: AbstractVar[AbstractFrictionLaw | AbstractDynamicLaw]
    masses: AbstractVar[jax.Array]
    normal: AbstractVar[jax.Array]
    damping: AbstractVar[jax.Array]

    @abc.abstractmethod
    def potential_energy(self, q: Array) -> Array:
        """Elastic potential energy ``V(q)`` (J)."""

    @abc.abstractmethod
    def contact_jacobian(self) -> Array | None:
        """``W`` ``(c, n)`` (contact slip velocities ``W q' - v_s``), or None for ``W = I``."""

    @abc.abstractmethod
    def external_force(self, t: ArrayLike) -> Array:
        """Prescribed forces on the bodies ``(n,)`` (N)."""

    @abc.abstractmethod
    def surface_velocity(self, t: ArrayLike) -> Array | None:
        """Velocities ``(c,)`` of the surfaces under the contacts (m/s), or None (fixed floor)."""

    def __check_init__(self):
        check_law(self.law, vector=False, dynamic=True)
        n, c = self.n_dof, jnp.shape(self.normal)[0] if jnp.ndim(self.normal) else 0
        if jnp.shape(self.masses) != (n,):
            raise ValueError(f"masses must have shape ({n},), got {jnp.shape(self.masses)}")
        if jnp.shape(self.normal) != (c,) or c < 1:
            raise ValueError(f"normal must be a 1-D array with one entry per contact, got {jnp.shape(self.normal)}")
        w = self.contact_jacobian()
        if w is None and c != n:
            raise ValueError(f"contact_jacobian None means one contact per body, but there are {c} contacts "
                             f"and {n} bodies")
        if w is not None and jnp.shape(w) != (c, n):
            raise ValueError(f"contact_jacobian must have shape ({c}, {n}), got {jnp.shape(w)}")
        if not is_static_zero(self.damping) and jnp.shape(self.damping) not in ((), (n,)):
            raise ValueError(f"damping must be 0.0 or have shape ({n},), got {jnp.shape(self.damping)}")
        try:
            if self.dynamic:
                out = jax.eval_shape(self.law.force, jnp.zeros(c), jnp.zeros((c, self.law.n_state)), jnp.zeros(c))
            else:
                out = jax.eval_shape(self.law, jnp.zeros(c), jnp.zeros(c), jnp.zeros(c))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"law parameters do not match the {c} contacts: {exc}") from None
        if out.shape != (c,):
            raise ValueError(f"law parameters do not match the {c} contacts: law output shape {out.shape}")

    def contact_mobility(self) -> tuple:
        """The Delassus diagonal as the contacts' mobilities (see
        :meth:`AbstractFrictionSystem.contact_mobility`)."""
        zero = jnp.zeros(jnp.shape(self.normal))
        return self.delassus_diagonal(), self.normal, zero, jnp.ones_like(zero)

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("masses", self.masses), nonnegative("normal", self.normal),
                nonnegative("damping", self.damping))

    @property
    def n_contacts(self) -> int:  # type: ignore[override]
        """Number of contacts ``c`` (the length of ``normal``)."""
        return jnp.shape(self.normal)[0]

    def _contact_internal(self, y):
        """The internal block of ``y`` ``(..., state_size)`` as ``(..., c, n_state)``."""
        z = self.internal_state(y)
        return jnp.reshape(z, (*jnp.shape(z)[:-1], self.n_contacts, self.law.n_state))

    @property
    def independent_contacts(self) -> bool:
        """True when every contact acts on its own body (``contact_jacobian()`` is None)."""
        return self.contact_jacobian() is None

    @property
    def _diagonal_balance(self) -> bool:
        """True when each contact's force balance is its own, ``-b_i / D_ii``: independent
        contacts, or a single contact (whose coupled balance, a 1 x 1 solve, is the same
        division; the fused kernel cannot run a linear solve)."""
        return self.independent_contacts or self.n_contacts == 1

    def surface_acceleration(self, t: ArrayLike) -> Array | None:
        """Accelerations ``(c,)`` of the surfaces (``d v_s / dt``), or None for a fixed floor."""
        if self.surface_velocity(t) is None:
            return None
        return jax.jvp(self.surface_velocity, (t,), (jnp.ones_like(t),))[1]

    def nonfriction_force(self, t: ArrayLike, q: Array, v: Array) -> Array:
        """``-grad V(q) + F_ext(t) - c q'`` ``(n,)`` (N)."""
        force = -jax.grad(self.potential_energy)(q) + self.external_force(t)
        return force if is_static_zero(self.damping) else force - self.damping * v

    def contact_velocity(self, v: Array) -> Array:
        """``W v`` ``(c,)``."""
        w = self.contact_jacobian()
        return v if w is None else w @ v

    def generalized_force(self, f: Array) -> Array:
        """``W^T f`` ``(n,)``."""
        w = self.contact_jacobian()
        return f if w is None else w.T @ f

    def delassus(self) -> Array:
        """Delassus operator ``W M^-1 W^T`` ``(c, c)`` (1/kg)."""
        w = self.contact_jacobian()
        return jnp.diag(1.0 / self.masses) if w is None else (w / self.masses) @ w.T

    def delassus_diagonal(self) -> Array:
        """Diagonal of the Delassus operator ``(c,)`` (1/kg)."""
        w = self.contact_jacobian()
        return 1.0 / self.masses if w is None else jnp.sum(w * w / self.masses, axis=1)

    def _contact_state(self, t, y, balance=True):
        """``(q, v, nonfriction, slip, f_eq, f)``; without ``balance`` a dynamic law's
        ``f_eq`` (reported only) is not computed (None): its solve stays out of the rates."""
        n = self.n_dof
        q, v = y[:n], y[n : 2 * n]
        nonfriction = self.nonfriction_force(t, q, v)
        slip, free = self.contact_velocity(v), self.contact_velocity(nonfriction / self.masses)
        vs = self.surface_velocity(t)
        if vs is not None:
            slip, free = slip - vs, free - self.surface_acceleration(t)
        if self.dynamic:  # reported only: the force balance with every contact stuck (least squares
            # where the contacts outnumber the bodies and the Delassus operator is singular)
            f_eq = None
            if balance:
                f_eq = -free / self.delassus_diagonal() if self._diagonal_balance else \
                    jnp.linalg.pinv(self.delassus()) @ -free
            return q, v, nonfriction, slip, f_eq, self.law.force(slip, self._contact_internal(y), self.normal)
        if self._diagonal_balance:
            f_eq = -free / self.delassus_diagonal()
        else:
            sliding = self.law(slip, jnp.zeros_like(slip), self.normal)
            sticking = jnp.abs(slip) <= self.law.stick_band()
            f_eq = coupled_force_balance(self.delassus(), free, sliding, sticking)
        return q, v, nonfriction, slip, f_eq, self.law(slip, f_eq, self.normal)

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        q, v, nonfriction, slip, _, f = self._contact_state(t, y, balance=False)
        acc = (nonfriction + self.generalized_force(f)) / self.masses
        work = jnp.sum(self.external_force(t) * v)
        vs = self.surface_velocity(t)
        if vs is not None:
            work = work + jnp.sum(f * vs)
        damping = 0.0 if is_static_zero(self.damping) else jnp.sum(self.damping * v * v)
        if self.dynamic:  # dissipation is the friction power less the rate of the stored energy
            _, dissipated, z_dot = friction_power(self.law, slip, self._contact_internal(y), self.normal)  # type: ignore[arg-type]
            return Rates(v, acc, jnp.sum(dissipated), work, damping, internal=jnp.reshape(z_dot, (-1,)))
        return Rates(v, acc, -jnp.sum(f * slip), work, damping)

    def mechanical_energy(self, y: Array) -> Array:
        n = self.n_dof
        kinetic = 0.5 * jnp.sum(self.masses * y[..., n : 2 * n] ** 2, axis=-1)
        return kinetic + self._potential(y[..., :n]) + self.law_energy(y)

    def _potential(self, q):
        return self.potential_energy(q) if q.ndim == 1 else jax.vmap(self.potential_energy)(q)

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        return self._contact_state(t, y, balance=False)[5]

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        return self._contact_state(t, y, balance=False)[3]

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        return self._contact_state(t, y)[4]
