"""
A spring-mass on a belt with four friction laws
===============================================

A spring-mass on a belt moving at ``v0 = 0.2`` (paper 004, system 2), from rest, simulated
with RK4 at ``dt = 0.01``. The block rides the belt until the spring force reaches ``mu N``.
With a constant coefficient (Coulomb, velocity-limited, Quinn) it then oscillates about
``mu N / k``, touching the belt speed once per cycle: the grazing cycle of
``jf.belt_limit_cycle`` with ``mu_s = mu_k``. Awrejcewicz's model weakens with the slip
speed (``delta = 3``) and gives stick-slip. The printed stick fractions use
``jf.STICK_TOL`` (``|v| <= 1e-6``) and a looser ``1e-3``: in the first ride on the belt the
classical law chatters, the velocity-limited law and Awrejcewicz's model creep at small slip
speeds, and Quinn's law holds stick to round-off.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import matplotlib.pyplot as plt

import jaxfriction as jf

laws = {
    "Coulomb": jf.Coulomb(1.0),
    "velocity-limited": jf.VelocityLimited(1.0, 0.02),
    "Quinn": jf.Quinn(1.0, 0.02),
    "Awrejcewicz (delta = 3)": jf.Awrejcewicz(1.0, 3.0, 0.02),
}
fig, axes = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True, constrained_layout=True)
for name, law in laws.items():
    system = jf.Oscillator(law=law, surface=jf.Constant(0.2))
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 20.0, 0.01)
    slip = traj.velocity - 0.2
    axes[0].plot(traj.ts, slip, label=name, lw=1)
    axes[1].plot(traj.ts, traj.position, label=name, lw=1)
    print(f"{name:24s} stick fraction {float(jf.stick_fraction(traj)):.3f} "
          f"({float(jf.stick_fraction(traj, v_tol=1e-3)):.3f} at 1e-3), "
          f"energy residual {float(jf.relative_energy_residual(traj)):.1e}")
axes[0].set_ylabel("slip velocity v - v0")
axes[1].set_ylabel("spring force k x")
axes[1].set_xlabel("t")
axes[0].legend(fontsize=8)
plt.show()
