"""Rate-and-state friction (Dieterich 1979, Ruina 1983), regularized at zero slip rate."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, positive, real
from .dynamic import AbstractDynamicLaw

EVOLUTION_LAWS = ("aging", "slip", "perrin")
FORMS = ("regularized", "log")


def _x_log_x(x):
    """``x ln x`` for ``x >= 0`` (0 at 0) with a finite derivative there (0, one-sided)."""
    ok = x > 0
    safe = jnp.where(ok, x, 1.0)
    return jnp.where(ok, safe * jnp.log(safe), 0.0)


class RateState(AbstractDynamicLaw):
    """Rate-and-state friction with the aging (Dieterich), slip (Ruina) or Perrin-Rice-Zheng law (one state).

    Friction coefficient (Dieterich 1979; Ruina 1983; Rice & Ruina 1983)::

        mu = mu_0 + a ln(V / V_0) + b ln(V_0 theta / D_c),

    with the state ``theta`` (s) carried in log form, ``psi = ln(V_0 theta / D_c)`` (better
    conditioned: ``theta`` spans decades), and ``V = |v|``. Evolution laws, in ``psi``:

    - aging (Dieterich 1979, ``theta' = 1 - V theta / D_c``):
      ``psi' = (V_0 / D_c) exp(-psi) - V / D_c``;
    - slip (Ruina 1983, ``theta' = -(V theta / D_c) ln(V theta / D_c)``):
      ``psi' = -(V / D_c) (psi + ln(V / V_0))``;
    - perrin (Perrin, Rice & Zheng 1995, J. Mech. Phys. Solids 43:1461, eq. 9, ``theta' = 1 -
      (V theta / (2 D_c))^2``), with ``psi = ln(V_0 theta / (2 D_c))`` for this law (its
      ``theta_ss = 2 D_c / V``; the factor 2 keeps ``psi_ss`` and ``mu_ss`` those of the
      others, as rsfmodel's ``PrzState`` does): ``psi' = (V_0 exp(-psi) - V^2 exp(psi) / V_0)
      / (2 D_c)``.

    All three have the steady state ``psi_ss = ln(V_0 / V)``, where ``mu_ss = mu_0 + (a - b)
    ln(V / V_0)``: velocity weakening for ``b > a``, and linearize alike about it (``dpsi' =
    -(V / D_c)(dpsi + dv / V)``). ``form="regularized"``
    (default) regularizes the logarithm at ``V = 0`` as in Rice & Ben-Zion 1996 and Lapusta et
    al. 2000 (J. Geophys. Res. 105:23765, eq. 8)::

        mu = a asinh(v / (2 V_0) exp((mu_0 + b psi) / a)),

    odd in ``v`` and equal to the formula above to relative ``O((V_0 / V)^2 exp(-2 mu / a))``
    (round-off for the usual ``mu / a ~ 100``); ``form="log"`` is the formula above as it is,
    ``mu = mu_0 + a ln(|v| / V_0) + b psi`` (signed like ``v``; undefined at ``v = 0``: for the
    log-slip-rate state of :class:`~jaxfriction.QuasiStaticSlider`, which never reaches 0). The friction force on the body is ``f = -mu
    N``. No elastic state: the dissipated power is ``mu N |v|`` >= 0 and ``stored_energy`` is 0.
    The state equations are stiff for ``V >> D_c``-scale rates; use an implicit or adaptive
    solver (``diffrax.Kvaerno5()``) for velocity steps.

    Args:
        a: direct-effect parameter > 0.
        b: evolution-effect parameter (real; ``b > a`` weakens).
        D_c: characteristic slip distance > 0 (m).
        mu_0: reference friction coefficient at ``V_0`` (real).
        V_0: reference velocity > 0 (m/s).
        evolution: ``"aging"`` (default), ``"slip"`` or ``"perrin"`` (static).
        form: ``"regularized"`` (default, the asinh form) or ``"log"`` (static).

    Raises:
        ValueError: parameters out of range, an unknown evolution law or form.
    """

    a: float = 0.01
    b: float = 0.015
    D_c: float = 1e-5
    mu_0: float = 0.6
    V_0: float = 1e-6
    evolution: str = eqx.field(default="aging", static=True)
    form: str = eqx.field(default="regularized", static=True)

    n_state = 1
    state_names = ("psi",)
    derived_names = ("theta",)

    def __check_init__(self):
        if self.evolution not in EVOLUTION_LAWS:
            raise ValueError(f"evolution must be one of {EVOLUTION_LAWS}, got {self.evolution!r}")
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {self.form!r}")
        super().__check_init__()

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("a", self.a), real("b", self.b), positive("D_c", self.D_c), real("mu_0", self.mu_0),
                positive("V_0", self.V_0))

    def named_state(self, z: Array, name: str) -> Array:
        """``"psi"`` or ``"theta" = D_c exp(psi) / V_0`` (s; Perrin: ``2 D_c exp(psi) / V_0``)
        from states ``(..., 1)``, ``(...)``."""
        if name == "psi":
            return z[..., 0]
        if name == "theta":
            factor = 2.0 if self.evolution == "perrin" else 1.0
            return factor * self.D_c / self.V_0 * jnp.exp(z[..., 0])
        raise ValueError(f"name must be 'psi' or 'theta', got {name!r}")

    def steady_state(self, v: ArrayLike) -> Array:
        """``psi_ss = ln(V_0 / |v|)``, ``(..., 1)``, for ``v != 0``."""
        return jnp.log(self.V_0 / jnp.abs(v))[..., None]

    def coefficient(self, v: ArrayLike, z: Array) -> Array:
        """The friction coefficient ``mu`` (signed like ``v``), ``(...)``: the regularized
        (asinh) or the plain logarithmic form (``form``)."""
        if self.form == "log":
            speed = jnp.abs(v)
            positive = speed > 0
            log_v = jnp.log(jnp.where(positive, speed, self.V_0) / self.V_0)
            return jnp.sign(v) * (self.mu_0 + self.a * log_v + self.b * z[..., 0])
        return self.a * jnp.arcsinh(v / (2.0 * self.V_0) * jnp.exp((self.mu_0 + self.b * z[..., 0]) / self.a))

    def coefficient_at_log_rate(self, log_v: ArrayLike, z: Array) -> Array:
        """``mu`` at the slip rate ``v = V_0 exp(log_v) > 0``, from its logarithm, ``(...)``.

        Overflow-free for any ``log_v`` (float32 included): the regularized form is
        ``a asinh(e^s)`` with ``s = log_v - ln 2 + (mu_0 + b psi) / a``, taken as ``a (s +
        ln(1 + sqrt(1 + e^-2s)))`` for ``s >= 0`` (no ``e^s`` to overflow) and ``a asinh(e^s)``
        below; the log form is ``mu_0 + a log_v + b psi``. Used by
        :class:`~jaxfriction.QuasiStaticSlider`, whose state carries ``ln(v / V_0)``.

        Args:
            log_v: ``ln(v / V_0)``, ``(...)``.
            z: the state ``(..., 1)`` (``psi``).
        """
        psi = z[..., 0]
        if self.form == "log":
            return self.mu_0 + self.a * log_v + self.b * psi
        s = log_v - jnp.log(2.0) + (self.mu_0 + self.b * psi) / self.a
        big = s >= 0.0
        s_big = jnp.where(big, s, 0.0)
        s_small = jnp.where(big, 0.0, s)
        upper = s_big + jnp.log1p(jnp.sqrt(1.0 + jnp.exp(-2.0 * s_big)))
        return self.a * jnp.where(big, upper, jnp.arcsinh(jnp.exp(s_small)))

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        psi, speed = z[..., 0], jnp.abs(v)
        if self.evolution == "aging":
            rate = (self.V_0 * jnp.exp(-psi) - speed) / self.D_c
        elif self.evolution == "slip":
            rate = -(speed * psi + self.V_0 * _x_log_x(speed / self.V_0)) / self.D_c
        else:
            rate = (self.V_0 * jnp.exp(-psi) - speed**2 * jnp.exp(psi) / self.V_0) / (2.0 * self.D_c)
        return rate[..., None]

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -normal * self.coefficient(v, z)
