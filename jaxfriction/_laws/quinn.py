"""Quinn's regularization of Coulomb friction (Quinn 2004 eq. 4 and Appendix A)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._checks import nonnegative, positive
from .base import AbstractFrictionLaw
from .stribeck import stribeck_coefficient


@jax.custom_jvp
def unit_clip(x):
    """``clip(x, -1, 1)`` with the derivative ``1`` inside ``(-1, 1)`` and ``0`` outside.

    Args: ``x`` array (any shape, dimensionless). Returns: ``x`` clipped to ``[-1, 1]``.

    The same values as ``jnp.clip``; its derivative costs one compare and one select instead
    of the max/min tie rules (which split ties in half), and made forward-mode sweeps 2-3x
    faster. At ``x = +-1`` exactly the derivative is 0 (the saturated side).
    """
    return jnp.clip(x, -1.0, 1.0)


@unit_clip.defjvp
def _unit_clip_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return unit_clip(x), jnp.where(jnp.abs(x) < 1.0, dx, jnp.zeros_like(dx))


def quinn(v, f_eq, normal, mu, eps):
    """Quinn 2004 eq. (4), written as in the Appendix A pseudo-code.

    ``zeta = clip(f_eq / (mu N), -1, 1)`` and ``f = -mu N clip(v / eps - zeta, -1, 1)``:
    linear in ``v`` inside the band ``|v - eps zeta| <= eps`` and Coulomb slip outside.
    At ``v = 0`` it equals ``force_balance(f_eq, mu N)`` exactly (Quinn eq. 2), and it
    converges pointwise to Coulomb friction as ``eps -> 0``. The pseudo-code's ``sgn``
    outside the band is the same as the clip used here. With ``mu N = 0`` it returns 0.

    Args: ``v`` slip velocity, ``f_eq`` force balance (N), ``normal`` (N), ``mu`` >= 0,
        ``eps`` > 0 regularization width (units of ``v``; Quinn uses ``eps = 2 dt`` for
        the 1-dof oscillator and ``eps = 10 omega dt`` for the chain).
    Returns: friction force on the body (N).
    """
    limit = mu * normal
    huge = jnp.sqrt(jnp.finfo(jnp.result_type(limit, f_eq, float)).max)
    positive = limit > 1.0 / huge  # a subnormal mu N would overflow its reciprocal
    # zeta -> sgn(f_eq) as mu N -> 0+, so d/dmu at mu = 0 is the one-sided derivative: with
    # mu N = 0 the reciprocal is a huge finite number, so clip(f_eq * inv) = sgn(f_eq) for
    # |f_eq| > 1/huge (1e-154 in float64) and f_eq * 0 tangents stay finite. Reciprocals
    # depend on the parameters only, so a scan hoists them out of its loop; a per-stage
    # where/sign and divisions made a sweep step 2x slower (scripts/bench.py).
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

    mu: float = 1.0
    eps: float = 0.02

    def constraints(self):
        return (nonnegative("mu", self.mu), positive("eps", self.eps))

    def __call__(self, v, f_eq, normal):
        return quinn(v, f_eq, normal, self.mu, self.eps)

    def stick_band(self):
        return self.eps

    def static_limit(self, normal):
        return self.mu * normal


class StaticKineticQuinn(AbstractFrictionLaw):
    """Quinn's regularization with a static and a kinetic level (continuous in ``v``).

    ``f = quinn(v, f_eq, N, mu(v), eps)`` with ``mu(v) = mu_k + (mu_s - mu_k) exp(-(v/eps)^2)``
    (the Stribeck curve of :func:`~jaxfriction.stribeck_coefficient` with Stribeck velocity
    ``eps``): at ``v = 0`` it is the force balance clipped to ``mu_s N`` (Quinn 2004 eq. 2,
    so the contact sticks up to the static limit), inside the band the slip velocity relaxes
    at rate ``mu N / (m eps)`` (Quinn 2004 eq. 4), and beyond a few ``eps`` it is kinetic
    Coulomb ``-mu_k N sgn(v)``. It converges pointwise to static/kinetic Coulomb
    (:class:`~jaxfriction.StaticKineticCoulomb`) as ``eps -> 0``. Continuous in ``v`` and in
    both coefficients, so trajectories are differentiable in ``mu_s`` and ``mu_k`` through
    stick-slip; Karnopp's switch is not (automatic differentiation misses the switch-time
    term, see :func:`jaxfriction.fit`).

    Args:
        mu_s: static coefficient >= 0. mu_k: kinetic coefficient >= 0 (``mu_k > mu_s`` is
            allowed and means velocity strengthening). eps: band width > 0 (velocity units).

    Raises: ValueError for negative or non-finite values, ``eps <= 0``.
    """

    mu_s: float = 0.6
    mu_k: float = 0.4
    eps: float = 0.02

    def constraints(self):
        return (nonnegative("mu_s", self.mu_s), nonnegative("mu_k", self.mu_k), positive("eps", self.eps))

    def __call__(self, v, f_eq, normal):
        mu = stribeck_coefficient(v, self.mu_s, self.mu_k, self.eps, 2.0)
        return quinn(v, f_eq, normal, mu, self.eps)

    def stick_band(self):
        return self.eps

    def static_limit(self, normal):
        return self.mu_s * normal

    def bound(self, v, normal):
        return jnp.maximum(self.mu_s, self.mu_k) * normal + 0.0 * v
