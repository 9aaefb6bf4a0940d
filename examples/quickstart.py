"""The README example: dissipation, stick fraction, energy check and dD/dmu of Quinn's oscillator."""

import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import jaxfriction as jf  # noqa: E402


def run(mu, alpha=0.8, omega=0.5, cycles=10):
    """Quinn 2004 eq. 5 with Quinn's law (eps = 2 dt), from rest."""
    system = jf.ForcedOscillator(law=jf.Quinn(mu=mu, eps=0.02), alpha=alpha, omega=omega)
    return jf.simulate(system, jnp.zeros(2), 0.0, cycles * 2 * math.pi / omega, dt=0.01)


if __name__ == "__main__":
    traj = run(0.5)
    print("D of the last cycle     ", float(jf.dissipation_per_cycle(traj, period=4 * math.pi)[-1]))
    print("stick fraction          ", float(jf.stick_fraction(traj)))
    print("energy balance residual ", float(jf.relative_energy_residual(traj)))
    print("dE_friction/dmu         ", float(jax.grad(lambda mu: run(mu).friction_dissipation[-1])(0.5)))
    batch = jax.vmap(lambda mu: run(mu).friction_dissipation[-1])(jnp.linspace(0.2, 1.0, 64))
    print("E_friction over 64 mu   ", batch[:4], "...")
