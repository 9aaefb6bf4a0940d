"""Where does the regularization width matter? dD/dmu and dD/deps over the (mu N, alpha) plane.

Quinn's forced oscillator (omega = 0.5, from rest), D = dissipation in cycle 10, Quinn's law
with eps = 0.02. Forward-mode gradients at every grid point in one vmapped call. Writes
sensitivity_map.png and prints where |eps dD/deps| / D (the elasticity to eps) exceeds 1e-3:
that is the stick-slip region; in pure slip or permanent stick eps barely matters.
"""

import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import matplotlib  # noqa: E402
import numpy as np  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import jaxfriction as jf  # noqa: E402

T, CYCLES, DT = 4 * math.pi, 10, 0.01


def dissipation(system):
    per = math.ceil(T / DT)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, CYCLES * T, T / per, save_every=per)
    return jf.dissipation_per_cycle(traj, T, CYCLES)[-1]


SYSTEM = jf.Oscillator(law=jf.Quinn(1.0, 0.02), force=jf.Harmonic(1.0, 0.5))

if __name__ == "__main__":
    grid = {"law.mu": np.linspace(0.1, 1.0, 24), "force.amplitude": np.linspace(0.1, 2.0, 24)}
    ds = jf.sensitivity_map(dissipation, SYSTEM, grid, ["law.mu", "law.eps"])
    d_mu, d_eps = ds["grad_value"].sel(wrt="law.mu"), ds["grad_value"].sel(wrt="law.eps")
    elasticity_eps = np.where(ds["value"] > 0, 0.02 * d_eps / np.where(ds["value"] > 0, ds["value"], 1), 0)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
    for ax, (data, title) in zip(axes, [(ds["value"], "D (cycle 10)"), (d_mu, "dD/dmu"),
                                        (elasticity_eps, "eps dD/deps / D")]):
        mesh = ax.pcolormesh(ds["law.mu"], ds["force.amplitude"], np.asarray(data).T, shading="auto")
        fig.colorbar(mesh, ax=ax)
        ax.set(xlabel="mu N", ylabel="alpha", title=title)
    fig.savefig("sensitivity_map.png", dpi=110)
    share = float(np.mean(np.abs(elasticity_eps) > 1e-3))
    print(f"eps matters (|elasticity| > 1e-3) on {share:.0%} of the grid; max |elasticity| "
          f"{float(np.max(np.abs(elasticity_eps))):.2e}; wrote sensitivity_map.png")
