"""Dynamic laws (internal state per contact) in multi-contact systems: chain, belt, user systems."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction.testing import check_system


class SpringBody(jf.AbstractContactSystem):
    """One body on a spring, forced, on a fixed floor: the Oscillator written as a contact system."""

    n_dof = 1
    law: object
    amplitude: float = 1.2
    omega: float = 0.9

    @property
    def masses(self):
        return jnp.ones(1)

    @property
    def normal(self):
        return jnp.ones(1)

    damping = 0.0

    def potential_energy(self, q):
        return 0.5 * jnp.sum(q**2)

    def external_force(self, t):
        return jnp.atleast_1d(self.amplitude * jnp.sin(self.omega * t))

    def contact_jacobian(self):
        return None

    def surface_velocity(self, t):
        return None


LUGRE = jf.LuGre(sigma0=100.0, sigma1=10.0, sigma2=0.1, mu_c=0.5, mu_s=0.7, v_s=0.05)


def test_contact_system_with_a_dynamic_law_is_the_oscillator():
    own = jf.simulate(SpringBody(law=LUGRE), jnp.array([0.3, 0.0]), 0.0, 20.0, 1e-3, save_every=100)
    osc = jf.simulate(jf.Oscillator(law=LUGRE, force=jf.Harmonic(1.2, 0.9)), jnp.array([0.3, 0.0]), 0.0, 20.0, 1e-3,
                      save_every=100)
    assert own.ys.shape == osc.ys.shape == (201, 6)
    np.testing.assert_allclose(own.ys, osc.ys, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(SpringBody(law=LUGRE).mechanical_energy(own.ys), osc.system.mechanical_energy(osc.ys),
                               rtol=1e-12)


@pytest.mark.slow  # moved out of the fast default (suite time); contact systems with dynamic laws: the fast tests below
def test_chain_and_belt_carry_one_state_per_contact():
    chain = jf.BurridgeKnopoffChain(law=jf.Dahl(sigma=200.0, mu=1.0, alpha=1.0), n=6, alpha=0.25, omega=0.5)
    assert chain.n_internal == 6 and chain.state_size == 2 * 6 + 6 + 3
    traj = jf.simulate(chain, jnp.zeros(12), 0.0, 8.0, 1e-3, save_every=100)
    assert int(traj.status) == 0 and float(jf.relative_energy_residual(traj)) < 1e-9
    assert float(traj.friction_dissipation[-1]) > 0
    check_system(chain, t1=1.0, dt=1e-3, energy_rtol=1e-7)  # Dahl switches with sgn(v): not smooth at reversals
    # coupled contacts (dense W): per-contact coefficients, one Dahl state each
    belt = jf.TwoBlocksOnBelt(law=jf.Dahl(sigma=100.0, mu=jnp.array([0.5, 0.25]), alpha=1.0))
    out = jf.simulate(belt, jnp.zeros(4), 0.0, 10.0, 1e-3, save_every=100)
    assert out.ys.shape[1] == 4 + 2 + 3 and int(out.status) == 0
    assert float(jf.relative_energy_residual(out)) < 1e-8  # Dahl's sgn(v): not smooth at reversals
    # the springs' force never exceeds the Coulomb limit of each contact
    forces = jax.vmap(belt.friction_force)(out.ts, out.ys)
    assert np.all(np.abs(forces) <= np.array([0.5, 0.25]) * (1 + 1e-9))


@pytest.mark.slow  # moved out of the fast default (suite time); chain gradients: test_contacts.py
def test_gradient_through_a_chain_with_lugre_matches_finite_differences():
    def dissipation(sigma0):
        chain = jf.BurridgeKnopoffChain(law=jf.LuGre(sigma0=sigma0, sigma1=20.0, sigma2=0.0, mu_c=1.0, mu_s=1.2,
                                                     v_s=0.1), n=3, alpha=0.5, omega=0.5)
        return jf.simulate(chain, jnp.zeros(6), 0.0, 5.0, 2e-3, save_every=None).friction_dissipation[-1]

    g = jax.grad(dissipation)(400.0)
    fd = (dissipation(400.0 + 0.05) - dissipation(400.0 - 0.05)) / 0.1
    assert np.isfinite(g) and abs(g) > 1e-8
    np.testing.assert_allclose(g, fd, rtol=1e-4)
