"""Sweep any named system over a parameter grid: window observables and their gradients."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from .._integrate.grid import fixed_grid
from .engine import run_sweep
from .metrics import resolve_gradient, window_metrics
from .registry import check_parameters, system_spec

LABELS = {
    "dissipation": "friction work over the measured window D",
    "stick_fraction": "stick fraction over the window",
    "peak_slip": "largest slip speed over the window",
    "final_position": "position at the end of the run",
    "status": "0 ok, 1 non-finite",
}


def system_sweep(system="oscillator", grid=None, *, fixed=None, law=None, cycles=None, duration=None, window=None,
                 dt=None, wrt=(), gradient="auto", stick_tol=1e-6, samples=False, chunk_size=1024, devices=None,
                 out_dir=None, progress=True):
    """Evaluate :func:`~jaxfriction.workflows.metrics.window_metrics` of a named system over a grid.

    Every lane starts at rest at ``t = 0``; observables are measured over a final window:
    the last forcing period with ``cycles`` (periodically forced systems, Quinn 2004 Sec.
    3.1.2), or ``[duration - window, duration]``. Runs on
    :func:`~jaxfriction.workflows.run_sweep` (chunked, sharded over ``devices``, resumable
    with ``out_dir``).

    Args:
        system: a name of :data:`~jaxfriction.workflows.registry.SYSTEMS` (``"oscillator"``,
            ``"belt"``, ``"disc"``).
        grid: dict parameter name -> 1-D array (outer product, or equal-length samples with
            ``samples=True``). Names are the builder's keywords (e.g. ``muN``, ``alpha``).
        fixed: dict of other parameters (default: the builder's defaults).
        law: law name for the system's builder (default: the builder's).
        cycles: forcing periods to run (the last is measured); needs a fixed frequency.
        duration, window: run length and measured window (time units), instead of cycles.
        dt: RK4 step bound (default: the system's, from its source paper).
        wrt: parameters to differentiate the window dissipation with respect to.
        gradient: ``"auto"``, ``"forward"``, ``"reverse"`` or None
            (:data:`~jaxfriction.workflows.metrics.GRADIENT_MODES`).
        stick_tol, samples, chunk_size, devices, out_dir, progress: see
            :func:`~jaxfriction.workflows.run_sweep` and ``window_metrics``.

    Returns: ``xarray.Dataset`` over the grid with ``dissipation``, ``dD_d<name>`` per
        ``wrt``, ``stick_fraction``, ``peak_slip``, ``final_position``, ``status``;
        attributes record the system, law, fixed parameters, times, step and timings
        (``compile_seconds``, ``run_seconds``, ``steps_per_second``).

    Raises: ValueError naming an unknown system, law or parameter, a parameter both swept
        and fixed, a swept forcing frequency with ``cycles``, missing or invalid times.
    """
    spec = system_spec(system)
    if not grid:
        raise ValueError("grid must name at least one parameter to sweep")
    fixed = dict(fixed or {})
    check_parameters(system, grid, "swept parameter")
    check_parameters(system, fixed, "fixed parameter")
    check_parameters(system, wrt, "wrt parameter")
    both = sorted(set(grid) & set(fixed))
    if both or "law" in grid or "law" in fixed:
        raise ValueError(f"parameters {both or ['law']} are both swept and fixed; pass law= for the law")
    for name, value in fixed.items():
        check_real(f"fixed[{name!r}]", value)
    fixed = {name: float(value) for name, value in fixed.items()}
    defaults = {k: float(v) for k, v in spec.defaults.items() if k != "law" and k not in grid and k not in fixed}
    if "law" in wrt:
        raise ValueError("wrt cannot name law (not a number)")
    law = spec.defaults["law"] if law is None else law
    spec.build(**fixed, law=law)  # validates the law name and the fixed values early
    if cycles is not None and (duration is not None or window is not None):
        raise ValueError("give cycles, or duration and window, not both")
    if cycles is not None:
        if spec.frequency is None:
            raise ValueError(f"cycles needs a periodically forced system; {system!r} is not: give duration and window")
        if spec.frequency in grid:
            raise ValueError(f"cycles needs a fixed {spec.frequency}; to sweep it give duration and window instead")
        if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 2:
            raise ValueError(f"cycles must be an int >= 2, got {cycles!r}")
        period = spec.period(fixed)
        t_measure, window = (cycles - 1) * period, period
    else:
        if duration is None or window is None:
            raise ValueError("give cycles, or duration and window")
        check_real("window", window, positive=True)
        check_real("duration", duration, positive=True)
        if not window < duration:
            raise ValueError(f"window must be shorter than duration, got window={window}, duration={duration}")
        t_measure = duration - window
    dt = spec.dt if dt is None else dt
    check_real("dt", dt, positive=True)
    mode = resolve_gradient(gradient, len(wrt)) if wrt else None

    def build(**params):
        return spec.build(**params, law=law)

    def lane(**point):
        return window_metrics(build, {**defaults, **fixed, **point}, tuple(wrt), t_measure=t_measure, window=window, dt=dt,
                              gradient=mode, stick_tol=stick_tol)

    settings = dict(system=system, law=law, fixed=sorted(fixed.items()), t_measure=t_measure, window=window, dt=dt,
                    wrt=list(wrt), gradient=str(mode), stick_tol=stick_tol, dtype=str(jnp.asarray(0.0).dtype))
    steps_per_lane = _steps(t_measure, dt) + _steps(window, dt)

    def finalize(ds):
        ds["status"] = ds["status"].astype(np.int8)
        for name, label in {**LABELS, **{f"dD_d{k}": f"dD/d{k} ({mode} mode)" for k in wrt if mode}}.items():
            ds[name].attrs["long_name"] = label
        n_lanes = int(np.prod([ds.sizes[d] for d in ds["dissipation"].dims]))
        ds.attrs = {"system": system, "law": law, "fixed": repr(fixed), "t_measure": t_measure, "window": window,
                    "dt": dt, "gradient": str(mode), "wrt": ",".join(wrt), "stick_tol": stick_tol, **ds.attrs,
                    "trajectory_steps": n_lanes * steps_per_lane,
                    "steps_per_second": _computed_lanes(ds, n_lanes) * steps_per_lane / max(ds.attrs["run_seconds"], 1e-12)}
        return ds

    return run_sweep(lane, grid, samples=samples, out_dir=out_dir, chunk_size=chunk_size, devices=devices,
                     progress=progress, tag=repr(sorted(settings.items())), finalize=finalize)


def _computed_lanes(ds, n_lanes):
    """Lanes this call computed (not loaded from chunk files), for its throughput."""
    return min(n_lanes, ds.attrs["chunks_computed"] * ds.attrs["chunk_size"])


def _steps(span, dt):
    return fixed_grid(0.0, span, dt, None)[1]
