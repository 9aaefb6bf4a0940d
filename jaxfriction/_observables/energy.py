"""Energy balance: input work = change of mechanical energy + dissipated energy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax.numpy as jnp
from jax import Array

from .._laws.base import safe_divide

if TYPE_CHECKING:
    from .._integrate.trajectory import Trajectory


def energy_balance_residual(traj: Trajectory) -> Array:
    """``Delta W_input - Delta E_mech - Delta E_friction - Delta E_damping`` at every saved point.

    Increments are taken from the first saved point, so the balance holds for a trajectory
    that continues an earlier run (a measured window after a transient) as for one that
    starts from zero integrals. Zero for the exact solution; for a numerical run it measures
    the scheme's energy error, because the integrals in the state are integrated by the
    same scheme as the motion.

    Args:
        traj: a :class:`~jaxfriction.Trajectory`.

    Returns:
        Array ``(n,)`` (J).
    """
    e = traj.mechanical_energy

    def grown(x) -> Array:
        return x - x[0]

    return (grown(traj.input_work) - grown(e) - grown(traj.friction_dissipation)
            - grown(traj.damping_dissipation))


def relative_energy_residual(traj: Trajectory) -> Array:
    """Largest energy-balance residual relative to the largest energy flow of the run.

    ``max |residual| / max(max |Delta W_input|, max Delta(E_friction + E_damping),
    max |Delta E_mech|, E_mech(t0))`` (increments from the first saved point): a
    dimensionless scalar, ~1e-12 for a well resolved float64 run (0 for a run in which
    nothing moves).
    """
    e = traj.mechanical_energy
    dissipated = traj.friction_dissipation + traj.damping_dissipation
    scale = jnp.maximum(
        jnp.maximum(jnp.max(jnp.abs(traj.input_work - traj.input_work[0])), jnp.max(dissipated - dissipated[0])),
        jnp.maximum(jnp.max(jnp.abs(e - e[0])), jnp.abs(e[0])),
    )
    return safe_divide(jnp.max(jnp.abs(energy_balance_residual(traj))), scale)
