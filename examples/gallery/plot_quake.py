"""
A block sliding on a floor shaken by an earthquake
==================================================

A 1 kg block on a floor shaken in x and y by a recorded ground motion (paper 003), with
``mu = 0.3``: Quinn's law with RK4 (``dt = 1 ms``, ``eps = 2 mu g dt``) against exact vector
Moreau-Jean. The record is the shared Kobe record when the shared data folder is present
(``$JAXFRICTION_DATA``, or ``shared/data/ground_motions`` in a folder above); without it, a synthetic
two-component pulse stands in, and the text says so. The same from the command line:
``jaxfriction quake kobe``.
"""

from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

import jaxfriction as jf

here = Path.cwd()
shared = [d / "shared/data/ground_motions/kobe.txt" for d in (here, *here.parents)]
found = [p for p in shared if p.is_file()]
try:
    motion = jf.load_ground_motion(jf.find_record("kobe") if not found else found[0])
    print(f"record: {motion.name}, {motion.values.shape[0]} samples at dt = {motion.dt} s")
except FileNotFoundError:
    t = np.arange(0.0, 10.0, 0.01)
    envelope = np.exp(-(((t - 3.0) / 1.5) ** 2))
    values = np.stack([6.0 * envelope * np.sin(2 * np.pi * 1.2 * t), 4.0 * envelope * np.cos(2 * np.pi * 0.8 * t)], 1)
    motion = jf.GroundMotion(values=jnp.asarray(values), dt=0.01, name="synthetic pulse")
    print("shared record not found: a synthetic 10 s pulse (PGA ~6 m/s^2) stands in")

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
plt.show()
