"""Rate-and-state friction on a spring-slider: velocity steps and the stability boundary.

The classic experiment of Dieterich 1979, Ruina 1983, Rice & Ruina 1983 and Gu, Rice, Ruina
& Tse 1984 on :class:`~jaxfriction.SpringSlider` with :class:`~jaxfriction.RateState`
(``a = 0.01``, ``b = 0.015``, ``D_c = 0.01 m``, ``mu_0 = 0.6``, ``V_0 = 1 mm/s``, ``N = 1 N``,
load velocity ``V = 1 cm/s``), both evolution laws:

(a) Velocity step ``V -> e V`` (``e = 10``) of a stiff machine (``k = 1000 N (b - a)/D_c``,
    ``m = 1e-5 kg``): the friction jumps by the direct effect ``a ln e`` and evolves over
    ``D_c`` of slip to the new steady state ``mu_ss = mu_0 + (a - b) ln(e V / V_0)``; drawn with
    the closed forms of the velocity-controlled (infinitely stiff) test, aging law
    ``theta = D_c/(e V) + (D_c/V - D_c/(e V)) exp(-e V t / D_c)``, slip law ``mu - mu_ss = b ln(e)
    exp(-e V t / D_c)``. RK4 at ``dt = 1e-5 s`` (the light block makes the system stiff: the
    velocity relaxes at ``N a / (m V) = 1e5 /s``).
(b) Stability of steady sliding (``m = 1 kg``, where inertia doubles the critical stiffness:
    ``m V^2 / (N a D_c) = 1``): the growth rate of a small perturbation (log-slope of the
    peaks of ``v - V``) and its angular frequency against ``k / k_c``, simulated (RK4, ``dt =
    0.01 s``) and from the closed-form eigenvalues (:meth:`~jaxfriction.SpringSlider.linear_eigenvalues`),
    with ``k_c = N (b - a)/D_c (1 + m V^2 / (N a D_c))`` and ``omega_c = (V/D_c) sqrt((b - a)/a)``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from .._checks import check_real
from .._forcing.drives import Constant, Step
from .._integrate.simulate import simulate
from .._laws.rate_state import RateState
from .._paths import set_parameters
from .._systems.spring_slider import SpringSlider

LAW = dict(a=0.01, b=0.015, D_c=1e-2, mu_0=0.6, V_0=1e-3)
V, NORMAL = 1e-2, 1.0
STEP = dict(mass=1e-5, stiffness_factor=1000.0, t_step=0.1, width=1e-4, dt=1e-5, slips=6.0)
STABILITY = dict(mass=1.0, dt=1e-2, t1=300.0, t_fit=20.0, perturbation=1e-7)
RATIOS = (0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25)
EVOLUTION_LAWS = ("aging", "slip")  # the laws of the figure (their closed forms)


def law(evolution: str = "aging", **overrides) -> RateState:
    """The reproduction's :class:`~jaxfriction.RateState` law."""
    return RateState(**{**LAW, **overrides}, evolution=evolution)


def step_system(evolution: str = "aging", e: float = 10.0) -> SpringSlider:
    """The stiff spring-slider of the velocity step: ``V -> e V`` at ``t_step``."""
    rs = law(evolution)
    k = STEP["stiffness_factor"] * NORMAL * (rs.b - rs.a) / rs.D_c
    return SpringSlider(law=rs, load=Step(V, e * V, STEP["t_step"], STEP["width"]), mass=STEP["mass"],
                        stiffness=k, normal=NORMAL)


def stability_system(evolution: str = "aging", ratio: float = 1.0) -> SpringSlider:
    """The spring-slider of the stability diagram at ``k = ratio * k_c``, pulled at ``V``."""
    base = SpringSlider(law=law(evolution), load=Constant(V), mass=STABILITY["mass"], normal=NORMAL)
    return set_parameters(base, {"stiffness": ratio * float(base.critical_stiffness())})


def velocity_controlled_friction(rs, v1, v2, t) -> np.ndarray:
    """Closed form of the friction coefficient after a velocity-controlled step ``v1 -> v2`` at
    ``t = 0`` from steady state (Ruina 1983), for ``t >= 0``.

    Aging law: ``theta' = 1 - v2 theta / D_c`` gives ``theta = D_c/v2 + (D_c/v1 - D_c/v2)
    exp(-v2 t / D_c)``; slip law: ``psi - psi_ss(v2) = ln(v2 / v1) exp(-v2 t / D_c)``; then ``mu
    = mu_0 + a ln(v2 / V_0) + b psi``.
    """
    t = np.asarray(t, dtype=float)
    decay = np.exp(-v2 * t / rs.D_c)
    if rs.evolution == "aging":
        psi = np.log(rs.V_0 / rs.D_c * (rs.D_c / v2 + (rs.D_c / v1 - rs.D_c / v2) * decay))
    else:
        psi = np.log(rs.V_0 / v2) + np.log(v2 / v1) * decay
    return rs.mu_0 + rs.a * np.log(v2 / rs.V_0) + rs.b * psi


def oscillation_fit(ts, x) -> tuple[float, float, int]:
    """Growth rate and angular frequency of a (growing or decaying) oscillation ``x(t)``.

    The local maxima of ``x`` are refined by a parabola through the three samples around
    each; for ``x = A exp(s t) cos(w t + phi)`` the maxima are ``2 pi / w`` apart and their
    logarithms grow by ``2 pi s / w`` per period, so ``s`` is the least-squares slope of
    ``ln x_max`` against ``t_max`` and ``w = 2 pi / mean spacing``.

    Args:
        ts: times ``(n,)``, equally spaced.
        x: samples ``(n,)`` (a deviation from steady state, oscillating about 0).

    Returns:
        ``(growth rate (1/s), angular frequency (rad/s), number of maxima)``.

    Raises:
        ValueError: fewer than three maxima.
    """
    ts, x = np.asarray(ts, dtype=float), np.asarray(x, dtype=float)
    i = np.nonzero((x[1:-1] > x[:-2]) & (x[1:-1] >= x[2:]) & (x[1:-1] > 0))[0] + 1
    if len(i) < 3:
        raise ValueError(f"need at least three maxima to fit an oscillation, found {len(i)}")
    h = ts[1] - ts[0]
    left, mid, right = x[i - 1], x[i], x[i + 1]
    curvature = left - 2 * mid + right
    shift = 0.5 * (left - right) / curvature
    t_max = ts[i] + shift * h
    x_max = mid - 0.25 * (left - right) * shift
    rate = np.polyfit(t_max, np.log(x_max), 1)[0]
    return float(rate), float(2 * np.pi / np.mean(np.diff(t_max))), len(i)


def _stability_runs(evolution, ratios):
    base = stability_system(evolution)
    kc = float(base.critical_stiffness())

    def run(k) -> tuple[Array, Array, Array]:
        system = set_parameters(base, {"stiffness": k})
        y0 = system.steady_sliding()
        y0 = y0.at[0].multiply(1.0 + STABILITY["perturbation"])
        traj = simulate(system, y0, 0.0, STABILITY["t1"], STABILITY["dt"], save_every=1)
        return traj.ts, traj.ys[:, 1], traj.status

    ts, vs, status = jax.jit(jax.vmap(run))(jnp.asarray(ratios) * kc)
    return kc, np.asarray(ts[0]), np.asarray(vs), np.asarray(status)


def rate_state(e=10.0, ratios=RATIOS, evolutions=EVOLUTION_LAWS) -> tuple[dict, dict]:
    """Run the velocity steps and the stability diagram.

    Args:
        e: velocity-step ratio ``> 0`` (``V -> e V``).
        ratios: the ``k / k_c`` of the simulated stability points (each ``> 0``).
        evolutions: state evolution laws (``"aging"``, ``"slip"``).

    Returns:
        ``(numbers, data)``: ``numbers`` is JSON-ready: per evolution law, the step's peak
            friction rise against ``a ln e`` and its final friction against ``mu_ss(e V)``,
            the largest gap to the velocity-controlled closed form, the energy residual;
            ``k_c``, ``omega_c`` and per ratio the simulated and linear-theory growth rate and
            frequency. ``data`` holds the time series for the figure.

    Raises:
        ValueError: a non-positive ``e`` or ratio, an unknown evolution law.
    """
    from .._observables.energy import relative_energy_residual

    check_real("e", e, positive=True)
    for ratio in ratios:
        check_real("ratio", ratio, positive=True)
    for evolution in evolutions:
        if evolution not in EVOLUTION_LAWS:
            raise ValueError(f"evolution must be one of {EVOLUTION_LAWS}, got {evolution!r}")
    numbers = {"law": LAW, "V": V, "normal": NORMAL, "e": e, "step": STEP, "stability": STABILITY,
               "direct_effect": LAW["a"] * float(np.log(e)), "laws": {}}
    data: dict[str, dict[str, Any]] = {"step": {}, "stability": {}}
    for evolution in evolutions:
        system = step_system(evolution, e)
        rs: RateState = system.law  # type: ignore[assignment]  # step_system builds it with a RateState
        t1 = STEP["t_step"] + STEP["slips"] * rs.D_c / (e * V)
        traj = simulate(system, system.steady_sliding(), 0.0, t1, STEP["dt"], save_every=10)
        ts, mu = np.asarray(traj.ts), -np.asarray(traj.friction_force) / NORMAL
        mu_before = rs.mu_0 + (rs.a - rs.b) * np.log(V / rs.V_0)
        mu_after = rs.mu_0 + (rs.a - rs.b) * np.log(e * V / rs.V_0)
        after = ts >= STEP["t_step"] + 0.2 * rs.D_c / (e * V)  # once the machine has caught up
        closed = velocity_controlled_friction(rs, V, e * V, ts - STEP["t_step"])
        data["step"][evolution] = {"ts": ts, "mu": mu, "closed": closed}
        numbers["laws"][evolution] = {"step": {
            "mu_before": float(mu[0]), "mu_ss_before": float(mu_before),
            "peak_rise": float(mu.max() - mu_before),
            "final_minus_mu_ss_after": float(mu[-1] - mu_after),
            "max_gap_to_velocity_controlled": float(np.max(np.abs(mu[after] - closed[after]))),
            "energy_residual": float(relative_energy_residual(traj)), "status": int(traj.status)}}
        kc, ts, vs, status = _stability_runs(evolution, ratios)
        fit = ts >= STABILITY["t_fit"]
        points = []
        for ratio, v, st in zip(ratios, vs, status):
            system = stability_system(evolution, ratio)
            lam = system.linear_eigenvalues()[0]
            rate, omega, peaks = oscillation_fit(ts[fit], v[fit] - V)
            points.append({"ratio": float(ratio), "growth_rate": rate, "omega": omega, "theory_growth_rate": float(lam.real),
                           "theory_omega": float(abs(lam.imag)), "maxima": peaks, "status": int(st)})
        base = stability_system(evolution)
        numbers["laws"][evolution]["stability"] = {
            "k_c": kc, "k_c_quasi_static": NORMAL * (rs.b - rs.a) / rs.D_c,
            "omega_c": float(base.critical_frequency()), "points": points}
        data["stability"][evolution] = {"ts": ts, "v": vs}
    return numbers, data


# ---------------------------------------------------------------------------------------------
# the quasi-static slider: rsfmodel's velocity step, slide-hold-slide healing, k_c and its period

#: rsfmodel's velocity-step test (github jrleeman/rsfmodel, tests/rsf_tests.py, 2015): units um
#: and s, the normal force 1; aging law, the load point 1 -> 10 um/s at 10 s, saved every 0.01 s
RSFMODEL = dict(a=0.005, b=0.01, D_c=10.0, mu_0=0.6, V_0=1.0, stiffness=1e-3, t_step=10.0, t1=40.0, dt_save=0.01)
#: its published extremes: value and sample index
RSFMODEL_PUBLISHED = {"mu_max": (0.60784356, 1129), "mu_min": (0.58362349, 1322), "theta_min": (0.51710192, 1282),
                      "v_max": (35.26869330, 1231)}
HOLDS = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)


def quasi_static_slider(load, evolution: str = "aging", damping: float = 0.0):
    """rsfmodel's slider as a :class:`~jaxfriction.QuasiStaticSlider` under ``load`` (um/s)."""
    from .._systems.quasi_static import QuasiStaticSlider

    p = RSFMODEL
    law = RateState(a=p["a"], b=p["b"], D_c=p["D_c"], mu_0=p["mu_0"], V_0=p["V_0"], evolution=evolution, form="log")
    return QuasiStaticSlider(law=law, load=load, stiffness=p["stiffness"], normal=1.0, damping=damping)


def healing(holds=HOLDS, evolution: str = "aging", slide: float = 10.0, reslide: float = 60.0) -> np.ndarray:
    """Slide-hold-slide healing: ``Delta mu_peak`` (the peak friction on re-sliding minus the
    steady friction before the hold) for each hold time, at 1 um/s (Dieterich 1972; Beeler,
    Tullis & Weeks 1994), on rsfmodel's quasi-static slider; one ``vmap`` over the holds.

    Returns:
        ``(len(holds),)`` friction rises.
    """
    from .._forcing.drives import Steps
    from .._integrate.saveat import SaveAt

    t_end = slide + max(holds) + reslide
    base = quasi_static_slider(Steps((1.0, 0.0, 1.0), (slide, slide + 1.0)), evolution)
    mu_ss = RSFMODEL["mu_0"]

    def one(hold):
        system = eqx_set_times(base, jnp.stack([jnp.asarray(slide), slide + hold]))
        traj = simulate(system, system.steady_sliding(1.0), 0.0, t_end,
                        saveat=SaveAt(ts=jnp.linspace(0.0, t_end, 20001)))
        mu = -traj.friction_force
        after = traj.ts >= slide + hold
        return jnp.max(jnp.where(after, mu, -jnp.inf)) - mu_ss, traj.status

    rises, status = jax.jit(jax.vmap(one))(jnp.asarray(holds, dtype=float))
    if not np.all(np.asarray(status) == 0):
        raise RuntimeError(f"a healing run failed: statuses {np.asarray(status)}")
    return np.asarray(rises)


def eqx_set_times(system, times):
    """``system`` with its load's step times replaced (a traced pair under ``vmap``)."""
    import equinox as eqx

    return eqx.tree_at(lambda s: s.load.times, system, tuple(times[i] for i in range(times.shape[0])))


def quasi_static() -> dict:
    """The quasi-static reproductions: rsfmodel's four published extremes of its velocity step,
    the healing rate ``d Delta mu_peak / d log10(t_hold)`` of slide-hold-slide tests over
    the three longest of ``HOLDS`` (against ``b ln 10``, the rate of the rigid limit, where the
    state grows as ``theta = theta_0 + t_hold``; the soft machine, ``k D_c / b = 1``, keeps
    slipping through the hold and heals more slowly, its slope still rising at 1,000 s), and the
    critical stiffness ``k_c = (b - a) / D_c`` (per um here) with the period ``2 pi / omega_c``
    of the neutral oscillation there, simulated (mean spacing of upward zero crossings of
    ``ln(v / V)`` over 6 periods) against the closed form.

    Returns:
        A JSON-ready dict.
    """
    from .._forcing.drives import Constant, Steps
    from .._integrate.saveat import SaveAt

    p = RSFMODEL
    slider = quasi_static_slider(Steps((1.0, 10.0), (p["t_step"],)))
    ts = jnp.arange(int(round(p["t1"] / p["dt_save"])) + 1) * p["dt_save"]
    traj = simulate(slider, slider.steady_sliding(), 0.0, p["t1"], saveat=SaveAt(ts=ts))
    mu, theta, v = (np.asarray(x) for x in (-traj.friction_force, traj.internal("theta"), traj.velocity))
    got = {"mu_max": (mu.max(), mu.argmax()), "mu_min": (mu.min(), mu.argmin()),
           "theta_min": (theta.min(), theta.argmin()), "v_max": (v.max(), v.argmax())}
    extremes = {name: {"published": pub, "index_published": idx, "simulated": float(got[name][0]),
                       "index_simulated": int(got[name][1]), "relative_gap": float(got[name][0] / pub - 1.0)}
                for name, (pub, idx) in RSFMODEL_PUBLISHED.items()}
    holds = np.asarray(HOLDS)
    rises = healing(holds)
    slope = float(np.polyfit(np.log10(holds[-3:]), rises[-3:], 1)[0])  # the three longest holds
    base = quasi_static_slider(Constant(1.0))
    kc = float(base.critical_stiffness())
    critical = eqx_stiffness(base, kc)
    period = 2 * np.pi / float(critical.critical_frequency())
    tsp = np.linspace(0.0, 6 * period, 3001)
    run = simulate(critical, critical.steady_sliding().at[0].add(1e-3), 0.0, float(tsp[-1]),
                   saveat=SaveAt(ts=jnp.asarray(tsp)))
    x = np.asarray(run.ys[:, 0])
    up = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    crossings = tsp[up] - x[up] * (tsp[up + 1] - tsp[up]) / (x[up + 1] - x[up])
    return {"rsfmodel": {"parameters": RSFMODEL, "status": int(traj.status), "extremes": extremes},
            "healing": {"holds": holds.tolist(), "delta_mu_peak": rises.tolist(), "slope_per_decade": slope,
                        "b_ln10": p["b"] * float(np.log(10.0))},
            "critical": {"k_c": kc, "k_c_closed_form": (p["b"] - p["a"]) / p["D_c"], "period": period,
                         "period_simulated": float(np.mean(np.diff(crossings))), "status": int(run.status)}}


def eqx_stiffness(system, k):
    """``system`` with stiffness ``k``."""
    return set_parameters(system, {"stiffness": k})


def linear_theory_curve(ratios) -> np.ndarray:
    """Linear theory of the stability diagram at each ``k / k_c``: the leading eigenvalue's real
    part (growth rate, 1/s) and imaginary part (angular frequency, rad/s), ``(2, n)``; the same
    for both evolution laws."""
    lams = [stability_system("aging", r).linear_eigenvalues()[0] for r in np.asarray(ratios)]
    return np.array([[lam.real for lam in lams], [abs(lam.imag) for lam in lams]])


__all__ = ["rate_state", "oscillation_fit", "velocity_controlled_friction", "linear_theory_curve", "quasi_static",
           "healing"]
