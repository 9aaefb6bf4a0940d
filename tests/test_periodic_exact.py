"""Periodic orbits with exact stick: shooting on the event-driven flow (``integrator=EventDriven``).

References the library did not make: Den Hartog's closed-form forced response (and its
derivatives by central differences), central differences of the period map of a piecewise
Coulomb ODE solved by scipy (DOP853 with events) in this file, and for a sticking orbit central
differences of :func:`~jaxfriction.simulate`'s event-driven runs.
"""

import math

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import jaxfriction as jf

ALPHA, OMEGA, MU = 2.0, 0.7, 0.5  # Den Hartog's non-sticking regime (every half period one slip)
EXACT = jf.EventDriven(max_events=16)


def coulomb_period_map(x, alpha, omega, mu, t0=0.0):
    """x'' + x = alpha sin(omega t) - mu sgn(x') over one forcing period, slip by slip (scipy);
    a slip that ends reverses at once (asserted: no stick on this orbit)."""
    t, y, t1 = t0, np.asarray(x, float), t0 + 2 * math.pi / omega
    s = np.sign(y[1]) if y[1] != 0 else -np.sign(alpha * math.sin(omega * t) - y[0])
    while t < t1:
        def stop(t, y):
            return y[1]
        stop.terminal, stop.direction = True, -s
        sol = solve_ivp(lambda t, y, s=s: [y[1], alpha * math.sin(omega * t) - y[0] - mu * s], (t, t1), y,
                        method="DOP853", rtol=1e-13, atol=1e-13, events=stop)
        t, y = sol.t[-1], sol.y[:, -1]
        if sol.status == 1:
            f_eq = alpha * math.sin(omega * t) - y[0]
            assert abs(f_eq) > mu
            s, y = -s, np.array([y[0], 0.0])
    return y


@pytest.fixture(scope="module")
def den_hartog_orbit():
    system = jf.Oscillator(law=jf.Coulomb(MU), force=jf.Harmonic(ALPHA, OMEGA))
    return jf.periodic_orbit(system, integrator=EXACT)


def test_exact_orbit_is_den_hartogs_and_its_monodromy_the_period_maps(den_hartog_orbit):
    o = den_hartog_orbit
    X, _ = jf.den_hartog_response(ALPHA, OMEGA, MU)
    assert o.converged and o.status == "converged" and o.integrator is EXACT
    assert o.residual <= 1e-10 and o.stick_fraction == 0.0
    assert abs(o.amplitude / X - 1) < 1e-8  # 1e-16; the regularized RK4 orbit is only O(eps)
    assert abs(o.dissipation / (4 * MU * X) - 1) < 1e-8  # mu N times the path 4 X per period
    np.testing.assert_allclose(coulomb_period_map(o.y0, ALPHA, OMEGA, MU), o.y0, atol=1e-9)
    h = 1e-5
    fd = np.stack([(coulomb_period_map(o.y0 + h * e, ALPHA, OMEGA, MU)
                    - coulomb_period_map(o.y0 - h * e, ALPHA, OMEGA, MU)) / (2 * h) for e in np.eye(2)], axis=1)
    np.testing.assert_allclose(o.monodromy, fd, atol=1e-8)  # 4e-10
    assert o.stable and np.all(np.abs(o.multipliers) < 0.6)  # a complex pair, |mu| = 0.578


def test_exact_orbit_bad_input(den_hartog_orbit):
    forced = jf.Harmonic(ALPHA, OMEGA)
    with pytest.raises(ValueError, match="law"):
        jf.periodic_orbit(jf.Oscillator(law=jf.Quinn(mu=MU, eps=1e-3), force=forced), integrator=EXACT)
    with pytest.raises(ValueError, match="system"):
        jf.periodic_orbit(jf.SpringSlider(law=jf.Coulomb(MU)), period=1.0, integrator=EXACT)
    with pytest.raises(ValueError, match="integrator"):
        jf.periodic_orbit(jf.Oscillator(law=jf.Coulomb(MU), force=forced), integrator=jf.MoreauJean())
    with pytest.raises(ValueError, match="integrator="):
        jf.periodic_orbit(jf.Oscillator(law=jf.Coulomb(MU), force=forced), solver=EXACT)
    with pytest.raises(ValueError, match="start"):
        jf.continue_orbits(den_hartog_orbit, "force.omega", bounds=(0.6, 0.8))


@pytest.mark.slow
def test_sticking_orbit_zero_multiplier_and_the_regularized_limit():
    alpha, omega, mu = 1.0, 0.5, 0.8  # sticks 29 % of the period
    system = jf.Oscillator(law=jf.Coulomb(mu), force=jf.Harmonic(alpha, omega))
    o = jf.periodic_orbit(system, integrator=EXACT)
    assert o.converged and 0.2 < o.stick_fraction < 0.4
    mu_abs = np.abs(o.multipliers)
    assert mu_abs[1] < 1e-12 and 0.05 < mu_abs[0] < 0.15  # stick forgets the entry state: a zero multiplier

    def end(x):
        run = jf.simulate(system, x, 0.0, o.period, solver=EXACT, saveat=jf.SaveAt(ts=[0.0, o.period]))
        return np.asarray(run.ys[-1, :2])

    h = 1e-6
    fd = np.stack([(end(o.y0 + h * e) - end(o.y0 - h * e)) / (2 * h) for e in np.eye(2)], axis=1)
    np.testing.assert_allclose(o.monodromy, fd, atol=1e-8)
    # the RK4 orbit of Quinn's regularized law (h = eps / (2 mu N)) converges to it at O(eps)
    errors = []
    for eps in (1e-2, 1e-3, 1e-4):
        r = jf.periodic_orbit(jf.Oscillator(law=jf.Quinn(mu=mu, eps=eps), force=jf.Harmonic(alpha, omega)),
                              dt=eps / (2 * mu), y0=o.y0, transient=0.0)
        assert r.converged
        errors.append((abs(r.amplitude / o.amplitude - 1), np.max(np.abs(r.monodromy - o.monodromy))))
    errors = np.array(errors)
    assert np.all(errors[1:] < 0.2 * errors[:-1]) and errors[-1, 0] < 1e-7 and errors[-1, 1] < 1e-4


@pytest.mark.slow
def test_exact_orbit_sensitivity_is_den_hartogs_derivative(den_hartog_orbit):
    s = jf.orbit_sensitivity(den_hartog_orbit, ["force.omega", "law.mu", "force.amplitude"])
    h = 1e-6

    def d(i):
        p = np.array([ALPHA, OMEGA, MU])
        return (jf.den_hartog_response(*(p + h * np.eye(3)[i]))[0]
                - jf.den_hartog_response(*(p - h * np.eye(3)[i]))[0]) / (2 * h)

    np.testing.assert_allclose([s["amplitude"][n] for n in ("force.amplitude", "force.omega", "law.mu")],
                               [d(0), d(1), d(2)], rtol=1e-8)


@pytest.mark.slow
def test_exact_belt_orbit_period_is_the_closed_form():
    cycle = jf.belt_limit_cycle(0.5, 0.6, 0.4)
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(0.6, 0.4), surface=jf.Constant(0.5))
    o = jf.periodic_orbit(system, y0=[0.0, 0.5], period=6.0, integrator=EXACT)
    assert o.converged and o.autonomous
    assert abs(o.period / cycle["period"] - 1) < 1e-10  # the RK4 orbit of Quinn's law: 9e-4
    assert abs(o.stick_fraction - cycle["stick_duration"] / cycle["period"]) < 2 / 200  # the saved grid
    np.testing.assert_allclose(np.abs(o.multipliers), [1.0, 0.0], atol=1e-9)  # trivial, and stick's zero
    # a peak inside a slip on a moving belt is not an event: to the sample spacing
    assert abs(o.amplitude / ((cycle["peak_spring_force"] - cycle["min_spring_force"]) / 2) - 1) < 1e-4
