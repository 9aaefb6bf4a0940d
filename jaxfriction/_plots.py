"""Figures (matplotlib, Agg back end): written to files, never shown."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import jax
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.figure import Figure

#: Observables a sweep figure knows by name: (label, dimension). A dataset that has
#: ``dissipation`` or ``stick_fraction`` shows those; otherwise its scalar observables.
_SWEEP_QUANTITIES = {
    "dissipation": ("D", "energy"),
    "stick_fraction": ("stick fraction", "-"),
    "peak_slip": ("peak slip speed", "velocity"),
    "energy_residual": ("relative energy residual", "-"),
    "final_position": ("final position", "length"),
}
_SWEEP_PRIMARY = ("dissipation", "stick_fraction")
_SWEEP_CMAPS = {"dissipation": "viridis", "stick_fraction": "magma"}
_MAX_FIXED_SHOWN = 6
_MAX_OTHER_OBSERVABLES = 4


def _measured_phrase(attrs):
    """What a sweep measured, from its attributes: the last of N cycles, or a window of a run."""
    t1, window, t_measure = (attrs.get(k) for k in ("t1", "window", "t_measure"))
    if t_measure is None and t1 is not None and window is not None:
        t_measure = t1 - window
    span = f"t = {t_measure:.4g} .. {t1:.4g}" if t1 is not None and t_measure is not None else ""
    cycles = attrs.get("cycles")
    if cycles:
        frequency = attrs.get("frequency") or ""
        try:
            omega = float(json.loads(attrs.get("fixed") or "{}")[frequency])
            period = f"period 2π/{frequency.rsplit('.', 1)[-1]} = {2 * np.pi / omega:.4g}, "
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            period = ""
        return f"measured: the last of {int(cycles)} forcing cycles ({period}{span})"
    if t1 is not None and window is not None and t_measure is not None and t_measure <= 0:
        return f"measured: the whole run, {span}"
    if span:
        return f"measured window: {span} (length {window:.4g})"
    return "measured window: not recorded in the dataset"


def _fixed_phrase(attrs, swept=()):
    """The fixed scalar parameters (``attrs["fixed"]``, JSON), the most relevant first,
    at most ``_MAX_FIXED_SHOWN`` of them, named by the last part of their path when no other
    path, fixed or ``swept``, ends the same way (``force.value`` beside a swept
    ``surface.value`` keeps its full path)."""
    try:
        fixed = json.loads(attrs.get("fixed") or "{}")
    except (TypeError, ValueError):
        return ""
    if not fixed:
        return ""
    frequency = attrs.get("frequency")

    def rank(path) -> int:
        if path == frequency or path.endswith(".omega"):
            return 0
        if path.startswith("law.") or (path.startswith("force.") and not path.endswith("phase")):
            return 1
        if "." not in path:  # mass, stiffness, damping, normal, ...
            return 2
        return 3
    paths = sorted(fixed, key=lambda p: (rank(p), list(fixed).index(p)))
    tails = [p.rsplit(".", 1)[-1] for p in [*paths, *swept]]
    shown = [(tail if tails.count(tail) == 1 else path, fixed[path])
             for path, tail in zip(paths[:_MAX_FIXED_SHOWN], tails)]
    more = len(paths) - len(shown)
    return "fixed: " + ", ".join(f"{name} = {value:.4g}" for name, value in shown) + (
        f" (+{more} more in attrs['fixed'])" if more else "")


def _sweep_panels(ds):
    """``(kind, name, values, label)`` of every panel: the observables, then one gradient
    panel per ``grad_<name>`` variable and ``wrt`` path."""
    lane_dims = ds["status"].dims
    scalars = [n for n in ds.data_vars if n != "status" and not n.startswith("grad_") and ds[n].dims == lane_dims]
    shown = [n for n in _SWEEP_PRIMARY if n in scalars] or scalars[:_MAX_OTHER_OBSERVABLES]
    per_cycle = bool(ds.attrs.get("cycles"))
    panels = []
    for name in shown:
        label, unit = _SWEEP_QUANTITIES.get(name, (name, ""))
        if name == "dissipation":
            label = "D per cycle" if per_cycle else "D over the window"
        panels.append(("observable", name, np.asarray(ds[name], dtype=float),
                       f"{label} [{unit}]" if unit else label))
    for var in (n for n in ds.data_vars if n.startswith("grad_") and "wrt" in ds[n].dims):
        base = var[len("grad_"):]
        symbol, unit = _SWEEP_QUANTITIES.get(base, (base, ""))
        for path in np.atleast_1d(ds["wrt"].values):
            grad = ds[var].sel(wrt=path)
            if grad.dims != lane_dims:
                continue
            of = symbol if len(symbol) <= 2 else f"({symbol})"
            label = f"d{of}/d {path}" + (f" [{unit} per unit {path}]" if unit and unit != "-" else "")
            panels.append(("gradient", base, np.asarray(grad.transpose(*lane_dims), dtype=float), label))
    return panels


def _gradient_limits(values):
    """A symmetric colour range at the 99th percentile of ``|values|`` (a few steep lanes at
    the stick boundary would flatten the map) and the colour bar's ``extend``."""
    finite = np.abs(values[np.isfinite(values)])
    lim = float(np.percentile(finite, 99)) if finite.size else 1.0
    lim = lim or 1.0
    low, high = (bool(finite.size) and np.nanmin(values) < -lim), (bool(finite.size) and np.nanmax(values) > lim)
    extend = {(True, True): "both", (True, False): "min", (False, True): "max"}.get((low, high), "neither")
    return {"vmin": -lim, "vmax": lim}, extend


def _geometric(x):
    """Whether grid values are log-spaced over more than a decade (drawn on a log axis)."""
    x = np.asarray(x, dtype=float)
    if x.size < 3 or np.any(x <= 0):
        return False
    ratios = x[1:] / x[:-1]
    return bool(np.ptp(x) > 0 and x.max() / x.min() > 10 and np.allclose(ratios, ratios[0], rtol=1e-6))


#: Flagged lanes (status != 0): white, hatched in dark grey (no colour map used here has it).
_FLAG_STYLE = {"facecolor": "white", "edgecolor": "0.35", "hatch": "///", "linewidth": 0.0}


def _draw_map(fig, ax, x, y, xname, yname, values, flagged, kind, name, label):
    """A heat map over two grid axes; flagged lanes show the hatched background."""
    kw, extend = _gradient_limits(values) if kind == "gradient" else ({}, "neither")
    if name == "stick_fraction":
        kw = {"vmin": 0.0, "vmax": 1.0}
    cmap = "coolwarm" if kind == "gradient" else _SWEEP_CMAPS.get(name, "viridis")
    if flagged.any():  # the flagged lanes (NaN in the map) show the hatched background
        ax.patch.set(facecolor=_FLAG_STYLE["facecolor"], edgecolor=_FLAG_STYLE["edgecolor"],
                     hatch=_FLAG_STYLE["hatch"])
    mesh = ax.pcolormesh(x, y, values.T, cmap=cmap, shading="auto", **kw)
    fig.colorbar(mesh, ax=ax, extend=extend).set_label(label)
    ax.set(xlabel=xname, ylabel=yname)
    for axis, v in (("x", x), ("y", y)):
        if _geometric(v):
            getattr(ax, f"set_{axis}scale")("log")


def _draw_curve(ax, x, xname, values, flagged, kind, label):
    """A curve over one grid axis (or sorted samples); flagged lanes as hatched bands."""
    order = np.argsort(x)
    x, values, flagged = x[order], values[order], flagged[order]
    ax.plot(x, values, ".-", ms=3, color="C3" if kind == "gradient" else "C0")
    if kind == "gradient":
        ax.axhline(0.0, color="0.5", lw=0.6)
    if flagged.any():
        edges = np.concatenate([[x[0]], (x[1:] + x[:-1]) / 2, [x[-1]]]) if x.size > 1 else np.array([x[0] - 0.5,
                                                                                                 x[0] + 0.5])
        for i in np.flatnonzero(flagged):
            ax.axvspan(edges[i], edges[i + 1], zorder=0, **_FLAG_STYLE)
    ax.set(xlabel=xname, ylabel=label)
    if _geometric(x):
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)


def plot_sweep(ds: xr.Dataset, path) -> None:
    """The default figure of a sweep dataset (:func:`sweep_figure`), saved to ``path``."""
    fig = sweep_figure(ds)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def sweep_figure(ds: xr.Dataset) -> Figure:
    """The default figure of a sweep dataset: one panel per shown observable and one per
    gradient.

    Observables: ``dissipation`` (D per cycle when the sweep measured the last of its
    cycles) and ``stick_fraction`` when the sweep measured them, else its scalar observables
    (at most four). Gradients: one panel per ``grad_<name>`` variable and ``wrt`` path. A
    2-D grid is drawn as heat maps with labelled colour bars (a grid of more dimensions at
    the middle value of the others, said in the panel title), a 1-D grid as curves with
    labelled y axes, samples (``sample`` dimension) as scatter plots over the first two swept
    paths (curves over one). Gradient colour scales are symmetric at the 99th percentile of
    their magnitude (the colour bar's arrows mark clipped values). Lanes with a non-zero
    status are drawn hatched (grey crosses in scatter plots) and counted in the titles. The header names the template,
    the measured window, the step and the fixed scalar parameters (at most six; all are in
    ``attrs["fixed"]``).

    Returns:
        the ``matplotlib`` figure (the caller saves and closes it).

    Raises:
        ValueError: the dataset has nothing to plot (no scalar observable nor gradient).
    """
    attrs = ds.attrs
    panels = _sweep_panels(ds)
    if not panels:
        raise ValueError("the dataset has no scalar observable or gradient to plot")
    dims = ds["status"].dims
    status = np.asarray(ds["status"])
    flagged = status != 0
    n_flagged = int(flagged.sum())
    slice_note = ""
    if dims == ("sample",):
        swept = [c for c in ds.coords if ds[c].dims == ("sample",)]
    else:
        swept = list(dims)
        if len(dims) > 2:  # heat maps over the first two axes at the middle of the others
            middle = {d: ds.sizes[d] // 2 for d in dims[2:]}
            index = (slice(None), slice(None), *middle.values())
            flagged = flagged[index]
            panels = [(k, n, v[index], lab) for k, n, v, lab in panels]
            slice_note = "at " + ", ".join(f"{d} = {float(ds[d][i]):.4g}" for d, i in middle.items())
    n = len(panels)
    ncols = min(n, 3)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.3 * ncols, 4.2 * nrows + 0.9), constrained_layout=True,
                             squeeze=False)
    flag_mark = "grey x" if dims == ("sample",) and len(swept) >= 2 else "hatched"
    shown_flagged = int(flagged.sum())  # in the drawn slice of a grid of more than two paths
    flag_note = f" ({shown_flagged} flagged lane{'' if shown_flagged == 1 else 's'} {flag_mark})" if shown_flagged else ""
    for ax, (kind, name, values, label) in zip(axes.flat, panels):
        values = np.where(flagged, np.nan, values)
        title = label.split(" [")[0]
        if dims == ("sample",):
            if len(swept) >= 2:
                x, y = (np.asarray(ds[c], dtype=float) for c in swept[:2])
                kw, extend = _gradient_limits(values) if kind == "gradient" else ({}, "neither")
                if name == "stick_fraction":
                    kw = {"vmin": 0.0, "vmax": 1.0}
                cmap = "coolwarm" if kind == "gradient" else _SWEEP_CMAPS.get(name, "viridis")
                sc = ax.scatter(x, y, c=values, s=14, cmap=cmap, **kw)
                if flagged.any():
                    ax.scatter(x[flagged], y[flagged], marker="x", s=18, color="0.35", label="flagged")
                fig.colorbar(sc, ax=ax, extend=extend).set_label(label)
                ax.set(xlabel=swept[0], ylabel=swept[1])
                if len(swept) > 2:
                    title += f"\n(samples over {len(swept)} paths; the first two shown)"
            else:
                _draw_curve(ax, np.asarray(ds[swept[0]], dtype=float), swept[0], values, flagged, kind, label)
        elif len(dims) == 1:
            _draw_curve(ax, np.asarray(ds[dims[0]], dtype=float), dims[0], values, flagged, kind, label)
        else:
            _draw_map(fig, ax, np.asarray(ds[dims[0]], dtype=float), np.asarray(ds[dims[1]], dtype=float),
                      dims[0], dims[1], values, flagged, kind, name, label)
        if slice_note:
            title += f"\n{slice_note}"
        ax.set_title(title + flag_note, fontsize=10)
    for ax in axes.flat[n:]:
        ax.remove()
    name = attrs.get("template") or attrs.get("system_type", "")
    source = attrs.get("source")
    description = attrs.get("description")
    head = ", ".join(p for p in (f"{name}: {description}" if description else name, source) if p)
    head += f"; {int(status.size)} lanes" + (f" ({' x '.join(str(ds.sizes[d]) for d in dims)})" if len(dims) > 1 else "")
    if n_flagged:
        counts = json.loads(attrs.get("flagged") or "{}")
        detail = ", ".join(f"{k}: {v}" for k, v in counts.items())
        head += f", {n_flagged} flagged (status != 0" + (f"; {detail}" if detail else "") + f"), {flag_mark}"
    mode = str(attrs.get("gradient", "none"))
    run = "; ".join(p for p in (_measured_phrase(attrs),
                                " ".join(p for p in (attrs.get("solver"), f"dt = {attrs['dt']:.4g}" if "dt" in attrs
                                                     else "") if p),
                                "" if mode == "none" else f"gradients by {mode.replace('Mode', '').lower()}-mode AD")
                    if p)
    fig.suptitle("\n".join(p for p in (head, run, _fixed_phrase(attrs, swept)) if p), fontsize=10)
    return fig


def plot_quake(summary, traj, motion, path) -> None:
    """Floor acceleration, sliding displacement and the sliding path in the plane."""
    ts = np.asarray(traj.ts)
    acc = np.asarray(jax.vmap(motion)(ts))
    u = np.asarray(traj.ys[:, 0:2])
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2), constrained_layout=True)
    axes[0].plot(ts, acc[:, 0], lw=0.6, label="a_x (FN)")
    axes[0].plot(ts, acc[:, 1], lw=0.6, label="a_y (FP)")
    axes[0].set(xlabel="t (s)", ylabel="floor acceleration (m/s^2)", title=f"{summary['record']}: PGA {summary['pga']:.2f} m/s^2")
    axes[0].legend(fontsize=8)
    axes[1].plot(ts, 1e3 * np.linalg.norm(u, axis=1), lw=0.8)
    axes[1].set(xlabel="t (s)", ylabel="|u| (mm)", title=f"sliding: peak {1e3 * summary['peak_sliding']:.2f} mm, "
                f"residual {1e3 * summary['residual_sliding']:.2f} mm")
    axes[2].plot(1e3 * u[:, 0], 1e3 * u[:, 1], lw=0.8)
    axes[2].plot(1e3 * u[-1, 0], 1e3 * u[-1, 1], "o", ms=4)
    axes[2].set(xlabel="u_x (mm)", ylabel="u_y (mm)", title=f"sliding path (mu = {summary['mu']}, {summary['scheme']})",
                aspect="equal")
    fig.savefig(path, dpi=110)
    plt.close(fig)
