"""``jaxfriction fit``: parameters of a template from a measured trajectory."""

from __future__ import annotations

import json

import click

from .common import _fail, _name_values, main
from .sweep import _paths


def _bound(text):
    lo, sep, hi = text.partition(":")
    if not sep:
        raise ValueError(text)
    return None if not lo and not hi else (float(lo) if lo else None, float(hi) if hi else None)


def _model(spec, dt, settings, law=None, strict=True):
    """A template from ``--system`` (with ``--law``) or ``--compare`` (``name[:law]`` of a
    library template, or a user's own ``module:attribute``), with the ``--set`` values: all of
    them (``strict``, an unknown path raises naming it), or only those that are its parameters
    (a model compared with another may lack some)."""
    from .._paths import parameter_paths
    from .._templates import TEMPLATES, load_template

    name, _, named_law = spec.partition(":")
    if name in TEMPLATES and named_law:
        spec, law = name, named_law
    tpl = load_template(spec, dt=dt, law=law)
    if not strict:
        own = set(parameter_paths(tpl.system))
        settings = {k: v for k, v in settings.items() if k.split("[")[0] in own}
    return tpl.with_parameters(settings)


@main.command("fit")
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--system", "system_name", required=True,
              help="Template: oscillator, belt, disc, chain, two-blocks, lugre, jointed, spring-slider, or package.module:attribute of your own.")
@click.option("--law", default=None, help="Named law of a library template [default: the template's].")
@click.option("--params", default=None,
              help="Comma-separated paths to estimate, e.g. law.mu_s,law.mu_k [default: the paths of --bounds].")
@click.option("--set", "settings", multiple=True, metavar="PATH=VALUE", help="Fix a parameter; repeatable.")
@click.option("--initial", "initials", multiple=True, metavar="PATH=VALUE",
              help="Initial guess (repeatable) [default: the template's value; with --bounds alone, none: a global "
                   "search over the box].")
@click.option("--bounds", "--bound", "bound_specs", multiple=True, metavar="PATH=LO:HI",
              help="Box of an estimated parameter (repeatable); LO or HI may be empty, PATH=: is unbounded "
                   "[default: > 0]. Bounds alone (no --params, no --initial) start a global search.")
@click.option("--noise", default=None, type=float,
              help="Measurement noise std (units of q), if known [default: estimated from the record].")
@click.option("--candidates", default=256, show_default=True, help="Global search: design points.")
@click.option("--refine", default=8, show_default=True, help="Global search: candidates refined in parallel.")
@click.option("--compare", "compare", multiple=True, metavar="TEMPLATE[:LAW]",
              help="Also fit these models (repeatable) and print a comparison table (AIC, BIC, lack of fit); each "
                   "estimates the --bounds paths it has.")
@click.option("--input", "input_specs", multiple=True, metavar="COLUMN=PATH",
              help="A column of DATA that drove the rig, played back by the system's drive at PATH (repeatable), "
                   "e.g. --input vir=force.")
@click.option("--validation", "validation_files", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="A validation record (CSV with DATA's columns and --input columns; repeatable), not fitted: the "
                   "model is simulated over it and its simulation error printed (RMS, NRMSE, fit %, relative "
                   "error); with --compare the table ranks the models by it.")
@click.option("--y0", default=None, metavar="Q0,...,V0,...",
              help="Known initial state, positions then velocities [default: estimated with the parameters].")
@click.option("--optimizer", type=click.Choice(["adam", "lbfgs", "lm"]), default=None,
              help="Local optimizer [default: lm after a global search, else adam].")
@click.option("--steps", type=int, default=None, help="Maximum optimizer steps [default: adam 400, lbfgs 100, lm 50].")
@click.option("--learning-rate", default=0.02, show_default=True, help="Adam's initial learning rate.")
@click.option("--segments", default="1", show_default=True, help="Multiple-shooting segments, or 'auto'.")
@click.option("--dt", default=None, type=float, help="Largest RK4 step [default: the template's].")
@click.option("--progress/--no-progress", default=False, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--history", is_flag=True, help="With --json: include the loss at every optimizer step.")
def fit_command(data, system_name, law, params, settings, initials, bound_specs, noise, candidates, refine,
                compare, input_specs, validation_files, y0, optimizer, steps, learning_rate, segments, dt, progress,
                as_json, history) -> None:
    """Estimate parameters of a template from a measured trajectory DATA (CSV: t and q, v, q0, v1, ...,
    measured channels such as friction_force, and the input columns named by --input).

    With --bounds alone the parameters are found by a global search over the box; the report says
    whether the fit converged, whether the model explains the data, and which parameters or
    combinations the record does not determine.
    """
    import warnings

    import jax

    from .._paths import get_parameter, parameter_paths
    from .._workflows.fit.compare import compare_models
    from .._workflows.fit.fit import fit
    from .._workflows.fit.measurement import load_measurement
    from .._workflows.fit.result import FitWarning
    from .._workflows.fit.search import GlobalSearch

    with jax.enable_x64(True):
        try:
            fixed = _name_values("--set", settings)
            tpl = _model(system_name, dt, fixed, law)
            bounds = _name_values("--bounds", bound_specs, parse=_bound)
            guesses = _name_values("--initial", initials)
            names = _paths(params) if params is not None else list(bounds)
            if not names:
                raise ValueError("--params or --bounds must name at least one parameter path")
            extra = sorted(set(guesses) - set(names))
            if extra:
                raise ValueError(f"--initial: {extra} are not in --params")
            extra = sorted(set(bounds) - set(names))
            if extra:
                raise ValueError(f"--bounds: {extra} are not in --params")
            global_search = params is None and not guesses
            initial = None if global_search else {
                n: guesses[n] if n in guesses else float(get_parameter(tpl.system, n)) for n in names}
            segments = segments if segments == "auto" else _int("--segments", segments)
            if y0 is not None:
                try:
                    y0 = [float(x) for x in y0.split(",")]
                except ValueError:
                    raise ValueError(f"--y0 expects numbers Q0,...,V0,..., got {y0!r}") from None
            inputs = _inputs(input_specs)
            record = load_measurement(data, inputs=inputs)  # its columns first: a y0 is blamed only for itself
            if record.max_dof >= tpl.system.n_dof:
                raise ValueError(f"{data}: has a column for degree of freedom {record.max_dof} (counted from 0), but "
                                 f"--system {system_name} has {tpl.system.n_dof}")
            if y0 is not None:
                record = load_measurement(data, y0=y0, inputs=inputs)
            validation = [load_measurement(path, inputs=inputs) for path in validation_files] or None
            options = dict(noise=noise, optimizer=optimizer, steps=steps, learning_rate=learning_rate,
                           shooting_segments=segments, progress=progress, validation=validation,
                           search=GlobalSearch(candidates=candidates, refine=refine) if global_search else None)
            with warnings.catch_warnings():  # the report prints them
                warnings.simplefilter("ignore", FitWarning)
                if compare:
                    models = {system_name: (tpl, initial, bounds or None)}
                    for spec in compare:
                        other = _model(spec, dt, fixed, strict=False)
                        own = set(parameter_paths(other.system))
                        mine = {k: v for k, v in bounds.items() if k.split("[")[0] in own}
                        if not mine:
                            raise ValueError(f"--compare {spec}: none of the --bounds paths is a parameter of it")
                        models[spec] = (other, None, mine)
                    options["search"] = GlobalSearch(candidates=candidates, refine=refine)
                    comparison = compare_models(models, record, **options)
                else:
                    result = fit(tpl, initial, record, bounds=bounds, **options)
        except (ValueError, FileNotFoundError, RuntimeError) as exc:
            _fail(exc)
    if compare:
        if as_json:
            click.echo(json.dumps({"data": str(data), **comparison.to_dict()}, indent=2))
        else:
            click.echo(f"{len(comparison.results)} models fitted to {data} ({len(record)} samples)"
                       + (f", ranked by their simulation error on {', '.join(validation_files)}"
                          if validation else ""))
            click.echo(comparison.table())
            for name, r in comparison.results.items():
                click.echo(f"\n{name}:\n{r.summary()}")
        return
    if as_json:
        click.echo(json.dumps({"system": system_name, "data": str(data), **result.to_dict(history=history)}, indent=2))
    else:
        click.echo(f"{system_name}: {len(names)} parameter(s) from {data} ({len(record)} samples)")
        click.echo(result.summary())
        if result.validation is not None:
            click.echo(result.validation.summary())


def _inputs(specs):
    """``--input COLUMN=PATH`` options as a dict column -> drive path (ValueError naming
    ``--input``)."""
    out = {}
    for spec in specs:
        column, sep, path = spec.partition("=")
        if not sep or not column.strip() or not path.strip():
            raise ValueError(f"--input expects COLUMN=PATH (a column of DATA and the path of a drive, e.g. "
                             f"vir=force), got {spec!r}")
        if column.strip().lower() in out:
            raise ValueError(f"--input: column {column.strip()!r} is given twice")
        out[column.strip().lower()] = path.strip()
    return out or None


def _int(option, text):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{option} must be an int or 'auto', got {text!r}") from None
