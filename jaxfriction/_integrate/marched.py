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
(``-f v`` less the springs' ``(d stored / dz) v``, the law's
:meth:`~jaxfriction.AbstractDynamicLaw.viscous_force` times ``-v``: Maxwell-slip's viscous
``sigma2 v^2``, nothing for Jenkins elements). So a
sticking contact dissipates nothing, a slipping one never a negative amount, and the energy
balance's residual measures the booking's second-order error (against the scipy oscillator of
``tests/test_maxwell_slip.py`` at dt 1e-3: dissipation 3.3e-6 J off of 1.238 J, relative
residual 1.3e-6; booked as the friction's work less the stored energy's change, the residual
was 1.2e-10 while the dissipation was 5.1e-6 J off, and a sticking lane dissipated +-1e-17 J).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import equinox as eqx
import jax.numpy as jnp
from jax import Array

from .._laws.dynamic import AbstractDynamicLaw
from .stages import Stages, staged_rk4_step

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
    return staged_rk4_step(MarchedStages(system, args), t, y, h)


class MarchedStages(Stages):
    """:class:`Stages` of a system whose law's states RK4 marches (:func:`marches`): a
    stage's ``K`` is its rate less the law's states (held: their rate is 0), its slip
    velocities and its power, ``[k (without the states), s, p]``; a stage's state holds the
    law's states updated from the step's start along the stage's slip (module docstring);
    the end books the dissipation."""

    def _bounds(self) -> tuple[int, int]:
        """The law's states' rows ``lo:hi`` of the state."""
        lo = 2 * self.system.n_dof
        return lo, lo + self.system.n_internal

    def _parts(self, y):
        law = self.system.law  # marches(system): a dynamic law
        lo, hi = self._bounds()
        z0 = jnp.reshape(y[lo:hi], (-1, law.n_state))
        return law, lo, hi, z0, contact_normals(self.system, z0.shape[0], y.dtype)

    def rate(self, t, y_stage: Array) -> Array:
        """``[k, s, p]`` ``(state_size - n_internal + contacts + 1,)``: the stages' vector
        field but the law's states (held), the slip velocities, and the friction's power on
        the slip less what the springs take while they follow it (the viscous part)."""
        law, lo, hi, z, normal = self._parts(y_stage)
        stages = eqx.tree_at(lambda s: s.law, self.system, _StatesHeld(law))  # the stages' field: no state rate
        k = stages.vector_field(t, y_stage, self.args)
        s = jnp.reshape(self.system.slip_velocity(t, y_stage), (-1,))
        p = -jnp.sum(law.viscous_force(s, z, normal) * s)
        return jnp.concatenate([k[:lo], k[hi:], s, p[None]])

    def _update(self, y, slip, tau) -> Array:
        law, lo, hi, z0, normal = self._parts(y)
        return jnp.reshape(law.interval_update(z0, slip, tau, normal), (-1,))

    def _advanced(self, y, a, k, states) -> Array:
        """``y + a k`` but the law's states, ``states`` instead (``k``'s first ``len(y) - (hi -
        lo)`` rows are the rate less the states)."""
        lo, hi = self._bounds()
        n = y.shape[0] - (hi - lo)
        return jnp.concatenate([y[:lo] + a * k[:lo], states, y[hi:] + a * k[lo:n]])

    def _slip(self, y, k) -> Array:
        """The slip velocities' rows of a stage's ``k``."""
        lo, hi = self._bounds()
        return k[y.shape[0] - (hi - lo):-1]

    def state(self, y: Array, a, k: Array) -> Array:
        """``y + a k`` with the law's states updated from ``y``'s along the slip ``a s``."""
        return self._advanced(y, a, k, self._update(y, a * self._slip(y, k), a))

    def finish(self, y: Array, h, weighted: Array) -> Array:
        """``y + (h / 6) A`` with the states updated along RK4's slip and the dissipation
        booked: the springs' slip past their elongation at the mean of the step's end
        forces (0 while they stick), and RK4's quadrature of the rest of the power."""
        law, _, _, z0, normal = self._parts(y)
        slip = (h / 6.0) * self._slip(y, weighted)
        z1 = self._update(y, slip, h)
        y1 = self._advanced(y, h / 6.0, weighted, z1)
        z1 = jnp.reshape(z1, z0.shape)
        forces = law.spring_forces(z0, normal) + law.spring_forces(z1, normal)
        plastic = jnp.sum(0.5 * forces * (z0 + slip[:, None] - z1))
        dissipated = y[-3] + (h / 6.0) * weighted[-1] + plastic
        return jnp.concatenate([y1[:-3], dissipated[None], y1[-2:]])


def rk4_stages(system, args=None) -> Stages:
    """The :class:`Stages` of fixed-step RK4 on ``system``: :class:`MarchedStages` where
    :func:`marches` is true."""
    return MarchedStages(system, args) if marches(system) else Stages(system, args)
