"""``jaxfriction reproduce``: the published figures of the source papers."""

from __future__ import annotations

import click

from .common import _check_writable, _fail, _report, main


@main.group()
def reproduce() -> None:
    """Reproduce a published figure (writes a PNG; --json prints the key numbers)."""


@reproduce.command("quinn-fig5", short_help="Quinn 2004 Fig 5: unforced oscillator, rest positions of three laws")
@click.option("--dt", default=0.01, show_default=True, help="RK4 step.")
@click.option("--t1", default=50.0, show_default=True, help="End time.")
@click.option("--eps-factor", default=1.0, show_default=True,
              help="eps = factor * dt; 1 reproduces the paper's -0.750090, 2 is the printed '2 dt'.")
@click.option("--figure", default="jaxfriction-out/quinn-fig5.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig5_command(dt, t1, eps_factor, figure, as_json) -> None:
    """Quinn 2004 Fig. 5: unforced oscillator from (2.75, 0) with three laws."""
    import jax

    from .._reproduce import quinn_fig5
    from .._reproduce.figures import plot_quinn_fig5

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, trajectories = quinn_fig5(dt=dt, t1=t1, eps_factor=eps_factor)
        except ValueError as exc:
            _fail(exc)
        _report(numbers, figure, as_json, lambda: plot_quinn_fig5(numbers, trajectories, figure), [
            *(f"{name:17s} rest position {r['rest_position']: .6f}  RK4-stage chatter {r['chatter_count']}"
              for name, r in numbers["laws"].items()),
            f"exact {numbers['exact_rest_position']}, paper (Quinn) {numbers['paper_quinn_rest_position']}",
        ])


@reproduce.command("quinn-fig7", short_help="Quinn 2004 Fig 7: dissipation error vs RK4 step, exact event-driven reference")
@click.option("--dt", "dts", multiple=True, type=float, help="RK4 step (repeatable) [default: 0.1 ... 0.001].")
@click.option("--cycles", default=50, show_default=True, help="Cycles; D is measured in the last.")
@click.option("--figure", default="jaxfriction-out/quinn-fig7.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig7_command(dts, cycles, figure, as_json) -> None:
    """Quinn 2004 Fig. 7: dissipation error vs RK4 step against the exact event-driven solution."""
    import jax

    from .._reproduce import quinn_fig7
    from .._reproduce.figures import plot_quinn_fig7
    from .._reproduce.quinn_fig7 import DTS

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers = quinn_fig7(dts=dts or DTS, cycles=cycles)
        except ValueError as exc:
            _fail(exc)
    _report(numbers, figure, as_json, lambda: plot_quinn_fig7(numbers, figure), [
        *(f"{case}: D_exact {c['D_exact']:.12g}; fitted orders: "
          + ", ".join(f"{k} {v['order']:.2f}" for k, v in c["laws"].items()) for case, c in numbers["cases"].items()),
        numbers["note"],
    ])


@reproduce.command("quinn-fig9", short_help="Quinn 2004 Fig 9: n = 32 Burridge-Knopoff chain, D vs RK4 step")
@click.option("--dt", "dts", multiple=True, type=float, help="RK4 step (repeatable) [default: 0.01 ... 1e-4].")
@click.option("--figure", default="jaxfriction-out/quinn-fig9.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig9_command(dts, figure, as_json) -> None:
    """Quinn 2004 Fig. 9: n = 32 chain, dissipation vs RK4 step for three laws, Moreau-Jean D0."""
    import jax

    from .._reproduce import quinn_fig9
    from .._reproduce.figures import plot_quinn_fig9
    from .._reproduce.quinn_fig9 import DTS

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers = quinn_fig9(dts=dts or DTS)
        except ValueError as exc:
            _fail(exc)
    _report(numbers, figure, as_json, lambda: plot_quinn_fig9(numbers, figure), [
        f"D0 (Moreau-Jean) {numbers['D0_moreau_jean']:.8f}, paper {numbers['paper_D0']}",
        *(f"{k:17s} D at h = {v['h'][0]:.3g}: {v['D'][0]:.6f} (error {v['relative_error'][0]:+.1%}); "
          f"at h = {v['h'][-1]:.3g}: {v['D'][-1]:.6f}" for k, v in numbers["laws"].items()),
    ])


@reproduce.command("quinn-fig11", short_help="Quinn 2004 Fig 11: two blocks on a belt (coupled contacts) vs Moreau-Jean")
@click.option("--dt", default=1e-3, show_default=True, help="RK4 step (Moreau-Jean uses dt/10).")
@click.option("--t1", default=50.0, show_default=True, help="End time.")
@click.option("--figure", default="jaxfriction-out/quinn-fig11.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig11_command(dt, t1, figure, as_json) -> None:
    """Quinn 2004 Fig. 11: two blocks on a belt (coupled contacts) vs exact Moreau-Jean."""
    import jax

    from .._reproduce import quinn_fig11
    from .._reproduce.figures import plot_quinn_fig11

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, trajectories = quinn_fig11(dt=dt, t1=t1)
        except ValueError as exc:
            _fail(exc)
        plot = lambda: plot_quinn_fig11(numbers, trajectories, figure)  # noqa: E731
        _report(numbers, figure, as_json, plot, [
            f"stick fractions: Quinn {numbers['stick_fraction_quinn']}, Moreau-Jean "
            f"{numbers['stick_fraction_moreau_jean']}; max |x_Quinn - x_exact| {numbers['max_deviation_x']}",
        ])


@reproduce.command("na2d", short_help="Paper 003 Fig 2: 2-D block, four friction models on one transition")
@click.option("--dt", default=2e-4, show_default=True, help="Step of the four models (paper: 0.2 ms).")
@click.option("--t1", default=3.0, show_default=True, help="End time (s).")
@click.option("--figure", default="jaxfriction-out/na2d.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def na2d_command(dt, t1, figure, as_json) -> None:
    """Paper 003 Fig. 2: Quinn, Griffin's spring, Na et al. and Moreau-Jean against exact Coulomb."""
    import jax

    from .._reproduce import na2d
    from .._reproduce.figures import plot_na2d

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, trajectories = na2d(dt=dt, t1=t1)
        except ValueError as exc:
            _fail(exc)
        plot = lambda: plot_na2d(numbers, trajectories, figure)  # noqa: E731
        _report(numbers, figure, as_json, plot, [
            *(f"{name:15s} max velocity error x {r['max_velocity_error'][0]:.2e} y {r['max_velocity_error'][1]:.2e} "
              f"m/s, acceleration extrema {r['acceleration_extrema']}, stick fraction {r['stick_fraction']:.3f}"
              for name, r in numbers["methods"].items()),
            f"reference: acceleration extrema {numbers['reference_acceleration_extrema']}, stick fraction "
            f"{numbers['reference_stick_fraction']:.3f}",
        ])


@reproduce.command("lugre", short_help="LuGre 1995: Stribeck steady-state curve and presliding hysteresis loop")
@click.option("--n-velocities", default=24, show_default=True, help="Steady-state velocities per sign (1e-5 .. 0.3 m/s).")
@click.option("--amplitude", default=2e-6, show_default=True, help="Presliding displacement amplitude (m).")
@click.option("--period", default=10.0, show_default=True, help="Presliding period (s).")
@click.option("--figure", default="jaxfriction-out/lugre.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def lugre_command(n_velocities, amplitude, period, figure, as_json) -> None:
    """LuGre (Canudas de Wit et al. 1995): steady states against the closed-form Stribeck curve, presliding loop."""
    import jax

    from .._reproduce import lugre
    from .._reproduce.figures import plot_lugre

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, data = lugre(n_velocities=n_velocities, amplitude=amplitude, period=period)
        except ValueError as exc:
            _fail(exc)
        p = numbers["presliding"]
        _report(numbers, figure, as_json, lambda: plot_lugre(numbers, data, figure), [
            f"steady states: max relative error against the closed form {numbers['steady_state']['max_relative_error']:.2e}",
            f"presliding loop X = {p['amplitude']:g} m: force amplitude {p['force_amplitude']:.6f} N, slope after "
            f"reversal {p['reversal_slope_over_sigma0']:.6f} sigma0 (closed form "
            f"{p['reversal_slope_closed_form_over_sigma0']:.6f}), dissipation {p['dissipation_per_cycle']:.4e} J "
            f"(closed form {p['dissipation_per_cycle_closed_form']:.4e} J)",
        ])


@reproduce.command("iwan", short_help="Segalman 2005: jointed oscillator, dissipation per cycle vs force amplitude")
@click.option("--n-amplitudes", default=25, show_default=True, help="Force amplitudes, log-spaced over [2e-3, 3] F_S.")
@click.option("--steps", default=2000, show_default=True, help="RK4 steps per forcing period.")
@click.option("--cycles", default=3, show_default=True, help="Forcing periods simulated (the last is measured).")
@click.option("--n-elements", default=256, show_default=True, help="Elements of the joint's quadrature.")
@click.option("--figure", default="jaxfriction-out/iwan.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def iwan_command(n_amplitudes, steps, cycles, n_elements, figure, as_json) -> None:
    """Segalman's power law D ~ F^(3 + chi) and the macroslip transition of a jointed oscillator."""
    import jax

    from .._reproduce import iwan
    from .._reproduce.figures import plot_iwan

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, curves = iwan(n_amplitudes=n_amplitudes, steps=steps, cycles=cycles, n_elements=n_elements)
        except ValueError as exc:
            _fail(exc)
        plot = lambda: plot_iwan(numbers, curves, figure)  # noqa: E731
        _report(numbers, figure, as_json, plot, [
            f"microslip slope {numbers['fitted_slope']:.4f} (discrete model exact {numbers['exact_slope']:.4f}; "
            f"3 + chi = {numbers['segalman_slope']:g} at small force; "
            f"{numbers['microslip_points']} points); D / closed form at the smallest amplitude "
            f"{numbers['prefactor_ratio_smallest']:.3f}",
            f"macroslip at F = {numbers['macroslip_force_measured']} N (quasi-static "
            f"{numbers['macroslip_force_quasistatic']:.3f} N)",
        ])


@reproduce.command("rate-state", short_help="Rate-and-state spring-slider: velocity steps and the stability diagram")
@click.option("--e", "e", default=10.0, show_default=True, help="Velocity-step ratio (V -> e V).")
@click.option("--ratio", "ratios", multiple=True, type=float,
              help="k / k_c of a simulated stability point (repeatable) [default: 0.8 ... 1.25].")
@click.option("--evolution", "evolutions", multiple=True, type=click.Choice(["aging", "slip"]),
              help="State evolution law (repeatable) [default: both].")
@click.option("--figure", default="jaxfriction-out/rate-state.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def rate_state_command(e, ratios, evolutions, figure, as_json) -> None:
    """Rate-and-state friction (aging and slip laws) on a spring-slider: velocity-step transients
    against the closed forms, perturbation growth rate and frequency against k / k_c."""
    import jax

    from .._reproduce import rate_state
    from .._reproduce.figures import plot_rate_state
    from .._reproduce.rate_state import RATIOS

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, data = rate_state(e=e, ratios=ratios or RATIOS, evolutions=evolutions or ("aging", "slip"))
        except ValueError as exc:
            _fail(exc)
        lines = []
        for name, r in numbers["laws"].items():
            step, stab = r["step"], r["stability"]
            lines.append(f"{name:5s} step: peak rise {step['peak_rise']:.6f} (a ln e = {numbers['direct_effect']:.6f}), "
                         f"max gap to the velocity-controlled closed form {step['max_gap_to_velocity_controlled']:.2e}")
            lines.append(f"{name:5s} k_c = {stab['k_c']:.6g} N/m, omega_c = {stab['omega_c']:.6g} rad/s; growth rate "
                         "simulated / theory: " + ", ".join(f"{p['ratio']:g}: {p['growth_rate']:+.4e} / "
                                                             f"{p['theory_growth_rate']:+.4e}" for p in stab["points"]))
        from .._reproduce.rate_state import quasi_static

        numbers["quasi_static"] = qs = quasi_static()
        lines.append("quasi-static slider, rsfmodel's velocity step, simulated / published (relative gap): " + ", ".join(
            f"{name} {r['simulated']:.8g} / {r['published']:.8g} ({r['relative_gap']:+.1e})"
            for name, r in qs["rsfmodel"]["extremes"].items()))
        lines.append(f"healing: d(Delta mu_peak)/d log10(t_hold) = {qs['healing']['slope_per_decade']:.5f} over the "
                     f"longest holds (b ln 10 = {qs['healing']['b_ln10']:.5f}, rigid limit)")
        lines.append(f"k_c = {qs['critical']['k_c']:.6g} /um ((b - a)/D_c = {qs['critical']['k_c_closed_form']:.6g}); "
                     f"period at k_c simulated {qs['critical']['period_simulated']:.7g} s, 2 pi/omega_c = "
                     f"{qs['critical']['period']:.7g} s")
        _report(numbers, figure, as_json, lambda: plot_rate_state(numbers, data, figure), lines)


@reproduce.command("awrejcewicz", short_help="Paper 002 Figs 3-5: disc on a driving disc, bifurcation and Lyapunov exponent")
@click.option("--n-params", default=100, show_default=True, help="omega_dr values in the bifurcation diagram.")
@click.option("--omega-range", nargs=2, type=float, default=(0.02, 0.40), show_default=True, metavar="MIN MAX")
@click.option("--dt", default=1e-3, show_default=True, help="RK4 step (paper: 1e-3).")
@click.option("--figure", default="jaxfriction-out/awrejcewicz.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def awrejcewicz_command(n_params, omega_range, dt, figure, as_json) -> None:
    """Paper 002 Figs. 3-5: disc on a driving disc, phase portraits, bifurcation, Lyapunov exponent."""
    import jax

    from .._reproduce import awrejcewicz
    from .._reproduce.figures import plot_awrejcewicz

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, data = awrejcewicz(n_params=n_params, omega_range=tuple(omega_range), dt=dt)
        except ValueError as exc:
            _fail(exc)
        _report(numbers, figure, as_json, lambda: plot_awrejcewicz(numbers, data, figure), [
            f"stick-slip period (M0 = 0): {numbers['stick_slip_period']['continuous']['period']:.4f} s "
            f"(switch model {numbers['stick_slip_period']['switch']['period']:.4f} s)",
            f"lambda_1: {numbers['lambda_1']} +- {numbers['lambda_1_uncertainty']}",
            f"lambda_1 > 0 on {numbers['fraction_lambda_positive']:.0%} of omega_dr; periodic windows with "
            f"lambda_1 > 3 sigma: {numbers['periodic_with_positive_lambda_beyond_3_sigma']}",
        ])


@reproduce.command("den-hartog", short_help="Den Hartog 1931: continued frequency-response curves, Coulomb damping")
@click.option("--r", "ratios", multiple=True, type=float,
              help="Friction ratio mu N / P, in (0, pi/4) (repeatable) [default: 0.2, 0.5].")
@click.option("--dt", default=5e-3, show_default=True, help="RK4 step; Quinn's eps = 2 dt.")
@click.option("--omega-range", nargs=2, type=float, default=(0.5, 2.0), show_default=True, metavar="LOW HIGH",
              help="Starting frequencies of the branches below and above resonance (omega_n = 1).")
@click.option("--gap", default=0.08, show_default=True, help="Branches stop at |omega - 1| = gap.")
@click.option("--figure", default="jaxfriction-out/den-hartog.png", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def den_hartog_command(ratios, dt, omega_range, gap, figure, as_json) -> None:
    """Frequency-response curves of the Coulomb-damped oscillator by shooting and pseudo-arclength
    continuation, stable solid and unstable dashed, against Den Hartog's closed form."""
    import jax

    from .._reproduce.periodic import RATIOS, den_hartog_branches, plot_den_hartog

    with jax.enable_x64(True):
        try:
            _check_writable("--figure", figure)
            numbers, branches = den_hartog_branches(ratios=ratios or RATIOS, dt=dt, omega_low=omega_range[0],
                                                    omega_high=omega_range[1], gap=gap)
        except ValueError as exc:
            _fail(exc)
        lines = [f"{name:12s} {b['points']:3d} points, omega {b['omega_range'][0]:.3f}..{b['omega_range'][1]:.3f}, "
                 f"max |X/X_DH - 1| {b['max_relative_gap_den_hartog']:.2e}, max residual {b['max_residual']:.1e}, "
                 f"stable {b['all_stable']}, {b['seconds']:.1f} s" for name, b in numbers["branches"].items()]
        _report(numbers, figure, as_json, lambda: plot_den_hartog(numbers, branches, figure), lines)
