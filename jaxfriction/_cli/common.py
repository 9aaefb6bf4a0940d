"""The command group and the option parsing shared by the subcommands.

Building the group and printing ``--help`` import neither JAX nor NumPy (nor the library's
modules, which bring them): each command imports what it needs inside its function, and
:class:`_JaxCommand` sets up JAX (the compilation cache) when a command runs, after its
options were parsed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from .cache import configure_compilation_cache

PRECISIONS = click.Choice(["float64", "float32"])


def _fail(exc: Exception):
    raise click.ClickException(str(exc)) from None


class _JaxCommand(click.Command):
    """A subcommand that configures JAX's persistent compilation cache (from the group's
    ``--no-cache`` / ``--cache-dir``) before its function runs; ``--help`` never gets here."""

    def invoke(self, ctx) -> Any:
        options = ctx.find_root().params
        configure_compilation_cache(options.get("cache_dir"), enabled=not options.get("no_cache", False))
        return super().invoke(ctx)


class _Group(click.Group):
    """The command groups: their subcommands are :class:`_JaxCommand`, their subgroups ``_Group``."""

    command_class = _JaxCommand
    group_class = type  # a subgroup (``reproduce``) is a _Group too


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="jaxfriction")
@click.option("--no-cache", is_flag=True, envvar="JAXFRICTION_NO_CACHE", show_envvar=True,
              help="Do not use JAX's persistent compilation cache (each run compiles its programs again).")
@click.option("--cache-dir", type=click.Path(file_okay=False), envvar="JAXFRICTION_CACHE_DIR", show_envvar=True,
              help="Folder of the persistent compilation cache [default: JAX_COMPILATION_CACHE_DIR if set, else "
                   "$XDG_CACHE_HOME/jaxfriction/jax-cache, i.e. ~/.cache/jaxfriction/jax-cache].")
def main(no_cache, cache_dir) -> None:
    """Differentiable dry-friction and stick-slip simulation (JAX).

    Compiled programs are kept in JAX's persistent compilation cache, so a repeated run of the
    same structure skips most of its compilation; --no-cache turns this off.
    """


def _name_values(option, items, parse=float):
    """``NAME=VALUE`` items of a repeatable option -> dict (a ValueError names the option, also
    for a name given twice: which of the two values was meant is not for us to guess)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{option} expects NAME=VALUE, got {item!r}")
        if name.strip() in out:
            raise ValueError(f"{option} {name.strip()}: given twice ({item!r} after an earlier value); give it once")
        try:
            out[name.strip()] = parse(value.strip())
        except ValueError:
            raise ValueError(f"{option} {name.strip()}: {value.strip()!r} is not valid") from None
    return out


#: The most values one swept axis may have (the whole grid is bounded by the library).
MAX_AXIS = 10**8


def _grid_axis(name, spec):
    """A swept axis from ``MIN:MAX:N`` (linspace), ``v1,v2,...`` or a TOML list/table value."""
    import numpy as np

    try:
        if isinstance(spec, dict):
            if set(spec) != {"min", "max", "n"} or not all(isinstance(spec[k], (int, float)) and not isinstance(
                    spec[k], bool) for k in spec) or not isinstance(spec["n"], int):
                raise ValueError
            if spec["n"] > MAX_AXIS:
                raise ValueError(f"--param {name}: n = {spec['n']:,} values on one axis is more than {MAX_AXIS:,}")
            return np.linspace(float(spec["min"]), float(spec["max"]), int(spec["n"]))
        if isinstance(spec, (list, tuple)):
            if not spec or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in spec):
                raise ValueError
            return np.asarray(spec, dtype=float)
        if ":" in spec:
            lo, hi, n = spec.split(":")
            if int(n) > MAX_AXIS:
                raise ValueError(f"--param {name}: N = {int(n):,} values on one axis is more than {MAX_AXIS:,}")
            if int(n) < 1 or not float(hi) >= float(lo):
                raise ValueError
            return np.linspace(float(lo), float(hi), int(n))
        return np.asarray([float(v) for v in spec.split(",")])
    except (ValueError, KeyError, TypeError) as exc:
        if str(exc).startswith("--param"):
            raise
        raise ValueError(f"--param {name}: give MIN:MAX:N with MIN <= MAX and N >= 1, v1,v2,..., a list of numbers "
                         f"or {{min, max, n}}, got {spec!r}") from None


def _load_toml(path):
    try:
        import tomllib  # type: ignore[import-not-found]  # standard library from Python 3.11
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    except IsADirectoryError:
        raise ValueError(f"--config {path}: is a folder, not a TOML file") from None




def _check_writable(option, path):
    """Refuse an output path that cannot be written, before any computation: a folder
    (``--out``) that is a file, a ``--figure`` that is a folder or has no known image
    extension, or a location under a file or an unwritable folder. The folder that will hold
    the output is created here (a failure is the same refusal)."""
    target = Path(path)
    folder = target if option == "--out" else target.parent
    if option != "--out":
        if target.is_dir():
            raise ValueError(f"{option} {path}: is a folder; give a file name such as {target / 'figure.png'}")
        from matplotlib.backend_bases import FigureCanvasBase  # what matplotlib writes; the extension chooses

        formats = sorted(FigureCanvasBase.get_supported_filetypes())
        if target.suffix.lower().lstrip(".") not in formats:
            raise ValueError(f"{option} {path}: unknown image format {target.suffix or '(no extension)'!r}; "
                             f"use one of {', '.join('.' + f for f in formats)}")
    existing = next((p for p in [folder, *folder.parents] if p.exists()), Path("."))
    if (option == "--out" and target.exists() and not target.is_dir()) or not existing.is_dir() or \
            not os.access(existing, os.W_OK):
        raise ValueError(f"{option} {path}: not a writable location")
    try:  # os.access says yes for root under /proc and on read-only mounts: make the folder now
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{option} {path}: not a writable location ({exc.strerror or exc})") from None


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
