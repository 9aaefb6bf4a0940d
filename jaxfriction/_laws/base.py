"""The friction-law interface shared by every scalar law.

Sign convention (Quinn 2004, Sec. 1; the documentation's concepts page, "The call shape and
the sign convention"): a law returns the friction force *on the body*. In slip it opposes
the slip velocity ``v`` (the body's velocity relative to the surface); at ``v = 0`` the laws
that keep Coulomb's structure return the force balance ``f_eq`` clipped to the static limit
``[-mu_s N, mu_s N]`` (Quinn eq. 2), where ``f_eq`` is minus the sum of the non-friction
forces along the contact: the friction force that would keep the contact from accelerating.

Every law is broadcasting-elementwise in ``v``, ``f_eq`` and ``normal`` (any shapes that
broadcast together; scalars for one contact) and returns an array of the broadcast shape.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_constraints


def force_balance(f_eq: ArrayLike, limit: ArrayLike) -> Array:
    """Karnopp's force balance at zero slip: ``f_eq`` clipped to ``[-limit, limit]``.

    Quinn 2004 eq. (2). ``limit`` is the static friction limit ``mu_s N`` (N).
    Gradients are finite everywhere, including ``|f_eq| = limit`` exactly.
    """
    return jnp.clip(f_eq, -limit, limit)


def safe_divide(num: ArrayLike, den: ArrayLike) -> Array:
    """``num / den`` where ``den != 0``, else 0; the gradient never sees a 0 denominator."""
    ok = den != 0
    return jnp.where(ok, num / jnp.where(ok, den, 1.0), 0.0)


def broadcast_like(force: ArrayLike, other: ArrayLike) -> Array:
    """``force`` broadcast against ``other``'s shape (for laws whose value ignores ``f_eq``)."""
    return jnp.broadcast_to(force, jnp.broadcast_shapes(jnp.shape(force), jnp.shape(other)))


class AbstractFrictionLaw(eqx.Module):
    """Base class of all scalar friction laws: ``force = law(v, f_eq, normal)``.

    Subclasses are final equinox modules whose fields are the law's parameters; every field
    is a pytree leaf, so ``jax.grad`` with respect to ``mu``, ``eps`` and the rest needs no
    plumbing.

    Class attribute ``keeps_coulomb_structure`` is True for laws whose value at ``v = 0``
    is ``force_balance(f_eq, mu_s N)`` (Coulomb's structure at zero velocity, Quinn eq. 2);
    ``vector`` is True for laws of tangential slip vectors (the last axis holds the
    components, :mod:`jaxfriction._laws.vector`), False for scalar slip.
    ``slope_bounded`` is True for laws whose force at ``f_eq = 0`` changes by at most its
    slope at zero slip times the slip speed, ``|law(v, 0, N) - law(0, 0, N)| <= |df/dv(0)|
    |v|`` for every ``v`` (Quinn's clip: ``mu N min(|v|/eps, 1)``): the fixed-step rule that
    watches for a law acting as a switch at zero slip
    (:func:`~jaxfriction._integrate.stability.secant_rate`, which needs a secant twice that
    slope) can then never fire, and is skipped along the run. Leave it False (the default)
    unless the bound holds for every parameter value; :func:`jaxfriction.testing.check_law`
    checks it.

    Writing your own law: subclass, declare the parameters as fields (each a pytree leaf,
    so it can be swept, fitted and differentiated by its path ``"law.<field>"``), implement
    ``__call__(v, f_eq, normal)`` with ``jnp.where`` (double-``where`` around divisions and
    square roots, so gradients stay finite at ``v = 0``) and ``static_limit(normal)``, and
    return the valid range of every parameter from ``constraints()`` (e.g.
    ``(nonnegative("mu", self.mu), positive("eps", self.eps))``): it is checked when the law
    is built and flags invalid lanes inside sweeps. Regularized laws with a stick band
    return its width from ``stick_band()``. :func:`jaxfriction.testing.check_law` tests the
    contract (bound, odd symmetry, force balance at zero slip, finite gradients).
    """

    keeps_coulomb_structure: ClassVar[bool] = True
    vector: ClassVar[bool] = False
    slope_bounded: ClassVar[bool] = False

    def __check_init__(self):
        check_constraints(self)

    def constraints(self) -> tuple[Constraint, ...]:
        """The parameters' valid ranges, a sequence of :class:`~jaxfriction._checks.Constraint`."""
        return ()

    @abc.abstractmethod
    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        """Friction force on the body (N).

        Args:
            v: slip velocity of the body relative to the surface (m/s or nondimensional).
            f_eq: force balance, the friction force that would stop the contact from
                accelerating (N), same convention as the return value.
            normal: normal force N >= 0 (N).

        Returns:
            Array of the broadcast shape of the inputs.
        """

    @abc.abstractmethod
    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        """Static limit ``mu_s * normal`` (N): the largest force the contact holds in stick."""

    def stick_band(self) -> ArrayLike:
        """Slip speed below which a contact counts as (near-)sticking for coupled ``f_eq``.

        Quinn 2004 Sec. 3.3 partitions contacts into near-sticking (``|z'| <= eps``) and
        slipping; the classical laws stick only at exactly zero (band 0). Laws that ignore
        ``f_eq`` return 0.
        """
        return 0.0

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        """Largest force magnitude the law can return at slip velocity ``v`` (N)."""
        return broadcast_like(self.static_limit(normal), v)
