"""``jaxfriction sweep``: a template over a grid of parameter paths (the main job)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import PRECISIONS, _check_writable, _fail, _grid_axis, _load_toml, _name_values, main

if TYPE_CHECKING:
    import xarray as xr

_NUMBER = ((int, float), "a number")
_TEXT = (str, "a string")
#: The keys of a sweep's TOML file: key -> (accepted types, how the message calls them).
SWEEP_KEYS = {"system": _TEXT, "law": _TEXT, "param": (dict, "a table of paths"), "set": (dict, "a table of paths"),
              "cycles": (int, "an integer"), "frequency": _TEXT, "t1": _NUMBER, "window": _NUMBER, "dt": _NUMBER,
              "wrt": ((str, list), "a string or a list of paths"), "gradient": _TEXT, "chunk_size": (int, "an integer"),
              "devices": (int, "an integer"), "kernel": _TEXT, "out": _TEXT, "figure": _TEXT, "precision": _TEXT}


def _check_config(cfg, path):
    """Refuse unknown keys and values of the wrong type in a TOML file, naming the key."""
    unknown = sorted(set(cfg) - set(SWEEP_KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown}; known: {sorted(SWEEP_KEYS)}")
    for key, value in cfg.items():
        types, what = SWEEP_KEYS[key]
        if isinstance(value, bool) or not isinstance(value, types):
            raise ValueError(f"{path}: {key} must be {what}, got {value!r}")
    if "precision" in cfg and cfg["precision"] not in PRECISIONS.choices:
        raise ValueError(f"{path}: precision must be one of {list(PRECISIONS.choices)}, got {cfg['precision']!r}")
    for name, value in cfg.get("set", {}).items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{path}: set.{name} must be a number, got {value!r}")
    for name, value in cfg.get("param", {}).items():
        if isinstance(value, bool) or not isinstance(value, (str, list, dict)):
            raise ValueError(f"{path}: param.{name} must be MIN:MAX:N, a list of numbers or {{min, max, n}}, "
                             f"got {value!r}")


def _use_devices(n):
    """Split the CPU into ``n`` devices (one per core by default) before JAX starts computing."""
    import jax

    if n is not None and n < 1:
        raise ValueError(f"--devices must be >= 1, got {n}")
    cores = os.cpu_count() or 1
    wanted = n or cores
    if wanted > cores:
        click.echo(f"Warning: --devices {wanted} is more than the {cores} CPU cores: the devices share them "
                   f"(no faster than --devices {cores})", err=True)
    try:
        jax.config.update("jax_num_cpu_devices", wanted)
    except RuntimeError:  # the backend is already running (e.g. called in-process); use what is there
        pass
    devices = jax.local_devices()[:wanted]
    if n is not None and len(devices) < wanted:
        click.echo(f"Warning: --devices {wanted}: JAX is already running with {len(devices)} device"
                   f"{'' if len(devices) == 1 else 's'}; the sweep runs on those", err=True)
    return devices


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


@main.command()
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              help="TOML file with any of the options below (command-line options win); see the README.")
@click.option("--system", default=None, help="Template: oscillator (default), belt, disc, chain, two-blocks, lugre, jointed, spring-slider, or your "
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
@click.option("--chunk-size", type=int, default=None,
              help="Trajectories per compiled batch [default: 1024, up to 8192 on the compiled loop; a resumed "
              "sweep keeps its own].")
@click.option("--devices", type=int, default=None, help="CPU devices to split the host into [default: one per core].")
@click.option("--kernel", type=click.Choice(["auto", "vmap", "fused", "compiled"]), default=None,
              help="How lanes run: auto (default: the fused Pallas kernel on a GPU, the lane program compiled by "
              "numba on a CPU, when supported; else vmap of lax.scan), vmap, fused (on a CPU in Pallas' "
              "interpret mode: slow, for checks) or compiled (numba, CPUs).")
@click.option("--out", default=None,
              help="Folder for chunks, manifest and result.nc [default: jaxfriction-out/sweep].")
@click.option("--resume", is_flag=True, help="Continue the sweep saved in --out (same arguments).")
@click.option("--figure", default=None, help="Figure [default: OUT/sweep.png].")
@click.option("--precision", type=PRECISIONS, default=None, help="float64 (default) or float32.")
@click.option("--progress/--no-progress", default=True, show_default=True)
def sweep(config_file, system, law, params, sets, cycles, frequency, t1, window, dt, wrt, gradient,
          chunk_size, devices, kernel, out, resume, figure, precision, progress) -> None:
    """Sweep a template over a grid of parameter paths: window dissipation, stick fraction, dD/dp, resumable.

    With no options: Quinn's forced oscillator (Quinn 2004 eq. 5, Quinn's law, eps = 2 dt),
    64 x 64 (law.mu, force.amplitude) grid, 50 cycles at omega = 0.5, dt = 0.01, the last
    cycle measured, dD/d law.mu.
    """
    import jax

    from .._plots import plot_sweep
    from .._templates import load_template
    from .._workflows.sweep.sweep import sweep as run

    try:
        cfg = _load_toml(config_file) if config_file else {}
        _check_config(cfg, config_file)
        pick = {k: v for k, v in dict(system=system, law=law, cycles=cycles, frequency=frequency, t1=t1, window=window,
                                      dt=dt, wrt=wrt, gradient=gradient, chunk_size=chunk_size, devices=devices,
                                      kernel=kernel, out=out, figure=figure, precision=precision).items() if v is not None}
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
        # the CPU split must come before anything starts JAX's backend: a user's template file
        # that builds arrays when it is loaded would otherwise pin the sweep to one device
        device_list = _use_devices(cfg.get("devices"))
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
            ds = run(tpl, grid, **times, wrt=paths, gradient="auto" if mode == "none" else mode,
                     chunk_size=cfg.get("chunk_size"), devices=device_list, out_dir=out, progress=progress,
                     kernel=cfg.get("kernel", "auto"))
    except ValueError as exc:
        _fail(exc)
    Path(figure).parent.mkdir(parents=True, exist_ok=True)
    plot_sweep(ds, figure)
    click.echo(sweep_summary(ds))
    click.echo(f"wrote {out / 'result.nc'} and {figure}")


def sweep_summary(ds: xr.Dataset) -> str:
    """The lines ``jaxfriction sweep`` prints: size, timing, ranges, and the flagged lanes by status."""
    a = ds.attrs
    lanes = int(ds["status"].size)
    flagged = json.loads(a.get("flagged", "{}"))
    rate = a.get("steps_per_second", float("nan"))
    steps = f" x {a['steps_per_lane']} steps" if "steps_per_lane" in a else ""
    lines = [
        f"{lanes} trajectories{steps} ({a.get('template') or a.get('system_type')}, {a.get('solver')}, "
        f"{a.get('dtype')}, {a['devices']} device{'' if a['devices'] == 1 else 's'}, {a.get('kernel', 'vmap')} kernel, "
        f"gradient {a['gradient']}): "
        f"{a['chunks_computed']} chunks computed, {a['chunks_loaded']} loaded; compile {a['compile_seconds']:.1f} s, "
        f"run {a['run_seconds']:.1f} s" + ("" if a["chunks_computed"] == 0 or rate != rate
                                          else f", {rate / 1e6:.2f} M trajectory-steps/s"),
    ]
    if "dissipation" in ds:
        lo, hi = float(ds["dissipation"].min()), float(ds["dissipation"].max())
        # D >= 0; a lane that never slips integrates to round-off of either sign
        low = f"0 (round-off {lo:.2g})" if lo < 0 and abs(lo) <= 1e-9 * max(abs(hi), 1e-300) else f"{lo:.4g}"
        line = f"D over the window: {low} .. {hi:.4g}"
        if "stick_fraction" in ds:
            line += f"; sticking (stick fraction > 0) in {float((ds['stick_fraction'] > 0).mean()):.0%} of the grid"
        lines.append(line)
    n_bad = sum(flagged.values())
    detail = ", ".join(f"{n} {meaning}" for meaning, n in flagged.items())
    lines.append(f"{n_bad} of {lanes} trajectories flagged" + (f": {detail}" if detail else ""))
    return "\n".join(lines)
