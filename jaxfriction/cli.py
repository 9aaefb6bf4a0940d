"""The ``jaxfriction`` command: ``sweep`` (the main job) and ``reproduce``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import jax
import numpy as np

PRECISIONS = click.Choice(["float64", "float32"])


def _fail(exc: Exception):
    raise click.ClickException(str(exc)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jaxfriction")
def main():
    """Differentiable dry-friction and stick-slip simulation (JAX)."""


@main.command()
@click.option("--law", default="quinn", show_default=True, help="Friction law (quinn, coulomb, velocity-limited, "
              "karnopp, threlfall, awrejcewicz).")
@click.option("--mu", "mu_range", nargs=3, type=(float, float, int), default=(0.05, 1.0, 64), show_default=True,
              metavar="MIN MAX N", help="Grid of mu N.")
@click.option("--alpha", "alpha_range", nargs=3, type=(float, float, int), default=(0.05, 2.0, 64),
              show_default=True, metavar="MIN MAX N", help="Grid of forcing amplitude alpha.")
@click.option("--omega", default=0.5, show_default=True, help="Forcing frequency.")
@click.option("--dt", default=0.01, show_default=True, help="RK4 step.")
@click.option("--cycles", default=50, show_default=True, help="Forcing cycles; the last is measured.")
@click.option("--eps", default=None, type=float, help="Regularization width [default: 2 dt, Quinn].")
@click.option("--chunk-size", default=1024, show_default=True, help="Trajectories per compiled batch.")
@click.option("--out", default="jaxfriction-out/sweep.nc", show_default=True, type=click.Path(dir_okay=False),
              help="Results file (netCDF).")
@click.option("--figure", default="jaxfriction-out/sweep.png", show_default=True,
              type=click.Path(dir_okay=False), help="Heat-map figure (PNG).")
@click.option("--precision", type=PRECISIONS, default="float64", show_default=True)
@click.option("--progress/--no-progress", default=True, show_default=True)
def sweep(law, mu_range, alpha_range, omega, dt, cycles, eps, chunk_size, out, figure, precision, progress):
    """Sweep Quinn's forced oscillator over (mu N, alpha): last-cycle dissipation, stick fraction, dD/dmu."""
    from .plots import plot_sweep
    from .workflows import SweepConfig, dissipation_sweep

    with jax.enable_x64(precision == "float64"):
        try:
            for name, (lo, hi, n) in (("--mu", mu_range), ("--alpha", alpha_range)):
                if n < 1 or not hi >= lo:
                    raise ValueError(f"{name} needs MIN <= MAX and N >= 1, got {lo} {hi} {n}")
            config = SweepConfig(law=law, omega=omega, dt=dt, cycles=cycles, eps=2 * dt if eps is None else eps)
            ds = dissipation_sweep(np.linspace(*mu_range), np.linspace(*alpha_range), config,
                                   chunk_size=chunk_size, progress=progress)
        except ValueError as exc:
            _fail(exc)
    for path in (out, figure):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(out, engine="h5netcdf")
    plot_sweep(ds, figure)
    a = ds.attrs
    n_bad = int((ds["status"] != 0).sum())
    click.echo(
        f"{ds.sizes['mu'] * ds.sizes['alpha']} trajectories x {a['trajectory_steps'] // (ds.sizes['mu'] * ds.sizes['alpha'])} "
        f"RK4 steps ({law} law, {a['dtype']}): compile {a['compile_seconds']:.1f} s, run {a['run_seconds']:.1f} s, "
        f"{a['steps_per_second'] / 1e6:.2f} M trajectory-steps/s (with forward-mode dD/dmu)"
    )
    click.echo(
        f"D in last cycle: {float(ds['dissipation'].min()):.4g} .. {float(ds['dissipation'].max()):.4g}; "
        f"sticking (stick fraction > 0) in {float((ds['stick_fraction'] > 0).mean()):.0%} of the grid; "
        f"{n_bad} trajectories flagged"
    )
    click.echo(f"wrote {out} and {figure}")


def _report(numbers, figure, as_json, plot, lines):
    Path(figure).parent.mkdir(parents=True, exist_ok=True)
    plot()
    numbers["figure"] = figure
    if as_json:
        click.echo(json.dumps(numbers, indent=2))
    else:
        for line in lines:
            click.echo(line)
        click.echo(f"wrote {figure}")


@main.command()
@click.argument("record")
@click.option("--mu", default=0.3, show_default=True, help="Friction coefficient.")
@click.option("--eps", default=None, type=float, help="Quinn regularization width (m/s) [default: 2 mu g dt].")
@click.option("--exact", is_flag=True, help="Exact Coulomb (vector Moreau-Jean) instead of Quinn's law.")
@click.option("--scale", default=1.0, show_default=True, help="Scale factor on the record.")
@click.option("--rotation", default=0.0, show_default=True, help="Rotate the components by this angle (degrees).")
@click.option("--dt", default=1e-3, show_default=True, help="Time step (s).")
@click.option("--figure", default=None, type=click.Path(dir_okay=False),
              help="Figure path [default: jaxfriction-out/quake-RECORD.png].")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def quake(record, mu, eps, exact, scale, rotation, dt, figure, as_json):
    """Slide a 1 kg block on a floor shaken by RECORD (a path, or a name in the shared data folder)."""
    import math

    import equinox as eqx

    from .forcing import load_ground_motion
    from .plots import plot_quake
    from .workflows import find_record, quake_response

    with jax.enable_x64(True):
        try:
            motion = load_ground_motion(find_record(record))
            if motion.values.shape[1] != 2:
                raise ValueError(f"{record}: the block needs a 2-component record, got {motion.values.shape[1]}")
            motion = eqx.tree_at(lambda m: (m.scale, m.rotation), motion, (scale, math.radians(rotation)))
            traj, summary = quake_response(motion, mu, eps=eps, exact=exact, dt=dt)
        except (ValueError, FileNotFoundError) as exc:
            _fail(exc)
        figure = figure or f"jaxfriction-out/quake-{motion.name}.png"
        _report(summary, figure, as_json, lambda: plot_quake(summary, traj, motion, figure), [
            f"{summary['record']} (PGA {summary['pga']:.2f} m/s^2, scale {scale}, rotation {rotation} deg), "
            f"mu = {mu}, {summary['scheme']}:",
            f"  peak sliding {1e3 * summary['peak_sliding']:.3f} mm, residual {1e3 * summary['residual_sliding']:.3f} mm, "
            f"peak sliding velocity {summary['peak_sliding_velocity']:.4f} m/s",
        ])


@main.group()
def reproduce():
    """Reproduce a published figure (writes a PNG; --json prints the key numbers)."""


@reproduce.command("quinn-fig5", short_help="Quinn 2004 Fig 5: unforced oscillator, rest positions of three laws")
@click.option("--dt", default=0.01, show_default=True, help="RK4 step.")
@click.option("--t1", default=50.0, show_default=True, help="End time.")
@click.option("--eps-factor", default=1.0, show_default=True,
              help="eps = factor * dt; 1 reproduces the paper's -0.750090, 2 is the printed '2 dt'.")
@click.option("--figure", default="jaxfriction-out/quinn-fig5.png", show_default=True,
              type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig5_command(dt, t1, eps_factor, figure, as_json):
    """Quinn 2004 Fig. 5: unforced oscillator from (2.75, 0) with three laws."""
    from .plots import plot_quinn_fig5
    from .reproduce import quinn_fig5

    with jax.enable_x64(True):
        try:
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
@click.option("--figure", default="jaxfriction-out/quinn-fig7.png", show_default=True,
              type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig7_command(dts, cycles, figure, as_json):
    """Quinn 2004 Fig. 7: dissipation error vs RK4 step against the exact event-driven solution."""
    from .plots import plot_quinn_fig7
    from .reproduce import quinn_fig7
    from .reproduce.quinn_fig7 import DTS

    with jax.enable_x64(True):
        try:
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
@click.option("--figure", default="jaxfriction-out/quinn-fig9.png", show_default=True,
              type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig9_command(dts, figure, as_json):
    """Quinn 2004 Fig. 9: n = 32 chain, dissipation vs RK4 step for three laws, Moreau-Jean D0."""
    from .plots import plot_quinn_fig9
    from .reproduce import quinn_fig9
    from .reproduce.quinn_fig9 import DTS

    with jax.enable_x64(True):
        try:
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
@click.option("--figure", default="jaxfriction-out/quinn-fig11.png", show_default=True,
              type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def quinn_fig11_command(dt, t1, figure, as_json):
    """Quinn 2004 Fig. 11: two blocks on a belt (coupled contacts) vs exact Moreau-Jean."""
    from .plots import plot_quinn_fig11
    from .reproduce import quinn_fig11

    with jax.enable_x64(True):
        try:
            numbers, trajectories = quinn_fig11(dt=dt, t1=t1)
        except ValueError as exc:
            _fail(exc)
        plot = lambda: plot_quinn_fig11(numbers, trajectories, figure)  # noqa: E731
        _report(numbers, figure, as_json, plot, [
            f"stick fractions: Quinn {numbers['stick_fraction_quinn']}, Moreau-Jean "
            f"{numbers['stick_fraction_moreau_jean']}; max |x_Quinn - x_exact| {numbers['max_deviation_x']}",
        ])


@reproduce.command("awrejcewicz", short_help="Paper 002 Figs 3-5: disc on a driving disc, bifurcation and Lyapunov exponent")
@click.option("--n-params", default=100, show_default=True, help="omega_dr values in the bifurcation diagram.")
@click.option("--omega-range", nargs=2, type=float, default=(0.02, 0.40), show_default=True, metavar="MIN MAX")
@click.option("--dt", default=1e-3, show_default=True, help="RK4 step (paper: 1e-3).")
@click.option("--figure", default="jaxfriction-out/awrejcewicz.png", show_default=True,
              type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def awrejcewicz_command(n_params, omega_range, dt, figure, as_json):
    """Paper 002 Figs. 3-5: disc on a driving disc, phase portraits, bifurcation, Lyapunov exponent."""
    from .plots import plot_awrejcewicz
    from .reproduce import awrejcewicz

    with jax.enable_x64(True):
        try:
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


if __name__ == "__main__":
    sys.exit(main())
