"""Rate-and-state friction (Dieterich 1979, Ruina 1983), regularized at zero slip rate."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_choice, is_concrete, nonnegative, positive, real
from .dynamic import AbstractDynamicLaw

EVOLUTION_LAWS = ("aging", "slip", "perrin", "nagata")
FORMS = ("regularized", "log")


def _x_log_x(x):
    """``x ln x`` for ``x >= 0`` (0 at 0) with a finite derivative there (0, one-sided)."""
    ok = x > 0
    safe = jnp.where(ok, x, 1.0)
    return jnp.where(ok, safe * jnp.log(safe), 0.0)


def _psi_rate(evolution: str, psi, speed, D_c, V_0):
    """``psi'`` of one log state ``psi = ln(V_0 theta / D_c)`` at the slip speed ``|v|``
    (Perrin: ``psi = ln(V_0 theta / (2 D_c))``); see :class:`RateState`."""
    if evolution in ("aging", "nagata"):  # Nagata's law less its -(c / b) dmu/dt
        return (V_0 * jnp.exp(-psi) - speed) / D_c
    if evolution == "slip":
        return -(speed * psi + V_0 * _x_log_x(speed / V_0)) / D_c
    return (V_0 * jnp.exp(-psi) - speed**2 * jnp.exp(psi) / V_0) / (2.0 * D_c)


def _coefficient(form: str, a, V_0, level, v):
    """``mu`` at the slip velocity ``v`` with ``level = mu_0 + sum_i b_i psi_i``: ``a asinh(v /
    (2 V_0) exp(level / a))`` (regularized) or ``sign(v) (level + a ln(|v| / V_0))`` (log)."""
    if form == "log":
        speed = jnp.abs(v)
        log_v = jnp.log(jnp.where(speed > 0, speed, V_0) / V_0)
        return jnp.sign(v) * (level + a * log_v)
    return a * jnp.arcsinh(v / (2.0 * V_0) * jnp.exp(level / a))


def _coefficient_at_log_rate(form: str, a, level, log_v):
    """``mu`` at ``v = V_0 exp(log_v)`` from its logarithm, overflow-free (see
    :meth:`RateState.coefficient_at_log_rate`)."""
    if form == "log":
        return level + a * log_v
    s = log_v - jnp.log(2.0) + level / a
    big = s >= 0.0
    s_big = jnp.where(big, s, 0.0)
    s_small = jnp.where(big, 0.0, s)
    upper = s_big + jnp.log1p(jnp.sqrt(1.0 + jnp.exp(-2.0 * s_big)))
    return a * jnp.where(big, upper, jnp.arcsinh(jnp.exp(s_small)))


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
        alpha: the Linker-Dieterich coefficient (real, default 0), used where
            the normal force varies: :class:`~jaxfriction.QuasiStaticSlider` with a normal-force
            drive (Linker & Dieterich 1992, J. Geophys. Res. 97:4923: ``theta'``
            gains ``-alpha theta sigma' / (b sigma)``, i.e. ``psi' -= (alpha / b) d ln sigma /
            dt``, and a normal-stress step ``sigma_0 -> sigma_1`` takes ``theta`` to ``theta
            (sigma_0 / sigma_1)^(alpha / b)``). A constant normal force leaves it unused.
        c: Nagata's stress-weakening coefficient ``>= 0`` (``evolution="nagata"``; default 0).
        evolution: ``"aging"`` (default), ``"slip"``, ``"perrin"`` or ``"nagata"`` (static).
            ``"nagata"`` (Nagata, Nakatani & Yoshida 2012, J. Geophys. Res. 117:B02314, the
            revised aging law): ``theta' = 1 - V theta / D_c - (c / b) theta dmu/dt``, i.e.
            ``psi' = (V_0 exp(-psi) - V) / D_c - (c / b) dmu/dt``. The friction rate is the
            system's: only :class:`~jaxfriction.QuasiStaticSlider` supplies it (from the
            spring, ``N dmu/dt = k (V_lp - v) - eta dv/dt - N' mu``, solved together with the
            slip rate's equation); :meth:`state_rate` refuses it elsewhere.
        form: ``"regularized"`` (default, the asinh form) or ``"log"`` (static).

    Raises:
        ValueError: parameters out of range, an unknown evolution law or form, ``alpha != 0``
            with ``b = 0`` (the state term ``alpha / b`` is then undefined).
    """

    a: float = 0.01
    b: float = 0.015
    D_c: float = 1e-5
    mu_0: float = 0.6
    V_0: float = 1e-6
    alpha: float = 0.0
    c: float = 0.0
    evolution: str = eqx.field(default="aging", static=True)
    form: str = eqx.field(default="regularized", static=True)

    n_state = 1
    state_names = ("psi",)
    derived_names = ("theta",)

    def __check_init__(self):
        check_choice("evolution", self.evolution, EVOLUTION_LAWS)
        check_choice("form", self.form, FORMS)
        if is_concrete((self.alpha, self.b)) and np.any(np.asarray(self.alpha) != 0) and np.any(
                np.asarray(self.b) == 0):
            raise ValueError(f"alpha (Linker-Dieterich) needs b != 0: the state changes by alpha / b, got "
                             f"alpha={self.alpha!r}, b={self.b!r}")
        super().__check_init__()

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("a", self.a), real("b", self.b), positive("D_c", self.D_c), real("mu_0", self.mu_0),
                positive("V_0", self.V_0), real("alpha", self.alpha), nonnegative("c", self.c))

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
        return _coefficient(self.form, self.a, self.V_0, self.mu_0 + self.b * z[..., 0], v)

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
        return _coefficient_at_log_rate(self.form, self.a, self.mu_0 + self.b * z[..., 0], log_v)

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        """``psi'`` ``(..., 1)`` (1/s). Raises ValueError for ``evolution="nagata"``, whose rate
        needs ``dmu/dt`` (:meth:`state_rate_given_friction_rate`)."""
        if self.evolution == "nagata":
            raise ValueError("evolution='nagata' needs the friction rate dmu/dt, which only "
                             "jaxfriction.QuasiStaticSlider supplies (state_rate_given_friction_rate)")
        return _psi_rate(self.evolution, z[..., 0], jnp.abs(v), self.D_c, self.V_0)[..., None]

    def state_rate_given_friction_rate(self, v: ArrayLike, z: Array, mu_dot: ArrayLike) -> Array:
        """``psi'`` ``(..., 1)`` (1/s) of any evolution law given the friction rate ``dmu/dt``
        (1/s): Nagata's ``(V_0 exp(-psi) - V) / D_c - (c / b) dmu/dt``; the other laws ignore
        ``mu_dot``."""
        rate = _psi_rate(self.evolution, z[..., 0], jnp.abs(v), self.D_c, self.V_0)
        if self.evolution == "nagata":
            rate = rate - self.c / self.b * mu_dot
        return rate[..., None]

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -normal * self.coefficient(v, z)


TWO_STATE_EVOLUTION_LAWS = ("aging", "slip")


class TwoStateRateState(AbstractDynamicLaw):
    """Rate-and-state friction with two state variables (Ruina 1983), aging or slip evolution.

    Friction coefficient (Ruina 1983, J. Geophys. Res. 88:10359, the two-state-variable law;
    Gu, Rice, Ruina & Tse 1984, J. Mech. Phys. Solids 32:167; rsfmodel's two-state models)::

        mu = mu_0 + a ln(V / V_0) + b_1 ln(V_0 theta_1 / D_c1) + b_2 ln(V_0 theta_2 / D_c2),

    with each state carried in log form, ``psi_i = ln(V_0 theta_i / D_ci)``, and evolving on
    its own by the aging (``theta_i' = 1 - V theta_i / D_ci``) or the slip law (``theta_i' =
    -(V theta_i / D_ci) ln(V theta_i / D_ci)``), exactly as the one state of
    :class:`~jaxfriction.RateState` with ``D_c = D_ci``. Both states have the steady state
    ``psi_ss = ln(V_0 / V)``, where ``mu_ss = mu_0 + (a - b_1 - b_2) ln(V / V_0)``. After a
    velocity step the friction relaxes on two slip distances, ``D_c1`` and ``D_c2`` (``b_2``
    may be negative: a state whose steady level strengthens with slip rate). ``form="regularized"``
    (default) is the asinh form ``a asinh(v / (2 V_0) exp((mu_0 + b_1 psi_1 + b_2 psi_2) /
    a))`` (Lapusta et al. 2000, eq. 8, with the two state terms), ``form="log"`` the formula
    above as it is (see :class:`RateState`).

    Use it as :class:`RateState` is used: in :class:`~jaxfriction.QuasiStaticSlider` (its
    state is then ``[ln(v / V_0), psi_1, psi_2]``), :class:`~jaxfriction.SpringSlider` or
    :class:`~jaxfriction.Oscillator`. The one-state closed forms of the sliders
    (``critical_stiffness``, ``critical_frequency``, ``linear_eigenvalues``) do not apply and
    refuse it; linearize with ``jax.jacobian(slider.vector_field, argnums=1)``.

    Args:
        a: direct-effect parameter > 0.
        b1, b2: evolution-effect parameters of the two states (real).
        D_c1, D_c2: their characteristic slip distances > 0 (m).
        mu_0: reference friction coefficient at ``V_0`` (real).
        V_0: reference velocity > 0 (m/s).
        evolution: ``"aging"`` (default) or ``"slip"`` for both states, or a pair such as
            ``("slip", "aging")``, one per state (static).
        form: ``"regularized"`` (default) or ``"log"`` (static).

    Shapes: ``v`` ``(...)``, ``z = [psi_1, psi_2]`` ``(..., 2)``; the force ``(...)`` (N, ``-mu
    N``), the rate ``(..., 2)`` (1/s).

    Raises:
        ValueError: ``a <= 0``, ``D_c1 <= 0``, ``D_c2 <= 0``, ``V_0 <= 0``, non-finite values,
            an unknown evolution law or form.
    """

    a: float = 0.005
    b1: float = 0.01
    D_c1: float = 1e-5
    b2: float = -0.005
    D_c2: float = 1e-4
    mu_0: float = 0.6
    V_0: float = 1e-6
    evolution: str | tuple = eqx.field(default="aging", static=True)
    form: str = eqx.field(default="regularized", static=True)

    n_state = 2
    state_names = ("psi1", "psi2")
    derived_names = ("theta1", "theta2")

    def __check_init__(self):
        laws = self.evolutions
        if len(laws) != 2 or any(law not in TWO_STATE_EVOLUTION_LAWS for law in laws):
            raise ValueError(f"evolution must be one of {TWO_STATE_EVOLUTION_LAWS} or a pair of them, "
                             f"got {self.evolution!r}")
        check_choice("form", self.form, FORMS)
        super().__check_init__()

    @property
    def evolutions(self) -> tuple:
        """The evolution law of each state, a pair of strings."""
        if isinstance(self.evolution, str):
            return (self.evolution, self.evolution)
        return tuple(self.evolution) if isinstance(self.evolution, (tuple, list)) else ()

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("a", self.a), real("b1", self.b1), positive("D_c1", self.D_c1), real("b2", self.b2),
                positive("D_c2", self.D_c2), real("mu_0", self.mu_0), positive("V_0", self.V_0))

    def _level(self, z):
        return self.mu_0 + self.b1 * z[..., 0] + self.b2 * z[..., 1]

    def named_state(self, z: Array, name: str) -> Array:
        """``"psi1"``, ``"psi2"``, or ``"theta1" = D_c1 exp(psi_1) / V_0``, ``"theta2"`` (s),
        from states ``(..., 2)``, ``(...)``."""
        names = {"psi1": 0, "psi2": 1, "theta1": 0, "theta2": 1}
        if name not in names:
            raise ValueError(f"name must be one of {list(names)}, got {name!r}")
        psi = z[..., names[name]]
        if name.startswith("psi"):
            return psi
        return (self.D_c1 if name == "theta1" else self.D_c2) / self.V_0 * jnp.exp(psi)

    def steady_state(self, v: ArrayLike) -> Array:
        """``psi_1 = psi_2 = ln(V_0 / |v|)``, ``(..., 2)``, for ``v != 0``."""
        psi = jnp.log(self.V_0 / jnp.abs(v))
        return jnp.stack([psi, psi], axis=-1)

    def coefficient(self, v: ArrayLike, z: Array) -> Array:
        """The friction coefficient ``mu`` (signed like ``v``), ``(...)``."""
        return _coefficient(self.form, self.a, self.V_0, self._level(z), v)

    def coefficient_at_log_rate(self, log_v: ArrayLike, z: Array) -> Array:
        """``mu`` at ``v = V_0 exp(log_v) > 0`` from ``log_v`` ``(...)`` and ``z`` ``(..., 2)``,
        overflow-free (as :meth:`RateState.coefficient_at_log_rate`)."""
        return _coefficient_at_log_rate(self.form, self.a, self._level(z), log_v)

    def state_rate(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        speed = jnp.abs(v)
        first, second = self.evolutions
        return jnp.stack([_psi_rate(first, z[..., 0], speed, self.D_c1, self.V_0),
                          _psi_rate(second, z[..., 1], speed, self.D_c2, self.V_0)], axis=-1)

    def force(self, v: ArrayLike, z: Array, normal: ArrayLike) -> Array:
        return -normal * self.coefficient(v, z)
