"""The jointed oscillator (issue 13): stuck and macroslip stiffness, Segalman's power law,
energy balance, gradients of the dissipation, and the fit of Segalman's parameters."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf

M, K, K_T, F_S, CHI, BETA = 1.0, 1.0, 3.0, 1.0, -0.5, 0.1


def segalman(n=256, smoothing=0.0, **kw):
    params = dict(F_S=F_S, K_T=K_T, chi=CHI, beta=BETA) | kw
    return jf.SegalmanIwan(**params, n_elements=n, smoothing=smoothing)


def test_factory_is_an_oscillator_with_a_joint():
    system = jf.jointed_oscillator(force_amplitude=0.2, omega=0.7, damping=0.05)
    assert isinstance(system, jf.Oscillator) and isinstance(system.law, jf.SegalmanIwan)
    assert system.n_internal == 257 and system.state_size == 5 + 257
    for path, value in {"force.amplitude": 0.2, "force.omega": 0.7, "damping": 0.05, "law.chi": -0.5,
                        "law.K_T": 3.0}.items():
        assert float(jf.get_parameter(system, path)) == value
    with pytest.raises(ValueError, match="joint model"):
        jf.jointed_oscillator(jf.Coulomb(0.3))
    with pytest.raises(ValueError, match="smoothing"):
        jf.SegalmanIwan(smoothing=-0.1)


def free_vibration(v0, t1, dt):
    """Released from x = 0 (where the joint is relaxed) at velocity v0."""
    system = jf.jointed_oscillator(segalman(), force_amplitude=0.0, mass=M, stiffness=K)
    return jf.simulate(system, jnp.array([0.0, v0]), 0.0, t1, dt=dt, save_every=1)


def test_small_amplitude_joint_sticks_stiffness_k_plus_k_t():
    # x0 below the smallest element's slip displacement (phi_max / 256^2 = 1.3e-5): no element slips
    x0 = 1e-6
    omega = np.sqrt((K + K_T) / M)
    traj = free_vibration(omega * x0, 10.0, 1e-2)
    assert np.max(np.abs(np.asarray(traj.position) - x0 * np.sin(omega * np.asarray(traj.ts)))) < 1e-7 * x0  # RK4's phase error, measured 2.5e-8
    assert float(traj.friction_dissipation[-1]) < 1e-12 * 0.5 * (K + K_T) * x0**2


def test_large_amplitude_joint_slips_stiffness_k():
    # x0 = 50 phi_max: the joint slides at +-F_S (a Coulomb damper) except for 2 phi_max of travel after
    # each reversal, so the half-periods are pi sqrt(m / k) and the amplitude drops by 2 F_S / k per half
    # cycle, both to O(phi_max / amplitude)
    phi_max = float(segalman().density()[0])
    traj = free_vibration(50 * phi_max * np.sqrt(K / M), 12.0, 1e-3)
    x, ts = np.asarray(traj.position), np.asarray(traj.ts)
    turns = np.flatnonzero((x[1:-1] - x[:-2]) * (x[2:] - x[1:-1]) <= 0) + 1
    half_periods = np.diff(ts[turns])
    assert half_periods == pytest.approx(np.pi * np.sqrt(M / K), rel=0.03)  # measured 0.5 - 1.5 % longer
    assert -np.diff(np.abs(x[turns])) == pytest.approx(2 * F_S / K, rel=0.05)
    assert half_periods[0] > 1.4 * np.pi * np.sqrt(M / (K + K_T))  # far from the stuck half-period
    assert float(jf.relative_energy_residual(traj)) < 1e-6


def steady_loops(law, force_amplitude, omega=0.3, steps=4000, cycles=3, damping=0.01):
    """Forced response from the stuck joint's steady state: dissipation per cycle, joint force and
    displacement amplitudes of the last cycle, energy residual (vmapped over the amplitudes)."""
    period = 2 * np.pi / omega

    def run(force):
        system = jf.jointed_oscillator(law, force_amplitude=force, omega=omega, mass=M, stiffness=K,
                                       damping=damping)
        v0 = force * omega / (K + K_T - M * omega**2)  # the linear (stuck) steady state: no transient
        traj = jf.simulate(system, jnp.array([0.0, v0]), 0.0, cycles * period, dt=period / steps, save_every=10)
        last = slice(-steps // 10, None)
        x = traj.position[last]
        return (jf.dissipation_per_cycle(traj, period, n_cycles=cycles), jnp.max(jnp.abs(traj.friction_force[last])),
                (jnp.max(x) - jnp.min(x)) / 2, jf.relative_energy_residual(traj))

    return [np.asarray(a) for a in jax.jit(jax.vmap(run))(jnp.asarray(force_amplitude))]


def test_small_amplitude_dissipation_is_segalmans_power_law():
    law = segalman(256)
    phi_max, r, _ = map(float, law.density())
    u0 = np.geomspace(1e-3, 1e-2, 5) * phi_max
    dissipation, f_joint, u_joint, residual = steady_loops(law, u0 * (K + K_T - M * 0.3**2))
    d = dissipation[:, -1]
    assert np.all(np.abs(dissipation[:, -2] / d - 1) < 5e-3)  # steady: measured 3e-3 - 1e-3
    assert np.all(residual < 1e-6)  # energy balance, measured 3.6e-8 - 1.0e-7
    # the discrete model's loop in closed form (Masing): sum over slipping elements of 4 phi (u0 - phi / k)
    k, phi = map(np.asarray, law.elements())
    discrete = np.array([np.sum(np.where(phi / k < u, 4 * phi * (u - phi / k), 0.0)) for u in u_joint])
    assert np.all(np.abs(d / discrete - 1) < 3e-3)  # O(dt) switch overshoot, measured 0.9e-3 - 1.8e-3
    # the continuous model (Segalman 2005): D = 4 R u0^(chi+3) / ((chi+2)(chi+3)) exactly in the
    # displacement amplitude, F0 = K_T u0 - R u0^(chi+2) / ((chi+1)(chi+2)) ...
    continuous = 4 * r * u_joint ** (CHI + 3) / ((CHI + 2) * (CHI + 3))
    assert np.all(np.abs(d / continuous - 1) < 0.02)  # n = 256 quadrature, measured
    force = K_T * u_joint - r * u_joint ** (CHI + 2) / ((CHI + 1) * (CHI + 2))
    assert np.all(np.abs(f_joint / force - 1) < 0.01)
    assert np.polyfit(np.log(u_joint), np.log(d), 1)[0] == pytest.approx(3 + CHI, abs=0.01)  # 2.496
    # ... so in the joint's force amplitude the power law F0^(3 + chi) and the law's prefactor
    # (small_amplitude_dissipation) are its leading term: slope 2.543 here, ratio -> 1 as F0 -> 0
    assert np.polyfit(np.log(f_joint), np.log(d), 1)[0] == pytest.approx(3 + CHI, abs=0.06)
    ratio = d / np.asarray(law.small_amplitude_dissipation(f_joint))
    leading = (force / (K_T * u_joint)) ** -(CHI + 3)  # the first correction, (1 - O(u0^(chi+1)))^-(3+chi)
    assert np.all(np.abs(ratio / leading - 1) < 0.02)
    assert 1.0 < ratio[0] < 1.07 and np.all(np.diff(ratio) > 0)  # measured 1.059 ... 1.173


def test_gradients_of_dissipation_match_finite_differences():
    # with the exact switch AD cannot see the slip thresholds (its derivatives are ~0); the ramp
    # smoothing makes the state Lipschitz in the parameters
    def dissipation(p, smoothing=0.1):
        law = segalman(32, smoothing, chi=p[0], F_S=p[1])
        omega = 0.3
        period = 2 * np.pi / omega
        system = jf.jointed_oscillator(law, force_amplitude=0.05, omega=omega, damping=0.01)
        traj = jf.simulate(system, jnp.zeros(2), 0.0, 2 * period, dt=period / 1000, save_every=250)
        return jf.dissipation_per_cycle(traj, period, n_cycles=2)[-1]

    p = jnp.array([CHI, F_S])
    grad = jax.jit(jax.jacfwd(dissipation))(p)  # forward mode: 2x faster to compile here than reverse
    f = jax.jit(dissipation)
    value = f(p)
    h = 1e-4
    fd = np.array([(f(p.at[i].add(h)) - f(p.at[i].add(-h))) / (2 * h) for i in range(2)])
    assert float(value) > 0 and np.all(np.isfinite(grad))
    assert np.allclose(grad, fd, rtol=2e-3)  # measured 1e-3 (chi), 1e-4 (F_S)


@pytest.mark.slow
def test_the_marched_exact_switch_is_differentiable_in_chi():
    """Fixed-step RK4 marches the elements (``clip(z + slip, -phi / k, phi / k)`` per stage), so AD
    differentiates the slip thresholds (integrated through the rate, as before the march, AD gave 4e-20
    against -1.3e-4 by finite differences). The map is piecewise smooth in ``chi`` (an element's clip
    starts a step earlier or later), and AD's derivative converges to the finite-difference slope with
    the step: measured -2.9433e-5 against -2.9166e-5 (0.9 %) at period / 1000, -2.8933e-5 against
    -2.8994e-5 (0.2 %) at period / 4000, 0.05 % at period / 16000. (The ramp ``smoothing = 0.1``
    changes this derivative by 14 %, -3.3349e-5, while D moves by 2e-4.)"""
    omega, period = 0.3, 2 * np.pi / 0.3

    def dissipation(chi, steps):
        system = jf.jointed_oscillator(segalman(32, 0.0, chi=chi), force_amplitude=0.05, omega=omega, damping=0.01)
        traj = jf.simulate(system, jnp.zeros(2), 0.0, 2 * period, dt=period / steps, save_every=steps // 4)
        return jf.dissipation_per_cycle(traj, period, n_cycles=2)[-1]

    errors = []
    for steps in (1000, 4000):
        f = jax.jit(lambda chi, steps=steps: dissipation(chi, steps))
        ad = float(jax.grad(f)(CHI))
        fd = float(f(CHI + 1e-6) - f(CHI - 1e-6)) / 2e-6
        errors.append(abs(ad / fd - 1))
    assert errors[0] < 0.02 and errors[1] < 0.005 and errors[1] < errors[0] / 2, errors


@pytest.mark.slow  # 30 s: a consistency fit on the library's own record (identification against independent
# records: tests/test_identification_references.py)
def test_fit_segalman_parameters_from_a_hysteresis_loop():
    # force-controlled loops (F = 1.5 F_S: virgin curve, macroslip, two Masing branches) at 0.5 rad/s,
    # the displacement measured with noise: the loop F(t) - x(t) is the record.
    # The step resolves every element's smoothing ramp (|v| dt < eps phi_i / k_i, the condition of
    # jenkins_rate for AD derivatives): with n = 32, eps = 0.1 at period / 1000 it did not (by 200x),
    # RK4's tangents of the stiff ramp were amplified whenever a stage landed inside it, and whether
    # one did depended on round-off, so the Jacobian (and the fit's verdict) differed between machines
    truth = segalman(16, 0.5)
    omega = 0.5
    period = 2 * np.pi / omega
    dt = period / 12000
    system = jf.jointed_oscillator(truth, force_amplitude=1.5, omega=omega, damping=0.1)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 2 * period, dt=dt, save_every=60)
    k, phi = truth.elements()
    assert float(jnp.max(jnp.abs(traj.ys[:, 1]))) * dt < float(jnp.min(truth.smoothing * phi / k))
    record = jf.Measurement.from_trajectory(traj, noise=0.002, seed=0, known_y0=True)
    guess = {"law.F_S": 0.8, "law.K_T": 3.5, "law.chi": -0.3, "law.beta": 0.2}
    result = jf.fit(system, guess, record, bounds={"law.chi": (-1.0, 1.0)}, optimizer="lm", dt=dt)
    assert result.converged, result.summary()
    true = {"law.F_S": F_S, "law.K_T": K_T, "law.chi": CHI, "law.beta": BETA}
    for name, value in true.items():
        estimate, stderr = result.params[name], result.stderr[name]
        assert abs(estimate - value) < 3 * stderr, (name, estimate, stderr)
        assert stderr < 0.02 * max(abs(value), 0.1)  # measured rel. 0.03 % (F_S) ... 1.7 % (beta)


# slow: the quasi-static test below runs the same reproduction with stricter checks, and
# test_cli's reproduce tests the command line's part
@pytest.mark.slow
def test_reproduce_iwan_cli(tmp_path):
    import json

    from click.testing import CliRunner

    from jaxfriction.cli import main

    figure = tmp_path / "iwan.png"
    result = CliRunner().invoke(main, ["reproduce", "iwan", "--json", "--n-amplitudes", "12", "--steps", "1000",
                                       "--n-elements", "128", "--figure", str(figure)])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    assert figure.stat().st_size > 10_000
    assert numbers["fitted_slope"] == pytest.approx(numbers["segalman_slope"], abs=0.08)
    assert 1.0 < numbers["prefactor_ratio_smallest"] < 1.1
    assert 1.4 < numbers["macroslip_force_measured"] < numbers["macroslip_force_quasistatic"] < 1.8
    bad = CliRunner().invoke(main, ["reproduce", "iwan", "--steps", "10"])
    assert bad.exit_code != 0 and "steps" in bad.output


@pytest.mark.parametrize("options, word", [({"n_elements": 0}, "n_elements"), ({"n_elements": -5}, "n_elements"),
                                           ({"n_elements": 2.5}, "n_elements"), ({"n_elements": "10"}, "n_elements"),
                                           ({"chi": "10"}, "chi"), ({"F_S": -5.0}, "F_S"),
                                           ({"beta": [0.1, 0.2]}, "beta")])
def test_issue_25_segalman_iwan_refuses_bad_arguments_by_name(options, word):
    with pytest.raises(ValueError, match=word):
        jf.SegalmanIwan(**options)


def test_reproduce_iwan_exact_slope_and_macroslip_at_the_quasi_static_limit():
    # issue 26: the fitted slope against the discrete model's exact one (Masing's rules, not 3 + chi), and the
    # macroslip threshold, which converges to F_S + (k - m w^2) phi_max under slow loading
    from jaxfriction._reproduce.iwan import iwan, masing_dissipation

    k, phi = np.array([4.0, 2.0, 1.0]), np.array([0.4, 0.5, 0.6])  # slip displacements 0.1, 0.25, 0.6
    u, d = masing_dissipation(k, phi, np.array([0.35, 1.0, 1.4]))
    # F(u) = 7 u (u < 0.1), 0.4 + 3 u (u < 0.25), 0.9 + u (u < 0.6); D = 4 sum_slipping phi (u - phi / k)
    assert np.allclose(u, [0.05, 0.2, 0.5], rtol=1e-12)
    assert np.allclose(d, [0.0, 1.6 * 0.1, 1.6 * 0.4 + 2.0 * 0.25], rtol=1e-12)
    numbers, _ = iwan(n_amplitudes=12, steps=1000, cycles=3, n_elements=128, omega=0.1)
    assert numbers["fitted_slope"] == pytest.approx(numbers["exact_slope"], abs=2e-3)  # measured 2.5e-4 (w 0.3)
    assert abs(numbers["exact_slope"] - 2.5) > 0.02  # the small-force limit is not the fitted range's slope
    assert numbers["macroslip_force_measured"] == pytest.approx(numbers["macroslip_force_quasistatic"], rel=1e-2)
    lo, hi = numbers["macroslip_bracket"]  # measured 1.832 against 1.838 at w = 0.1 (1.650 / 1.770 at w = 0.3)
    assert lo <= numbers["macroslip_force_measured"] <= hi and hi - lo < 0.03
