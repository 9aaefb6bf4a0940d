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

#: A run with a dynamic law is flagged once ``h`` times the slip-rate stiffness ``-dv'/dv``
#: at a saved state passes this (not RK4's 2.785: rate-and-state's ``N a / (m |v|)`` changes
#: by orders within a step as ``v`` falls. Measured on a rate-and-state spring slider, whose
#: largest ``h rate`` over every step was 2.03 at dt 1e-3 (dissipation 6.5x the converged
#: one), 1.15 at dt 1e-4 (agreeing with dt 1e-5 to 4e-8); the velocity-step test of
#: ``tests/test_spring_slider.py`` is accurate to 7e-8 at ``h rate = 1``). The law's own state
#: rates are held to RK4's limit.
SLIP_RATE_STEP_LIMIT = 1.5


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

    return (isinstance(getattr(system, "law", None), AbstractDynamicLaw) and bool(system.n_internal)
            and getattr(system, "internal_is_law_state", True))


def internal_state_rate(system: AbstractFrictionSystem, ts: Array, ys: Array) -> Array | None:
    """Largest rate of a system with a dynamic law over a run (1/time), or None.

    A dynamic law (:class:`~jaxfriction.AbstractDynamicLaw`: LuGre's bristles, Dahl's
    spring, the elements of an Iwan or Maxwell-slip model, the rate-and-state variable)
    relaxes its state ``z`` at rates that grow with the slip speed (LuGre: ``sigma0 |v| /
    g(v)``); fixed-step RK4 goes unstable once ``h`` times the fastest passes
    :data:`RK4_STABILITY_LIMIT`. At every saved state this takes the larger of

    - the law's :meth:`~jaxfriction.AbstractDynamicLaw.max_state_rate` at each contact's slip
      velocity and state (by default ``|d z_i'/d z_i|`` by ``jax.jvp``; a bound for laws whose
      fastest rate the state does not show: Maxwell-slip's attraction ``C / (alpha_i g)``,
      the Iwan models' switch rate ``sum k_i |v| / sum phi_i``), and
    - the slip-rate stiffness ``-d v'/d v`` (by one ``jax.jvp`` of the vector field along
      the velocities, all-ones tangents): the law's ``-df/dv`` times the mobility, plus
      viscous damping (rate-and-state: ``N a / (m |v|)`` in slip, far larger near rest;
      LuGre: ``(sigma1 + sigma2) / m``).

    The run is flagged once ``h`` times the law's rate passes :data:`RK4_STABILITY_LIMIT`
    or ``h`` times the slip-rate stiffness passes :data:`SLIP_RATE_STEP_LIMIT` (1.5), so the
    value returned is the larger of the law's rate and the slip-rate stiffness times
    ``RK4_STABILITY_LIMIT / SLIP_RATE_STEP_LIMIT``, for the common test ``h rate <=
    RK4_STABILITY_LIMIT`` of
    :func:`~jaxfriction._integrate.solvers.unstable_step_status`. The rule sees the saved
    states only (a run that saves its end points alone, e.g. a sweep's transient, is judged
    at those).

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
    n_dof = system.n_dof
    start = 2 * n_dof
    stop = start + system.n_internal
    system, ts, ys = without_tangents((system, ts, ys))
    law, n_state = system.law, system.law.n_state

    def one(t, y) -> Array:
        v = jnp.reshape(system.slip_velocity(t, y), (-1,))
        z = jnp.reshape(y[start:stop], (-1, n_state))
        normal = jnp.broadcast_to(jnp.reshape(jnp.asarray(system.normal, y.dtype), (-1,)), v.shape)
        law_rate = jnp.max(law.max_state_rate(v, z, normal))

        def accelerations(u):
            return system.vector_field(t, y.at[n_dof:start].set(u))[n_dof:start]

        u = y[n_dof:start]
        slope = jax.jvp(accelerations, (u,), (jnp.ones_like(u),))[1]
        return jnp.maximum(law_rate, jnp.max(-slope) * (RK4_STABILITY_LIMIT / SLIP_RATE_STEP_LIMIT))

    return jnp.max(jax.vmap(one)(ts, ys))
