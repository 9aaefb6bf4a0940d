"""Fixed-step RK4 with a law's internal states marched along each stage's slip (the exact
switch of Maxwell-slip elements under fixed steps, issue 38).

A law whose state rate switches exactly between stick and slip (:class:`~jaxfriction.MaxwellSlip`:
``z' = v`` below the slip limit, an attraction toward it on the limit) has a rate that jumps
where an element reaches its limit. Classical RK4 takes its four stages across that jump and
makes a first-order error per switch (the element overshoots or undershoots its limit by
``O(k |v| h)``), which no step rule sees at the saved states: in lanes that dissipate little
the error was 77 % of the dissipation at status 0. A law that declares
:attr:`~jaxfriction.AbstractDynamicLaw.marched_in_rk4` has a closed-form
:meth:`~jaxfriction.AbstractDynamicLaw.interval_update` (the exact solution of its state rate
over an interval of constant slip speed, the switch included), and RK4 uses it instead of
the state rate: the positions and velocities (and the drives' and the damping's energy
integrals) take RK4's stages as usual, and at every stage the law's states are the update
from the step's start along the slip the stage has made (``h/2`` times the previous stage's
slip velocity, or ``h`` times the third's), over the stage's time; the step ends with the
update along RK4's slip ``h/6 (s_1 + 2 s_2 + 2 s_3 + s_4)``. Harmonic balance's period map
(``marched_period_map``) takes these steps too.

The friction dissipation's increment has two parts (the integrand ``-f v - d/dt stored`` of
the other laws needs a state rate, which the march does not use): the springs' slip past the
elongation the slip would give them, ``z_n + s - z_{n+1}`` (0 while an element sticks, since
the states of a marched law follow the slip then), times the mean of the step's end spring
forces ``d stored / dz``; and RK4's quadrature of the rest of the friction's power on the slip
(``-f v`` less the springs' ``(d stored / dz) v``: Maxwell-slip's viscous ``sigma2 v^2``). So a
sticking contact dissipates nothing, a slipping one never a negative amount, and the energy
balance's residual measures the booking's second-order error (against the scipy oscillator of
``tests/test_maxwell_slip.py`` at dt 1e-3: dissipation 3.3e-6 J off of 1.238 J, relative
residual 1.3e-6; booked as the friction's work less the stored energy's change, the residual
was 1.2e-10 while the dissipation was 5.1e-6 J off, and a sticking lane dissipated +-1e-17 J).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array

from .._laws.dynamic import AbstractDynamicLaw

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem


def has_internal_states(system) -> bool:
    """True when ``system``'s law is dynamic and the system carries its internal states (the
    systems :func:`~jaxfriction._integrate.stability.internal_state_rate` gives a rate for)."""
    return (isinstance(getattr(system, "law", None), AbstractDynamicLaw) and bool(system.n_internal)
            and getattr(system, "internal_is_law_state", True))


def contact_normals(system, count: int, dtype) -> Array:
    """The normal force of each of ``system``'s ``count`` contacts, ``(count,)``, from its
    ``normal`` (one value for every contact, or one per contact)."""
    return jnp.broadcast_to(jnp.reshape(jnp.asarray(system.normal, dtype), (-1,)), (count,))


class _StatesHeld(AbstractDynamicLaw):
    """A marched law as the stages' vector field sees it: its force, a state rate of zeros
    and no stored energy. The march sets the states and books the dissipation itself, so the
    rate and the power booked through it (``-f v - d/dt stored``) would be computed at every
    stage and dropped; a program written as loops over a lane's arrays cannot drop parts of a
    vector, and computed them (the stored energy's rate along the zero state rate: three
    products and a sum per slider of an Iwan joint, per stage). The stages' rate of
    ``E_friction`` is then ``-f v``, replaced by the march's booking like the rest of it."""

    law: AbstractDynamicLaw

    @property
    def n_state(self) -> int:
        return self.law.n_state

    def state_rate(self, v, z, normal) -> Array:
        return jnp.zeros(jnp.broadcast_shapes(jnp.shape(v) + (1,), jnp.shape(z)), jnp.result_type(v, z))

    def force(self, v, z, normal) -> Array:
        return self.law.force(v, z, normal)

    def stored_energy(self, z, normal) -> Array:
        return jnp.zeros(jnp.broadcast_shapes(jnp.shape(z)[:-1], jnp.shape(normal)), jnp.result_type(z))


def marches(system) -> bool:
    """Whether fixed-step RK4 marches ``system``'s internal states (:func:`marched_rk4_step`):
    a system that carries the internal states of a dynamic law declaring
    :attr:`~jaxfriction.AbstractDynamicLaw.marched_in_rk4`."""
    return has_internal_states(system) and system.law.marched_in_rk4


def marched_rk4_step(system: AbstractFrictionSystem, t, y: Array, h, args=None) -> Array:
    """One RK4 step of ``system`` from ``(t, y)`` with the law's states marched (module docstring).

    Args:
        system: a system for which :func:`marches` is true.
        t: time; h: step (time units).
        y: state ``(state_size,)`` in the layout of :mod:`jaxfriction._systems.base`.
        args: passed to ``system.vector_field``.

    Returns:
        The state at ``t + h``, ``(state_size,)``. Nothing raises.
    """
    law = system.law  # type: ignore[attr-defined]  # marches(system): a dynamic law
    stages = eqx.tree_at(lambda s: s.law, system, _StatesHeld(law))  # the stages' field: no state rate
    lo = 2 * system.n_dof
    hi = lo + system.n_internal
    z0 = jnp.reshape(y[lo:hi], (-1, law.n_state))
    normal = contact_normals(system, z0.shape[0], y.dtype)

    def update(slip, tau) -> Array:
        return jnp.reshape(law.interval_update(z0, slip, tau, normal), (-1,))

    def with_states(y_stage, z) -> Array:
        return jnp.concatenate([y_stage[:lo], z, y_stage[hi:]])

    def spring_forces(z) -> Array:  # d stored / d z, (contacts, n_state): 0 for states that store nothing
        return jax.grad(lambda z: jnp.sum(law.stored_energy(z, normal)))(z)

    def stage(t, y_stage) -> tuple[Array, Array, Array]:
        k = stages.vector_field(t, y_stage, args)
        s = jnp.reshape(system.slip_velocity(t, y_stage), (-1,))
        z = jnp.reshape(y_stage[lo:hi], (-1, law.n_state))
        # the friction's power on the slip less what the springs take while they follow it (viscous part)
        return k, s, -jnp.sum(law.force(s, z, normal) * s) - jnp.sum(jnp.sum(spring_forces(z), axis=-1) * s)

    k1, s1, p1 = stage(t, y)
    k2, s2, p2 = stage(t + 0.5 * h, with_states(y + 0.5 * h * k1, update(0.5 * h * s1, 0.5 * h)))
    k3, s3, p3 = stage(t + 0.5 * h, with_states(y + 0.5 * h * k2, update(0.5 * h * s2, 0.5 * h)))
    k4, s4, p4 = stage(t + h, with_states(y + h * k3, update(h * s3, h)))
    y1 = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    slip = (h / 6.0) * (s1 + 2.0 * s2 + 2.0 * s3 + s4)
    z1 = update(slip, h)
    y1 = with_states(y1, z1)
    z1 = jnp.reshape(z1, z0.shape)
    # the springs' slip past their elongation, at the mean of the step's end forces: 0 while they stick
    plastic = jnp.sum(0.5 * (spring_forces(z0) + spring_forces(z1)) * (z0 + slip[:, None] - z1))
    dissipated = y[-3] + (h / 6.0) * (p1 + 2.0 * p2 + 2.0 * p3 + p4) + plastic
    return jnp.concatenate([y1[:-3], dissipated[None], y1[-2:]])
