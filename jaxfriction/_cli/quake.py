"""``jaxfriction quake``: a block sliding on a floor shaken by a recorded ground motion."""

from __future__ import annotations

import click

from .common import _check_writable, _fail, _report, main

#: What to try when a run comes back flagged, by status code.
_HINTS = {1: "use a smaller --dt or --scale", 5: "use a smaller --dt or a larger --eps"}


@main.command()
@click.argument("record")
@click.argument("record_y", required=False)
@click.option("--mu", default=0.3, show_default=True, help="Friction coefficient (>= 0; 0: no friction).")
@click.option("--eps", default=None, type=float,
              help="Quinn regularization width (m/s), --method quinn only [default: 2 mu g dt; 2 g dt for mu = 0].")
@click.option("--method", type=click.Choice(["quinn", "moreau-jean", "griffin-spring", "na-eltawil"]), default=None,
              help="Friction model: Quinn's law with RK4 [default], exact Coulomb (vector Moreau-Jean), "
                   "Griffin's spring model (k_t = 40000 N/m) or paper 003's own algorithm (Na et al.).")
@click.option("--exact", is_flag=True, help="Shorthand for --method moreau-jean.")
@click.option("--scale", default=1.0, show_default=True, help="Scale factor on the record.")
@click.option("--rotation", default=0.0, show_default=True, help="Rotate the components by this angle (degrees).")
@click.option("--dt", default=1e-3, show_default=True, help="Time step (s), at most the record's sample interval.")
@click.option("--figure", default=None,
              help="Figure path [default: jaxfriction-out/quake-RECORD.png].")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def quake(record, record_y, mu, eps, method, exact, scale, rotation, dt, figure, as_json) -> None:
    """Slide a 1 kg block on a floor shaken by RECORD (a path, or a name in the shared data folder).

    RECORD is a two-column file (x and y), or one PEER .AT2 component: alone it shakes the
    floor along x only (a_y = 0); with RECORD_Y, a second .AT2 of the same DT, it is the x
    component and RECORD_Y the y one (the shorter record is padded with zeros). A run that
    comes back flagged (non-finite or unstable) prints its status as an error, no numbers.
    """
    import math

    import equinox as eqx
    import jax

    from .._applications.quake import as_floor_motion, find_record, quake_response
    from .._checks import check_real
    from .._forcing import load_ground_motion
    from .._integrate.status import STATUS_MEANINGS
    from .._plots import plot_quake

    with jax.enable_x64(True):
        try:
            for option, value in (("--scale", scale), ("--rotation", rotation)):
                check_real(option, value)
            check_real("--mu", mu, nonnegative=True)
            check_real("--dt", dt, positive=True)
            if exact and method not in (None, "moreau-jean"):
                raise ValueError(f"--exact means --method moreau-jean, got --method {method}")
            if eps is not None and (method or "quinn") == "quinn" and not exact:
                check_real("--eps", eps, positive=True)
            elif eps is not None:
                raise ValueError(f"--eps: --method {'moreau-jean' if exact else method} does not use it (Quinn's "
                                 f"width is for --method quinn only)")
            if figure is not None:
                _check_writable("--figure", figure)
            paths = [find_record(record)] + ([find_record(record_y)] if record_y is not None else [])
            motion = as_floor_motion(load_ground_motion(*paths))  # one .AT2 component: shaking along x
            motion = eqx.tree_at(lambda m: (m.scale, m.rotation), motion, (scale, math.radians(rotation)))
            figure = figure or f"jaxfriction-out/quake-{motion.name}.png"
            _check_writable("--figure", figure)
            traj, summary = quake_response(motion, mu, eps=eps, exact=exact, method=method, dt=dt)
            numbers = [v for v in summary.values() if isinstance(v, float)]
            if summary["status"] != 0 or not all(math.isfinite(v) for v in numbers):
                code = summary["status"]
                meaning = STATUS_MEANINGS.get(code, "unknown status") if code else "non-finite result"
                hint = _HINTS.get(code, "use a smaller --dt")
                raise ValueError(f"{summary['record']}: the run failed (status {code}: {meaning}); "
                                 f"no results: {hint}")
        except (ValueError, FileNotFoundError) as exc:
            _fail(exc)
        _report(summary, figure, as_json, lambda: plot_quake(summary, traj, motion, figure), [
            (f"{summary['record']} (PGA {summary['pga']:.2f} m/s^2, scale {scale}, rotation {rotation} deg), "
             f"mu = {mu}, {summary['scheme']}:"),
            (f"  peak sliding {1e3 * summary['peak_sliding']:.3f} mm, residual {1e3 * summary['residual_sliding']:.3f} "
             f"mm, peak sliding velocity {summary['peak_sliding_velocity']:.4f} m/s"),
        ])
