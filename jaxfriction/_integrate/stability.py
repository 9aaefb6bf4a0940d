"""Stability of fixed-step RK4 inside the stick band of a regularized law."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
from jax import Array

from .._checks import without_tangents
from .._systems.block2d import BlockOnShakingFloor
from .._systems.contacts import AbstractContactSystem
from .._systems.oscillator import Oscillator

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem

#: Where the real axis leaves the stability region of classical RK4 (``|R(z)| = 1`` at
#: ``z = -2.785293563...``).
RK4_STABILITY_LIMIT = 2.785293563405282


def stick_band_rate(system: AbstractFrictionSystem) -> Array | None:
    """Largest relaxation rate of a contact inside its stick band (1/time), or None.

    Inside the band a regularized law is a steep damper: the slip velocity of contact ``i``
    obeys ``z'' = -D_ii s_i z'`` with ``s_i = -df/dv`` the law's slope and ``D_ii`` the
    contact's mobility (``1/m`` for one body, the Delassus diagonal in general). Classical
    RK4 is stable there only for ``h D_ii s_i <= 2.785`` (Quinn's law: ``h mu N / (m eps)``;
    Quinn's ``eps = 2 dt`` with ``mu N = m = 1`` gives 0.5). The slope is taken by
    ``jax.jvp`` of the law at ``f_eq = 0`` and slip velocities ``0``, ``b/2`` and ``0.99 b``
    (``b = law.stick_band()``), so it covers any law, a user's own included; switch laws
    (Coulomb, Karnopp) have slope 0 there.

    Args:
        system: an :class:`~jaxfriction.Oscillator`, an
            :class:`~jaxfriction.AbstractContactSystem` or a
            :class:`~jaxfriction.BlockOnShakingFloor` (other systems, and systems with a
            dynamic law, have no band rate: None).

    Returns:
        A scalar (traced under ``vmap``) or None.
    """
    if isinstance(system, (Oscillator, AbstractContactSystem)) and system.dynamic:
        return None  # a dynamic law has no stick band
    if isinstance(system, Oscillator):
        mobility, normal, zero, tangent = 1.0 / system.mass, system.normal, jnp.zeros(()), jnp.ones(())
    elif isinstance(system, AbstractContactSystem):
        mobility, normal = system.delassus_diagonal(), system.normal
        zero = jnp.zeros(jnp.shape(normal))
        tangent = jnp.ones_like(zero)
    elif isinstance(system, BlockOnShakingFloor):
        mobility, normal, zero, tangent = 1.0 / system.mass, system.normal, jnp.zeros(2), jnp.array([1.0, 0.0])
    else:
        return None
    # a status, not a quantity to differentiate: no tangents are carried through it
    law, mobility, normal = without_tangents((system.law, mobility, normal))
    band = jnp.asarray(law.stick_band(), dtype=zero.dtype)

    def slope(v) -> Array:
        df = jax.jvp(lambda x: law(x, jnp.zeros_like(x), normal), (v,), (tangent,))[1]
        return -(df[..., 0] if law.vector else df)

    rates = [slope(zero + k * band * tangent) for k in (0.0, 0.5, 0.99)]
    return jnp.max(jnp.stack([jnp.max(r * mobility) for r in rates]))


def has_internal_states(system) -> bool:
    """True when ``system``'s law is dynamic and the system carries its internal states (the
    systems :func:`internal_state_rate` gives a rate for)."""
    from .._laws.dynamic import AbstractDynamicLaw

    return isinstance(getattr(system, "law", None), AbstractDynamicLaw) and bool(system.n_internal)


def internal_state_rate(system: AbstractFrictionSystem, ts: Array, ys: Array) -> Array | None:
    """Largest relaxation rate of a dynamic law's internal states over a run (1/time), or None.

    A dynamic law (:class:`~jaxfriction.AbstractDynamicLaw`: LuGre's bristles, Dahl's
    spring, the elements of an Iwan or Maxwell-slip model, the rate-and-state variable)
    relaxes its state ``z`` at ``|d z_i'/d z_i|``, which grows with the slip speed (LuGre:
    ``sigma0 |v| / g(v)``); fixed-step RK4 goes unstable once ``h`` times it passes
    :data:`RK4_STABILITY_LIMIT`. The rate is taken at the saved states, by one ``jax.jvp``
    of the vector field along ``z`` with all-ones tangents (the row sums of ``dz'/dz``, its
    diagonal for the library's laws, whose states each relax on their own).

    Args:
        system: a system; those whose ``law`` is not dynamic (or that have no internal
            states) return None.
        ts: saved times ``(k,)``.
        ys: saved states ``(k, state_size)``.

    Returns:
        A scalar (traced under ``vmap``; NaN states give NaN) or None.
    """
    if not has_internal_states(system):
        return None
    start = 2 * system.n_dof
    stop = start + system.n_internal
    system, ts, ys = without_tangents((system, ts, ys))

    def one(t, y) -> Array:
        def rates(z) -> Array:
            return system.vector_field(t, y.at[start:stop].set(z))[start:stop]

        z = y[start:stop]
        return jnp.max(jnp.abs(jax.jvp(rates, (z,), (jnp.ones_like(z),))[1]))

    return jnp.max(jax.vmap(one)(ts, ys))
