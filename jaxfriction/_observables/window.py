"""Observables of a measured window: scalars of one trajectory, the defaults of a sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
from jax import Array

from .._laws.base import safe_divide
from .._laws.vector import safe_norm
from .stick import stick_fraction

if TYPE_CHECKING:
    from .._integrate.trajectory import Trajectory


def window_dissipation(traj: Trajectory) -> Array:
    """Friction work over the trajectory, ``E_friction(t_end) - E_friction(t_start)`` (J).

    Over the last forcing period of a periodically forced system this is Quinn's
    dissipation per cycle D (Quinn 2004 Sec. 3.1.2). Scalar.
    """
    return traj.friction_dissipation[-1] - traj.friction_dissipation[0]


def peak_slip(traj: Trajectory) -> Array:
    """Largest slip speed over the saved points and contacts: ``|v_slip|`` for scalar
    contacts, the norm of the slip vector for a vector law's contact (the 2-D block). Scalar,
    units of velocity."""
    slip = traj.slip_velocity
    law = getattr(traj.system, "law", None)
    return jnp.max(safe_norm(slip) if law is not None and law.vector else jnp.abs(slip))


def window_energy_residual(traj: Trajectory) -> Array:
    """Energy balance over the trajectory from its end points, relative to the energy flows.

    ``|Delta W_input - Delta E_mech - Delta E_friction - Delta E_damping| / max(|Delta W_input|,
    Delta E_friction + Delta E_damping, |Delta E_mech|, E_mech(start))``, the increments taken
    between the first and the last saved point. The scheme's energy error accumulated over the
    window, read from two states only (a sweep's window need not keep the other columns of
    every step); :func:`~jaxfriction.relative_energy_residual` takes the largest residual
    over every saved point instead. Scalar, dimensionless.
    """
    ends = traj.ys[jnp.array([0, -1])]
    system = traj.system
    e = jax.vmap(system.mechanical_energy)(ends)
    work, friction, damping = (f(ends) for f in (system.input_work, system.friction_dissipation,
                                                 system.damping_dissipation))
    d = lambda x: x[1] - x[0]  # noqa: E731
    residual = d(work) - d(e) - d(friction) - d(damping)
    scale = jnp.maximum(jnp.maximum(jnp.abs(d(work)), d(friction) + d(damping)),
                        jnp.maximum(jnp.abs(d(e)), jnp.abs(e[0])))
    return safe_divide(jnp.abs(residual), scale)


def final_position(traj: Trajectory) -> Array:
    """Positions at the end: a scalar for one degree of freedom, ``(n_dof,)`` otherwise."""
    return traj.position[-1]


#: The observables a sweep measures over its window by default (name -> function of the
#: window's :class:`~jaxfriction.Trajectory`): friction work ``dissipation``,
#: ``stick_fraction`` (all contacts stuck, ``|slip| <= 1e-6``), ``peak_slip``,
#: ``final_position`` and the relative ``energy_residual`` of the window
#: (:func:`window_energy_residual`).
WINDOW_OBSERVABLES = {
    "dissipation": window_dissipation,
    "stick_fraction": stick_fraction,
    "peak_slip": peak_slip,
    "final_position": final_position,
    "energy_residual": window_energy_residual,
}
