"""Energy balance: input work = change of mechanical energy + dissipated energy."""

from __future__ import annotations

import jax.numpy as jnp

from .._laws.base import safe_divide


def energy_balance_residual(traj):
    """``W_input - (E_mech - E_mech(t0)) - E_friction - E_damping`` at every saved point.

    Zero for the exact solution; for a numerical run it measures the scheme's energy error,
    because the integrals in the state are integrated by the same scheme as the motion.

    Args: ``traj`` a :class:`~jaxfriction.Trajectory`.
    Returns: array ``(n,)`` (J).
    """
    e = traj.mechanical_energy
    return traj.input_work - (e - e[0]) - traj.friction_dissipation - traj.damping_dissipation


def relative_energy_residual(traj):
    """Largest energy-balance residual relative to the largest energy flow of the run.

    ``max |residual| / max(max |W_input|, max E_friction + E_damping, max |Delta E_mech|,
    E_mech(t0))``: a dimensionless scalar, ~1e-12 for a well resolved float64 run
    (0 for a run in which nothing moves).
    """
    e = traj.mechanical_energy
    scale = jnp.maximum(
        jnp.maximum(jnp.max(jnp.abs(traj.input_work)), jnp.max(traj.friction_dissipation + traj.damping_dissipation)),
        jnp.maximum(jnp.max(jnp.abs(e - e[0])), jnp.abs(e[0])),
    )
    return safe_divide(jnp.max(jnp.abs(energy_balance_residual(traj))), scale)
