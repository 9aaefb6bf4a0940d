"""The result of an integration."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array

from .._systems.base import AbstractFrictionSystem


class Trajectory(eqx.Module):
    """Saved states of one run, with the system that produced them.

    Attributes:
        ts: save times, shape ``(n,)``.
        ys: states, shape ``(n, state_size)`` (layout: :mod:`jaxfriction._systems.base`).
        system: the system integrated.
        status: int array, a code of :mod:`jaxfriction._integrate.status` (``0`` ok, ``1``
            non-finite state, ``2`` the diffrax solver failed, ``3`` event budget, ``5``
            unstable RK4 step in a stick band). A batch (``vmap``) reports one per trajectory.

    Derived series (positions, friction forces, ...) are recomputed from ``(ts, ys)``; they
    are exact functions of the state, so nothing is stored twice. Methods act on one
    trajectory; ``jax.vmap`` them for a batch.
    """

    ts: Array
    ys: Array
    system: AbstractFrictionSystem
    status: Array

    def _map(self, fn):
        return jax.vmap(fn)(self.ts, self.ys)

    @property
    def position(self) -> Array:
        """Positions, ``(n,)`` for one dof, ``(n, n_dof)`` otherwise."""
        return self.system.positions(self.ys)

    @property
    def velocity(self) -> Array:
        """Velocities, shaped like :attr:`position`."""
        return self.system.velocities(self.ys)

    @property
    def friction_dissipation(self) -> Array:
        """Running friction dissipation ``E_friction(t)`` (J), ``(n,)``."""
        return self.system.friction_dissipation(self.ys)

    @property
    def damping_dissipation(self) -> Array:
        """Running viscous dissipation ``E_damping(t)`` (J), ``(n,)``."""
        return self.system.damping_dissipation(self.ys)

    @property
    def input_work(self) -> Array:
        """Running work of the drives ``W_input(t)`` (J), ``(n,)``."""
        return self.system.input_work(self.ys)

    @property
    def mechanical_energy(self) -> Array:
        """Kinetic plus potential energy (J), ``(n,)``."""
        return jax.vmap(self.system.mechanical_energy)(self.ys)

    @property
    def friction_force(self) -> Array:
        """Friction force(s) at the saved points (N)."""
        return self._map(self.system.friction_force)

    @property
    def slip_velocity(self) -> Array:
        """Contact slip velocity(ies) at the saved points."""
        return self._map(self.system.slip_velocity)

    @property
    def f_eq(self) -> Array:
        """Force balance at the saved points (N)."""
        return self._map(self.system.f_eq)

    def internal(self, name: str) -> Array:
        """An internal variable by name at the saved points, ``(n,)``: one of
        ``system.internal_names()`` (``"psi"`` of rate-and-state; ``"ln_v"`` of
        :class:`~jaxfriction.QuasiStaticSlider`) or a quantity derived from it (``"theta"``);
        :meth:`~jaxfriction.AbstractFrictionSystem.internal`.

        Raises:
            ValueError: an unknown name.
        """
        return self.system.internal(self.ys, name)

    @property
    def friction_power(self) -> Array:
        """Friction dissipation rate ``-f . v_slip`` (W) at the saved points."""
        return -jnp.sum(
            jnp.reshape(self.friction_force * self.slip_velocity, (self.ts.shape[0], -1)), axis=-1
        )
