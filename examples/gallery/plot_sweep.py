"""
A sweep with gradients
======================

``jf.sweep`` over two leaf paths of Quinn's forced oscillator (Quinn 2004 eq. 5): the
dissipation of the last of 6 forcing cycles and its derivative in ``law.mu`` by
forward-mode AD, on a 24 x 24 grid. Every lane carries a status code; the summary counts
the flagged ones.
"""

import jax

jax.config.update("jax_enable_x64", True)

import matplotlib.pyplot as plt
import numpy as np

import jaxfriction as jf

system = jf.Oscillator(law=jf.Quinn(mu=0.5, eps=0.02), force=jf.Harmonic(amplitude=0.8, omega=0.5))
ds = jf.sweep(system, {"law.mu": np.linspace(0.05, 1.0, 24), "force.amplitude": np.linspace(0.05, 2.0, 24)},
              cycles=6, frequency="force.omega", dt=0.01, wrt=["law.mu"], progress=False)
print(f"{int((ds['status'] != 0).sum())} of {ds['status'].size} lanes flagged")
fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
ds["dissipation"].plot(ax=axes[0], x="law.mu")
axes[0].set_title("D, last cycle")
ds["grad_dissipation"].sel(wrt="law.mu").plot(ax=axes[1], x="law.mu", robust=True)
axes[1].set_title("dD / d law.mu")
plt.show()
