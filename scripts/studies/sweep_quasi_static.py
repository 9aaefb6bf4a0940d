"""1,000 velocity-step lanes of QuasiStaticSlider over (a, b): every lane's status and the time.

rsfmodel's velocity step (mu_0 0.6, D_c 10 um, k 1e-3 /um, V_0 1 um/s, 1 -> 10 um/s at t = 10 s,
to 40 s) on a 40 x 25 grid of a in [0.002, 0.012] and b in [0.002, 0.012] (k > k_c = (b - a)/D_c
on the whole grid); a second grid with b up to 0.02 (k < k_c on part of it) with radiation damping
eta = 1e-3 per um/s, where the quasi-static slider alone may blow up in finite time (status 2).

    PYTHONPATH=. python scripts/studies/sweep_quasi_static.py
"""

import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np

import jaxfriction as jf


def run_grid(b_max, damping):
    law = jf.RateState(a=0.005, b=0.01, D_c=10.0, mu_0=0.6, V_0=1.0, form="log")
    base = jf.QuasiStaticSlider(law=law, load=jf.Steps((1.0, 10.0), (10.0,)), stiffness=1e-3, normal=1.0,
                                damping=damping)
    a, b = np.meshgrid(np.linspace(0.002, 0.012, 40), np.linspace(0.002, b_max, 25))

    def lane(a, b):
        slider = jf.set_parameters(base, {"law.a": a, "law.b": b})
        traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 40.0, saveat=jf.SaveAt(n=400))
        return traj.status, jnp.max(traj.velocity)

    start = time.perf_counter()
    status, vmax = jax.jit(jax.vmap(lane))(jnp.asarray(a.ravel()), jnp.asarray(b.ravel()))
    status = np.asarray(status)
    wall = time.perf_counter() - start
    unstable = (b.ravel() - a.ravel()) / 10.0 > 1e-3
    print(f"b <= {b_max}, eta = {damping}: {status.size} lanes, status counts {np.bincount(status)}, "
          f"{unstable.sum()} lanes below k_c, max slip rate {np.max(np.asarray(vmax)):.4g} um/s, {wall:.1f} s")


if __name__ == "__main__":
    run_grid(0.012, 0.0)
    run_grid(0.02, 0.0)
    run_grid(0.02, 1e-3)
