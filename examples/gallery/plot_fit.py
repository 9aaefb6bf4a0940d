"""
Identify static and kinetic friction from a noisy record
========================================================

The ``belt`` template (``StaticKineticQuinn``, paper 004's belt): a 30 s record of the
position with noise ``sigma = 0.01``, fitted from a guess 25 % off with
Levenberg-Marquardt at the template's ``dt = eps / 2``. The summary gives Gauss-Newton
standard errors.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import matplotlib.pyplot as plt

import jaxfriction as jf

belt = jf.template("belt")
truth = jf.set_parameters(belt.system, {"law.mu_s": 0.6, "law.mu_k": 0.4})
clean = jf.simulate(truth, jnp.array([0.0, 0.5]), 0.0, 30.0, 0.01, save_every=10)
record = jf.Measurement.from_trajectory(clean, noise=0.01, seed=1, known_y0=True)
result = jf.fit(belt, {"law.mu_s": 0.75, "law.mu_k": 0.3}, record, dt=0.01, optimizer="lm")
print(result.summary())

fitted = jf.simulate(result.system, jnp.array([0.0, 0.5]), 0.0, 30.0, 0.01, save_every=10)
fig, ax = plt.subplots(figsize=(8, 3.5), constrained_layout=True)
ax.plot(record.t, record.q[:, 0], ".", ms=3, label="record (noisy)")
ax.plot(fitted.ts, fitted.position, lw=1, label="fitted model")
ax.set_xlabel("t")
ax.set_ylabel("x")
ax.legend()
plt.show()
