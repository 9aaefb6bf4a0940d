import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf

OMEGA = 0.5
PERIOD = 2 * np.pi / OMEGA


def oscillator(mu=1.0, alpha=1.2, dt=0.01):
    return jf.Oscillator(law=jf.Quinn(mu, 2 * dt), force=jf.Harmonic(alpha, OMEGA))


def test_dissipation_per_cycle_equals_integral_of_friction_power():
    # D = -int v f dt over each cycle, from the running integral vs direct quadrature
    system = oscillator()
    n_per = 1257
    coarse = jf.simulate(system, jnp.zeros(2), 0.0, 3 * PERIOD, 0.01, save_every=n_per)
    fine = jf.simulate(system, jnp.zeros(2), 0.0, 3 * PERIOD, 0.01, save_every=1)
    d = jf.dissipation_per_cycle(coarse, PERIOD)
    assert d.shape == (3,) and np.all(d > 0)
    p, t = np.asarray(fine.friction_power), np.asarray(fine.ts)
    for k in range(3):
        sl = slice(k * n_per, (k + 1) * n_per + 1)
        quad = np.trapezoid(p[sl], t[sl])
        np.testing.assert_allclose(d[k], quad, rtol=1e-4)
    # Hermite interpolation on an unaligned save grid recovers the aligned values
    unaligned = jf.simulate(system, jnp.zeros(2), 0.0, 3 * PERIOD + 1.0, 0.01, save_every=7)
    np.testing.assert_allclose(jf.dissipation_per_cycle(unaligned, PERIOD, 3), d, rtol=1e-6)


def test_stick_fraction_and_intervals_for_stick_slip():
    system = oscillator(mu=1.0, alpha=1.2)
    traj = jf.simulate(system, jnp.array([0.0, 0.5]), 0.0, 10 * PERIOD, 0.01, save_every=5)
    frac = float(jf.stick_fraction(traj))
    intervals = jf.stick_intervals(traj)
    assert 0.2 < frac < 0.99
    assert intervals.shape[1] == 2 and np.all(intervals[:, 1] >= intervals[:, 0])
    total = np.sum(intervals[:, 1] - intervals[:, 0])
    np.testing.assert_allclose(total / (traj.ts[-1] - traj.ts[0]), frac, atol=0.01)


def test_chatter_classical_vs_regularized():
    y0 = jnp.array([2.75, 0.0])
    coulomb = jf.simulate(jf.Oscillator(law=jf.Coulomb(1.0)), y0, 0.0, 20.0, 0.01)
    quinn = jf.simulate(jf.Oscillator(law=jf.Quinn(1.0, 0.02)), y0, 0.0, 20.0, 0.01)
    assert int(jf.chatter_count(coulomb, stages=True)) > 1000
    assert int(jf.chatter_count(quinn, stages=True)) <= 5
    assert int(jf.chatter_count(quinn)) <= 2
    assert jf.rk4_stage_forces(quinn).shape == (2000, 4)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: jf.stick_fraction(None, v_tol=0.0), "v_tol"),
        (lambda: jf.dissipation_per_cycle(None, period=-1.0), "period"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_stick_fraction_over_a_time_window():
    traj = jf.simulate(oscillator(mu=1.0, alpha=1.2), jnp.array([0.0, 0.5]), 0.0, 4 * PERIOD, 0.01, save_every=5)
    m = np.asarray(jf.stick_mask(traj), dtype=float)
    ts = np.asarray(traj.ts)
    k, j = 100, 700  # a window between saved points k and j: the trapezoid over them
    expected = np.sum(np.diff(ts[k : j + 1]) * 0.5 * (m[k:j] + m[k + 1 : j + 1])) / (ts[j] - ts[k])
    np.testing.assert_allclose(jf.stick_fraction(traj, t_start=ts[k], t_end=ts[j]), expected, rtol=1e-12)
    np.testing.assert_allclose(jf.stick_fraction(traj, t_start=-1.0, t_end=1e9), jf.stick_fraction(traj), rtol=1e-14)
    assert 0.0 < expected < 1.0 and jf.STICK_TOL == 1e-6
