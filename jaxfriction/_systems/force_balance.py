"""Force balance of coupled contacts (Quinn 2004 Sec. 3.3), as a fixed-size masked solve."""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array


def coupled_force_balance(delassus: Array, free_acceleration: Array, slip_forces: Array,
                          sticking: Array) -> Array:
    """``f_eq`` of every contact when contacts share bodies (Quinn 2004 Sec. 3.3).

    The relative accelerations of the contacts are ``z'' = D f + b`` (``D`` the Delassus
    operator ``W M^-1 W^T``, ``b`` the relative acceleration without friction). For the
    near-sticking set ``S`` the force balance makes ``z''_S = 0`` with the slipping contacts
    ``L`` at their sliding values:

        ``D_SS f_eq,S = -(b_S + D_SL f_L)``          (Quinn: ``R22^-1 (f_ex,stick - R21 mu)``).

    The solve has fixed size: rows and columns outside ``S`` are replaced by the identity,
    so it works under ``jit``, ``vmap`` and ``grad`` whatever the stick pattern. For a
    slipping contact ``f_eq`` is its own balance with every other contact at the force just
    found, ``-(b_i + sum_{j != i} D_ij f_j) / D_ii`` (it only matters to laws whose slip
    branch reads ``f_eq``).

    Args:
        delassus: ``(c, c)`` symmetric positive definite Delassus operator (1/kg).
        free_acceleration: ``(c,)`` relative accelerations without friction ``b`` (m/s^2).
        slip_forces: ``(c,)`` sliding friction forces, used for the slipping contacts (N).
        sticking: ``(c,)`` bool, the near-sticking set ``S``.

    Returns:
        ``(c,)`` force balance ``f_eq`` (N).
    """
    n = delassus.shape[0]
    both = sticking[:, None] & sticking[None, :]
    eye = jnp.eye(n, dtype=delassus.dtype)
    a = jnp.where(both, delassus, eye)
    f_slip = jnp.where(sticking, 0.0, slip_forces)
    rhs = jnp.where(sticking, -(free_acceleration + delassus @ f_slip), 0.0)
    f_stick = jnp.linalg.solve(a, rhs)
    forces = jnp.where(sticking, f_stick, slip_forces)
    diag = jnp.diagonal(delassus)
    own = -(free_acceleration + delassus @ forces - diag * forces) / diag
    return jnp.where(sticking, f_stick, own)
