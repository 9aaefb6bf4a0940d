"""Stick-slip of a spring-mass on a belt (paper 004, system 2) with four laws.

Writes belt_stick_slip.png: slip velocity and friction force against time. The classical
law chatters in stick, the velocity-limited law creeps, Quinn's and Awrejcewicz's laws
stick cleanly.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import jaxfriction as jf  # noqa: E402

LAWS = {
    "Coulomb": jf.Coulomb(1.0),
    "velocity-limited": jf.VelocityLimited(1.0, 0.02),
    "Quinn": jf.Quinn(1.0, 0.02),
    "Awrejcewicz (delta=3)": jf.Awrejcewicz(1.0, 3.0, 0.02),
}

if __name__ == "__main__":
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True, constrained_layout=True)
    for name, law in LAWS.items():
        system = jf.Oscillator(law=law, surface=jf.Constant(0.2))
        traj = jf.simulate(system, jnp.array([0.0, 0.2]), 0.0, 40.0, 0.01)
        print(f"{name:24s} stick fraction {float(jf.stick_fraction(traj, 1e-4)):.3f}  "
              f"energy residual {float(jf.relative_energy_residual(traj)):.1e}")
        axes[0].plot(traj.ts, traj.slip_velocity, label=name)
        axes[1].plot(traj.ts, traj.friction_force, label=name)
    axes[0].set(ylabel="slip velocity x' - v0")
    axes[1].set(ylabel="friction force", xlabel="t")
    axes[0].legend()
    fig.savefig("belt_stick_slip.png", dpi=110)
    print("wrote belt_stick_slip.png")
