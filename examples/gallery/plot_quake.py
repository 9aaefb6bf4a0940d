"""
A block sliding on a floor shaken by an earthquake
==================================================

A 1 kg block on a floor shaken in x and y by a recorded ground motion (paper 003), with
``mu = 0.3``: Quinn's law with RK4 (``dt = 1 ms``, ``eps = 2 mu g dt``) against exact vector
Moreau-Jean. The record is the Kobe record of the shared data folder, found as
``jf.find_record`` finds records (``$JAXFRICTION_DATA``, a folder of records,
or ``shared/data/ground_motions`` beside the working directory) or in a folder above this
example's. Without it, a synthetic two-component pulse stands in, and the printed output
and the figure's title say so. The same from the command line: ``jaxfriction quake kobe``.
"""

from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

import jaxfriction as jf


def find_kobe():
    """The Kobe record's path, or None: where ``jf.find_record`` looks, then in
    ``shared/data/ground_motions`` of a folder above (the gallery runs in examples/gallery of
    a clone whose data folder is its sibling, ../shared/data)."""
    try:
        return jf.find_record("kobe")
    except FileNotFoundError:
        here = Path.cwd()
        found = [p for d in (here, *here.parents) if (p := d / "shared/data/ground_motions/kobe.txt").is_file()]
        return found[0] if found else None


path = find_kobe()
if path is not None:
    motion = jf.load_ground_motion(path)
    title = f"{motion.name} record ({path.name}), {motion.values.shape[0]} samples at dt = {motion.dt} s, mu = 0.3"
    print(f"record: {motion.name} ({path.name}), {motion.values.shape[0]} samples at dt = {motion.dt} s")
else:
    t = np.arange(0.0, 10.0, 0.01)
    envelope = np.exp(-(((t - 3.0) / 1.5) ** 2))
    values = np.stack([6.0 * envelope * np.sin(2 * np.pi * 1.2 * t), 4.0 * envelope * np.cos(2 * np.pi * 0.8 * t)], 1)
    motion = jf.GroundMotion(values=jnp.asarray(values), dt=0.01, name="synthetic pulse")
    title = "Kobe record not found: synthetic pulse shown, mu = 0.3\n(set JAXFRICTION_DATA to the folder holding kobe.txt)"
    print("record not found: synthetic pulse shown (a 10 s two-component pulse, PGA ~6 m/s^2); set "
          "JAXFRICTION_DATA to the folder holding kobe.txt (shared/data/ground_motions) to use the Kobe record")

fig, ax = plt.subplots(figsize=(5.5, 5), constrained_layout=True)
for exact, label in ((False, "Quinn's law, RK4"), (True, "Moreau-Jean (exact Coulomb)")):
    traj, summary = jf.quake_response(motion, mu=0.3, exact=exact, dt=1e-3)
    assert summary["status"] == 0
    print(f"{label:28s} peak sliding {1e3 * summary['peak_sliding']:.2f} mm, "
          f"residual {1e3 * summary['residual_sliding']:.2f} mm")
    q = np.asarray(traj.position)
    ax.plot(1e3 * q[:, 0], 1e3 * q[:, 1], lw=1, label=label)
ax.set_xlabel("sliding x (mm)")
ax.set_ylabel("sliding y (mm)")
ax.set_aspect("equal")
ax.legend(fontsize=8)
ax.set_title(title, fontsize=9)
plt.show()
