"""A Jenkins-element oscillator's frequency-response curve: jaxfriction against pyHarm, side by side.

``m x'' + c x' + k x + f_J = F cos(omega t)``, ``m = k = 1``, ``c = 0.05``, ``F = 0.5``, a
Jenkins element of stiffness 2 and slip force 0.2 (pyHarm's ``mu N0``), over ``omega`` in
``[0.5, 2.5]``, 8 harmonics and 256 time samples per period in both.

- pyHarm (``pyharm-os`` from PyPI, Safran's harmonic-balance code: its ``frf`` analysis, arc-length
  continuation, its ``Jenkins`` connector marched over three periods) runs in its own Python
  (``--pyharm-python``; it pins another JAX than jaxfriction's), in a subprocess, and reports
  its solutions and wall time;
- jaxfriction solves the same system at every frequency pyHarm returned, in one vectorized call
  (``jf.harmonic_balance_batch``: the Jenkins element is ``jf.Iwan([2.0], [0.2])``, marched
  through the period), and follows the curve itself with ``jf.continue_balance``.

Reports the largest difference of the displacement amplitudes (half the peak-to-peak range)
relative to the curve's peak, and the wall times (first calls, compilation included). Speed
and agreement are measured here, never in tests. Install pyHarm apart, e.g. ``python -m venv
/tmp/pyharm && /tmp/pyharm/bin/pip install pyharm-os``, then run from the repository root:
``python scripts/benchmarks/bench_pyharm.py --pyharm-python /tmp/pyharm/bin/python``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402

MASS, STIFFNESS, DAMPING, FORCE = 1.0, 1.0, 0.05, 0.5
JENKINS_K, SLIP_FORCE = 2.0, 0.2
BAND = (0.5, 2.5)
HARMONICS, SAMPLES = 8, 256

#: The pyHarm run, executed by the other interpreter: prints one JSON line.
PYHARM = f"""
import json, time
import numpy as np
from pyHarm.Maestro import Maestro
idata = {{
  "system": {{"type": "Base", "nh": {HARMONICS}, "nti": {SAMPLES}}},
  "substructures": {{"sub": {{"type": "substructure", "reader": "generic", "ndofs": 1,
      "matrix": {{"M": np.array([[{MASS}]]), "K": np.array([[{STIFFNESS}]]), "C": np.array([[{DAMPING}]])}}}}}},
  "connectors": {{
     "jenkins": {{"type": "Jenkins", "connect": {{"sub": [0]}}, "dirs": [0], "mu": {SLIP_FORCE}, "N0": 1.0,
                 "k": {JENKINS_K}}},
     "force": {{"type": "CosinusForcing", "connect": {{"sub": [0]}}, "dirs": [0], "amp": {FORCE}}}}},
  "analysis": {{"frf": {{"study": "frf", "puls_inf": {BAND[0]}, "puls_sup": {BAND[1]}, "ds0": 0.01,
                       "ds_max": 0.05, "verbose": False}}}},
}}
began = time.perf_counter()
maestro = Maestro(idata)
maestro.operate()
seconds = time.perf_counter() - began
xs = [s.x.tolist() for s in maestro.nls["frf"].SolList if s.flag_accepted]
print(json.dumps({{"seconds": seconds, "x": xs}}))
"""


def amplitude(coefficients):
    """Half the peak-to-peak range of the first component, for coefficients ``(..., 2 H + 1)``."""
    c = np.asarray(coefficients)
    theta = np.linspace(0.0, 2 * np.pi, 4096, endpoint=False)
    k = np.arange(1, (c.shape[-1] - 1) // 2 + 1)
    x = c[..., :1] + c[..., 1::2] @ np.cos(np.outer(k, theta)) + c[..., 2::2] @ np.sin(np.outer(k, theta))
    return 0.5 * (x.max(axis=-1) - x.min(axis=-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyharm-python", default=os.environ.get("PYHARM_PYTHON", sys.executable))
    args = parser.parse_args()
    print(f"jax {jax.__version__}, cores {os.cpu_count()}, load average {os.getloadavg()}")
    done = subprocess.run([args.pyharm_python, "-c", PYHARM], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pyHarm failed (install pyharm-os and give --pyharm-python):\n{done.stderr[-2000:]}")
    peer = json.loads(done.stdout.strip().splitlines()[-1])
    x = np.asarray(peer["x"])
    omegas, theirs = x[:, -1], amplitude(x[:, :-1])

    system = jf.Oscillator(law=jf.Iwan(jnp.array([JENKINS_K]), jnp.array([SLIP_FORCE])),
                           force=jf.Harmonic(FORCE, 1.0, phase=np.pi / 2), mass=MASS, stiffness=STIFFNESS,
                           damping=DAMPING)
    began = time.perf_counter()
    batch = jf.harmonic_balance_batch(system, {"force.omega": omegas}, harmonics=HARMONICS, samples=SAMPLES)
    batch_seconds = time.perf_counter() - began
    ours = amplitude(batch["coefficients"][:, :, 0])
    began = time.perf_counter()
    start = jf.harmonic_balance(jf.set_parameters(system, {"force.omega": BAND[0]}), harmonics=HARMONICS,
                                samples=SAMPLES, estimate=False)
    branch = jf.continue_balance(start, "force.omega", bounds=BAND, ds=0.05, ds_max=0.2)
    curve_seconds = time.perf_counter() - began
    peak = float(np.max(theirs))
    gap = np.abs(ours - theirs) / peak
    print(f"pyHarm: {len(omegas)} points in {peer['seconds']:.1f} s (arc-length continuation, compilation "
          f"included); peak amplitude {peak:.6f} at omega = {omegas[np.argmax(theirs)]:.4f}")
    print(f"jaxfriction harmonic_balance_batch at those {len(omegas)} frequencies: {batch_seconds:.1f} s, "
          f"{int(batch['converged'].sum())} converged")
    print(f"jaxfriction continue_balance over the band: {branch.sizes['point']} points in {curve_seconds:.1f} s "
          f"({branch.attrs['status']})")
    print(f"largest amplitude difference: {gap.max():.2e} of the peak (median {np.median(gap):.2e}), at omega = "
          f"{omegas[np.argmax(gap)]:.4f}")


if __name__ == "__main__":
    main()
