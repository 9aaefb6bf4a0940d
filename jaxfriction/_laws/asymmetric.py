"""Direction-dependent (asymmetric) friction in Quinn's regularized structure.

Drives, ball screws and guideways often rub harder one way than the other (gravity on a
vertical axis, preload, seals, the lead of a screw): the EMPS benchmark's reference model
identifies ``Fc+ = 20.14 N``, ``Fv+ = 166.71 N s/m`` for positive and ``Fc- = 20.63 N``,
``Fv- = 240.42 N s/m`` for negative velocities (Janot, Gautier & Brunot 2019). The
direction-dependent Coulomb + viscous model is a standard one of robot and machine-tool
identification (the survey of Armstrong-Helouvry, Dupont & Canudas de Wit 1994, Automatica
30(7):1083; the static models of Olsson et al. 1998, Eur. J. Control 4:176).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import AbstractFrictionLaw
from .quinn import unit_clip
from .stribeck import stribeck_coefficient


def _reciprocal(limit: ArrayLike, like: ArrayLike) -> Array:
    """``1 / limit`` for ``limit > 0``; a huge finite number for ``limit = 0`` (as :func:`quinn`)."""
    huge = jnp.sqrt(jnp.finfo(jnp.result_type(limit, like, float)).max)
    ok = limit > 1.0 / huge
    return jnp.where(ok, 1.0 / jnp.where(ok, limit, 1.0), huge)


def asymmetric_friction(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu_c_pos: ArrayLike, mu_c_neg: ArrayLike,
                        viscous_pos: ArrayLike = 0.0, viscous_neg: ArrayLike = 0.0, mu_s_pos: ArrayLike | None = None,
                        mu_s_neg: ArrayLike | None = None, v_s: ArrayLike = 0.1, delta: ArrayLike = 2.0,
                        eps: ArrayLike = 0.02) -> Array:
    """Direction-dependent Coulomb, viscous and Stribeck friction in Quinn's band (N).

    With the levels ``g+(v) = N (mu_c_pos + (mu_s_pos - mu_c_pos) exp(-(|v| / v_s)^delta))``
    for positive and ``g-(v)`` likewise for negative slip (:func:`stribeck_coefficient`;
    ``g+-(0)`` are the static limits ``L+ = mu_s_pos N``, ``L- = mu_s_neg N``), the force
    balance normalised by the limit of the side it loads, ``zeta = clip(f_eq / L-, 0, 1)`` for
    ``f_eq >= 0`` (a load pushing the body towards negative slip) and ``clip(f_eq / L+, -1, 0)``
    otherwise, and ``u = v / eps - zeta``::

        f = -g+(v) clip(u, 0, 1) - g-(v) clip(u, -1, 0) - F_v+ max(v, 0) - F_v- min(v, 0).

    This is Quinn 2004 eq. (4) with a different level on each side of the band: at ``v = 0``
    it is ``f_eq`` clipped to ``[-L+, L-]`` exactly (Karnopp's force balance, eq. 2, with the
    static limit of the direction the load would slip), inside the band the contact is a
    damper of rate ``L+- / (m eps)`` that holds the body, and outside it (``|v| > eps (1 +
    |zeta|)``) it is the direction-dependent law ``-(g+(v) + F_v+ v)`` for ``v > 0`` and
    ``+(g-(v) + F_v- |v|)`` for ``v < 0``: the standard asymmetric Coulomb + viscous (+
    Stribeck) model in the limit ``eps -> 0``. Continuous in ``v``, ``f_eq`` and every
    parameter; finite derivatives everywhere, ``v = 0`` included. With equal levels on both
    sides and no viscous term it is :func:`quinn`.

    Args:
        v: slip velocity (m/s), any shape broadcasting with the others.
        f_eq: force balance (N).
        normal: normal force N (N); with ``normal = 1`` the coefficients are forces (N).
        mu_c_pos, mu_c_neg: Coulomb (kinetic) coefficients for positive and negative slip,
            ``F_c+- = mu_c_pos/neg N``.
        viscous_pos, viscous_neg: viscous coefficients ``F_v+-`` (N s/m; not scaled by N, as
            :func:`viscous_coulomb`).
        mu_s_pos, mu_s_neg: static coefficients (``F_s+- = mu_s N``), or None for no Stribeck
            effect (the static level is the Coulomb level).
        v_s: Stribeck velocity > 0 (m/s).
        delta: Stribeck exponent > 0.
        eps: band width > 0 (m/s).

    Returns:
        Friction force on the body (N), the broadcast shape.
    """
    mu_s_pos = mu_c_pos if mu_s_pos is None else mu_s_pos
    mu_s_neg = mu_c_neg if mu_s_neg is None else mu_s_neg
    limit_pos, limit_neg = mu_s_pos * normal, mu_s_neg * normal
    zeta = jnp.where(f_eq >= 0, unit_clip(f_eq * _reciprocal(limit_neg, f_eq)),
                     unit_clip(f_eq * _reciprocal(limit_pos, f_eq)))
    u = v * (1.0 / eps) - zeta
    level_pos = normal * stribeck_coefficient(v, mu_s_pos, mu_c_pos, v_s, delta)
    level_neg = normal * stribeck_coefficient(v, mu_s_neg, mu_c_neg, v_s, delta)
    dry = jnp.where(u >= 0, level_pos, level_neg) * unit_clip(u)
    viscous = viscous_pos * jnp.maximum(v, 0.0) + viscous_neg * jnp.minimum(v, 0.0)
    return -dry - viscous


class AsymmetricFriction(AbstractFrictionLaw):
    """Direction-dependent Coulomb + viscous (+ Stribeck) friction, regularized as Quinn's law.

    The force (:func:`asymmetric_friction`) is ``-(F_c+ + F_v+ v)`` in positive slip and
    ``+(F_c- + F_v- |v|)`` in negative slip (``F_c+- = mu_c_pos/neg N``), with an optional
    Stribeck rise to static levels ``F_s+- = mu_s_pos/neg N`` below ``v_s``; at zero slip it
    keeps Coulomb's structure with a static limit per direction: ``law(0, f_eq) = clip(f_eq,
    -F_s+, F_s-)`` (a load pushing towards positive slip is held up to ``F_s+``, towards
    negative slip up to ``F_s-``), and Quinn's band of width ``eps`` joins the two sides
    continuously, so gradient-based fits through RK4 see a smooth force.

    Units: the dry levels are coefficients times the normal force, as everywhere in the
    library; with ``normal = 1`` (the :class:`~jaxfriction.Oscillator` default) they are
    forces in N, so the EMPS reference model is ``AsymmetricFriction(mu_c_pos=20.14,
    mu_c_neg=20.63, viscous_pos=166.71, viscous_neg=240.42)`` (Janot, Gautier & Brunot 2019;
    ``/work/shared/data/emps``), which gives ``-36.811 N`` at ``v = +0.1 m/s`` and ``+44.672 N``
    at ``v = -0.1 m/s``. The viscous coefficients are N s/m, not scaled by ``N`` (as
    :class:`~jaxfriction.ViscousCoulomb`); a load-dependent dry level is
    :class:`~jaxfriction.LoadDependent` around this law. An offset (a constant force
    independent of the direction) is a force drive, not friction: add a
    :class:`~jaxfriction.Constant` to the system's force.

    Step size: inside the band the contact is a damper of rate ``max(F_s+-) / (m eps)``; RK4 is
    stable for ``h`` times that below 2.78 (:class:`~jaxfriction.Quinn`). The defaults are
    symmetric (``Quinn(mu=1, eps=0.02)``).

    Contract: the law is not odd (``law(-v, -f_eq) != -law(v, f_eq)``); its mirror image
    :meth:`mirrored` (the directions swapped) is, ``law.mirrored()(-v, -f_eq, N) = -law(v,
    f_eq, N)``, which :func:`jaxfriction.testing.check_law` checks instead, with the
    direction-dependent force balance :meth:`zero_slip_force`.

    Args:
        mu_c_pos, mu_c_neg: Coulomb coefficients >= 0 for positive / negative slip.
        viscous_pos, viscous_neg: viscous coefficients >= 0 (N s/m).
        mu_s_pos, mu_s_neg: static coefficients >= 0, or None (no Stribeck effect on that side).
        v_s: Stribeck velocity > 0 (m/s; unused without static coefficients).
        delta: Stribeck exponent > 0.
        eps: band width > 0 (m/s).

    Raises:
        ValueError: a negative or non-finite coefficient, ``v_s``, ``delta`` or ``eps`` <= 0.
    """

    mu_c_pos: float = 1.0
    mu_c_neg: float = 1.0
    viscous_pos: float = 0.0
    viscous_neg: float = 0.0
    mu_s_pos: float | None = None
    mu_s_neg: float | None = None
    v_s: float = 0.1
    delta: float = 2.0
    eps: float = 0.02

    def constraints(self) -> tuple[Constraint, ...]:
        out: tuple[Constraint, ...] = (nonnegative("mu_c_pos", self.mu_c_pos), nonnegative("mu_c_neg", self.mu_c_neg),
               nonnegative("viscous_pos", self.viscous_pos), nonnegative("viscous_neg", self.viscous_neg),
               positive("v_s", self.v_s), positive("delta", self.delta), positive("eps", self.eps))
        for name in ("mu_s_pos", "mu_s_neg"):
            if getattr(self, name) is not None:
                out = (*out, nonnegative(name, getattr(self, name)))
        return out

    def _static(self) -> tuple[ArrayLike, ArrayLike]:
        return (self.mu_c_pos if self.mu_s_pos is None else self.mu_s_pos,
                self.mu_c_neg if self.mu_s_neg is None else self.mu_s_neg)

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return asymmetric_friction(v, f_eq, normal, self.mu_c_pos, self.mu_c_neg, self.viscous_pos,
                                   self.viscous_neg, self.mu_s_pos, self.mu_s_neg, self.v_s, self.delta, self.eps)

    def static_limits(self, normal: ArrayLike) -> tuple[Array, Array]:
        """``(F_s+, F_s-)`` (N): the largest load held towards positive and towards negative slip."""
        mu_s_pos, mu_s_neg = self._static()
        return jnp.asarray(mu_s_pos * normal), jnp.asarray(mu_s_neg * normal)

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        """The larger of the two static limits (N)."""
        return jnp.maximum(*self.static_limits(normal))

    def zero_slip_force(self, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        """The force at zero slip: ``f_eq`` clipped to ``[-F_s+, F_s-]`` (N)."""
        limit_pos, limit_neg = self.static_limits(normal)
        return jnp.clip(f_eq, -limit_pos, limit_neg)

    def mirrored(self) -> AsymmetricFriction:
        """The same law seen with the slip axis reversed (positive and negative swapped)."""
        return AsymmetricFriction(self.mu_c_neg, self.mu_c_pos, self.viscous_neg, self.viscous_pos, self.mu_s_neg,
                                  self.mu_s_pos, self.v_s, self.delta, self.eps)

    def stick_band(self) -> ArrayLike:
        return self.eps

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        mu_s_pos, mu_s_neg = self._static()
        dry = jnp.maximum(jnp.maximum(mu_s_pos, self.mu_c_pos), jnp.maximum(mu_s_neg, self.mu_c_neg)) * normal
        return dry + jnp.where(v >= 0, self.viscous_pos, self.viscous_neg) * jnp.abs(v)
