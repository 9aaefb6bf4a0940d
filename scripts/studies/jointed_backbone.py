"""The jointed oscillator's amplitude-dependent frequency and damping against Segalman's power law.

Issue 27 item 7. The system is the ``"jointed"`` template's (:func:`jaxfriction.jointed_oscillator`,
``m = k = 1``, Segalman's joint ``F_S = 1 N``, ``K_T = 3 N/m``, ``chi = -0.5``, ``beta =
0.1``). Shooting does not find its periodic orbits: the elongation offset of every stuck
Iwan element is a neutral direction (Floquet multipliers 1), so the orbits form a continuum
and the shooting Jacobian is singular. Two measurements that need no shooting:

1. **Ring-down** (:func:`ring_down`, :func:`backbone_from_turning_points`): the free decay
   (``F = 0``, ``c = 0``) after an impulse ``x'(0) = v0`` on the virgin joint, the experiment
   of a hammer test. Per half cycle between consecutive turning points ``x_n``, ``x_{n+1}``
   (where ``x' = 0``): the amplitude ``a = |x_{n+1} - x_n| / 2`` (peak to peak, so the joint's
   residual offset drops out), the frequency ``omega = pi / (t_{n+1} - t_n)`` and the damping
   ratio ``zeta = Delta E / (4 pi E)`` with ``Delta E / 2`` the joint's dissipation over the
   half cycle (the state's ``E_friction``) and ``E = m omega^2 a^2 / 2``; also the logarithmic
   decrement ``ln(a_n / a_{n+1}) / pi``.
2. **Frequency-response curves** (:func:`frequency_response`): ``jf.sweep`` over
   ``"force.omega"`` (200 lanes) of the template (64 elements, ``c = 0.01``) from rest, the
   amplitude ``(max x - min x) / 2`` over the last ``window`` seconds of ``t1``.

References (not computed by jaxfriction; :func:`masing_backbone`, :func:`segalman_backbone`):
the single-mode harmonic-balance (averaging) backbone of a Masing joint: under ``x = a cos
theta`` a Jenkins element of stiffness ``k_i`` and slip displacement ``p_i = phi_i / k_i <
a`` has the in-phase first-harmonic stiffness ``k_i (beta - sin(2 beta) / 2) / pi`` with
``cos beta = 1 - 2 p_i / a`` (Caughey 1960's bilinear hysteresis), and dissipates ``4 phi_i
(a - p_i)`` per cycle, so ``omega(a) = sqrt((k + K_1(a)) / m)`` and ``zeta(a) = D(a) / (2 pi
(k + K_1(a)) a^2)``. For Segalman's continuous density ``rho = R phi^chi`` below
``phi_max`` (the ``SegalmanIwan`` docstring) both are closed forms for ``a < phi_max``:

    D(a) = 4 R a^(3 + chi) / ((chi + 2)(chi + 3))                       (Segalman 2005)
    K_1(a) = K_T - R C_chi a^(1 + chi),  C_chi = int_0^1 (1 - g(s)) s^chi ds

(``g(s) = (beta - sin(2 beta) / 2) / pi`` at ``cos beta = 1 - 2 s``; ``C_{-0.5} = 1.3581``), so at
small amplitude ``zeta ~ 2 R a^(1 + chi) / (pi (chi + 2)(chi + 3)(k + K_T))`` and ``1 -
omega / omega_0 ~ R C_chi a^(1 + chi) / (2 (k + K_T))``: both follow Segalman's power law
``a^(1 + chi)`` (the dissipation ``~ F^(3 + chi)``).

    PYTHONPATH=. python scripts/studies/jointed_backbone.py [--elements 1024] [--steps 400] [--cycles 300]
        [--forces 0.003 0.01 0.03 0.1] [--n-omega 200] [--t1 1000] [--figure backbone.png]

Measured (2-core VM shared with other jobs, float64; one run each):

- ring-down, 1024 elements, 400 RK4 steps per stuck period, 300 stuck periods (590 half
  cycles from ``a = 0.52 phi_max`` down to ``3e-4 phi_max``), 5.5 s, the elements marched by
  RK4 (2026-11-29). Over ``a = 1e-3 .. 1e-2 phi_max`` (230 half cycles): the dissipation per
  cycle has log-log slope 2.49994 against Segalman's ``3 + chi = 2.5`` and is within 0.11 % of
  his closed form; ``zeta(a)`` has slope 0.5132, the continuous harmonic-balance backbone
  0.5132 (not 0.5: its denominator ``k + K_1(a)`` loses 4.6 % of its stiffness at ``1e-2
  phi_max``), and is within 0.045 % of the discrete backbone (0.036 % at 800 steps), 4.9 % of
  the pure power law; ``omega`` is within 2e-5 of the backbone, ``omega_0 - omega`` has slope
  0.5035 (backbone 0.5033). Integrated through the elements' rate, before the march, the
  exact switch was first order in the step: ``zeta`` within 0.8 % of the backbone (0.36 % at
  800 steps), the dissipation within 0.9 % of Segalman's form, ``omega`` within 8e-5 (3.6e-5
  at 800 steps). The logarithmic decrement gives slope 0.5182 and lies 0.5 .. 1.8 % above the
  backbone's ``zeta``: the averaging behind the backbone is first order in the nonlinearity,
  and the peak amplitude is not the first harmonic's; ``Delta E / (4 pi E)`` is the measure that matches.
- frequency response, template (64 elements, ``c = 0.01``), 200 values of ``omega`` in
  ``[1.5, 2.2]`` per force (``F = 0.003, 0.01, 0.03, 0.1``), ``t1 = 1000 s`` from rest, window
  30 s, RK4 ``dt = 0.02``: 7 .. 12.5 s per 200-lane curve, compile included (the target was
  60 s), every lane status 0. Doubling ``t1`` changes the amplitude by at most 4e-3 (next to
  the softening jump; median 2e-4). The peaks lie on the ring-down backbone of the same joint
  within 0.19 % in ``omega`` (the grid's spacing is 0.18 %) and satisfy the energy balance
  ``pi F a = D(a) + pi c omega a^2`` (``D`` by Masing's rules) to 0.993 .. 0.996.

Shooting (``jf.periodic_orbit``, ``jf.sweep(..., steady_state=True)``) is not used: see the
how-to ``docs/howto/periodic.md``, section "Jointed oscillator".
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

import jaxfriction as jf

JOINT = {"F_S": 1.0, "K_T": 3.0, "chi": -0.5, "beta": 0.1}
MASS, STIFFNESS = 1.0, 1.0
#: the small-amplitude range of the power-law fits, in units of phi_max
FIT_RANGE = (1e-3, 1e-2)
#: saved points per stuck period in the ring-down (turning points by a parabola through 4 of them)
SAVES_PER_PERIOD = 100


def jenkins_in_phase(s) -> np.ndarray:
    """In-phase first-harmonic stiffness of a unit Jenkins element, ``g(s)``, at ``s = p / a``
    (slip displacement over amplitude): ``(beta - sin(2 beta) / 2) / pi`` with ``cos beta = 1
    - 2 s`` for ``s < 1``, 1 (elastic) for ``s >= 1`` (Caughey 1960, bilinear hysteresis)."""
    s = np.minimum(np.asarray(s, float), 1.0)
    beta = np.arccos(1.0 - 2.0 * s)
    return (beta - np.sin(2.0 * beta) / 2.0) / math.pi


def masing_backbone(stiffness, slip_force, amplitude, k=STIFFNESS, m=MASS):
    """Harmonic-balance backbone of a mass on a spring ``k`` with discrete Jenkins elements.

    Args:
        stiffness, slip_force: the elements ``k_i``, ``phi_i`` ``(n,)`` (N/m, N).
        amplitude: displacement amplitudes ``a`` ``(p,)`` (m).
        k, m: the spring in parallel (N/m) and the mass (kg).

    Returns:
        ``(omega (p,) rad/s, zeta (p,), dissipation per cycle (p,) J)``.
    """
    ki, phi = np.asarray(stiffness, float), np.asarray(slip_force, float)
    a = np.asarray(amplitude, float)[:, None]
    p = phi / ki
    k1 = np.sum(ki * jenkins_in_phase(p / a), axis=1)
    d = np.sum(4.0 * phi * np.maximum(a - p, 0.0), axis=1)
    a = a[:, 0]
    return np.sqrt((k + k1) / m), d / (2 * math.pi * (k + k1) * a**2), d


def chi_constant(chi: float) -> float:
    """``C_chi = int_0^1 (1 - g(s)) s^chi ds`` (the continuous model's stiffness loss)."""
    from scipy.integrate import quad

    return quad(lambda s: (1.0 - float(jenkins_in_phase(s))) * s**chi, 0.0, 1.0, limit=200)[0]


def segalman_backbone(law, amplitude, k=STIFFNESS, m=MASS):
    """Harmonic-balance backbone of Segalman's continuous model, ``a < phi_max`` (module docstring).

    Returns:
        ``(omega, zeta, omega_power_law, zeta_power_law)``, each ``(p,)``: the backbone and its
        small-amplitude power laws ``omega_0 (1 - R C a^(1+chi) / (2 (k + K_T)))`` and ``2 R
        a^(1+chi) / (pi (chi+2)(chi+3)(k + K_T))``.
    """
    phi_max, r, _ = (float(v) for v in law.density())
    chi, k_t = float(law.chi), float(law.K_T)
    a = np.asarray(amplitude, float)
    if np.any(a >= phi_max):
        raise ValueError(f"amplitude must be below phi_max = {phi_max}")
    c = chi_constant(chi)
    k1 = k_t - r * c * a ** (1 + chi)
    d = 4 * r * a ** (3 + chi) / ((chi + 2) * (chi + 3))
    omega0 = math.sqrt((k + k_t) / m)
    return (np.sqrt((k + k1) / m), d / (2 * math.pi * (k + k1) * a**2),
            omega0 * (1 - r * c * a ** (1 + chi) / (2 * (k + k_t))),
            2 * r * a ** (1 + chi) / (math.pi * (chi + 2) * (chi + 3) * (k + k_t)))


def turning_points(ts, x, v):
    """Times and positions where ``x' = 0``: a parabola through the 4 saved points around each
    sign change of ``v``. Returns ``(t (n,), x (n,))``."""
    ts, x, v = (np.asarray(a, float) for a in (ts, x, v))
    idx = np.flatnonzero(np.sign(v[1:]) != np.sign(v[:-1]))
    idx = idx[(idx >= 1) & (idx + 2 < len(x))]
    t_out, x_out = [], []
    for j in idx:
        u = np.arange(4.0)
        c = np.polyfit(u, x[j - 1:j + 3], 2)
        s = -c[1] / (2 * c[0])
        t_out.append(np.interp(s, u, ts[j - 1:j + 3]))
        x_out.append(np.polyval(c, s))
    return np.asarray(t_out), np.asarray(x_out)


def backbone_from_turning_points(t, peaks, dissipated, m=MASS):
    """Per half cycle ``n`` (turning point ``n`` to ``n + 1``): ``(a, zeta, omega, zeta_decrement)``.

    ``a = |x_{n+1} - x_n| / 2``, ``omega = pi / (t_{n+1} - t_n)``, ``zeta = Delta E / (4 pi E)``
    with the joint's dissipation over the half cycle ``Delta E / 2 = E_f(t_{n+1}) - E_f(t_n)``
    and ``E = m omega^2 a^2 / 2``; ``zeta_decrement = ln(a_n / a_{n+1}) / pi`` between this half
    cycle and the next (the logarithmic decrement, NaN for the last).
    """
    a = np.abs(np.diff(peaks)) / 2
    omega = math.pi / np.diff(t)
    zeta = 2 * np.diff(dissipated) / (4 * math.pi * 0.5 * m * omega**2 * a**2)
    decrement = np.append(np.log(a[:-1] / a[1:]) / math.pi, np.nan)
    return a, zeta, omega, decrement


def ring_down(n_elements=1024, steps=400, cycles=300, start=0.5):
    """The free decay of the jointed oscillator after an impulse, measured per half cycle.

    Args:
        n_elements: elements of Segalman's joint (int).
        steps: RK4 steps per stuck period ``2 pi / sqrt((k + K_T) / m)``.
        cycles: stuck periods simulated.
        start: the impulse ``v0 = start * phi_max * omega_0`` (a first amplitude somewhat
            below ``start * phi_max``).

    Returns:
        dict: ``a``, ``zeta``, ``omega`` (arrays per half cycle), ``law``, ``phi_max``,
            ``seconds``, ``status``.
    """
    law = jf.SegalmanIwan(**JOINT, n_elements=int(n_elements))
    system = jf.jointed_oscillator(law, force_amplitude=0.0, omega=1.0, mass=MASS, stiffness=STIFFNESS,
                                   damping=0.0)
    phi_max = float(law.density()[0])
    omega0 = math.sqrt((STIFFNESS + JOINT["K_T"]) / MASS)
    period = 2 * math.pi / omega0
    t0 = time.perf_counter()
    save_every = max(steps // SAVES_PER_PERIOD, 1)
    traj = jf.simulate(system, jnp.array([0.0, start * phi_max * omega0]), 0.0, cycles * period,
                       dt=period / steps, save_every=save_every)
    x = np.asarray(traj.position)
    seconds = time.perf_counter() - t0
    t, peaks = turning_points(traj.ts, x, traj.velocity)
    dissipated = np.interp(t, np.asarray(traj.ts), np.asarray(traj.friction_dissipation))
    a, zeta, omega, decrement = backbone_from_turning_points(t, peaks, dissipated)
    return {"a": a, "zeta": zeta, "omega": omega, "zeta_decrement": decrement, "law": law, "phi_max": phi_max,
            "seconds": seconds, "status": int(traj.status)}


def slope(a, y, lo, hi):
    """Least-squares log-log slope of ``y(a)`` over ``lo <= a <= hi``."""
    sel = (a >= lo) & (a <= hi)
    return float(np.polyfit(np.log(a[sel]), np.log(y[sel]), 1)[0])


def compare(ring, fit_range=FIT_RANGE):
    """The ring-down against the discrete and continuous backbones and the power law (JSON-ready)."""
    law, phi_max = ring["law"], ring["phi_max"]
    a, zeta, omega = ring["a"], ring["zeta"], ring["omega"]
    lo, hi = fit_range[0] * phi_max, fit_range[1] * phi_max
    sel = (a >= lo) & (a <= hi)
    k_el, phi_el = (np.asarray(v) for v in law.elements())
    w_disc, z_disc, _ = masing_backbone(k_el, phi_el, a)
    w_cont, z_cont, w_pow, z_pow = segalman_backbone(law, a[a < phi_max])
    omega0 = math.sqrt((STIFFNESS + JOINT["K_T"]) / MASS)
    d_meas = zeta * 2 * math.pi * MASS * omega**2 * a**2  # the joint's dissipation per cycle, 2 Delta E_half
    rel = lambda u, v: float(np.max(np.abs(u[sel] / v[sel] - 1)))
    return {
        "n_elements": law.n_elements, "phi_max": phi_max, "half_cycles": int(a.size),
        "amplitude_range": [float(a.min() / phi_max), float(a.max() / phi_max)],
        "fit_range_phi_max": list(fit_range), "fit_points": int(sel.sum()),
        "segalman_exponent_1_plus_chi": 1.0 + JOINT["chi"],
        "slope_zeta": slope(a, zeta, lo, hi), "slope_omega_drop": slope(a, omega0 - omega, lo, hi),
        "slope_zeta_continuous_backbone": slope(a, z_cont, lo, hi),
        "slope_omega_drop_continuous_backbone": slope(a, omega0 - w_cont, lo, hi),
        "zeta_vs_discrete_backbone": rel(zeta, z_disc), "zeta_vs_continuous_backbone": rel(zeta, z_cont),
        "zeta_vs_power_law": rel(zeta, z_pow),
        "slope_dissipation": slope(a, d_meas, lo, hi), "segalman_exponent_3_plus_chi": 3.0 + JOINT["chi"],
        "dissipation_vs_segalman": rel(d_meas, np.asarray(law.small_amplitude_dissipation(law.K_T * a))),
        "slope_zeta_decrement": slope(a[sel], ring["zeta_decrement"][sel], lo, hi),
        "zeta_decrement_vs_continuous_backbone": [float(np.nanmin(ring["zeta_decrement"][sel] / z_cont[sel] - 1)),
                                                  float(np.nanmax(ring["zeta_decrement"][sel] / z_cont[sel] - 1))],
        "omega_vs_discrete_backbone": rel(omega, w_disc), "omega_vs_continuous_backbone": rel(omega, w_cont),
        "omega_vs_power_law": rel(omega, w_pow),
        "zeta_at_1e-2_phi_max": float(np.interp(np.log(hi), np.log(a[::-1]), zeta[::-1])),
        "chi_constant": chi_constant(JOINT["chi"]),
        "seconds": ring["seconds"], "status": ring["status"],
    }


def peak_amplitude(tr):
    """``(max x - min x) / 2`` over the window (m)."""
    return (jnp.max(tr.position) - jnp.min(tr.position)) / 2


def frequency_response(force=0.01, omegas=None, t1=1000.0, window=30.0, dt=0.02):
    """One frequency-response curve of the ``"jointed"`` template by a transient sweep.

    Args:
        force: force amplitude ``F`` (N).
        omegas: forcing frequencies (rad/s; default 200 in ``[1.5, 2.2]``).
        t1, window: run length and measured final window (s).
        dt: RK4 step (s).

    Returns:
        dict: ``omega``, ``amplitude`` (m), ``status``, ``seconds`` (wall, compile included),
            ``kernel``.
    """
    omegas = np.linspace(1.5, 2.2, 200) if omegas is None else np.asarray(omegas, float)
    system = jf.set_parameters(jf.template("jointed").system, {"force.amplitude": float(force)})
    t0 = time.perf_counter()
    ds = jf.sweep(system, {"force.omega": omegas}, t1=t1, window=window, dt=dt,
                  observables={"amplitude": peak_amplitude}, gradient="none", progress=False)
    amplitude = np.asarray(ds["amplitude"].values)
    return {"omega": omegas, "amplitude": amplitude, "status": np.asarray(ds["status"].values),
            "seconds": time.perf_counter() - t0, "kernel": ds.attrs.get("kernel")}


def peak_checks(curve, force, ring64):
    """The curve's peak against the 64-element ring-down backbone and the energy balance."""
    i = int(np.argmax(curve["amplitude"]))
    w_pk, a_pk = float(curve["omega"][i]), float(curve["amplitude"][i])
    a, omega = ring64["a"], ring64["omega"]
    w_backbone = float(np.interp(np.log(a_pk), np.log(a[::-1]), omega[::-1]))
    law = jf.template("jointed").system.law
    k_el, phi_el = (np.asarray(v) for v in law.elements())
    _, _, d = masing_backbone(k_el, phi_el, [a_pk])
    c = float(jf.template("jointed").system.damping)
    balance = (float(d[0]) + math.pi * c * w_pk * a_pk**2) / (math.pi * force * a_pk)
    return {"force": force, "peak_omega": w_pk, "peak_amplitude": a_pk, "backbone_omega_at_peak": w_backbone,
            "peak_vs_backbone": w_pk / w_backbone - 1, "energy_balance_ratio": balance,
            "seconds": curve["seconds"], "lanes": int(curve["omega"].size),
            "lanes_ok": int(np.sum(curve["status"] == 0)), "kernel": curve["kernel"]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--elements", type=int, default=1024)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--cycles", type=int, default=300)
    p.add_argument("--forces", type=float, nargs="*", default=[0.003, 0.01, 0.03, 0.1])
    p.add_argument("--n-omega", type=int, default=200)
    p.add_argument("--t1", type=float, default=1000.0)
    p.add_argument("--figure", default=None)
    args = p.parse_args(argv)
    ring = ring_down(args.elements, args.steps, args.cycles)
    out = {"ring_down": compare(ring)}
    print(json.dumps(out, indent=1), flush=True)
    curves, peaks = [], []
    if args.forces:
        ring64 = ring_down(64, args.steps, args.cycles)
        for force in args.forces:
            curve = frequency_response(force, np.linspace(1.5, 2.2, args.n_omega), t1=args.t1)
            curves.append(curve)
            peaks.append(peak_checks(curve, force, ring64))
            print(json.dumps(peaks[-1]), flush=True)
    out["frequency_response"] = peaks
    if args.figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
        a = ring["a"] / ring["phi_max"]
        _, z_cont, _, z_pow = segalman_backbone(ring["law"], ring["a"][ring["a"] < ring["phi_max"]])
        ax1.loglog(a, ring["zeta"], ".", ms=3, label="ring-down (1024 elements)")
        ax1.loglog(a[: z_cont.size], z_cont, "-", label="harmonic balance, continuous")
        ax1.loglog(a[: z_pow.size], z_pow, "--", label=r"Segalman $\propto a^{1+\chi}$")
        ax1.set(xlabel=r"$a / \phi_{max}$", ylabel=r"damping ratio $\zeta$")
        ax1.legend()
        for curve, force in zip(curves, args.forces):
            ax2.semilogy(curve["omega"], curve["amplitude"], "-", label=f"F = {force}")
        ax2.semilogy(ring64["omega"], ring64["a"], "k--", label="ring-down backbone (64 elements)")
        ax2.set(xlabel=r"$\omega$ (rad/s)", ylabel="amplitude (m)", xlim=(1.5, 2.2))
        ax2.legend(loc="lower left", fontsize=8)
        fig.tight_layout()
        fig.savefig(args.figure, dpi=120)
    return out


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    main()
