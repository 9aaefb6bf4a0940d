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



def plot_na2d(numbers, trajectories, path) -> None:
    """Paper 003 Fig. 2 style: velocity and acceleration of the block in x and y, four models."""
    from ._reproduce.na2d import WINDOW, _acceleration, _floor

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
    from ._reproduce.lugre import steady_state_closed_form

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
    from ._reproduce.rate_state import STEP, linear_theory_curve

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
