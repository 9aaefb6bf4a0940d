import json

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction._dynamics import (
    lyapunov_spectrum,
    peak_samples,
    stick_slip_period,
    stroboscopic_samples,
    system_dynamics,
)
from jaxfriction._reproduce.awrejcewicz import disc_lyapunov
from jaxfriction.cli import main


def lorenz(t, x, args=None):
    s, r, b = 10.0, 28.0, 8.0 / 3.0
    return jnp.stack([s * (x[1] - x[0]), x[0] * (r - x[2]) - x[1], x[0] * x[1] - b * x[2]])


def van_der_pol(t, x, args=None):
    return jnp.stack([x[1], (1 - x[0] ** 2) * x[1] - x[0]])


def test_linear_system_exponents_are_eigenvalue_real_parts():
    a = jnp.array([[-0.5, 2.0, 0.0], [-2.0, -0.5, 0.0], [0.0, 0.0, 0.7]])
    res = lyapunov_spectrum(lambda t, x, args=None: a @ x, jnp.array([1.0, 0.3, 0.2]), dt=0.01, duration=2000.0)
    # finite-time estimates converge as O(1/T) from a generic tangent basis
    np.testing.assert_allclose(res.exponents, [0.7, -0.5, -0.5], atol=1e-5)


def test_lorenz_largest_exponent_and_sum():
    res = jax.jit(lambda x: lyapunov_spectrum(lorenz, x, dt=0.01, duration=1000.0, transient=20.0))(jnp.ones(3))
    assert abs(float(res.exponents[0]) - 0.906) < max(0.03, 3 * float(res.uncertainty[0]))
    assert abs(float(res.exponents[1])) < 0.02  # the flow direction
    # sum of exponents = average divergence of the flow = -(sigma + 1 + beta)
    assert abs(float(jnp.sum(res.exponents)) + (10 + 1 + 8 / 3)) < 1e-3
    largest = lyapunov_spectrum(lorenz, jnp.ones(3), dt=0.01, duration=1000.0, transient=20.0, n_exponents=1)
    assert abs(float(largest.exponents[0]) - 0.906) < 0.05


def test_periodic_orbit_has_a_zero_exponent_and_sum_matches_divergence():
    res = jax.jit(lambda x: lyapunov_spectrum(van_der_pol, x, dt=0.01, duration=600.0, transient=50.0))(
        jnp.array([2.0, 0.0]))
    assert abs(float(res.exponents[0])) < max(2e-3, 3 * float(res.uncertainty[0]))
    # average divergence (1 - x^2) along the limit cycle: 60,000 RK4 steps after 5,000
    _, xs = jf.rk4_scan(van_der_pol, jnp.array([2.0, 0.0]), 0.0, 0.01, 65_000, 1)
    div = 1 - np.asarray(xs[5001:, 0]) ** 2
    assert abs(float(jnp.sum(res.exponents)) - np.mean(div)) < 0.01


def test_disc_chaotic_and_periodic_cases():
    lam, sigma = disc_lyapunov(jnp.array([0.11, 0.3]))
    assert float(lam[0]) > 2 * float(sigma[0]) > 0  # omega_dr = 0.11: chaos (paper Fig. 4a)
    assert float(lam[1]) < -2 * float(sigma[1])  # omega_dr = 0.3: periodic stick-slip (Fig. 4b)
    # autonomous form: the time direction adds the zero exponent, the rest are the 2-D ones
    f, d = system_dynamics(jf.disc_on_driving_disc(omega_dr=0.3), autonomous=True)
    res = jax.jit(lambda z: lyapunov_spectrum(f, z, dt=1e-3, duration=300.0, transient=200.0))(jnp.zeros(d))
    assert d == 3 and abs(float(res.exponents[0])) < 1e-3  # O(1/T) from a generic start
    np.testing.assert_allclose(res.exponents[1], lam[1], atol=3 * float(sigma[1]))


def test_disc_periodic_orbit_is_a_fixed_point_of_the_stroboscopic_map():
    samples = stroboscopic_samples(jf.disc_on_driving_disc(omega_dr=0.3), jnp.zeros(2), jnp.pi, dt=1e-3,
                                   transient_periods=64, n_samples=10)
    assert samples.shape == (10,) and float(jnp.ptp(samples)) < 1e-6


def test_stick_slip_period_of_both_models():
    kw = {"t0": 0.0, "t1": 60.0, "dt": 1e-3}
    cont = jf.simulate(jf.disc_on_driving_disc(M0=0.0), jnp.zeros(2), **kw)
    switch = jf.simulate(jf.LeineSwitchDisc(M0=0.0), jnp.zeros(2), **kw)
    # a tolerance at the band's scale times the onsets sharply (the decay below it is slow);
    # onsets are interpolated between saved points: spreads 7e-5 and 3e-4 (5e-4 before)
    (pc, sc), (ps, ss) = stick_slip_period(cont, v_tol=1e-3), stick_slip_period(switch, v_tol=1e-3)
    assert 3.3 < pc < 3.4 and sc < 2e-4 and ss < 1e-3
    assert abs(pc - ps) < 2e-3  # the continuous model reproduces the switch model's stick-slip
    assert float(jf.relative_energy_residual(cont)) < 1e-6


def test_peak_samples():
    t = jnp.linspace(0, 20 * jnp.pi, 20001)
    peaks = peak_samples(jnp.sin(t) * (1 + 0.01 * t), 3)
    assert peaks.shape == (3,) and np.all(np.diff(np.asarray(peaks)) < 0)  # latest (largest) first
    assert np.all(np.isnan(np.asarray(peak_samples(t, 2))))  # monotone: no peaks


@pytest.mark.slow  # moved out of the fast default (suite time); the Lyapunov checks stay fast
def test_reproduce_awrejcewicz_cli(tmp_path):
    result = CliRunner().invoke(main, ["reproduce", "awrejcewicz", "--n-params", "6", "--json",
                                       "--figure", str(tmp_path / "a.png")])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    assert numbers["lambda_1"]["0.11"] > 0 > numbers["lambda_1"]["0.3"]
    assert numbers["periodic_with_positive_lambda_beyond_3_sigma"] == 0
    assert 3.3 < numbers["stick_slip_period"]["continuous"]["period"] < 3.4


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: lyapunov_spectrum(lorenz, jnp.ones(3), dt=0.0, duration=1.0), "dt"),
        (lambda: lyapunov_spectrum(lorenz, jnp.ones(3), dt=0.01, duration=1.0, n_exponents=4), "n_exponents"),
        (lambda: lyapunov_spectrum(lorenz, jnp.ones(3), dt=0.01, duration=-1.0), "duration"),
        (lambda: jf.disc_on_driving_disc(inertia=0.0), "inertia"),
        (lambda: jf.LeineSwitchDisc(eps=0.0), "eps"),
        (lambda: stroboscopic_samples(jf.disc_on_driving_disc(), jnp.zeros(2), 1.0, dt=0.01, transient_periods=0,
                                      n_samples=0), "n_samples"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_tangents_are_aligned_during_the_transient():
    # x' = A x (upper triangular: exponents 0.5, -0.2, -1): over a short average, counting the
    # tangents' start-up (no transient) biases the estimate by 6 %; evolved through a transient
    # first, the tangents are aligned and the estimate is exact to RK4's error
    a = jnp.array([[0.5, 1.0, 0.0], [0.0, -0.2, 0.3], [0.0, 0.0, -1.0]])
    exact = np.array([0.5, -0.2, -1.0])

    def estimate(transient):
        res = lyapunov_spectrum(lambda t, x, args=None: a @ x, jnp.array([1.0, 0.3, 0.2]), dt=0.01, duration=20.0,
                                transient=transient)
        return np.max(np.abs(np.asarray(res.exponents) - exact))

    assert estimate(0.0) > 0.03 and estimate(20.0) < 1e-6
