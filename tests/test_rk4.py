"""The fast RK4 path: component-wise steps, checkpointed reverse mode, terms left out by field type."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
import jaxfriction._integrate.rk4 as rk4


def oscillator(mu, alpha):
    return jf.Oscillator(law=jf.Quinn(mu=mu, eps=0.02), force=jf.Harmonic(alpha, 0.5))


def test_componentwise_rk4_equals_array_rk4(monkeypatch):
    def run(mu, alpha):
        return jf.simulate(oscillator(mu, alpha), jnp.zeros(2), 0.0, 40.0, 0.01, save_every=100).ys

    mu, alpha = jnp.linspace(0.2, 1.0, 4), jnp.linspace(0.5, 2.0, 4)
    rows = jax.jit(jax.vmap(run))(mu, alpha)
    monkeypatch.setattr(rk4, "ROW_STATE_LIMIT", 0)
    arrays = jax.jit(jax.vmap(run))(mu, alpha)
    assert rows.shape == arrays.shape == (4, 41, 5)
    np.testing.assert_allclose(rows, arrays, rtol=1e-13, atol=1e-15)


def test_checkpointed_scan_same_values_and_gradients():
    save_every = None
    def final(mu, checkpoint):
        traj = jf.simulate(oscillator(mu, 1.3), jnp.zeros(2), 0.0, 30.0, 0.01, save_every=save_every,
                           solver=jf.RK4(checkpoint=checkpoint))
        return traj.ys[-1, 2]

    mu = jnp.asarray(0.7)
    assert float(final(mu, True)) == float(final(mu, False))
    g_plain = jax.grad(final)(mu, False)
    g_ckpt = jax.grad(final)(mu, True)
    np.testing.assert_allclose(g_ckpt, g_plain, rtol=1e-12)
    assert np.isfinite(g_ckpt) and abs(float(g_ckpt)) > 1e-3


def test_left_out_zero_terms_change_nothing():
    # a literal 0 damping, no force and a fixed floor (Constant(0.0)) drop exactly-zero terms
    # from the vector field; an array damping of 0 and a traced zero surface keep them
    law = jf.Quinn(mu=0.6, eps=0.02)
    y = jnp.array([0.3, -0.2, 0.0, 0.0, 0.0])
    lean = jf.Oscillator(law=law, force=jf.Harmonic(1.1, 0.5))
    full = jf.Oscillator(law=law, force=jf.Harmonic(1.1, 0.5, phase=jnp.asarray(0.0)), damping=jnp.asarray(0.0),
                         surface=jf.Constant(jnp.asarray(0.0)))
    for t in (0.0, 0.7, 2.3):
        np.testing.assert_array_equal(lean.vector_field(t, y), full.vector_field(t, y))
    # a moving, accelerating surface keeps its terms: f_eq = m a_s + k x - F(t), a_s = d v_s / dt
    shaken = jf.Oscillator(law=law, force=jf.Harmonic(1.1, 0.5), surface=jf.Harmonic(0.5, 1.0), mass=2.0)
    expected = 2.0 * 0.5 * jnp.cos(0.7) + 0.3 - 1.1 * jnp.sin(0.35)
    np.testing.assert_allclose(shaken.f_eq(0.7, y), expected, rtol=1e-15)
    # the disc: M0 cos(Omega t) as Harmonic(M0, Omega, phase = pi/2)
    disc = jf.disc_on_driving_disc(M0=0.5, Omega=2.0)
    np.testing.assert_allclose(disc.external_force(0.3), 0.5 * np.cos(0.6), rtol=1e-15)


def test_rk4_stability_in_the_stick_band_is_flagged():
    # Quinn's band is a damper of rate mu N / (m eps); RK4 is stable for h rate <= 2.785
    def status(eps, dt=0.01):
        system = jf.Oscillator(law=jf.Quinn(1.0, eps), force=jf.Harmonic(0.5, 0.5))
        return int(jf.simulate(system, jnp.zeros(2), 0.0, 5.0, dt, save_every=None).status)

    assert status(0.02) == jf.STATUS_OK  # Quinn's eps = 2 dt: h rate = 0.5
    assert status(0.01 / 2.7) == jf.STATUS_OK  # h rate = 2.7
    assert status(0.01 / 2.9) == jf.STATUS_UNSTABLE_STEP  # h rate = 2.9
    assert float(jf.stick_band_rate(jf.Oscillator(law=jf.Quinn(2.0, 0.1), mass=4.0))) == pytest.approx(5.0)
    # a contact system: the Delassus diagonal is the mobility (the chain's last block is 3/4 of the others)
    chain = jf.BurridgeKnopoffChain(law=jf.Quinn(1.0, 0.05), n=4)
    assert float(jf.stick_band_rate(chain)) == pytest.approx(1.0 / 0.05)
    # switch laws have no band slope
    assert float(jf.stick_band_rate(jf.Oscillator(law=jf.Karnopp(1.0, 1e-3)))) == 0.0
