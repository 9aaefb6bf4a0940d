"""Quinn's regularization of Coulomb friction (Quinn 2004 eq. 4 and Appendix A)."""

from __future__ import annotations

import jax.numpy as jnp

from .._checks import check_real
from .base import AbstractFrictionLaw, safe_divide


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
    # zeta -> sgn(f_eq) as mu N -> 0+, so d/dmu at mu = 0 is the one-sided derivative
    zeta = jnp.where(limit > 0, jnp.clip(safe_divide(f_eq, limit), -1.0, 1.0), jnp.sign(f_eq))
    return -limit * jnp.clip(v / eps - zeta, -1.0, 1.0)


class Quinn(AbstractFrictionLaw):
    """Quinn's regularization of Coulomb friction (Quinn 2004 eq. 4).

    For a single contact whose ``f_eq`` is exact, a body in the stick band obeys
    ``m v' = -(mu N / eps) v``: the slip velocity decays exponentially to zero and the body
    holds its position to round-off (Quinn Sec. 2); the rest position differs from exact
    Coulomb's by O(eps^2) (Quinn eq. 6).

    Args:
        mu: friction coefficient, >= 0.
        eps: regularization width, > 0 (units of velocity).

    Raises:
        ValueError: ``mu < 0``, ``eps <= 0`` or non-finite values.
    """

    mu: float = 1.0
    eps: float = 0.02

    def __check_init__(self):
        check_real("mu", self.mu, nonnegative=True)
        check_real("eps", self.eps, positive=True)

    def __call__(self, v, f_eq, normal):
        return quinn(v, f_eq, normal, self.mu, self.eps)

    def stick_band(self):
        return self.eps

    def static_limit(self, normal):
        return self.mu * normal
