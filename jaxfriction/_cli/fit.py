"""``jaxfriction fit``: parameters of a template from a measured trajectory."""

from __future__ import annotations

import json

import click
import jax

from .common import _fail, _name_values, main
from .sweep import _paths


def _bound(text):
    lo, sep, hi = text.partition(":")
    if not sep:
        raise ValueError(text)
    return None if not lo and not hi else (float(lo) if lo else None, float(hi) if hi else None)


@main.command("fit")
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--system", "system_name", required=True,
              help="Template: oscillator, belt, disc, chain, two-blocks, lugre, jointed, spring-slider, or package.module:attribute of your own.")
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
    from .._paths import get_parameter
    from .._templates import load_template
    from .._workflows.fit.fit import fit
    from .._workflows.fit.measurement import load_measurement

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
