"""The figures of the paper reproductions (matplotlib, Agg back end): written to files, never shown.

Each function draws one paper's figure from the numbers and trajectories its reproduction
returns (``jaxfriction reproduce ...``); the sweep figure lives in :mod:`jaxfriction._plots`.
"""

from __future__ import annotations

import numpy as np

from .._plots import plt  # pyplot, with the Agg back end set


def plot_quinn_fig5(numbers, trajectories, path) -> None:
    """Quinn 2004 Fig. 5 (three panels of x(t)) and the Fig. 6 close-up, saved to ``path``."""
    titles = {"coulomb": "(a) classical Coulomb", "velocity_limited": "(b) velocity-limited",
              "quinn": "(c) Quinn regularization"}
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8), constrained_layout=True)
    for ax, (name, traj) in zip(axes, trajectories.items()):
        ax.plot(traj.ts, traj.position, lw=1.2)
        ax.axhline(numbers["exact_rest_position"], color="k", ls=":", lw=0.8, label="exact rest -0.75")
        ax.set(xlabel="t", ylabel="x", title=f"{titles[name]}\nrest {numbers['laws'][name]['rest_position']:.6f}")
    q = trajectories["quinn"]
    window = (q.ts >= 2.5) & (q.ts <= 3.5)
    axes[3].plot(q.ts[window], q.position[window], "--", label="x")
    axes[3].plot(q.ts[window], q.friction_force[window], "-", label="f")
    axes[3].set(xlabel="t", title="Fig. 6: Quinn law near sticking")
    axes[3].legend()
    fig.suptitle(f"Quinn 2004 Fig. 5: RK4 dt={numbers['dt']}, eps={numbers['eps']:g}")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_quinn_fig7(numbers, path) -> None:
    """Quinn 2004 Fig. 7: |percent error| of D against the RK4 step, one panel per case."""
    styles = {"classical": "s--", "velocity_limited": "p:", "quinn": "^-", "quinn_eps_dt": "v-"}
    fig, axes = plt.subplots(1, len(numbers["cases"]), figsize=(12, 4.5), constrained_layout=True)
    for ax, (case, c) in zip(np.atleast_1d(axes), numbers["cases"].items()):
        for name, law in c["laws"].items():
            ax.loglog(law["h"], np.abs(law["percent_error"]), styles.get(name, "o-"),
                      label=f"{name} (order {law['order']:.2f})")
        ax.set(xlabel="RK4 step h", ylabel="|%E| of D in the last cycle",
               title=f"({case}) alpha={c['alpha']}, omega={c['omega']}, D_exact={c['D_exact']:.10g}")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"Quinn 2004 Fig. 7: dissipation error per cycle (cycle {numbers['cycles']}), mu N = 1")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_quinn_fig9(numbers, path) -> None:
    """Quinn 2004 Fig. 9: chain dissipation per cycle against the RK4 step."""
    styles = {"classical": "s--", "velocity_limited": "p:", "quinn": "^-"}
    fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
    for name, law in numbers["laws"].items():
        ax.semilogx(law["h"], law["D"], styles.get(name, "o-"), label=name)
    ax.axhline(numbers["D0_moreau_jean"], color="k", lw=0.8, label=f"Moreau-Jean D0 = {numbers['D0_moreau_jean']:.6f}")
    ax.axhline(numbers["paper_D0"], color="gray", ls=":", lw=0.8, label="paper D0 = 0.0105")
    ax.set(xlabel="RK4 step h", ylabel="D (4th cycle)", ylim=(0, None),
           title=f"Quinn 2004 Fig. 9: chain n={numbers['n']}, alpha={numbers['alpha']}, omega={numbers['omega']}")
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_quinn_fig11(numbers, trajectories, path) -> None:
    """Quinn 2004 Fig. 11: positions and interface slip velocities, Quinn's law vs Moreau-Jean."""
    quinn, exact = trajectories
    fig, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True, constrained_layout=True)
    for k, style in ((0, "-"), (1, "--")):
        axes[0].plot(quinn.ts, quinn.position[:, k], style, color="C0", label=f"x{k + 1} Quinn")
        axes[0].plot(exact.ts, exact.position[:, k], style, color="C3", lw=0.8, label=f"x{k + 1} Moreau-Jean")
        axes[1].plot(quinn.ts, quinn.slip_velocity[:, k], style, color="C0", label=f"z{k + 1}' Quinn")
        axes[1].plot(exact.ts, exact.slip_velocity[:, k], style, color="C3", lw=0.8, label=f"z{k + 1}' Moreau-Jean")
    axes[0].set(ylabel="x")
    axes[1].set(ylabel="relative velocity z'", xlabel="t")
    for ax in axes:
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle("Quinn 2004 Fig. 11: two blocks on a belt, stick fractions "
                 f"{numbers['stick_fraction_quinn'][0]:.3f}/{numbers['stick_fraction_quinn'][1]:.3f} (Quinn) vs "
                 f"{numbers['stick_fraction_moreau_jean'][0]:.3f}/{numbers['stick_fraction_moreau_jean'][1]:.3f} (exact)")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_awrejcewicz(numbers, data, path) -> None:
    """Paper 002 Figs. 3-5: phase portraits (M0 = 0; omega_dr = 0.11, 0.3), bifurcation and lambda_1."""
    fig = plt.figure(figsize=(15, 8), constrained_layout=True)
    grid = fig.add_gridspec(2, 3)
    ax = fig.add_subplot(grid[0, 0])
    for name, traj in data["fig3"].items():
        keep = traj.ts >= 20.0
        ax.plot(traj.position[keep], traj.velocity[keep], lw=0.8, label=name)
    p = numbers["stick_slip_period"]["continuous"]["period"]
    ax.set(xlabel="phi", ylabel="phi'", title=f"Fig. 3: M0 = 0, stick-slip period {p:.3f} s")
    ax.legend(fontsize=8)
    for k, (w, traj) in enumerate(data["fig4"].items()):
        ax = fig.add_subplot(grid[0, 1 + k])
        keep = traj.ts >= 200.0
        ax.plot(traj.position[keep], traj.velocity[keep], lw=0.4)
        ax.set(xlabel="phi", ylabel="phi'", title=f"Fig. 4: omega_dr = {w}, t in [200, 500], "
               f"lambda_1 = {numbers['lambda_1'][str(w)]:.3f}")
    ax = fig.add_subplot(grid[1, :2])
    ws, samples = data["omega_dr"], data["samples"]
    ax.plot(np.repeat(ws, samples.shape[1]), samples.ravel(), ",k", alpha=0.6)
    ax.set(xlabel="omega_dr", ylabel="phi (stroboscopic)", title="Fig. 5: bifurcation diagram")
    ax = fig.add_subplot(grid[1, 2])
    ax.errorbar(ws, data["lambda"], yerr=2 * data["sigma"], fmt=".-", lw=0.8, ms=3)
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set(xlabel="omega_dr", ylabel="lambda_1 (1/s)", title="largest Lyapunov exponent (+-2 sigma)")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_na2d(numbers, trajectories, path) -> None:
    """Paper 003 Fig. 2 style: velocity and acceleration of the block in x and y, four models."""
    from .na2d import WINDOW, _acceleration, _floor

    floor = _floor()
    fig, axes = plt.subplots(2, 2, figsize=(13, 7), sharex=True, constrained_layout=True)
    styles = {"reference": ("k", 2.2), "moreau-jean": ("C0", 1.0), "quinn": ("C1", 1.0),
              "griffin-spring": ("C2", 0.8), "na-eltawil": ("C3", 0.8)}
    for name, traj in trajectories.items():
        color, lw = styles[name]
        ts = np.asarray(traj.ts)
        keep = (ts >= WINDOW[0]) & (ts <= WINDOW[1])
        mid, acc = _acceleration(traj, floor)
        keep_mid = (mid >= WINDOW[0]) & (mid <= WINDOW[1])
        label = name if name == "reference" else (
            f"{name} (max |dV| {max(numbers['methods'][name]['max_velocity_error']):.1e} m/s)")
        for i, axis in enumerate("xy"):
            axes[0, i].plot(ts[keep], np.asarray(traj.ys[keep, 2 + i]), color=color, lw=lw, label=label)
            axes[1, i].plot(mid[keep_mid], acc[keep_mid, i], color=color, lw=lw)
            axes[0, i].set(ylabel=f"relative velocity V_{axis} (m/s)", title=f"{axis} direction")
            axes[1, i].set(xlabel="t (s)", ylabel=f"block acceleration u''_{axis} (m/s^2)")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Paper 003 validation case (m = 1 kg, mu = {numbers['mu']}, dt = {numbers['dt'] * 1e3:g} ms, "
                 f"k_t = {numbers['k_t']:g} N/m); reference: Moreau-Jean at {numbers['reference_dt']:.1e} s")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_lugre(numbers, data, path) -> None:
    """LuGre: the steady-state Stribeck curve (simulated against the closed form) and the
    presliding hysteresis loop (simulated against the closed form, slope sigma0 at reversal)."""
    from .lugre import steady_state_closed_form

    law, p = data["law"], numbers["presliding"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    ax = axes[0]
    dense = np.concatenate([-np.logspace(0, -6, 400), np.logspace(-6, 0, 400)])
    ax.plot(dense, steady_state_closed_form(law, dense), "k-", lw=1.2,
            label="closed form sgn(v)(F_c + (F_s - F_c) exp(-|v/v_s|^2)) + sigma2 v")
    ax.plot(data["velocities"], data["simulated"], "o", color="C3", ms=4,
            label=f"simulated steady states (max rel. error {numbers['steady_state']['max_relative_error']:.1e})")
    ax.set_xscale("symlog", linthresh=1e-5)
    ax.set(xlabel="slip velocity v (m/s)", ylabel="friction force F (N)", title="Stribeck curve (steady sliding)")
    ax.legend(fontsize=7, loc="upper left")
    ax = axes[1]
    scale = 1e6
    ax.plot(data["x"] * scale, data["force"], "C0-", lw=2, label="simulated (RK4 on z)")
    ax.plot(data["x"] * scale, data["closed_force"], "k--", lw=1,
            label=f"closed form, g = F_s (max dev. {p['max_deviation_from_closed_form']:.1e} of |F|)")
    xr, fr = data["reversal"]
    dx = np.array([-0.6, 0.0]) * p["amplitude"]
    ax.plot((xr + dx) * scale, fr + law.sigma0 * dx, "C3:", lw=1.5, label="slope sigma0 at the reversal")
    ax.set(xlabel="displacement x (um)", ylabel="friction force F (N)",
           title=f"presliding loop, X = {p['amplitude'] * scale:g} um "
                 f"(slope after reversal {p['reversal_slope_over_sigma0']:.4f} sigma0)")
    ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("LuGre (Canudas de Wit et al. 1995), the paper's parameters: sigma0 = 1e5 N/m, F_c = 1 N, "
                 "F_s = 1.5 N, v_s = 1 mm/s")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_iwan(numbers, curves, path) -> None:
    """Dissipation per cycle of the jointed oscillator vs the joint's and the applied force amplitude."""
    f, fj, d, closed = (np.asarray(curves[k]) for k in ("force", "joint_force", "dissipation", "closed_form"))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), constrained_layout=True)
    ax = axes[0]
    ax.loglog(fj, d, "o", ms=4, label="simulated (last cycle)")
    micro = fj < 0.03 * numbers["F_S"]
    ax.loglog(fj[micro], numbers["fitted_prefactor"] * fj[micro] ** numbers["fitted_slope"], "k-",
              label=f"fitted power law, slope {numbers['fitted_slope']:.3f} (3 + chi = {numbers['segalman_slope']:g})")
    ax.loglog(fj, closed, "C1--", label="Segalman's small-amplitude closed form")
    ax.axvline(numbers["F_S"], color="grey", ls=":", label="F_S (macroslip)")
    ax.set(xlabel="joint force amplitude F_j (N)", ylabel="dissipation per cycle D (J)",
           title="microslip: D ~ F_j^(3 + chi)")
    ax.legend(fontsize=8)
    ax = axes[1]
    ax.loglog(f, d, "o-", ms=4, label="D")
    if numbers["macroslip_force_measured"] is not None:
        ax.axvline(numbers["macroslip_force_measured"], color="C3", ls="--",
                   label=f"macroslip (u = phi_max) at F = {numbers['macroslip_force_measured']:.3f} N")
    ax.axvline(numbers["macroslip_force_quasistatic"], color="grey", ls=":",
               label=f"quasi-static F_S + (k - m w^2) phi_max = {numbers['macroslip_force_quasistatic']:.3f} N")
    ax.set(xlabel="applied force amplitude F (N)", ylabel="dissipation per cycle D (J)",
           title="microslip to macroslip")
    ax.legend(fontsize=8)
    fig.suptitle(f"Jointed oscillator: m = {numbers['mass']:g}, k = {numbers['stiffness']:g}, Segalman joint F_S = "
                 f"{numbers['F_S']:g}, K_T = {numbers['K_T']:g}, chi = {numbers['chi']:g}, beta = {numbers['beta']:g} "
                 f"({numbers['n_elements']} elements), omega = {numbers['omega']:g}")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_rate_state(numbers, data, path) -> None:
    """Rate-and-state spring-slider: (a) velocity-step friction transients of both state laws
    with the velocity-controlled closed forms, (b) growth rate and (c) angular frequency of
    perturbations of steady sliding against ``k / k_c``, simulated and linear theory."""
    from .rate_state import STEP, linear_theory_curve

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), constrained_layout=True)
    law, e, V = numbers["law"], numbers["e"], numbers["V"]
    for i, (evolution, run) in enumerate(data["step"].items()):
        t = run["ts"] - STEP["t_step"]
        slip = t * e * V / law["D_c"]  # load-point slip after the step, in D_c
        keep = slip >= -1.0
        axes[0].plot(slip[keep], run["mu"][keep], color=f"C{i}", lw=1.4, label=f"{evolution} law, spring-slider")
        closed = np.where(t >= 0, run["closed"], np.nan)
        axes[0].plot(slip[keep], closed[keep], color="k", ls="--", lw=0.9,
                     label="velocity-controlled closed form" if i == 0 else None)
    rise = numbers["laws"][next(iter(numbers["laws"]))]["step"]
    mu0 = rise["mu_ss_before"]
    axes[0].axhline(mu0 + numbers["direct_effect"], color="0.5", lw=0.7, ls=":")
    axes[0].text(0.1, mu0 + numbers["direct_effect"], "  mu_ss(V) + a ln e", va="bottom", fontsize=8)
    axes[0].axhline(mu0 + (law["a"] - law["b"]) * np.log(e), color="0.5", lw=0.7, ls=":")
    axes[0].set(xlabel="load-point slip after the step / D_c", ylabel="friction coefficient mu",
                title=f"(a) velocity step V -> {e:g} V")
    axes[0].legend(fontsize=8)
    ratios = np.linspace(0.7, 1.35, 131)
    rate, omega = linear_theory_curve(ratios)
    axes[1].plot(ratios, rate, color="k", lw=1.0, label="linear theory (max Re lambda)")
    axes[2].plot(ratios, omega, color="k", lw=1.0, label="linear theory (Im lambda)")
    for i, (evolution, stab) in enumerate((k, v["stability"]) for k, v in numbers["laws"].items()):
        r = [p["ratio"] for p in stab["points"]]
        axes[1].plot(r, [p["growth_rate"] for p in stab["points"]], "o" if i == 0 else "x", color=f"C{i}", ms=7,
                     mfc="none", label=f"simulated, {evolution} law")
        axes[2].plot(r, [p["omega"] for p in stab["points"]], "o" if i == 0 else "x", color=f"C{i}", ms=7,
                     mfc="none", label=f"simulated, {evolution} law")
    stab = next(iter(numbers["laws"].values()))["stability"]
    axes[1].axhline(0.0, color="0.5", lw=0.7)
    axes[1].axvline(1.0, color="0.5", lw=0.7, ls=":")
    axes[1].set(xlabel="k / k_c", ylabel="growth rate of perturbations (1/s)",
                title=f"(b) k_c = {stab['k_c']:.3g} N/m (quasi-static {stab['k_c_quasi_static']:.3g})")
    axes[2].axhline(stab["omega_c"], color="0.5", lw=0.7, ls=":")
    axes[2].axvline(1.0, color="0.5", lw=0.7, ls=":")
    axes[2].set(xlabel="k / k_c", ylabel="angular frequency (rad/s)",
                title=f"(c) omega_c = (V/D_c) sqrt((b-a)/a) = {stab['omega_c']:.4g} rad/s")
    axes[1].legend(fontsize=8)
    axes[2].legend(fontsize=8)
    fig.suptitle(f"Rate-and-state spring-slider (a = {law['a']}, b = {law['b']}, D_c = {law['D_c']} m, V = {V} m/s)")
    fig.savefig(path, dpi=110)
    plt.close(fig)
