import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction._workflows import SweepConfig, cycle_metrics, dissipation_sweep

OMEGA = 0.5
PERIOD = 2 * np.pi / OMEGA


def oscillator(mu=1.0, alpha=1.2, dt=0.01):
    return jf.ForcedOscillator(law=jf.Quinn(mu, 2 * dt), alpha=alpha, omega=OMEGA)


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
    coulomb = jf.simulate(jf.ForcedOscillator(law=jf.Coulomb(1.0)), y0, 0.0, 20.0, 0.01)
    quinn = jf.simulate(jf.ForcedOscillator(law=jf.Quinn(1.0, 0.02)), y0, 0.0, 20.0, 0.01)
    assert int(jf.chatter_count(coulomb, stages=True)) > 1000
    assert int(jf.chatter_count(quinn, stages=True)) <= 5
    assert int(jf.chatter_count(quinn)) <= 2
    assert jf.rk4_stage_forces(quinn).shape == (2000, 4)


def test_sweep_lane_matches_direct_simulation_and_fd():
    config = SweepConfig(cycles=4)
    out = cycle_metrics(jnp.asarray(0.8), jnp.asarray(1.1), config)
    system = oscillator(mu=0.8, alpha=1.1)
    pre = jf.simulate(system, jnp.zeros(2), 0.0, 3 * PERIOD, 0.01, save_every=None)
    last = jf.simulate(system, pre.ys[-1], 3 * PERIOD, 4 * PERIOD, 0.01, save_every=None)
    np.testing.assert_allclose(out["dissipation"], jf.dissipation_per_cycle(last, PERIOD, 1)[0], rtol=1e-12)
    h = 1e-6
    plus = cycle_metrics(jnp.asarray(0.8 + h), jnp.asarray(1.1), config)["dissipation"]
    minus = cycle_metrics(jnp.asarray(0.8 - h), jnp.asarray(1.1), config)["dissipation"]
    np.testing.assert_allclose(out["dD_dmu"], (plus - minus) / (2 * h), rtol=1e-5)
    assert out["status"] == 0


def test_sweep_dataset():
    mus, alphas = np.array([0.2, 1.0]), np.array([0.2, 0.9, 2.0])
    ds = dissipation_sweep(mus, alphas, SweepConfig(cycles=3), chunk_size=4, progress=False)
    assert ds["dissipation"].dims == ("mu", "alpha") and ds["dissipation"].shape == (2, 3)
    np.testing.assert_array_equal(ds["mu"], mus)
    # alpha < mu N from rest: f_eq = -alpha sin(omega t) never leaves the static band
    assert abs(float(ds["dissipation"].sel(mu=1.0, alpha=0.2))) < 1e-15
    assert float(ds["stick_fraction"].sel(mu=1.0, alpha=0.9)) == 1.0
    assert float(ds["dissipation"].sel(mu=0.2, alpha=2.0)) > 1.0
    assert float(ds["stick_fraction"].sel(mu=0.2, alpha=2.0)) == 0.0
    assert int(ds["status"].max()) == 0 and ds.attrs["steps_per_second"] > 0
    # chunking does not change results
    ds1 = dissipation_sweep(mus, alphas, SweepConfig(cycles=3), chunk_size=64, progress=False)
    np.testing.assert_array_equal(ds["dissipation"], ds1["dissipation"])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: SweepConfig(dt=0.0), "dt"),
        (lambda: SweepConfig(law="magic"), "law"),
        (lambda: SweepConfig(cycles=1), "cycles"),
        (lambda: SweepConfig(eps=-1.0), "eps"),
        (lambda: dissipation_sweep([-0.1], [1.0]), "mu_values"),
        (lambda: dissipation_sweep([0.1], [np.nan]), "alpha_values"),
        (lambda: dissipation_sweep([[0.1]], [1.0]), "mu_values"),
        (lambda: dissipation_sweep([0.1], [1.0], chunk_size=0), "chunk_size"),
        (lambda: jf.stick_fraction(None, v_tol=0.0), "v_tol"),
        (lambda: jf.dissipation_per_cycle(None, period=-1.0), "period"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
