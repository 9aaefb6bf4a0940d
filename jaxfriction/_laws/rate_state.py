"""Rate-and-state friction (Dieterich 1979, Ruina 1983), regularized at zero slip rate."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, positive, real
from .dynamic import AbstractDynamicLaw

EVOLUTION_LAWS = ("aging", "slip")


def _x_log_x(x):
    """``x ln x`` for ``x >= 0`` (0 at 0) with a finite derivative there (0, one-sided)."""
    ok = x > 0
    safe = jnp.where(ok, x, 1.0)
    return jnp.where(ok, safe * jnp.log(safe), 0.0)


class RateState(AbstractDynamicLaw):
    """Rate-and-state friction with the aging (Dieterich) or slip (Ruina) law (one state).

    Friction coefficient (Dieterich 1979; Ruina 1983; Rice & Ruina 1983)::

        mu = mu_0 + a ln(V / V_0) + b ln(V_0 theta / D_c),

    with the state ``theta`` (s) carried in log form, ``psi = ln(V_0 theta / D_c)`` (better
    conditioned: ``theta`` spans decades), and ``V = |v|``. Evolution laws, in ``psi``:

    - aging (Dieterich 1979, ``theta' = 1 - V theta / D_c``):
      ``psi' = (V_0 / D_c) exp(-psi) - V / D_c``;
    - slip (Ruina 1983, ``theta' = -(V theta / D_c) ln(V theta / D_c)``):
      ``psi' = -(V / D_c) (psi + ln(V / V_0))``.

    Both have the steady state ``psi_ss = ln(V_0 / V)``, where ``mu_ss = mu_0 + (a - b) ln(V /
    V_0)``: velocity weakening for ``b > a``. At ``V = 0`` the logarithm is regularized as in
    Rice & Ben-Zion 1996 and Lapusta et al. 2000 (J. Geophys. Res. 105:23765, eq. 8)::

        mu = a asinh(v / (2 V_0) exp((mu_0 + b psi) / a)),

    odd in ``v`` and equal to the formula above to relative ``O((V_0 / V)^2 exp(-2 mu / a))``
    (round-off for the usual ``mu / a ~ 100``). The friction force on the body is ``f = -mu
    N``. No elastic state: the dissipated power is ``mu N |v|`` >= 0 and ``stored_energy`` is 0.
    The state equations are stiff for ``V >> D_c``-scale rates; use an implicit or adaptive
    solver (``diffrax.Kvaerno5()``) for velocity steps.

    Args:
        a: direct-effect parameter > 0.
        b: evolution-effect parameter (real; ``b > a`` weakens).
        D_c: characteristic slip distance > 0 (m).
        mu_0: reference friction coefficient at ``V_0`` (real).
        V_0: reference velocity > 0 (m/s).
        evolution: ``"aging"`` (default) or ``"slip"`` (static).

    Raises:
        ValueError: parameters out of range, an unknown evolution law.
    """

    a: float = 0.01
    b: float = 0.015
    D_c: float = 1e-5
    mu_0: float = 0.6
    V_0: float = 1e-6
    evolution: str = eqx.field(default="aging", static=True)

    n_state = 1

    def __check_init__(self):
        if self.evolution not in EVOLUTION_LAWS:
            raise ValueError(f"evolution must be one of {EVOLUTION_LAWS}, got {self.evolution!r}")
        super().__check_init__()

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("a", self.a), real("b", self.b), positive("D_c", self.D_c), real("mu_0", self.mu_0),
                positive("V_0", self.V_0))

    def steady_state(self, v: ArrayLike) -> Array:
        """``psi_ss = ln(V_0 / |v|)``, ``(..., 1)``, for ``v != 0``."""
        return jnp.log(self.V_0 / jnp.abs(v))[..., None]

    def coefficient(self, v: ArrayLike, z: Array) -> Array:
        """The regularized friction coefficient ``mu`` (signed like ``v``), ``(...)``."""
        return self.a * jnp.arcsinh(v / (2.0 * self.V_0) * jnp.exp((self.mu_0 + self.b * z[..., 0]) / self.a))

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        psi, speed = z[..., 0], jnp.abs(v)
        if self.evolution == "aging":
            rate = (self.V_0 * jnp.exp(-psi) - speed) / self.D_c
        else:
            rate = -(speed * psi + self.V_0 * _x_log_x(speed / self.V_0)) / self.D_c
        return rate[..., None]

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -normal * self.coefficient(v, z)
