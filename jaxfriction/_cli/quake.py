"""``jaxfriction quake``: a block sliding on a floor shaken by a recorded ground motion."""

from __future__ import annotations

import click
import jax

from .common import _fail, _report, main


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

    from .._applications.quake import find_record, quake_response
    from .._forcing import load_ground_motion
    from .._plots import plot_quake

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
