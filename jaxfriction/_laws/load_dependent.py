"""Load-dependent friction: a dry level that grows with the force the contact transmits.

In gears, ball screws and harmonic drives the Coulomb friction grows with the transmitted
load (the "efficiency" of the transmission: the tooth or ball contact forces, hence their
friction, are proportional to the load they carry). The robot-identification literature
writes the dry friction of a joint as ``F_c0 + K |tau_load|``, a constant part plus one
proportional to the load (Hamon, Gautier & Garrec 2011, "New dry friction model with load-
and velocity-dependence and dynamic identification of multi-DOF robots", IEEE ICRA; the
load dependence of Coulomb friction is Amontons' proportionality to the normal force,
Olsson, Astrom, Canudas de Wit, Gafvert & Lischinsky 1998, Eur. J. Control 4:176;
Armstrong-Helouvry 1991, "Control of Machines with Friction", Kluwer).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative
from .base import AbstractFrictionLaw


def smooth_abs(x: ArrayLike, width: ArrayLike) -> Array:
    """``sqrt(x^2 + width^2) - width``: ``|x|`` rounded over ``|x| < width`` (same units as ``x``).

    Smooth for ``width > 0``; ``|x|`` exactly for ``width = 0``, with derivative 0 (not NaN)
    at ``x = 0``. Always ``0 <= |x| - smooth_abs(x, width) <= width``.

    Args:
        x: array (any shape).
        width: rounding width >= 0, broadcasting against ``x``.

    Returns:
        Array of the broadcast shape.
    """
    r2 = x * x + width * width
    ok = r2 > 0
    return jnp.where(ok, jnp.sqrt(jnp.where(ok, r2, 1.0)), 0.0) - width


class LoadDependent(AbstractFrictionLaw):
    """A scalar law whose normal force grows with the transmitted load: ``N_eff = N + c |f_eq|``.

    ``LoadDependent(law, coefficient)(v, f_eq, N) = law(v, f_eq, N + coefficient |f_eq|)``:
    every dry level of ``law`` (coefficients times the normal force) becomes ``mu (N + c
    |f_eq|)``, a constant part ``mu N`` plus a part proportional to the load ``|f_eq|``, the
    force the contact would have to transmit to hold the body (for a body driven by a motor
    force ``tau`` and nothing else, ``f_eq = -tau``). This is the load-dependent dry friction of
    transmissions, ``F_c0 + K |tau_load|`` with ``F_c0 = mu N`` and ``K = mu c`` (Hamon, Gautier
    & Garrec 2011, ICRA; see the module docstring); velocity-proportional terms of
    ``law`` (``viscous``, in N s/m) do not scale with ``N`` and stay load-independent.

    Choices: the load is the force balance ``f_eq`` (the library's one measure of the force
    across the contact, the same at every slip velocity), so the force stays continuous in
    ``v`` and keeps the wrapped law's structure at zero slip: ``law(0, f_eq) = clip(f_eq,
    -L, L)`` with the load-dependent static limit ``L = mu_s (N + c |f_eq|)``. When ``mu_s c
    >= 1`` every load is held (a self-locking transmission, such as a worm gear that cannot be
    back-driven); otherwise the contact slips once ``|f_eq| > mu_s N / (1 - mu_s c)``. ``|f_eq|``
    is rounded over ``rounding N`` (:func:`smooth_abs`), so the force is smooth in ``f_eq``
    and the law stays homogeneous of degree one in ``(f_eq, N)``; ``rounding = 0`` is the exact
    ``|f_eq|`` (Lipschitz; finite derivatives everywhere). In systems with coupled contacts
    (a dense contact Jacobian) the coupled force balance sees the sliding forces at ``f_eq =
    0``; use one contact per body there.

    Contract: ``law.bound(v, N)`` is infinite (the force grows with the load);
    :meth:`load_bound` and :meth:`zero_slip_force` give the bound and the zero-slip force at a
    given load, which :func:`jaxfriction.testing.check_law` checks.

    Args:
        law: a scalar static law (:class:`~jaxfriction.AbstractFrictionLaw`, e.g.
            :class:`~jaxfriction.Quinn`, :class:`~jaxfriction.AsymmetricFriction`); its
            parameters are ``"law.law.<field>"`` inside a system.
        coefficient: load coefficient ``c >= 0`` (dimensionless: N of normal force per N of
            load).
        rounding: rounding width of ``|f_eq|`` as a fraction of ``N``, >= 0.

    Raises:
        ValueError: ``law`` not a scalar static law, ``coefficient`` or ``rounding`` negative
            or not finite.
    """

    law: AbstractFrictionLaw
    coefficient: float = 0.0
    rounding: float = 1e-3

    def __check_init__(self):
        if not isinstance(self.law, AbstractFrictionLaw):
            raise ValueError(f"law must be a jaxfriction static friction law, got {self.law!r}")
        if self.law.vector:
            raise ValueError(f"law must be a scalar law, got the vector law {type(self.law).__name__}")

    @property
    def keeps_coulomb_structure(self) -> bool:  # type: ignore[override]  # a property for the base's attribute: the wrapped law's
        return self.law.keeps_coulomb_structure

    @property
    def slope_bounded(self) -> bool:  # type: ignore[override]  # a property for the base's attribute; at f_eq = 0 the force is the wrapped law's at N
        return self.law.slope_bounded

    def constraints(self) -> tuple[Constraint, ...]:
        return (*self.law.constraints(), nonnegative("coefficient", self.coefficient),
                nonnegative("rounding", self.rounding))

    def effective_normal(self, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        """``N + c |f_eq|`` (N), ``|f_eq|`` rounded over ``rounding N``."""
        return normal + self.coefficient * smooth_abs(f_eq, self.rounding * normal)

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return self.law(v, f_eq, self.effective_normal(f_eq, normal))

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        """The wrapped law's static limit at zero load (N)."""
        return self.law.static_limit(normal)

    def zero_slip_force(self, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        """The force at zero slip: ``f_eq`` clipped to the static limit at the load ``f_eq`` (N)."""
        n_eff = self.effective_normal(f_eq, normal)
        own = getattr(self.law, "zero_slip_force", None)
        if own is not None:
            return own(f_eq, n_eff)
        limit = self.law.static_limit(n_eff)
        return jnp.clip(f_eq, -limit, limit)

    def mirrored(self) -> LoadDependent:
        """The law with the slip axis reversed (the wrapped law's mirror image, if it has one)."""
        inner = getattr(self.law, "mirrored", None)
        return LoadDependent(self.law if inner is None else inner(), self.coefficient, self.rounding)

    def stick_band(self) -> ArrayLike:
        return self.law.stick_band()

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        """Infinite: the force grows with the load (:meth:`load_bound` bounds it at a given load)."""
        return jnp.full(jnp.broadcast_shapes(jnp.shape(v), jnp.shape(normal)), jnp.inf)

    def load_bound(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        """Largest force magnitude at slip velocity ``v`` and load ``f_eq`` (N): the wrapped law's
        bound at the effective normal force."""
        return self.law.bound(v, self.effective_normal(f_eq, normal))
