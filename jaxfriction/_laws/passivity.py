"""Passivity of dynamic friction laws: closed-form margins and a numerical energy test.

A friction law is passive (dissipative) when the contact cannot give out more energy than it
was given: with ``F = -f`` the force the body exerts on the contact and ``v`` the slip
velocity, ``int_0^t F v dt >= -beta(z_0)`` for every slip history (Willems 1972; for friction
models, Barabanov & Ortega 2000, IEEE TAC 45(4):830). From a relaxed contact (``z_0 =
law.init_state()``, nothing stored) the work done on it, ``W(t) = int_0^t F v dt``, is then
never negative, and over every cycle of a periodic history that returns the state to where it
was it is ``>= 0`` (the cyclic dissipation; the storage drops out). A law that fails this
creates energy: coupled to a mass it can sustain or grow oscillations no real contact would.

:func:`passivity` tests both on a set of slip histories (the law alone, driven as in a
displacement-controlled test) and reports the closed-form margin of
:func:`passivity_margin` where the law has one (LuGre, Bouc-Wen).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .bouc_wen import BoucWen
from .dahl import Dahl
from .dynamic import AbstractDynamicLaw, friction_power
from .iwan import Iwan, SegalmanIwan
from .lugre import LuGre
from .maxwell_slip import MaxwellSlip

#: Laws passive for every admissible parameter: springs that store ``sum k z^2 / 2`` and
#: sliders (or attraction to a level) that only dissipate (their docstrings derive it).
_PASSIVE_BY_CONSTRUCTION = (Dahl, Iwan, SegalmanIwan, MaxwellSlip)


def lugre_passivity_margin(law: LuGre, normal: ArrayLike = 1.0) -> Array:
    """The LuGre model's passivity margin: ``inf_v`` of the worst dissipation rate over ``v^2`` (N s/m).

    With the storage ``V = sigma0 z^2 / 2`` (the bristles) the dissipated power of
    :class:`~jaxfriction.LuGre` is, with ``w = sigma0 z / g(v)`` (the deflection relative to
    steady sliding), ``P = |v| (g w^2 - sigma1(v) v w + (sigma1(v) + sigma2) |v|)``. The set
    ``|z| <= g_max / sigma0`` (``g_max = N max(mu_s, mu_c)``) is invariant (the bristle
    deflection stays bounded, Canudas de Wit et al. 1995), so ``|w| <= g_max / g(v)``, and the smallest ``P / v^2`` over that
    set at slip speed ``v`` is (the quadratic's minimum, or its value on the edge)::

        m(v) = sigma1 + sigma2 - sigma1^2 v / (4 g)                 if sigma1 v <= 2 g_max,
        m(v) = g_max^2 / (g v) + sigma2 - sigma1 (g_max - g) / g    otherwise,

    (``sigma1 = sigma1(v)``, ``g = g(v)``). The margin is ``inf_v m(v)``, taken on a
    logarithmic grid of ``v`` (``1e-6 .. 1e6 v_s``, 241 points) and at ``v -> inf``:
    ``sigma2 - sigma1 (g_max - F_c) / F_c`` for constant ``sigma1`` (``F_c = mu_c N``),
    ``sigma2`` when ``sigma1(v)`` decays (``v_d`` set). ``margin >= 0`` certifies passivity
    (the bristle energy is a storage function).

    For constant ``sigma1`` and ``mu_s >= mu_c`` the infimum is the limit ``v -> inf``, so the
    condition is ``sigma1 (F_s - F_c) <= sigma2 F_c``, and it is also necessary: a slow slide
    loads the bristles to ``z = F_s / sigma0``; a jump to a slip speed ``V`` then relaxes them
    towards ``F_c / sigma0`` at ``dz/dx = 1 - F_s / F_c`` while the contact absorbs ``int F dx
    = sigma0 int z dx + sigma1 V Delta z + sigma2 V D`` over the slip ``D``: for ``V`` large
    the term ``V (sigma2 D - sigma1 (F_s - F_c) D / F_c)`` decides, and repeating the cycle
    extracts unbounded energy when the condition fails (``tests/test_passivity.py`` finds
    it numerically on both sides). This is the kind of condition Barabanov & Ortega 2000
    (IEEE TAC 45(4):830) state as necessary and sufficient for the map ``v -> F``; it was
    derived here as above (their paper was not at hand), and the numerical test of
    :func:`passivity` checks it. The published parameters of Canudas de Wit et al. 1995 (the
    class defaults: ``sigma1 = 316.2``, ``sigma2 = 0.4``, ``F_s / F_c = 1.5``) violate it
    (margin ``-157.7`` N s/m); the velocity-dependent micro-damping ``v_d`` (their Sec. 2)
    removes the limit term.

    Args:
        law: a :class:`~jaxfriction.LuGre`.
        normal: normal force N > 0 (N).

    Returns:
        The margin (N s/m), a scalar array; differentiable in every parameter (a fit
        constraint: ``>= 0`` when passive).
    """
    g_max = normal * jnp.maximum(law.mu_s, law.mu_c)
    v = law.v_s * jnp.logspace(-6.0, 6.0, 241)
    g = law.steady_level(v, normal)
    s1 = law.micro_damping(v)
    inner = s1 * v <= 2.0 * g_max
    first = s1 + law.sigma2 - s1 * s1 * v / (4.0 * g)
    edge = g_max * g_max / (g * v) + law.sigma2 - s1 * (g_max - g) / g
    grid = jnp.min(jnp.where(inner, first, edge))
    g_inf = normal * law.mu_c
    s1_inf = law.sigma1 if law.v_d is None else 0.0
    limit = law.sigma2 - s1_inf * (g_max - g_inf) / g_inf
    return jnp.minimum(grid, limit)


def passivity_margin(law: AbstractDynamicLaw, normal: ArrayLike = 1.0) -> Array:
    """A closed-form passivity margin of a dynamic law: ``>= 0`` when the law is passive.

    - :class:`~jaxfriction.LuGre`: :func:`lugre_passivity_margin` (N s/m): the bristle energy
      is a storage function iff ``margin >= 0``; for constant ``sigma1`` and ``mu_s >= mu_c``
      it is ``sigma2 - sigma1 (mu_s - mu_c) / mu_c``.
    - :class:`~jaxfriction.BoucWen`: ``beta - |gamma|`` (dimensionless): the dissipated power
      ``mu N |z|^n (beta |z v| + gamma z v) / A`` is ``>= 0`` for every motion iff ``beta >=
      |gamma|`` (the class docstring; Ikhouane & Rodellar 2007, "Systems with Hysteresis",
      Wiley).
    - :class:`~jaxfriction.Dahl`, :class:`~jaxfriction.Iwan`,
      :class:`~jaxfriction.SegalmanIwan`, :class:`~jaxfriction.MaxwellSlip`: passive for
      every admissible parameter (springs that store ``k z^2 / 2`` and sliders that only
      dissipate; Dahl's power ``sigma z v (1 - (1 - sigma z sgn(v) / F_c)^alpha) >= 0``):
      ``inf``.

    Use as a fit constraint: the margin is a differentiable function of the law's parameters,
    so pass it as a penalty (``weight * min(margin, 0)^2`` added to the loss) or, for LuGre
    with constant ``sigma1``, as the linear bound ``sigma1 (mu_s - mu_c) <= sigma2 mu_c``.

    Args:
        law: a dynamic law of the kinds above.
        normal: normal force N > 0 (N).

    Returns:
        A scalar array.

    Raises:
        ValueError: a law without a closed form (use :func:`passivity`, the numerical test;
            subclasses of the classes above count as such: they may change the force), or
            ``normal <= 0``.
    """
    if isinstance(normal, (int, float)) and not normal > 0:
        raise ValueError(f"normal must be > 0, got {normal!r}")
    kind = type(law)  # exactly these classes: a subclass may change the force or the rates
    if kind is LuGre:
        return lugre_passivity_margin(law, normal)  # type: ignore[arg-type]  # type(law) is LuGre
    if kind is BoucWen:
        return jnp.asarray(law.beta - jnp.abs(law.gamma))  # type: ignore[attr-defined]  # type(law) is BoucWen
    if kind in _PASSIVE_BY_CONSTRUCTION:
        return jnp.asarray(jnp.inf)
    raise ValueError(f"law: no closed-form passivity margin for {type(law).__name__}; jaxfriction.passivity(law) "
                     "runs the numerical energy test")


class PassivityReport(NamedTuple):
    """The result of :func:`passivity`.

    Attributes:
        subject: the law's class name.
        passive: the verdict: the closed-form margin (where there is one) is ``>= 0``, and on
            every history the work done on the contact from rest never falls below
            ``-rtol`` times the history's ``int |f v| dt`` and no cycle returns energy.
        margin: :func:`passivity_margin`, or None for laws without a closed form.
        work_min: the smallest work done on the contact from the relaxed state, ``min_t
            int_0^t F v dt`` over all histories (J); ``>= 0`` for a passive law.
        dissipation_min: the smallest cumulative dissipation with the law's own storage,
            ``min_t (W(t) - stored(t))`` (J); ``>= 0`` when ``stored_energy`` is a storage
            function.
        cycle_work: work done on the contact over the last cycle of each periodic history
            (J), by name; ``>= 0`` for a passive law.
        histories: the names of the slip histories run.
    """

    subject: str
    passive: bool
    margin: float | None
    work_min: float
    dissipation_min: float
    cycle_work: dict
    histories: tuple

    def __repr__(self):
        verdict = "passive" if self.passive else "NOT passive"
        margin = "" if self.margin is None else f"margin {self.margin:.4g}, "
        cycles = ", ".join(f"{k} {v:.3g} J" for k, v in self.cycle_work.items())
        return (f"{self.subject}: {verdict} ({margin}min work from rest {self.work_min:.3g} J, "
                f"work per cycle: {cycles})")


def _rate_scale(law, v, normal, states) -> float:
    """``max |dz'/dz|`` at slip speed ``v`` over the probe states (1/s); a step is ``0.5 /`` this."""
    rates = [float(np.max(np.asarray(law.max_state_rate(v, z, normal)))) for z in states]
    rate = max([r for r in rates if np.isfinite(r)] + [0.0])
    return rate if rate > 0 else abs(v) / 1e-3  # no state rate: steps of 1 mm of slip


def _histories(law, normal, slow: float, fast: float, seed: int):
    """Slip histories as piecewise-linear velocities on nonuniform grids:
    ``{name: (h (n,), v_start (n,), v_end (n,), start of the last cycle or -1)}``."""
    z0 = jnp.asarray(law.init_state(), float)
    states = [z0]
    h_fast = 0.5 / _rate_scale(law, fast, normal, states)
    h_slow = 0.5 / _rate_scale(law, slow, normal, states)
    out = {}
    for name, n_fast, cycles in (("burst", 4, 10), ("burst-long", 40, 5)):
        # unidirectional: a slow slide that loads the contact, then a jump to the fast speed
        n_slow = 8
        h = np.tile(np.r_[np.full(n_slow, h_slow), np.full(n_fast, h_fast)], cycles)
        v = np.tile(np.r_[np.full(n_slow, slow), np.full(n_fast, fast)], cycles)
        out[name] = (h, v, v, len(h) - n_slow - n_fast)
    for name, speed, h_step in (("sine", fast, h_fast), ("sine-slow", slow, h_slow)):
        n_cycle, cycles = 200, 3
        t = np.arange(n_cycle * cycles + 1) * h_step
        v = speed * np.sin(2 * np.pi * t / (n_cycle * h_step))
        out[name] = (np.full(len(t) - 1, h_step), v[:-1], v[1:], len(t) - 1 - n_cycle)
    rng = np.random.default_rng(seed)
    n = 600
    t = np.arange(n + 1) * h_fast
    freqs = rng.uniform(1.0, 12.0, 6) / (n * h_fast)
    phases = rng.uniform(0.0, 2 * np.pi, 6)
    v = fast / math.sqrt(3.0) * np.sum(np.sin(2 * np.pi * freqs[:, None] * t + phases[:, None]), axis=0)
    out["random"] = (np.full(n, h_fast), v[:-1], v[1:], -1)
    return out


@eqx.filter_jit
def _drive(law, normal, h, v_start, v_end):
    """RK4 for ``z`` and the energies ``W = int F v``, ``D = int P``, ``A = int |F v|`` along a
    piecewise-linear velocity (exact stage velocities), for a batch of histories ``(k, n)``."""
    n_state = law.n_state

    def rates(v, y):
        z = y[:n_state]
        f, power, z_dot = friction_power(law, v, z, normal)
        return jnp.concatenate([z_dot, jnp.stack([-f * v, power, jnp.abs(f * v)])])

    def step(y, interval):
        h, a, b = interval
        mid = 0.5 * (a + b)
        k1 = rates(a, y)
        k2 = rates(mid, y + h / 2 * k1)
        k3 = rates(mid, y + h / 2 * k2)
        k4 = rates(b, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y

    y0 = jnp.concatenate([jnp.asarray(law.init_state(), h.dtype), jnp.zeros(3, h.dtype)])

    def one(h, a, b):
        _, ys = jax.lax.scan(step, y0, (h, a, b))
        return jnp.concatenate([y0[None], ys])

    return jax.vmap(one)(h, v_start, v_end)


@eqx.filter_jit
def _step_reach(law, normal, h, v, z):
    """``max_i h_i |dz'/dz|(v_i, z_i)`` per history: RK4 is stable and accurate while it stays small."""
    rate = jax.vmap(jax.vmap(lambda v, z: law.max_state_rate(v, z, normal)))(v, z)
    return jnp.max(h * rate, axis=1)


def passivity(law: AbstractDynamicLaw, normal: float = 1.0, *, speeds: tuple[float, float] = (1e-4, 1.0),
              rtol: float = 1e-6, seed: int = 0) -> PassivityReport:
    """Test a dynamic law for passivity: drive it alone along slip histories and watch the energy.

    The law is driven (RK4, steps of half its fastest state rate at each speed from the
    relaxed state, :meth:`~jaxfriction.AbstractDynamicLaw.max_state_rate`, shortened until
    ``h |dz'/dz| <= 1`` along the whole history) from its relaxed state along

    - ``burst``, ``burst-long``: unidirectional slip alternating a slow slide at ``speeds[0]``
      (4 relaxation lengths: it loads the contact to its static level) with a jump to
      ``speeds[1]`` for 2 or 20 relaxation lengths, repeated (10 and 5 cycles): the history
      that makes a LuGre contact with too much micro-damping give energy back;
    - ``sine``, ``sine-slow``: ``v = V sin(2 pi t / T)`` with ``V`` each speed and ``T`` 100
      relaxation lengths at that speed (3 cycles: reversals, presliding loops);
    - ``random``: a sum of 6 sines of random frequency and phase (``seed``), RMS ``speeds[1]``;

    integrating the work done on the contact ``W = int F v dt`` (``F = -f``), the dissipation
    with the law's storage ``int (-f v - d stored / dt) dt`` and ``int |F v| dt`` (the scale of
    the tolerance ``rtol``). Velocities are piecewise linear between the steps (the stages
    see them exactly). A passive law keeps ``W(t) >= 0`` from rest and ``W >= 0`` over every
    closed cycle (the last cycle of each periodic history is taken); the verdict also needs
    the closed-form margin :func:`passivity_margin` to be ``>= 0`` where the law has one. A
    numerical test can miss the history that exposes a law; the margin cannot.

    Args:
        law: a dynamic law (:class:`~jaxfriction.AbstractDynamicLaw`).
        normal: normal force N > 0 (N).
        speeds: ``(slow, fast)`` slip speeds > 0 (m/s): slow well below the law's Stribeck
            velocity, fast well above it (the larger, the sharper the LuGre test).
        rtol: tolerance relative to each history's ``int |F v| dt``.
        seed: seed of the random history.

    Returns:
        A :class:`PassivityReport`.

    Raises:
        ValueError: ``law`` not a dynamic law, ``normal <= 0``, speeds not two positive
            numbers with ``slow < fast``.
    """
    if not isinstance(law, AbstractDynamicLaw):
        raise ValueError(f"law must be a jaxfriction dynamic law (AbstractDynamicLaw), got {law!r}")
    if not (isinstance(normal, (int, float, np.floating)) and normal > 0 and math.isfinite(normal)):
        raise ValueError(f"normal must be a finite number > 0, got {normal!r}")
    try:
        slow, fast = (float(s) for s in speeds)
    except (TypeError, ValueError):
        raise ValueError(f"speeds must be two numbers (slow, fast), got {speeds!r}") from None
    if not (0 < slow < fast and math.isfinite(fast)):
        raise ValueError(f"speeds must satisfy 0 < slow < fast (finite), got {speeds!r}")
    # float parameters as arrays: one compiled run serves every value of them (filter_jit keys on Python floats)
    law = jax.tree_util.tree_map(lambda x: jnp.asarray(x) if isinstance(x, float) else x, law)
    histories = _histories(law, normal, slow, fast, seed)
    n = max(len(h[0]) for h in histories.values())

    def pad(x, value=0.0):
        return np.r_[x, np.full(n - len(x), value)]

    h = np.stack([pad(x[0]) for x in histories.values()])
    a = jnp.asarray(np.stack([pad(x[1]) for x in histories.values()]))
    b = jnp.asarray(np.stack([pad(x[2]) for x in histories.values()]))
    for _ in range(8):  # shorten the steps of a history until h |dz'/dz| <= 1 along it (state-dependent rates)
        ys = np.asarray(_drive(law, normal, jnp.asarray(h), a, b))
        reach = np.asarray(_step_reach(law, normal, jnp.asarray(h), a, jnp.asarray(ys[:, :-1, :law.n_state])))
        reach = np.where(np.all(np.isfinite(ys), axis=(1, 2)), reach, np.inf)
        if np.all(reach <= 1.0):
            break
        h = h * np.where(reach <= 1.0, 1.0, np.where(np.isfinite(reach), 0.5 / reach, 0.1))[:, None]
    work, dissipated, scale = ys[..., -3], ys[..., -2], ys[..., -1]
    tol = rtol * np.max(scale, axis=1)
    cycle_work = {}
    ok = bool(np.all(np.isfinite(ys)))
    for i, (name, (steps, _, _, start)) in enumerate(histories.items()):
        ok &= bool(np.min(work[i]) >= -tol[i])
        if start >= 0:
            cycle = float(work[i, len(steps)] - work[i, start])
            cycle_work[name] = cycle
            ok &= cycle >= -tol[i]
    try:
        margin = float(passivity_margin(law, normal))
    except ValueError:
        margin = None
    if margin is not None:
        ok &= margin >= 0
    return PassivityReport(type(law).__name__, bool(ok), margin, float(np.min(work)), float(np.min(dissipated)),
                           cycle_work, tuple(histories))
