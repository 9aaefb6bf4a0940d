"""The ``jaxfriction`` command: ``sweep`` (the main job), ``fit``, ``quake`` and ``reproduce``.

It only parses options and calls the library: templates, their defaults (steps, cycles,
``eps = 2 dt``) and every check live there.
"""

from __future__ import annotations

import json
import os
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


def _name_values(option, items, parse=float):
    """``NAME=VALUE`` items of a repeatable option -> dict (a ValueError names the option)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{option} expects NAME=VALUE, got {item!r}")
        try:
            out[name.strip()] = parse(value.strip())
        except ValueError:
            raise ValueError(f"{option} {name.strip()}: {value.strip()!r} is not valid") from None
    return out


def _grid_axis(name, spec):
    """A swept axis from ``MIN:MAX:N`` (linspace), ``v1,v2,...`` or a TOML list/table value."""
    try:
        if isinstance(spec, dict):
            return np.linspace(float(spec["min"]), float(spec["max"]), int(spec["n"]))
        if isinstance(spec, (list, tuple)):
            return np.asarray(spec, dtype=float)
        if ":" in spec:
            lo, hi, n = spec.split(":")
            if int(n) < 1 or not float(hi) >= float(lo):
                raise ValueError
            return np.linspace(float(lo), float(hi), int(n))
        return np.asarray([float(v) for v in spec.split(",")])
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"--param {name}: give MIN:MAX:N with MIN <= MAX and N >= 1, or v1,v2,..., got {spec!r}")


def _load_toml(path):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None


SWEEP_KEYS = {"system", "law", "param", "set", "cycles", "frequency", "t1", "window", "dt", "wrt", "gradient",
              "chunk_size", "devices", "out", "figure", "precision"}


def _use_devices(n):
    """Split the CPU into ``n`` devices (one per core by default) before JAX starts computing."""
    if n is not None and n < 1:
        raise ValueError(f"--devices must be >= 1, got {n}")
    wanted = n or os.cpu_count() or 1
    try:
        jax.config.update("jax_num_cpu_devices", wanted)
    except RuntimeError:  # the backend is already running (e.g. called in-process); use what is there
        pass
    return jax.local_devices()[:wanted]


def _paths(text):
    """Comma-separated paths (a string) or a TOML list of them."""
    return [w.strip() for w in text.split(",") if w.strip()] if isinstance(text, str) else list(text)


def _numbers(option, values):
    out = {}
    for name, value in values.items():
        try:
            out[name] = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{option} {name}: {value!r} is not a number") from None
    return out


def _check_writable(option, path):
    """Refuse an output path that cannot be written, before any computation."""
    target = Path(path)
    folder = target if option == "--out" else target.parent
    existing = next((p for p in [folder, *folder.parents] if p.exists()), Path("."))
    if (option == "--out" and target.exists() and not target.is_dir()) or not existing.is_dir() or \
            not os.access(existing, os.W_OK):
        raise ValueError(f"{option} {path}: not a writable location")


@main.command()
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="TOML file with any of the options below (command-line options win); see the README.")
@click.option("--system", default=None, help="Template: oscillator (default), belt, disc, chain, two-blocks, or your "
              "own as package.module:attribute or file.py:attribute (a Template, or a function returning one).")
@click.option("--law", default=None, help="Named law of a library template [default: the template's; oscillator: "
              "quinn, coulomb, velocity-limited, karnopp, threlfall, awrejcewicz; belt: quinn, karnopp, coulomb].")
@click.option("--param", "params", multiple=True, metavar="PATH=MIN:MAX:N",
              help="Swept parameter by its path, e.g. law.mu=0.05:1:64 (repeat; also PATH=v1,v2,...) "
              "[default: the template's grid].")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="Fixed parameter, e.g. force.omega=0.4 (repeat).")
@click.option("--cycles", type=int, default=None, help="Forcing cycles, the last measured [default: the template's].")
@click.option("--frequency", default=None, help="Path of the forcing frequency for --cycles [default: the template's].")
@click.option("--t1", type=float, default=None, help="Run length, instead of --cycles (with --window).")
@click.option("--window", type=float, default=None, help="Measured window at the end of the run [default: all].")
@click.option("--dt", type=float, default=None, help="RK4 step [default: the template's; its eps follows].")
@click.option("--wrt", default=None, help="Paths for gradients of D, comma-separated [default: the template's].")
@click.option("--gradient", type=click.Choice(["auto", "forward", "reverse", "none"]), default=None,
              help="Gradient mode [default: auto: forward for <= 8 parameters].")
@click.option("--chunk-size", type=int, default=None, help="Trajectories per compiled batch [default: 1024].")
@click.option("--devices", type=int, default=None, help="CPU devices to split the host into [default: one per core].")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Folder for chunks, manifest and result.nc [default: jaxfriction-out/sweep].")
@click.option("--resume", is_flag=True, help="Continue the sweep saved in --out (same arguments).")
@click.option("--figure", default=None, type=click.Path(dir_okay=False), help="Figure [default: OUT/sweep.png].")
@click.option("--precision", type=PRECISIONS, default=None, help="float64 (default) or float32.")
@click.option("--progress/--no-progress", default=True, show_default=True)
def sweep(config_file, system, law, params, sets, cycles, frequency, t1, window, dt, wrt, gradient, chunk_size,
          devices, out, resume, figure, precision, progress):
    """Sweep a template over a grid of parameter paths: window dissipation, stick fraction, dD/dp, resumable.

    With no options: Quinn's forced oscillator (Quinn 2004 eq. 5, Quinn's law, eps = 2 dt),
    64 x 64 (law.mu, force.amplitude) grid, 50 cycles at omega = 0.5, dt = 0.01, the last
    cycle measured, dD/d law.mu.
    """
    from ._plots import plot_sweep
    from ._templates import load_template
    from ._workflows.sweep.sweep import sweep as run

    try:
        cfg = _load_toml(config_file) if config_file else {}
        unknown = sorted(set(cfg) - SWEEP_KEYS)
        if unknown:
            raise ValueError(f"{config_file}: unknown keys {unknown}; known: {sorted(SWEEP_KEYS)}")
        pick = {k: v for k, v in dict(system=system, law=law, cycles=cycles, frequency=frequency, t1=t1, window=window,
                                      dt=dt, wrt=wrt, gradient=gradient, chunk_size=chunk_size, devices=devices,
                                      out=out, figure=figure, precision=precision).items() if v is not None}
        if {"t1", "window"} & set(pick):
            cfg.pop("cycles", None)
        if "cycles" in pick:
            cfg.pop("t1", None)
            cfg.pop("window", None)
        cfg = {**cfg, **pick}
        out = Path(cfg.get("out", "jaxfriction-out/sweep"))
        figure = cfg.get("figure", str(out / "sweep.png"))
        _check_writable("--out", out)
        _check_writable("--figure", figure)
        if out.exists() and any(out.glob("chunk_*.npz")) and not resume:
            raise ValueError(f"--out {out} holds a saved sweep: pass --resume to continue it, or choose another --out")
        with jax.enable_x64(cfg.get("precision", "float64") == "float64"):
            tpl = load_template(cfg.get("system", "oscillator"), dt=cfg.get("dt"), law=cfg.get("law"))
            tpl = tpl.with_parameters(_numbers("--set", {**cfg.get("set", {}), **_name_values("--set", sets, str)}))
            grid_spec = {**cfg.get("param", {}), **_name_values("--param", params, str)} or tpl.grid
            if not grid_spec:
                raise ValueError(f"--param is required: {tpl.name or 'this template'} has no default grid")
            grid = {name: _grid_axis(name, value) for name, value in grid_spec.items()}
            mode = cfg.get("gradient", "auto")
            paths = () if mode == "none" else _paths(cfg.get("wrt", tpl.wrt))
            times = {k: cfg[k] for k in ("t1", "window", "cycles", "frequency") if k in cfg}
            if "cycles" in times:
                times.setdefault("frequency", tpl.frequency)
            device_list = _use_devices(cfg.get("devices"))
            ds = run(tpl, grid, **times, wrt=paths, gradient="auto" if mode == "none" else mode,
                     chunk_size=int(cfg.get("chunk_size", 1024)), devices=device_list, out_dir=out, progress=progress)
    except ValueError as exc:
        _fail(exc)
    Path(figure).parent.mkdir(parents=True, exist_ok=True)
    plot_sweep(ds, figure)
    click.echo(sweep_summary(ds))
    click.echo(f"wrote {out / 'result.nc'} and {figure}")


def sweep_summary(ds):
    """The lines ``jaxfriction sweep`` prints: size, timing, ranges, and the flagged lanes by status."""
    a = ds.attrs
    lanes = int(ds["status"].size)
    flagged = json.loads(a.get("flagged", "{}"))
    rate = a.get("steps_per_second", float("nan"))
    steps = f" x {a['steps_per_lane']} steps" if "steps_per_lane" in a else ""
    lines = [
        f"{lanes} trajectories{steps} ({a.get('template') or a.get('system_type')}, {a.get('solver')}, "
        f"{a.get('dtype')}, {a['devices']} devices, gradient {a['gradient']}): "
        f"{a['chunks_computed']} chunks computed, {a['chunks_loaded']} loaded; compile {a['compile_seconds']:.1f} s, "
        f"run {a['run_seconds']:.1f} s" + ("" if a["chunks_computed"] == 0 or rate != rate
                                          else f", {rate / 1e6:.2f} M trajectory-steps/s"),
    ]
    if "dissipation" in ds:
        line = f"D over the window: {float(ds['dissipation'].min()):.4g} .. {float(ds['dissipation'].max()):.4g}"
        if "stick_fraction" in ds:
            line += f"; sticking (stick fraction > 0) in {float((ds['stick_fraction'] > 0).mean()):.0%} of the grid"
        lines.append(line)
    n_bad = sum(flagged.values())
    detail = ", ".join(f"{n} {meaning}" for meaning, n in flagged.items())
    lines.append(f"{n_bad} of {lanes} trajectories flagged" + (f": {detail}" if detail else ""))
    return "\n".join(lines)


def _bound(text):
    lo, sep, hi = text.partition(":")
    if not sep:
        raise ValueError(text)
    return None if not lo and not hi else (float(lo) if lo else None, float(hi) if hi else None)


@main.command("fit")
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--system", "system_name", required=True,
              help="Template: oscillator, belt, disc, chain, two-blocks, or package.module:attribute of your own.")
@click.option("--law", default=None, help="Named law of a library template [default: the template's].")
@click.option("--params", required=True, help="Comma-separated paths to estimate, e.g. law.mu_s,law.mu_k.")
@click.option("--set", "settings", multiple=True, metavar="PATH=VALUE", help="Fix a parameter; repeatable.")
@click.option("--initial", "initials", multiple=True, metavar="PATH=VALUE",
              help="Initial guess (repeatable) [default: the template's value].")
@click.option("--bound", "bound_specs", multiple=True, metavar="PATH=LO:HI",
              help="Bounds of an estimated parameter; LO or HI may be empty, PATH=: is unbounded [default: > 0].")
@click.option("--y0", default=None, metavar="Q0,...,V0,...",
              help="Known initial state, positions then velocities [default: estimated with the parameters].")
@click.option("--optimizer", type=click.Choice(["adam", "lbfgs", "lm"]), default="adam", show_default=True)
@click.option("--steps", type=int, default=None, help="Maximum optimizer steps [default: adam 400, lbfgs 100, lm 50].")
@click.option("--learning-rate", default=0.02, show_default=True, help="Adam's initial learning rate.")
@click.option("--segments", default=1, show_default=True, help="Multiple-shooting segments.")
@click.option("--dt", default=None, type=float, help="Largest RK4 step [default: the template's].")
@click.option("--progress/--no-progress", default=False, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def fit_command(data, system_name, law, params, settings, initials, bound_specs, y0, optimizer, steps, learning_rate,
                segments, dt, progress, as_json):
    """Estimate parameters of a template from a measured trajectory DATA (CSV: t and q, v, q0, v1, ...)."""
    from ._paths import get_parameter
    from ._templates import load_template
    from ._workflows.fit.fit import fit
    from ._workflows.fit.measurement import load_measurement

    with jax.enable_x64(True):
        try:
            tpl = load_template(system_name, dt=dt, law=law)
            tpl = tpl.with_parameters(_name_values("--set", settings))
            names = _paths(params)
            if not names:
                raise ValueError(f"--params must name at least one parameter path, got {params!r}")
            guesses = _name_values("--initial", initials)
            extra = sorted(set(guesses) - set(names))
            if extra:
                raise ValueError(f"--initial: {extra} are not in --params")
            initial = {n: guesses[n] if n in guesses else float(get_parameter(tpl.system, n)) for n in names}
            bounds = _name_values("--bound", bound_specs, parse=_bound)
            if y0 is not None:
                try:
                    y0 = [float(x) for x in y0.split(",")]
                except ValueError:
                    raise ValueError(f"--y0 expects numbers Q0,...,V0,..., got {y0!r}") from None
            record = load_measurement(data, y0=y0)
            result = fit(tpl, initial, record, bounds=bounds, optimizer=optimizer, steps=steps,
                         learning_rate=learning_rate, shooting_segments=segments, progress=progress)
        except (ValueError, FileNotFoundError) as exc:
            _fail(exc)
    if as_json:
        click.echo(json.dumps({"system": system_name, "data": str(data), **result.to_dict()}, indent=2))
    else:
        click.echo(f"{system_name}: {len(names)} parameter(s) from {data} ({len(record)} samples)")
        click.echo(result.summary())


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

    from ._applications.quake import find_record, quake_response
    from ._forcing import load_ground_motion
    from ._plots import plot_quake

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
    from ._plots import plot_quinn_fig5
    from ._reproduce import quinn_fig5

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
    from ._plots import plot_quinn_fig7
    from ._reproduce import quinn_fig7
    from ._reproduce.quinn_fig7 import DTS

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
    from ._plots import plot_quinn_fig9
    from ._reproduce import quinn_fig9
    from ._reproduce.quinn_fig9 import DTS

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
    from ._plots import plot_quinn_fig11
    from ._reproduce import quinn_fig11

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
    from ._plots import plot_awrejcewicz
    from ._reproduce import awrejcewicz

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
