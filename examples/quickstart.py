"""The README example: simulate, sweep and fit one system, named by its leaf paths."""

import math

import jax

jax.config.update("jax_enable_x64", True)  # float64 for comparison with published numbers

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402

# Quinn 2004 eq. 5: x'' + x = f + alpha sin(omega t), Quinn's law with eps = 2 dt
system = jf.Oscillator(law=jf.Quinn(mu=0.5, eps=0.02), force=jf.Harmonic(amplitude=0.8, omega=0.5))
print(jf.parameter_paths(system))  # the names every workflow uses: 'law.mu', 'force.amplitude', ...

traj = jf.simulate(system, jnp.zeros(2), 0.0, 20 * math.pi, dt=0.01)
print("D of the last cycle", float(jf.dissipation_per_cycle(traj, period=4 * math.pi)[-1]),
      "stick fraction", float(jf.stick_fraction(traj)), "energy residual", float(jf.relative_energy_residual(traj)))

# a sweep over two paths: the last of 10 forcing cycles measured, dD/dmu by forward-mode AD
ds = jf.sweep(system, {"law.mu": np.linspace(0.2, 1.0, 16), "force.amplitude": np.linspace(0.5, 2.0, 16)},
              cycles=10, frequency="force.omega", dt=0.01, wrt=["law.mu"], progress=False)
print(ds["dissipation"].sel({"law.mu": 0.2, "force.amplitude": 2.0}).item(),
      ds["grad_dissipation"].sel(wrt="law.mu").mean().item(), int(ds["status"].max()))

# identification: the belt template's (mu_s, mu_k) from a noisy 30 s record, 25 % off at the start
belt = jf.template("belt")
truth = jf.set_parameters(belt.system, {"law.mu_s": 0.6, "law.mu_k": 0.4})
record = jf.Measurement.from_trajectory(jf.simulate(truth, jnp.array([0.0, 0.5]), 0.0, 30.0, 0.01, save_every=10),
                                        noise=0.01, seed=1, known_y0=True)
result = jf.fit(belt, {"law.mu_s": 0.75, "law.mu_k": 0.3}, record, dt=0.01)
print(result.summary())
