"""The Burridge-Knopoff chain of Quinn 2004 Sec. 3.2 (Fig. 8)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_int, nonnegative, real
from .._laws.base import AbstractFrictionLaw
from .contacts import AbstractContactSystem


class BurridgeKnopoffChain(AbstractContactSystem):
    """Elastic chain of ``n`` blocks on a rough floor, loaded at the first block (Quinn eq. Sec. 3.2).

    Quinn's rows (nondimensional, ``mu N_i = 1``, ``G(t) = alpha sin(omega t)``):

        ``(1/n) u_1'' + n (u_1 - u_2) = f_1/n - G(t)``,
        ``(1/n) u_j'' + n (-u_{j-1} + 2 u_j - u_{j+1}) = f_j/n``,
        ``(1/n) u_n'' + n (-4/3 u_{n-1} + 4 u_n) = f_n/n``.

    Reading of the boundary rows (checked in the tests): this is the cell-centred
    discretization of a rod ``u_tt = u_xx`` on ``[0, 1]``, free and loaded at ``x = 0``
    (ghost value ``u_0 = u_1``) and fixed at ``x = 1``, half a cell beyond ``u_n``; the
    second-order ghost value ``u_{n+1} = -2 u_n + u_{n-1}/3`` turns the last row into
    ``-4/3 u_{n-1} + 4 u_n``, so the lowest natural frequency converges to the rod's
    ``pi/2`` at second order in ``1/n`` (Quinn writes that it "approaches unity"; we find
    ``pi/2``). The printed last row is exactly a symmetric chain whose last block has 3/4
    of the mass and of the normal force of the others and a spring ``2n`` to the wall
    (multiply that block's row by 3/4), which is what is built here: a true potential,
    so the energy balance is exact. Friction forces are in physical units, ``f_j / n`` in
    Quinn's scaling, so the friction dissipation equals Quinn's
    ``D = -(1/n) sum_i int u_i' f_i dt`` whenever the last block does not slip (it carries
    weight 4/3 in Quinn's sum, 1 here).

    Args:
        law: friction law; ``mu = 1`` gives Quinn's ``mu N_i = 1``. Regularization widths
            are slip speeds, as in the paper (Quinn: ``eps = 10 omega dt``).
        n: number of blocks (static int >= 2).
        alpha: load amplitude.
        omega: load frequency.

    Raises:
        ValueError: ``n < 2`` or non-finite ``alpha``, ``omega``.
    """

    law: AbstractFrictionLaw
    n: int = eqx.field(static=True)
    alpha: float = 0.25
    omega: float = 0.5

    def __check_init__(self):
        check_int("n", self.n, minimum=2)

    def constraints(self) -> tuple[Constraint, ...]:
        return (real("alpha", self.alpha), real("omega", self.omega))

    @property
    def n_dof(self) -> int:  # type: ignore[override]
        return self.n

    @property  # type: ignore[misc]
    def masses(self) -> Array:  # type: ignore[override]
        return jnp.ones(self.n).at[-1].set(0.75) / self.n

    @property  # type: ignore[misc]
    def normal(self) -> ArrayLike:  # type: ignore[override]
        return self.masses

    @property  # type: ignore[misc]
    def damping(self) -> ArrayLike:  # type: ignore[override]
        return 0.0

    def potential_energy(self, q: Array) -> Array:
        springs = 0.5 * self.n * jnp.sum(jnp.diff(q) ** 2)
        return springs + 0.5 * (2 * self.n) * q[-1] ** 2

    def contact_jacobian(self) -> None:
        return None  # block i on its own patch of floor: O(n) force balance

    def surface_velocity(self, t: ArrayLike) -> None:
        return None

    def external_force(self, t: ArrayLike) -> Array:
        return jnp.zeros(self.n).at[0].set(-self.alpha * jnp.sin(self.omega * t))

    def quinn_weights(self) -> Array:
        """Per-block weights ``(n,)`` that turn the physical friction dissipation into Quinn's
        ``D = -(1/n) sum_i int u_i' f_i dt``: 1, and 4/3 for the last block, whose physical
        normal force is 3/4 of the others' (see the class docstring). Use with
        :func:`~jaxfriction.dissipation_per_cycle` (``weights=``)."""
        return jnp.ones(self.n).at[-1].set(4.0 / 3.0)

    def stiffness_rows(self) -> Array:
        """Quinn's printed matrix ``K`` (``(1/n) u'' + n K u = f/n - G e_1``), ``(n, n)``."""
        k = 2 * jnp.eye(self.n) - jnp.eye(self.n, k=1) - jnp.eye(self.n, k=-1)
        k = k.at[0, 0].set(1.0)
        return k.at[-1, -2].set(-4 / 3).at[-1, -1].set(4.0)


class TwoBlocksOnBelt(AbstractContactSystem):
    """Two stacked blocks, the lower one on a moving belt (Quinn 2004 Sec. 3.3, eq. 7, Fig. 10).

    ``x1'' + x1 = f1 - f2``, ``x2'' + kappa x2 = f2``, belt displacement ``u(t) = A sin(W t)``;
    contact 1 (belt / lower block) slips at ``z1' = x1' - u'``, contact 2 (lower / upper
    block) at ``z2' = x2' - x1'``. The contacts share the lower block, so the force balance of
    a near-sticking contact depends on the other's state: the Delassus operator is Quinn's
    ``R = [[1, -1], [-1, 2]]`` and ``f_eq`` comes from the coupled solve.

    Args:
        law: friction law with per-contact coefficients, e.g. ``Quinn(mu=jnp.array([0.5, 0.25]),
            eps=...)`` (Quinn: ``mu1 = 0.5``, ``mu2 = 0.25``); normal forces are 1.
        kappa: stiffness of the upper block's spring (Quinn: 2).
        belt_amplitude, belt_omega: ``u(t) = A sin(W t)`` (Quinn: 1, 0.5).

    Raises:
        ValueError: non-finite or negative ``kappa``, non-finite belt parameters.
    """

    law: AbstractFrictionLaw
    kappa: float = 2.0
    belt_amplitude: float = 1.0
    belt_omega: float = 0.5

    n_dof = 2

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("kappa", self.kappa), real("belt_amplitude", self.belt_amplitude),
                real("belt_omega", self.belt_omega))

    @property  # type: ignore[misc]
    def masses(self) -> Array:  # type: ignore[override]
        return jnp.ones(2)

    @property  # type: ignore[misc]
    def normal(self) -> ArrayLike:  # type: ignore[override]
        return jnp.ones(2)

    @property  # type: ignore[misc]
    def damping(self) -> ArrayLike:  # type: ignore[override]
        return 0.0

    def potential_energy(self, q: Array) -> Array:
        return 0.5 * q[0] ** 2 + 0.5 * self.kappa * q[1] ** 2

    def contact_jacobian(self) -> Array:
        return jnp.array([[1.0, 0.0], [-1.0, 1.0]])

    def external_force(self, t: ArrayLike) -> Array:
        return jnp.zeros(2) + 0.0 * t

    def surface_velocity(self, t: ArrayLike) -> Array:
        return jnp.stack([self.belt_amplitude * self.belt_omega * jnp.cos(self.belt_omega * t), 0.0 * t])
