"""The static and kinetic limits an exact Coulomb solver needs from a system's law."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jax.typing import ArrayLike

from .._laws import Coulomb, StaticKineticCoulomb, VectorCoulomb

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem


def coulomb_coefficients(system: AbstractFrictionSystem) -> tuple[ArrayLike, ArrayLike]:
    """``(mu_s, mu_k)`` of a system whose law is Coulomb, StaticKineticCoulomb or VectorCoulomb.

    The exact solvers integrate set-valued Coulomb friction themselves, so they accept only
    those two laws (the regularized laws have no exact counterpart to solve).

    Raises:
        ValueError: naming ``law`` for any other law.
    """
    law = system.law  # type: ignore[attr-defined]  # the exact solvers take systems with a law
    if isinstance(law, (Coulomb, VectorCoulomb)):
        return law.mu, law.mu
    if isinstance(law, StaticKineticCoulomb):
        return law.mu_s, law.mu_k
    raise ValueError(
        f"law must be Coulomb, StaticKineticCoulomb or VectorCoulomb for an exact Coulomb solver, "
        f"got {type(law).__name__}"
    )
