"""The scipy references of scripts/benchmarks/bench_identification.py agree with jaxfriction's models.

Each reference (scripts/studies/identification_problems.py) integrates its own equations with scipy's
Radau at rtol 1e-11, independently of jaxfriction; ``jf.simulate`` (RK4 at the problem's step)
at the true parameters must reproduce its noise-free record, or the mapping of the parameters
onto the jaxfriction system is wrong. Tolerances are the measured differences (relative to the
record's standard deviation) with a margin of 3-6x; RK4 converges slowly where the laws have
kinks in the slip velocity (LuGre's |v|, Dahl's sgn(v), Threlfall's tolerance velocity).
"""

import functools
import os
import sys

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import pytest

import jaxfriction as jf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "studies"))
import identification_problems as ip

# problem -> (bound on max |jf - reference| / std(reference), measured)
AGREEMENT = {
    "lugre-belt": (1e-6, 1.6e-7),
    "lugre-forced": (1e-5, 2.5e-6),
    "dahl": (2e-6, 4.3e-7),
    "rate-state": (1e-9, 1.8e-10),
}
SLOW_AGREEMENT = {
    "position-axis": (5e-6, 1.0e-6),  # the reference takes ~5 s (Threlfall's kink at v0)
    "segalman": (2e-7, 3.3e-8),  # 24000 RK4 steps of 19 states
}


@functools.cache
def problem_of(name):
    """``ip.PROBLEMS[name]()``, its scipy reference computed once in this process (the tests
    only read it: the parametrized check and the two tests below share a problem)."""
    return ip.PROBLEMS[name]()


def check_agreement(name, bound):
    problem = problem_of(name)
    assert problem.record.q.shape == (len(problem.record), 1)
    assert np.all(np.isfinite(problem.clean))
    _, relative = ip.agreement(problem)
    assert relative < bound, (name, relative)
    # the record is the reference plus the documented noise
    residual = problem.record.q[:, 0] - problem.clean
    assert np.std(residual) == pytest.approx(problem.noise, rel=0.1)


@pytest.mark.parametrize("name", sorted(AGREEMENT))
def test_reference_agrees_with_simulate_at_the_truth(name):
    check_agreement(name, AGREEMENT[name][0])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_AGREEMENT))
def test_slow_reference_agrees_with_simulate_at_the_truth(name):
    check_agreement(name, SLOW_AGREEMENT[name][0])


def test_belt_noise_is_one_percent_of_the_signal():
    problem = problem_of("lugre-belt")  # ip.lugre_belt()
    assert problem.noise == pytest.approx(0.01 * np.std(problem.clean))
    assert len(problem.record) == 2001 and problem.record.interval == pytest.approx(0.01)
    # stick-slip: the body rides the belt (x' = 0.2, up to the bristles' creep) for a good share
    # of the record (measured 30 %) and slides back against it (measured down to -0.31 m/s)
    v = np.gradient(problem.clean, problem.record.t)
    assert np.mean(np.abs(v - 0.2) < 1e-2) > 0.25
    assert np.min(v) < -0.25


def test_segalman_quadrature_is_the_documented_one():
    # written from SegalmanIwan's docstring, compared with the library's elements
    law = jf.SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=16, smoothing=0.5)
    k, phi = ip.segalman_elements(1.0, 3.0, -0.5, 0.1, 16)
    k_jf, phi_jf = (np.asarray(a) for a in law.elements())
    np.testing.assert_allclose(k, k_jf, rtol=1e-13)
    np.testing.assert_allclose(phi, phi_jf, rtol=1e-13)
    assert np.sum(k) == pytest.approx(3.0, rel=1e-13)  # K_T = int rho


def test_levenberg_marquardt_started_at_the_truth_does_not_stop_on_its_first_damped_step():
    # with noise seed 4 the rate-state record's optimum is a few tenths of a standard error from
    # the truth; LM's first steps from there are so damped that the loss changed by < 1e-10
    # (relative), and the fit used to stop, not converged (GN step > 0.1 stderr); the stop now
    # also needs the full Gauss-Newton step to gain nothing
    problem = problem_of("rate-state")
    system, record, truth, dt = problem[:4]
    record = jf.Measurement(t=record.t, q=ip.noisy(problem.clean, 1e-7, 4), y0=record.y0)
    result = jf.fit(system, dict(truth), record, optimizer="lm", dt=dt)
    assert result.converged and result.n_steps > 5, result.summary()
    assert all(abs(result.params[k] - v) < 2 * result.stderr[k] for k, v in truth.items())


@pytest.mark.slow  # ~60 s: an 80 s record, three LM fits
def test_multiple_shooting_converges_where_single_shooting_does_not():
    # LuGre stick-slip on the belt over 80 s (11 cycles, 20 Hz; the scipy reference), the
    # steady-sliding parameters from 27 % below: single shooting stalls in a phase-shifted
    # minimum; one segment per cycle ("auto", 11 segments with free x, x', z) reaches the
    # optimum that a fit from the truth reaches (measured: loss 4.35e-6 against 4.36e-6 from
    # the truth and 3.97e-2 for single shooting). From 27 % above, multiple shooting
    # does not (see docs/howto/fit.md): it is no substitute for a search over a box
    t = np.linspace(0.0, 80.0, 1601)
    clean = ip.lugre_oscillator_reference(t, **{k[4:]: v for k, v in ip.LUGRE_TRUTH.items()}, belt=0.2)[:, 0]
    system = ip._lugre_system(jf, surface=jf.Constant(0.2), stiffness=1.0, mass=1.0, normal=1.0)
    record = jf.Measurement(t=t, q=ip.noisy(clean, 0.01 * float(np.std(clean)), 11), y0=np.zeros(2))
    names = ["law.mu_c", "law.mu_s", "law.v_s"]
    guess = {k: 0.73 * ip.LUGRE_TRUTH[k] for k in names}
    assert jf.auto_segments(record) == 11
    with pytest.warns(jf.FitWarning):
        single = jf.fit(system, guess, record, optimizer="lm", dt=2e-3, steps=100)
    reference = jf.fit(system, {k: ip.LUGRE_TRUTH[k] for k in names}, record, optimizer="lm", dt=2e-3)
    multiple = jf.fit(system, guess, record, optimizer="lm", dt=2e-3, steps=100, shooting_segments="auto")
    assert single.loss_history[-1] > 1000 * reference.loss_history[-1]
    assert multiple.converged and multiple.loss_history[-1] < 1.01 * reference.loss_history[-1]
    for k in names:
        assert abs(multiple.params[k] - reference.params[k]) < reference.stderr[k]
