"""Quinn's regularization of Coulomb friction (Quinn 2004 eq. 4 and Appendix A)."""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import AbstractFrictionLaw


@jax.custom_jvp
def unit_clip(x: ArrayLike) -> Array:
    """``clip(x, -1, 1)`` with the derivative ``1`` inside ``(-1, 1)`` and ``0`` outside.

    Args:
        x: array (any shape, dimensionless).

    Returns:
        ``x`` clipped to ``[-1, 1]``.

    The same values as ``jnp.clip``; its derivative costs one compare and one select instead
    of the max/min tie rules (which split ties in half), and made forward-mode sweeps 2-3x
    faster. At ``x = +-1`` exactly the derivative is 0 (the saturated side).
    """
    return jnp.clip(x, -1.0, 1.0)


@unit_clip.defjvp
def _unit_clip_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return unit_clip(x), jnp.where(jnp.abs(x) < 1.0, dx, jnp.zeros_like(dx))


def quinn(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike, eps: ArrayLike) -> Array:
    """Quinn 2004 eq. (4), written as in the Appendix A pseudo-code.

    ``zeta = clip(f_eq / (mu N), -1, 1)`` and ``f = -mu N clip(v / eps - zeta, -1, 1)``:
    linear in ``v`` inside the band ``|v - eps zeta| <= eps`` and Coulomb slip outside.
    At ``v = 0`` it equals ``force_balance(f_eq, mu N)`` exactly (Quinn eq. 2), and it
    converges pointwise to Coulomb friction as ``eps -> 0``. The pseudo-code's ``sgn``
    outside the band is the same as the clip used here. With ``mu N = 0`` it returns 0.

    Args:
        v: slip velocity.
        f_eq: force balance (N).
        normal: normal force N (N).
        mu: friction coefficient, >= 0.
        eps: regularization width > 0 (units of ``v``; Quinn uses ``eps = 2 dt`` for the
            1-dof oscillator and ``eps = 10 omega dt`` for the chain).

    Returns:
        Friction force on the body (N).

    Examples:
        At zero slip the force balance is returned up to the static limit ``mu N``; outside
        the band it is Coulomb's ``-mu N sgn(v)``:

        >>> from jaxfriction import quinn
        >>> float(quinn(0.0, 0.3, 1.0, 0.5, 0.02)), float(quinn(0.0, 0.8, 1.0, 0.5, 0.02))
        (0.3, 0.5)
        >>> float(quinn(0.1, 0.0, 1.0, 0.5, 0.02))
        -0.5
    """
    limit = mu * normal
    huge = jnp.sqrt(jnp.finfo(jnp.result_type(limit, f_eq, float)).max)
    positive = limit > 1.0 / huge  # a subnormal mu N would overflow its reciprocal
    # zeta -> sgn(f_eq) as mu N -> 0+, so d/dmu at mu = 0 is the one-sided derivative: with
    # mu N = 0 the reciprocal is a huge finite number, so clip(f_eq * inv) = sgn(f_eq) for
    # |f_eq| > 1/huge (1e-154 in float64) and f_eq * 0 tangents stay finite. Reciprocals
    # depend on the parameters only, so a scan hoists them out of its loop (a per-stage
    # where/sign and division cost a sweep step dearly: docs/performance.md).
    inv_limit = jnp.where(positive, 1.0 / jnp.where(positive, limit, 1.0), huge)
    zeta = unit_clip(f_eq * inv_limit)
    return -limit * unit_clip(v * (1.0 / eps) - zeta)


class Quinn(AbstractFrictionLaw):
    """Quinn's regularization of Coulomb friction (Quinn 2004 eq. 4).

    For a single contact whose ``f_eq`` is exact, a body in the stick band obeys
    ``m v' = -(mu N / eps) v``: the slip velocity decays exponentially to zero and the body
    holds its position to round-off (Quinn Sec. 2); the rest position differs from exact
    Coulomb's by O(eps^2) (Quinn eq. 6).

    Step size: inside the band the law is a damper of rate ``mu N / (m eps)``, and classical
    RK4 is stable there only for ``h mu N / (m eps) < 2.78``; Quinn's ``eps = 2 dt`` (with
    ``mu N = m = 1``) gives 0.5. Beyond the limit the clip keeps the trajectory bounded (it
    chatters inside the band) but its derivatives grow without bound (measured 1e94 after
    500 steps at 20), so gradients become meaningless before they become NaN.

    Args:
        mu: friction coefficient, >= 0.
        eps: regularization width, > 0 (units of velocity).

    Raises:
        ValueError: ``mu < 0``, ``eps <= 0`` or non-finite values.
    """

    slope_bounded: ClassVar[bool] = True  # |f(v) - f(0)| = mu N min(|v|/eps, 1) <= (mu N/eps) |v|

    mu: float = 1.0
    eps: float = 0.02

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), positive("eps", self.eps))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return quinn(v, f_eq, normal, self.mu, self.eps)

    def stick_band(self) -> ArrayLike:
        return self.eps

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu * normal


#: Default width of the rounded square-root onset of :func:`static_kinetic_quinn` (band widths).
SQRT_ONSET = 0.3


def static_kinetic_quinn(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu_s: ArrayLike, mu_k: ArrayLike,
                         eps: ArrayLike, onset: ArrayLike = SQRT_ONSET) -> Array:
    """Quinn's band at the static level, then a square-root step to the kinetic level.

    With ``zeta = clip(f_eq / (mu_s N), -1, 1)`` (Quinn 2004 eq. 4b with ``mu_s``),
    ``u = v / eps - zeta`` and ``s = max(|u| - 1, 0)`` the distance outside the band in band
    widths::

        f = -mu_s N clip(u, -1, 1) - sgn(u) clip((mu_k - mu_s) N, -r, r),
        r = max(mu_s, mu_k) N (sqrt(s + onset^2) - onset).

    Inside the band (``s = 0``, ``r = 0``) it is Quinn's eq. (4) with ``mu_s``, so ``f(0,
    f_eq)`` is ``f_eq`` clipped to ``mu_s N`` (eq. 2); outside, the magnitude leaves ``mu_s N``
    like ``sqrt(s)`` (rounded over ``s < onset^2``) and is kinetic Coulomb ``-mu_k N sgn(v)``
    from ``s >= (|mu_s - mu_k| / max(mu_s, mu_k) + onset)^2 - onset^2`` on. Continuous in
    ``v``, ``f_eq`` and every parameter; ``mu_s = mu_k`` is :func:`quinn`. With ``mu_s N = 0``
    the band carries no force (``zeta -> sgn f_eq``, as in :func:`quinn`).

    The arguments may have any broadcastable shapes.

    Args:
        v: slip velocity.
        f_eq: force balance (N).
        normal: normal force N (N).
        mu_s: static coefficient, >= 0.
        mu_k: kinetic coefficient, >= 0.
        eps: band width, > 0 (units of ``v``).
        onset: onset of the square-root step, > 0 (band widths).

    Returns:
        Friction force on the body (N), the broadcast shape.
    """
    limit = mu_s * normal
    huge = jnp.sqrt(jnp.finfo(jnp.result_type(limit, f_eq, float)).max)
    positive = limit > 1.0 / huge  # as in quinn: a subnormal mu_s N would overflow
    inv_limit = jnp.where(positive, 1.0 / jnp.where(positive, limit, 1.0), huge)
    u = v * (1.0 / eps) - unit_clip(f_eq * inv_limit)
    outside = jnp.maximum(jnp.abs(u) - 1.0, 0.0)
    reach = jnp.maximum(mu_s, mu_k) * normal * (jnp.sqrt(outside + onset * onset) - onset)
    step = jnp.clip((mu_k - mu_s) * normal, -reach, reach)
    return -limit * unit_clip(u) - jnp.sign(u) * step


class StaticKineticQuinn(AbstractFrictionLaw):
    """Quinn's regularization with a static and a kinetic level (continuous in ``v``).

    Construction (:func:`static_kinetic_quinn`): Quinn 2004 eq. (4) with the static
    coefficient holds inside the band ``|v - eps zeta| <= eps``, ``zeta = clip(f_eq / (mu_s
    N))``: at ``v = 0`` the force is ``f_eq`` clipped to ``mu_s N`` (eq. 2), so the contact
    sticks up to the static limit, and in stick the slip velocity relaxes at rate ``mu_s N /
    (m eps)``. Once the band is left the magnitude falls from ``mu_s N`` to the kinetic
    ``mu_k N`` like ``max(mu_s, mu_k) N sqrt(s)`` in the distance ``s`` outside the band (band
    widths, rounded over ``s < onset^2``); beyond about ``3 eps`` it is kinetic Coulomb
    ``-mu_k N sgn(v)``: paper 004's static/kinetic Coulomb
    (:class:`~jaxfriction.StaticKineticCoulomb`) in the limit ``eps -> 0``.

    Why a square root. At breakaway ``v = 0`` is invariant until ``f_eq`` passes ``mu_s N``
    (eq. 2); then only the excess ``f_eq - mu_s N``, growing with the load, pushes the slip
    out. A law whose slope in ``v`` is at most ``C mu N / eps`` amplifies it at rate ``C mu N
    / (m eps)``, so the drop to ``mu_k`` comes after ``~ (eps / C) log(1 / eps)`` and the
    error is ``O(eps log(1 / eps))``; the former form, Quinn's law with a Stribeck coefficient
    ``mu_k + (mu_s - mu_k) exp(-(v/eps)^2)``, starts the weakening with zero slope and lags
    like ``eps^(2/3)``. The square root leaves in time ``O(eps)``; ``onset`` rounds it (slope
    at most ``max(mu_s, mu_k) N / (2 onset eps)``), which adds ``O(onset eps log(1 / eps))``.

    The trade-off ``onset`` sets, measured (belt of paper 004, ``x'' + x = f(x' - v0)``,
    ``mu_s = 1``, ``mu_k = 0.6``, ``v0 = 0.2``, RK4 with ``dt = eps/2``, period of the last 6
    cycles from rest against the closed form :func:`~jaxfriction.belt_limit_cycle`; fits: the
    ``belt`` template record of ``tests/test_fit.py``, ``dt = eps = 0.02``; ``stderr(mu_s)``
    is the range of Gauss-Newton standard errors over 30 points ``2e-5`` apart around the
    optimum, noise seeds 0-2; Levenberg-Marquardt from 25 % off, noise seeds 0-9):

    ========  =========================  ======  ====================  ===============
    onset     period error, eps = 0.04,  order   stderr(mu_s) range    LM converged,
              0.02, 0.01, 0.005, 0.0025  (lsq)                         steps
    ========  =========================  ======  ====================  ===============
    0.02      0.63 0.32 0.17 0.09 0.05 % 0.95    2.4e-4 - 1.4e-3       6/10, 13-30
    0.05      0.76 0.42 0.23 0.12 0.07 % 0.88    2.2e-4 - 5.7e-4       9/10, 7-25
    0.1       1.01 0.57 0.32 0.17 0.10 % 0.85    9.8e-4 - 1.5e-3       10/10, 10-18
    0.3 *     1.92 1.13 0.65 0.37 0.20 % 0.81    6.8e-4 - 8.2e-4       10/10, 7-17
    0.5       2.65 1.59 0.93 0.54 0.30 % 0.79    6.2e-4 - 7.3e-4       10/10, 6-8
    1.0       4.12 2.55 1.54 0.90 0.52 % 0.75    5.7e-4 - 6.6e-4       10/10, 6-7
    former    7.9  5.3  3.6  2.3  1.5 %  0.60    5.1e-4 - 5.6e-4       10/10, 6-7
    ========  =========================  ======  ====================  ===============

    The orders are those of ``eps log(1 / eps)`` (local orders ``1 - 1 / ln(1 / eps)``, 0.72
    to 0.84 over this range, rising to 1 as ``eps -> 0``): no Lipschitz law in Quinn's
    structure does better, and a non-Lipschitz onset (``onset -> 0``) gets strict first order
    only at the price of a misfit whose slope in ``mu_s`` undulates once the breakaway takes
    less than a step (``dt`` above ``~ onset eps m / (mu N)``). The default (*) is the
    smallest ``onset`` whose Gauss-Newton standard errors are smooth (+-10 %) at ``dt = eps``
    and for which every Levenberg-Marquardt fit converged; it is 4.7 times closer to exact
    Coulomb than the former form at ``eps = 0.02`` (estimates scatter as predicted: 0.89
    and 1.18 standard errors over the 10 seeds). For simulation alone (no parameter fit),
    ``onset = 0.05`` or ``0.02`` is 2.5-4.5 times closer still. Fit at ``dt <= eps / 2`` (the
    templates' ``eps = 2 dt``): there, with the default, L-BFGS converged in 18-26 steps and
    Gauss-Newton in 7-8 on 5 of 6 noise seeds, where at ``dt = eps`` L-BFGS stalled on 2 of 6.
    Sources: Quinn 2004 eqs. (2) and (4); paper 004 (static/kinetic coefficients, the belt).

    Args:
        mu_s: static coefficient >= 0.
        mu_k: kinetic coefficient >= 0 (``mu_k > mu_s`` is allowed and means velocity
            strengthening: the magnitude rises to ``mu_k N`` outside the band).
        eps: band width > 0 (velocity units).
        onset: width of the square root's rounding > 0 (band widths, dimensionless; a
            parameter like the others: ``"law.onset"``).

    Raises:
        ValueError: negative or non-finite values, ``eps <= 0`` or ``onset <= 0``.
    """

    mu_s: float = 0.6
    mu_k: float = 0.4
    eps: float = 0.02
    onset: float = SQRT_ONSET

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu_s", self.mu_s), nonnegative("mu_k", self.mu_k), positive("eps", self.eps),
                positive("onset", self.onset))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return static_kinetic_quinn(v, f_eq, normal, self.mu_s, self.mu_k, self.eps, self.onset)

    def stick_band(self) -> ArrayLike:
        return self.eps

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu_s * normal

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return jnp.maximum(self.mu_s, self.mu_k) * normal + 0.0 * v
