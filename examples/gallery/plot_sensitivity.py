"""
Elasticities of the dissipation
===============================

``jf.sensitivity`` of the dissipation per cycle of Quinn's forced oscillator with respect
to four leaf paths: value, gradient and elasticities ``d ln D / d ln p``, checked against
central finite differences.
"""

import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import matplotlib.pyplot as plt

import jaxfriction as jf

T = 4 * math.pi
system = jf.Oscillator(law=jf.Quinn(mu=0.5, eps=0.02), force=jf.Harmonic(amplitude=0.8, omega=0.5))


def dissipation(system):
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 6 * T, T / 1257)
    return jf.dissipation_per_cycle(traj, T)[-1]


paths = ["law.mu", "law.eps", "force.amplitude", "stiffness"]
result = jf.sensitivity(dissipation, system, paths)
check = jf.finite_difference_gradient(dissipation, system, paths)
gradient, elasticity = result["gradient"], result["elasticity"]
print(f"D = {float(result['value']):.6f}")
for p in paths:
    print(f"{p:16s} dD/dp {gradient[p]: .6f}  (finite differences {check[p]: .6f})  elasticity {elasticity[p]: .4f}")
fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
ax.barh(paths, [elasticity[p] for p in paths])
ax.set_xlabel("elasticity d ln D / d ln p")
plt.show()
