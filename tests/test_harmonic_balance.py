"""Harmonic balance (issue 37, first part): the Fourier basis, closed forms, an independent scipy
check of the periodic orbit, the error estimate's honesty, implicit derivatives against
finite differences, the vectorized batch, and the named errors."""

import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import jaxfriction as jf  # noqa: E402
from jaxfriction._workflows.harmonic import fourier  # noqa: E402


def test_fourier_basis_round_trip_derivative_and_extremes():
    rng = np.random.default_rng(0)
    c = rng.normal(size=(11, 3))  # H = 5
    e, p = fourier.synthesis(5, 16), fourier.analysis(5, 16)
    np.testing.assert_allclose(np.asarray(p @ (e @ c)), c, atol=1e-13)
    # d/dt of x(t) = sum a_k cos(k w t) + b_k sin(k w t), against the series differentiated by hand
    w, t = 1.7, np.linspace(0.0, 3.0, 7)
    k = np.arange(1, 6)
    dx = (-np.sin(w * np.outer(t, k)) * k * w) @ c[1::2] + (np.cos(w * np.outer(t, k)) * k * w) @ c[2::2]
    dc = np.asarray(fourier.derivative(5, w) @ c)
    series = dc[0] + np.cos(w * np.outer(t, k)) @ dc[1::2] + np.sin(w * np.outer(t, k)) @ dc[2::2]
    np.testing.assert_allclose(series, dx, atol=1e-12)
    # the extremes of 2 cos(theta - 0.3) + 0.5: 2.5 and -1.5, off the grid of 7 phases
    one = np.zeros((3, 1))
    one[0, 0], one[1, 0], one[2, 0] = 0.5, 2 * np.cos(0.3), 2 * np.sin(0.3)
    hi, lo = fourier.extremes(one, 7)
    assert abs(float(hi[0]) - 2.5) < 1e-14 and abs(float(lo[0]) + 1.5) < 1e-14
    with pytest.raises(ValueError, match="samples"):
        fourier.analysis(5, 10)


def test_linear_oscillator_closed_form_and_energy_balance():
    # m x'' + c x' + k x = P sin(w t): X = P / sqrt((k - m w^2)^2 + (c w)^2), damping D = pi c w X^2
    c_damp, w = 0.1, 0.8
    system = jf.Oscillator(law=jf.Quinn(mu=0.0, eps=0.05), force=jf.Harmonic(1.0, w), damping=c_damp)
    hb = jf.harmonic_balance(system, harmonics=2)
    x = 1.0 / np.sqrt((1.0 - w**2) ** 2 + (c_damp * w) ** 2)
    assert hb.converged and hb.stable
    assert abs(hb.amplitude[0] - x) < 1e-12 * x
    assert abs(hb.damping_dissipation - np.pi * c_damp * w * x**2) < 1e-11
    assert abs(hb.input_work - hb.damping_dissipation) < 1e-11 and abs(hb.dissipation) < 1e-11
    assert hb.relative_error < 1e-12 and hb.flow_residual < 1e-8
    # Floquet multipliers of a damped linear oscillator: |mu| = exp(-c T / 2); Hill's method is
    # exact here (a linear system's Hill matrix is block diagonal in the harmonics)
    np.testing.assert_allclose(np.abs(hb.multipliers), np.exp(-c_damp * np.pi / w), rtol=1e-7)
    hill = jf.harmonic_balance(system, harmonics=2, stability="hill")
    assert hill.stability == "hill" and hill.stable
    np.testing.assert_allclose(np.abs(hill.multipliers), np.exp(-c_damp * np.pi / w), rtol=1e-12)
    # a branch continued from it keeps Hill's method: |mu| = exp(-c T / 2) at every frequency
    branch = jf.continue_balance(hill, "force.omega", bounds=(0.8, 1.2), ds=0.2, ds_max=0.5, max_points=6)
    mu = np.abs(branch["multipliers_real"].values + 1j * branch["multipliers_imag"].values)
    expected = np.exp(-c_damp * np.pi / branch["force.omega"].values)
    assert branch.attrs["stability"] == "hill" and branch["stable"].all()
    np.testing.assert_allclose(mu, np.repeat(expected[:, None], 2, axis=1), rtol=1e-10)


def _quinn_rhs(mu, eps, amp, w, k=1.0, m=1.0):
    """Quinn 2004 eq. (4) on a forced spring-mass, written out here (not jaxfriction's)."""
    def rhs(t, y):
        x, v = y
        f_eq = k * x - amp * np.sin(w * t)  # the force that holds the block: m a = F - k x + f = 0
        zeta = np.clip(f_eq / (mu * m * 1.0), -1.0, 1.0)
        f = -mu * np.clip(v / eps - zeta, -1.0, 1.0)
        return [v, (amp * np.sin(w * t) - k * x + f) / m]
    return rhs


@pytest.mark.parametrize("mu, eps, w", [(0.3, 0.05, 0.8), (0.6, 0.1, 0.5)], ids=["slip", "stick-slip"])
def test_quinn_orbit_against_scipy_within_its_error_estimate(mu, eps, w):
    system = jf.Oscillator(law=jf.Quinn(mu=mu, eps=eps), force=jf.Harmonic(1.0, w))
    hb = jf.harmonic_balance(system, harmonics=32)
    assert hb.converged and hb.stable and hb.relative_error < 1e-2
    period = 2 * np.pi / w
    ts = np.linspace(0.0, period, 401)
    ref = solve_ivp(_quinn_rhs(mu, eps, 1.0, w), (0.0, period), hb.y0, method="DOP853", rtol=1e-12, atol=1e-12,
                    t_eval=ts, max_step=period / 2000)
    deviation = np.max(np.abs(ref.y.T - hb.states(ts)), axis=0)
    # the orbit of the independent ODE stays within the solution's own error estimate
    assert np.all(deviation <= hb.error_estimate[:2]), (deviation, hb.error_estimate)
    assert np.max(deviation) > 1e-8  # the estimate is not vacuous: a real truncation error is there


def test_exact_coulomb_approaches_den_hartog_within_its_estimate():
    # Den Hartog 1931: the steady non-sticking response of x'' + x = sin(0.6 t) - 0.3 sgn(x'); with
    # the set-valued law sampled, the balance converges algebraically and the estimate covers it
    x_exact, _ = jf.den_hartog_response(1.0, 0.6, 0.3)
    system = jf.Oscillator(law=jf.Coulomb(0.3), force=jf.Harmonic(1.0, 0.6))
    errors, guess = [], None
    for harmonics in (8, 32):
        # the second solve starts from the first's coefficients (no second transient to compile)
        hb = jf.harmonic_balance(system, harmonics=harmonics, guess=guess)
        assert hb.converged
        errors.append(abs(hb.amplitude[0] / x_exact - 1))
        assert errors[-1] <= hb.relative_error, (harmonics, errors[-1], hb.relative_error)
        guess = hb.coefficients
    assert errors[1] < errors[0] / 4  # measured 7.1e-3 at 16 harmonics, 8.4e-4 at 64


def test_error_estimate_shrinks_and_accuracy_doubles_harmonics():
    system = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.05), force=jf.Harmonic(1.0, 0.8))
    coarse = jf.harmonic_balance(system, harmonics=8)
    fine = jf.harmonic_balance(system, harmonics=8, accuracy=2e-3)
    assert fine.harmonics > coarse.harmonics and fine.relative_error <= 2e-3 < coarse.relative_error
    # against the shooting orbit of a fine RK4 flow (a different method): within the estimates
    orbit = jf.periodic_orbit(system, dt=2e-3)
    for hb in (coarse, fine):
        assert abs(hb.amplitude[0] - orbit.amplitude) <= np.max(hb.error_estimate[:2])
        assert abs(hb.dissipation - orbit.dissipation) <= 2 * hb.relative_error * orbit.dissipation


def test_dynamic_law_internal_state_in_the_unknowns():
    law = jf.LuGre(sigma0=200.0, sigma1=5.0, sigma2=0.2, mu_c=0.3, mu_s=0.5, v_s=0.1)
    system = jf.Oscillator(law=law, force=jf.Harmonic(1.0, 0.8))
    hb = jf.harmonic_balance(system, harmonics=16, dt=1e-3)  # the bristles: RK4 needs h <= 2.785 g / (sigma0 |v|)
    assert hb.coefficients.shape == (65, 3) and hb.converged
    orbit = jf.periodic_orbit(system, dt=1e-3)
    assert abs(hb.amplitude[0] - orbit.amplitude) <= max(np.max(hb.error_estimate[:2]), 1e-6)
    assert abs(hb.dissipation - orbit.dissipation) <= max(2 * hb.relative_error, 1e-4) * orbit.dissipation


@pytest.mark.slow  # suite time: Masing's dissipation of a marched Iwan joint stays fast in the backbone's test
def test_iwan_elements_marched_through_the_period_against_masing():
    # a two-element Iwan joint on a forced, lightly damped oscillator; Masing's rule (Iwan 1966):
    # a symmetric cycle of slip amplitude X dissipates sum_i 4 phi_i (X - phi_i / k_i) over the
    # elements that slide (X > phi_i / k_i), whatever the motion's shape between its extremes
    k, phi = np.array([2.0, 1.0]), np.array([0.2, 0.3])
    system = jf.Oscillator(law=jf.Iwan(jnp.asarray(k), jnp.asarray(phi)), force=jf.Harmonic(1.0, 0.8), damping=0.05)
    hb = jf.harmonic_balance(system, harmonics=32, dt=1e-3)
    assert hb.converged and hb.internal == "marched" and hb.coefficients.shape == (129, 2)
    assert hb.repeat_mismatch == 0.0 and hb.relative_error < 1e-3 and hb.y0.shape == (4,)
    x = hb.amplitude[0]
    masing = np.sum(np.where(x > phi / k, 4 * phi * (x - phi / k), 0.0))
    assert abs(hb.dissipation - masing) < 1e-4 * masing, (hb.dissipation, masing)
    # shooting: fixed-step RK4 marches the elements, and an element that slides in the cycle forgets
    # its offset (multiplier 0; integrated through the rate, before the march, every element's offset
    # had multiplier 1 and shooting did not converge). Measured: X 6.5e-6 and D 7.6e-6 from the balance's
    orbit = jf.periodic_orbit(system, dt=1e-3, warn=False)
    assert orbit.converged and orbit.stable
    assert abs(orbit.amplitude - x) < 2e-5 * x and abs(orbit.dissipation - masing) < 2e-5 * masing
    assert np.sort(np.abs(orbit.multipliers))[:2] == pytest.approx([0.0, 0.0], abs=1e-12)
    # a short branch of the marched joint: its points are the forced solutions at their frequencies
    branch = jf.continue_balance(jf.harmonic_balance(system, harmonics=8, dt=1e-3, estimate=False), "force.omega",
                                 bounds=(0.8, 1.0), max_points=4)
    assert branch["coefficients"].shape == (4, 17, 2) and branch["y0"].shape == (4, 4)
    again = jf.harmonic_balance(jf.set_parameters(system, {"force.omega": float(branch["force.omega"][-1])}),
                                harmonics=8, dt=1e-3, estimate=False)
    assert abs(float(branch["amplitude"][-1]) - again.amplitude[0]) < 1e-8


def test_implicit_derivative_matches_finite_differences():
    system = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.1), force=jf.Harmonic(1.0, 0.8))
    base = jf.harmonic_balance(system, harmonics=16, estimate=False)
    guess = jnp.asarray(base.coefficients)

    def first_harmonic(mu):
        s = jf.set_parameters(system, {"law.mu": mu})
        c = jf.solve_balance(s, guess, frequency="force.omega", t0=0.0, samples=base.samples, tol=1e-12,
                             max_steps=30)["coefficients"]
        return jnp.sqrt(c[1, 0] ** 2 + c[2, 0] ** 2)

    # one compiled program for the three values and the reverse-mode derivative, one for forward mode
    value_and_grad = jax.jit(jax.value_and_grad(first_harmonic))
    grad = float(value_and_grad(0.3)[1])
    h = 1e-5
    fd = (float(value_and_grad(0.3 + h)[0]) - float(value_and_grad(0.3 - h)[0])) / (2 * h)
    assert np.isfinite(grad) and grad < 0  # more friction, less motion
    assert abs(grad - fd) < 1e-6 * abs(fd)
    assert abs(float(jax.jit(jax.jacfwd(first_harmonic))(0.3)) - grad) < 1e-10 * abs(grad)


def test_batch_equals_one_by_one():
    system = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.05), force=jf.Harmonic(1.0, 0.8))
    mus = np.array([0.1, 0.3, 0.45])
    out = jf.harmonic_balance_batch(system, {"law.mu": mus}, harmonics=16)
    assert out["coefficients"].shape == (3, 33, 2) and out["converged"].all()
    for i, mu in enumerate(mus):
        one = jf.harmonic_balance(jf.set_parameters(system, {"law.mu": mu}), harmonics=16, estimate=False)
        np.testing.assert_allclose(out["coefficients"][i], one.coefficients, atol=1e-9)
        assert abs(out["amplitude"][i, 0] - one.amplitude[0]) < 1e-9
        assert abs(out["dissipation"][i] - one.dissipation) < 1e-9


def test_named_errors():
    forced = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.05), force=jf.Harmonic(1.0, 0.8))
    free = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.05))
    with pytest.raises(ValueError, match="system"):
        jf.harmonic_balance(free)
    with pytest.raises(ValueError, match="harmonics"):
        jf.harmonic_balance(forced, harmonics=0)
    with pytest.raises(ValueError, match="samples"):
        jf.harmonic_balance(forced, harmonics=8, samples=10)
    with pytest.raises(ValueError, match="guess"):
        jf.harmonic_balance(forced, guess=np.zeros((4, 2)))
    with pytest.raises(ValueError, match="accuracy"):
        jf.harmonic_balance(forced, accuracy=-1.0)
    with pytest.raises(ValueError, match="values"):
        jf.harmonic_balance_batch(forced, {"law.mu": [0.1, 0.2], "force.omega": [0.8]})
    with pytest.raises(ValueError, match="values"):
        jf.harmonic_balance_batch(forced, {"law.nope": [0.1]})
    with pytest.raises(ValueError, match="stability"):
        jf.harmonic_balance(forced, stability="lyapunov")
    joint = jf.Oscillator(law=jf.Iwan(jnp.array([1.0]), jnp.array([0.1])), force=jf.Harmonic(1.0, 0.8))
    with pytest.raises(ValueError, match="stability='hill'"):  # marched elements are no Hill states
        jf.harmonic_balance(joint, stability="hill")


class DuffingFriction(jf.AbstractContactSystem):
    """A hardening spring (``x + cubic x^3``), viscous damping and a frictional contact: the
    frequency-response curve folds twice (a user system, docs/howto/own-system.md)."""

    n_dof = 1
    law: jf.AbstractFrictionLaw
    force: jf.AbstractDrive
    cubic: float = 1.0
    viscous: float = 0.05

    @property
    def masses(self):
        return jnp.ones(1)

    @property
    def normal(self):
        return jnp.ones(1)

    @property
    def damping(self):
        return jnp.reshape(jnp.asarray(self.viscous, float), (1,))

    def potential_energy(self, q):
        return 0.5 * q[0] ** 2 + 0.25 * self.cubic * q[0] ** 4

    def contact_jacobian(self):
        return None

    def external_force(self, t):
        return jnp.reshape(self.force(t), (1,))

    def surface_velocity(self, t):
        return None


def _duffing_quinn_rhs(mu, eps, amp, w, cubic=1.0, viscous=0.05):
    """The same equations written out for scipy: x'' + c x' + x + g x^3 = A sin(w t) + f (Quinn).
    Python floats and ``math`` (numpy's scalar calls cost several times more per evaluation)."""
    def rhs(t, y):
        x, v = float(y[0]), float(y[1])
        nonfriction = amp * math.sin(w * t) - x - cubic * x**3 - viscous * v
        zeta = min(max(-nonfriction / mu, -1.0), 1.0)
        f = -mu * min(max(v / eps - zeta, -1.0), 1.0)
        return [v, nonfriction + f]
    return rhs


def test_frequency_response_through_two_folds_against_scipy():
    system = DuffingFriction(law=jf.Quinn(mu=0.01, eps=0.05), force=jf.Harmonic(0.1, 0.8))
    start = jf.harmonic_balance(system, harmonics=8)
    assert start.relative_error < 1e-3
    branch = jf.continue_balance(start, "force.omega", bounds=(0.5, 2.0), ds=0.05, ds_max=0.2)
    omega, amp = branch["force.omega"].values, branch["amplitude"].values
    folds = np.flatnonzero(branch["fold"].values)
    assert branch.attrs["status"] == "bounds reached" and len(folds) == 2
    upper, lower = folds  # the jump-down frequency above the jump-up one, the middle branch unstable
    assert omega[upper] > omega[lower] and amp[upper] > amp[lower]
    assert not branch["stable"].values[upper + 1:lower].any() and branch["stable"].values[:upper - 1].all()
    assert set(branch["bifurcation"].values[[upper, lower]]) == {"fold"}
    assert np.max(branch["residual"].values) < 1e-8
    # Hill's method on the balance's Jacobian tells the three branches apart as the RK4 flow does
    for i in (upper // 2, (upper + lower) // 2, (lower + len(omega)) // 2):
        s = jf.set_parameters(system, {"force.omega": omega[i]})
        hill = jf.harmonic_balance(s, harmonics=8, guess=branch["coefficients"].values[i], estimate=False,
                                   stability="hill")
        assert hill.stable == bool(branch["stable"].values[i])
    # three orbits near omega = 1.3: each branch point, run by scipy from its own state for 40 periods
    # (DOP853's own step control: a step bound of a 400th of a period moved the last period's
    # amplitude by at most 4e-8 relative, against the 2e-3 asserted, and took 4.4 times longer)
    for i, stable in ((np.argmin(np.abs(omega[:upper] - 1.3)), True),
                      (upper + np.argmin(np.abs(omega[upper:lower] - 1.3)), False),
                      (lower + np.argmin(np.abs(omega[lower:] - 1.3)), True)):
        w = omega[i]
        period = 2 * np.pi / w
        y0 = branch["y0"].values[i]
        run = solve_ivp(_duffing_quinn_rhs(0.01, 0.05, 0.1, w), (0.0, 40 * period), y0, method="DOP853", rtol=1e-10,
                        atol=1e-12, t_eval=np.linspace(39 * period, 40 * period, 2001))
        simulated = 0.5 * (run.y[0].max() - run.y[0].min())
        if stable:
            assert abs(simulated - amp[i]) < 2e-3 * amp[i], (w, simulated, amp[i])
        else:  # the middle branch repels: the run has left it for one of the stable orbits
            assert abs(simulated - amp[i]) > 0.1 * amp[i], (w, simulated, amp[i])
    with pytest.raises(ValueError, match="bounds"):
        jf.continue_balance(start, "force.omega", bounds=(1.0, 2.0))
    with pytest.raises(ValueError, match="start"):
        jf.continue_balance(object(), "force.omega", bounds=(0.5, 2.0))


def _duffing_jenkins_period(y0, z0, w, periods, steps, k=0.5, phi=0.01, amp=0.1, cubic=1.0, viscous=0.05):
    """The Duffing oscillator with a Jenkins element (``x'' + c x' + x + g x^3 = A sin(w t) - k
    z``), stepped from ``(x, v, z)`` by the scheme of tests/test_modal_structure.py (Verlet
    positions, trapezoidal velocities, the element's exact return map): written here, not by
    jaxfriction. Returns half the peak-to-peak ``x`` over the last period."""
    dt = 2 * np.pi / w / steps
    x, v, z = float(y0[0]), float(y0[1]), float(z0)

    def acc(t, x, v, z):
        return amp * np.sin(w * t) - x - cubic * x**3 - viscous * v - k * z

    a, last = acc(0.0, x, v, z), []
    for n in range(periods * steps):
        dx = dt * v + 0.5 * dt * dt * a
        x += dx
        z = min(max(z + dx, -phi / k), phi / k)
        a_next = acc((n + 1) * dt, x, v + dt * a, z)
        v += 0.5 * dt * (a + a_next)
        a = a_next
        if n >= (periods - 1) * steps:
            last.append(x)
    return 0.5 * (max(last) - min(last))


def test_marched_jenkins_branch_changes_stability_at_its_folds():
    """A hardening spring with a Jenkins element (marched): the multipliers of the period map
    that clips the element's state (:func:`marched_period_map`) cross 1 at the two folds, and
    the independent time stepping above stays on the stable orbits and leaves the unstable one.
    (The AD monodromy of the RK4 flow with the switched rate, which keeps a perturbation of the
    element through its slip, had put multipliers up to 1.47 on the stable, damped
    reduced-order bar of tests/test_modal_structure.py.)"""
    system = DuffingFriction(law=jf.Iwan(jnp.array([0.5]), jnp.array([0.01])), force=jf.Harmonic(0.1, 1.0))
    start = jf.harmonic_balance(system, harmonics=8, estimate=False)
    assert start.internal == "marched" and start.stability == "floquet"
    branch = jf.continue_balance(start, "force.omega", bounds=(1.0, 1.8), ds=0.05, ds_max=0.2)
    omega, amp, stable = branch["force.omega"].values, branch["amplitude"].values, branch["stable"].values
    folds = np.flatnonzero(branch["fold"].values)
    assert len(folds) == 2
    upper, lower = folds
    assert not stable[upper:lower].any() and stable[:upper].all() and stable[lower:].all()
    for i in (upper - 2, (upper + lower) // 2, lower + 2):
        y0 = branch["y0"].values[i]
        simulated = _duffing_jenkins_period(y0[:2], y0[2], omega[i], periods=30, steps=1000)
        if stable[i]:
            assert abs(simulated - amp[i]) < 1e-3 * amp[i]
        else:
            assert abs(simulated - amp[i]) > 0.1 * amp[i]


def test_backbone_batch_saved_by_chunk_resumes_to_the_same_result(tmp_path):
    """With ``out_dir`` the batch runs on the sweep engine: a chunk file lost (an interrupted
    run) is computed again and the others loaded, bitwise the same result; a folder holding a
    batch of other amplitudes is refused."""
    system = jf.Oscillator(law=jf.Iwan(jnp.array([2.0, 1.0]), jnp.array([0.2, 0.3])), force=jf.Harmonic(1.0, 0.8))
    # the amplitudes of test_backbone_batch_equals_one_by_one: the same compiled chunk program
    values, amplitudes = {"stiffness": np.array([0.9, 1.0, 1.2, 1.1])}, [0.15, 0.5, 2.0]
    first = jf.nonlinear_mode_batch(system, values, amplitudes, chunk_size=2, out_dir=tmp_path)
    assert (first["chunks_computed"], first["chunks_loaded"]) == (2, 0)
    chunks = sorted(p for p in tmp_path.iterdir() if p.name.startswith("chunk"))
    chunks[1].unlink()
    again = jf.nonlinear_mode_batch(system, values, amplitudes, chunk_size=2, out_dir=tmp_path)
    assert (again["chunks_computed"], again["chunks_loaded"]) == (1, 1)
    for key in ("frequency", "damping_ratio", "dissipation", "converged"):
        np.testing.assert_array_equal(again[key], first[key])
    with pytest.raises(ValueError, match="out_dir|folder|other"):
        jf.nonlinear_mode_batch(system, values, [0.2, 0.5, 2.0], chunk_size=2, out_dir=tmp_path)
    with pytest.raises(ValueError, match="out_dir|folder|other"):  # another nominal system
        jf.nonlinear_mode_batch(jf.set_parameters(system, {"mass": 2.0}), values, amplitudes, chunk_size=2,
                                out_dir=tmp_path)
    # the forced solutions' batch on the same engine
    forced = tmp_path / "forced"
    batch = {"force.omega": np.array([0.6, 0.7, 0.8])}
    first = jf.harmonic_balance_batch(system, batch, harmonics=8, chunk_size=2, out_dir=forced)
    next(p for p in sorted(forced.iterdir()) if p.name.startswith("chunk")).unlink()
    again = jf.harmonic_balance_batch(system, batch, harmonics=8, chunk_size=2, out_dir=forced)
    assert (first["chunks_computed"], again["chunks_computed"], again["chunks_loaded"]) == (2, 1, 1)
    assert (first["status"] == 0).all() and first["converged"].all()
    np.testing.assert_array_equal(again["coefficients"], first["coefficients"])


def test_nonlinear_mode_of_a_linear_oscillator_is_its_linear_mode():
    # EPMC: the self-excitation xi cancels viscous damping c / m exactly at the undamped frequency
    system = jf.Oscillator(law=jf.Quinn(mu=0.0, eps=0.05), force=jf.Harmonic(1.0, 0.8), damping=0.1, stiffness=4.0)
    backbone = jf.nonlinear_mode(system, [0.1, 1.0], harmonics=2)
    assert backbone["converged"].all()
    np.testing.assert_allclose(backbone["frequency"].values, 2.0, rtol=1e-12)
    np.testing.assert_allclose(backbone["damping_ratio"].values, 0.1 / (2 * 2.0), rtol=1e-10)
    # dissipation per cycle of c v^2 at amplitude a: pi c omega a^2
    np.testing.assert_allclose(backbone["dissipation"].values, np.pi * 0.1 * 2.0 * np.array([0.1, 1.0]) ** 2,
                               rtol=1e-10)


def test_iwan_backbone_stuck_frequency_and_masing_dissipation():
    k, phi = np.array([2.0, 1.0]), np.array([0.2, 0.3])
    system = jf.Oscillator(law=jf.Iwan(jnp.asarray(k), jnp.asarray(phi)), force=jf.Harmonic(1.0, 0.8))
    amplitudes = np.array([0.05, 0.15, 0.5, 2.0])
    backbone = jf.nonlinear_mode(system, amplitudes, harmonics=16)
    assert backbone["converged"].all() and backbone.attrs["internal"] == "marched"
    omega, zeta = backbone["frequency"].values, backbone["damping_ratio"].values
    # below the first slider's slip displacement (0.1) the joint is a spring: sqrt(k + sum k_i)
    assert abs(omega[0] - 2.0) < 1e-12 and abs(zeta[0]) < 1e-12
    assert np.all(np.diff(omega) < 0) and omega[-1] > 1.0  # softening towards the bare spring's 1
    for i in range(1, len(amplitudes)):
        c = jnp.asarray(backbone["coefficients"].values[i][:, :1])
        hi, lo = fourier.extremes(c, 1024)
        x = float(0.5 * (hi - lo)[0])
        masing = np.sum(np.where(x > phi / k, 4 * phi * (x - phi / k), 0.0))
        assert abs(backbone["dissipation"].values[i] - masing) < 2e-4 * masing, (amplitudes[i], masing)


def test_segalman_backbone_damping_follows_the_power_law():
    # Segalman 2005: in microslip the joint dissipates D ~ u^(3 + chi) per cycle at displacement
    # amplitude u, so the modal damping ratio D / (2 pi * 2 E) grows as u^(1 + chi)
    chi = -0.5
    law = jf.SegalmanIwan(F_S=1.0, K_T=3.0, chi=chi, beta=0.1, n_elements=256)
    system = jf.jointed_oscillator(law)
    phi_max, r, _ = map(float, law.density())
    amplitudes = np.geomspace(1e-3, 1e-2, 4) * phi_max
    backbone = jf.nonlinear_mode(system, amplitudes, harmonics=8)
    assert backbone["converged"].all()
    d = backbone["dissipation"].values
    continuous = 4 * r * amplitudes ** (chi + 3) / ((chi + 2) * (chi + 3))
    assert np.all(np.abs(d / continuous - 1) < 0.02)  # n = 256 elements' quadrature of the density
    slope = np.polyfit(np.log(amplitudes), np.log(backbone["damping_ratio"].values), 1)[0]
    assert abs(slope - (1 + chi)) < 0.01 * (3 + chi), slope
    # the frequency: omega^2 = k + F0 / u0, the joint's secant stiffness from Segalman's force
    # F0 = K_T u0 - R u0^(chi + 2) / ((chi + 1)(chi + 2)) (measured within 0.03-0.09 %)
    secant = 1.0 + 3.0 - r * amplitudes ** (chi + 1) / ((chi + 1) * (chi + 2))
    assert np.all(np.abs(backbone["frequency"].values ** 2 / secant - 1) < 2e-3)


def test_backbone_derivative_by_the_implicit_function_theorem():
    from jaxfriction._workflows.harmonic.modes import _layout, unforced

    k, phi = np.array([2.0, 1.0]), np.array([0.2, 0.3])
    system = unforced(jf.Oscillator(law=jf.Iwan(jnp.asarray(k), jnp.asarray(phi)), force=jf.Harmonic(1.0, 0.8)))
    backbone = jf.nonlinear_mode(system, [0.5], harmonics=8)
    c, shape = backbone["coefficients"].values[0], (17, 2)
    free, _ = _layout(shape, 0)
    u0 = jnp.concatenate([jnp.asarray(c.reshape(-1)[free]), jnp.asarray([backbone["frequency"].values[0],
                                                                          2 * backbone["frequency"].values[0]
                                                                          * backbone["damping_ratio"].values[0]])])

    def frequency(stiffness):
        s = jf.set_parameters(system, {"stiffness": stiffness})
        return jf.solve_mode(s, u0, amplitude=0.5, dof=0, shape=shape, samples=64, march=True, tol=1e-12,
                             max_steps=30)["omega"]

    value_and_grad = jax.jit(jax.value_and_grad(frequency))  # one program for the values and the derivative
    grad = float(value_and_grad(1.0)[1])
    h = 1e-5
    fd = (float(value_and_grad(1.0 + h)[0]) - float(value_and_grad(1.0 - h)[0])) / (2 * h)
    assert grad > 0 and abs(grad - fd) < 1e-5 * abs(fd), (grad, fd)


def test_backbone_batch_equals_one_by_one():
    k, phi = np.array([2.0, 1.0]), np.array([0.2, 0.3])
    system = jf.Oscillator(law=jf.Iwan(jnp.asarray(k), jnp.asarray(phi)), force=jf.Harmonic(1.0, 0.8))
    amplitudes = [0.15, 0.5, 2.0]
    stiffness = np.array([0.9, 1.0, 1.2])
    out = jf.nonlinear_mode_batch(system, {"stiffness": stiffness}, amplitudes, harmonics=8, chunk_size=2)
    assert out["frequency"].shape == (3, 3) and out["converged"].all()
    for i, value in enumerate(stiffness):
        one = jf.nonlinear_mode(jf.set_parameters(system, {"stiffness": value}), amplitudes, harmonics=8)
        np.testing.assert_allclose(out["frequency"][i], one["frequency"].values, rtol=1e-10)
        np.testing.assert_allclose(out["damping_ratio"][i], one["damping_ratio"].values, rtol=1e-8)
        np.testing.assert_allclose(out["dissipation"][i], one["dissipation"].values, rtol=1e-8)
    assert (out["status"] == 0).all() and out["chunks_computed"] == 2
    # Newton at every iteration (the one-by-one solver's method) and the chord method (the
    # batch's default) stop at the same tolerance: the same backbone to it
    newton = jf.nonlinear_mode_batch(system, {"stiffness": stiffness}, amplitudes, harmonics=8, solver="newton")
    np.testing.assert_allclose(newton["frequency"], out["frequency"], rtol=1e-10)
    np.testing.assert_allclose(newton["damping_ratio"], out["damping_ratio"], rtol=1e-8)
    with pytest.raises(ValueError, match="solver"):
        jf.nonlinear_mode_batch(system, {"stiffness": stiffness}, amplitudes, solver="secant")
    with pytest.raises(ValueError, match="amplitudes"):
        jf.nonlinear_mode_batch(system, {"stiffness": stiffness}, [0.5, 0.1])
    with pytest.raises(ValueError, match="chunk_size"):
        jf.nonlinear_mode_batch(system, {"stiffness": stiffness}, amplitudes, chunk_size=0)
    with pytest.raises(ValueError, match="dof"):
        jf.nonlinear_mode(system, amplitudes, dof=1)


def test_other_values_and_step_lengths_compile_nothing():
    """The compiled programs serve another forcing frequency, friction coefficient, modal
    amplitude and arclength step: a system's Python floats enter them as arrays (a float is
    static in ``eqx.filter_jit``: one compilation per value, ~1 s each)."""
    from jaxfriction._workflows.harmonic import balance, continuation, modes

    system = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.05), force=jf.Harmonic(1.0, 0.8), damping=0.05)
    jf.harmonic_balance(system, harmonics=4, estimate=False)
    sizes = [f._cached._cache_size() for f in (balance._guess, balance._solve, balance._measure)]
    again = jf.harmonic_balance(jf.set_parameters(system, {"force.omega": 0.9, "law.mu": 0.35}), harmonics=4,
                                estimate=False)
    assert again.converged and again.omega == 0.9
    assert [f._cached._cache_size() for f in (balance._guess, balance._solve, balance._measure)] == sizes
    # a branch whose step length grows (ds 0.05, 0.075, ...): one corrector program
    before = continuation._correct._cached._cache_size()
    branch = jf.continue_balance(again, "force.omega", bounds=(0.85, 1.5), ds=0.05, max_points=5)
    assert len(set(np.round(np.diff(branch["force.omega"].values), 6))) > 1  # the steps differ
    assert continuation._correct._cached._cache_size() == before + 1
    # a backbone of three amplitudes: one program
    joint = jf.Oscillator(law=jf.Iwan(jnp.array([2.0, 1.0]), jnp.array([0.2, 0.3])), force=jf.Harmonic(1.0, 0.8))
    before = modes._solve._cached._cache_size()
    backbone = jf.nonlinear_mode(joint, [0.05, 0.5, 2.0], harmonics=4)
    assert backbone["converged"].all() and modes._solve._cached._cache_size() == before + 1


def test_a_batch_at_other_fixed_values_compiles_nothing_new():
    """The batches pass the system's floats as arrays: a second batch of the same structure at
    another fixed value (not swept) reuses the compiled chunk program (it compiled again
    before, a float being part of the program's key)."""
    from jaxfriction._workflows.sweep import sharding

    system = jf.Oscillator(law=jf.Iwan(jnp.array([2.0, 1.0]), jnp.array([0.2, 0.3])), force=jf.Harmonic(1.0, 0.8))
    batch = {"force.omega": np.array([0.6, 0.7])}
    first = jf.harmonic_balance_batch(system, batch, harmonics=8, chunk_size=2)
    size = len(sharding._CACHE)
    other = jf.harmonic_balance_batch(jf.set_parameters(system, {"force.amplitude": 0.9}), batch, harmonics=8,
                                      chunk_size=2)
    assert len(sharding._CACHE) == size and other["converged"].all()
    assert not np.allclose(other["amplitude"], first["amplitude"])  # the new value was used
    values, amplitudes = {"stiffness": np.array([0.9, 1.2])}, [0.15, 0.5, 2.0]  # as the backbone batches above
    jf.nonlinear_mode_batch(system, values, amplitudes, chunk_size=2)
    size = len(sharding._CACHE)
    out = jf.nonlinear_mode_batch(jf.set_parameters(system, {"mass": 1.1}), values, amplitudes, chunk_size=2)
    assert len(sharding._CACHE) == size and out["converged"].all()


@pytest.mark.parametrize("alpha", [pytest.param(1.0, marks=pytest.mark.slow), 2.0])  # one fast: suite time
def test_a_dahl_contact_is_marched_and_agrees_with_shooting(alpha):
    """Dahl's model is rate-independent: its closed-form loading branch (``Dahl.slip_update``)
    marches the state through the period, so the state is no unknown of the balance. At 32
    harmonics the amplitude and the dissipation per cycle agree with the RK4 shooting orbit
    (dt 1e-3) to 1e-4 (measured 6.9e-5 and 7.1e-5 at alpha 2; solved at 32 harmonics directly,
    the solution harmonic_balance's error estimate returned from 16 harmonics before, the same
    to 2e-15, without compiling the 16-harmonic solve); with the state among the unknowns
    (before) the same solve did not converge (alpha 1) or was 2.4e-3 off (alpha 2)."""
    from jaxfriction._workflows.harmonic.march import marched

    system = jf.Oscillator(law=jf.Dahl(sigma=20.0, mu=0.3, alpha=alpha), force=jf.Harmonic(0.8, 0.9), damping=0.02)
    hb = jf.harmonic_balance(system, harmonics=32, estimate=False, warn=False)
    orbit = jf.periodic_orbit(system, dt=1e-3, warn=False)
    assert marched(system) and hb.converged and orbit.converged
    assert abs(float(np.ravel(hb.amplitude)[0]) / float(np.ravel(orbit.amplitude)[0]) - 1) < 1e-4
    assert abs(float(hb.dissipation) / float(orbit.dissipation) - 1) < 1e-4


@pytest.mark.parametrize("variant", ["2003", pytest.param("2005", marks=pytest.mark.slow)])
def test_a_maxwell_slip_contact_is_marched_and_agrees_with_a_long_transient(variant):
    """Maxwell-slip elements are rate-dependent: harmonic balance marches them with their
    closed-form update at each increment's mean speed (``MaxwellSlip.interval_update``), so
    their states are no unknowns. Against the RK4 transient's last period (30 periods at dt
    2e-4, the elements marched by RK4 too): measured 2.0e-4 (2003) and 6.3e-6 (2005) off in
    amplitude, 1.6e-4 and 1.5e-5 in dissipation, each inside the solution's own error
    estimate (integrated through the state rate before RK4 marched them: 2.2e-4 and 6e-5,
    2.1e-4 and 2.9e-5); the orbit is stable (multipliers 0.67 and 0.72 in modulus)."""
    from jaxfriction._workflows.harmonic.march import marched

    law = jf.MaxwellSlip(jnp.array([2.0, 1.0, 0.5]), jnp.array([0.5, 0.3, 0.2]), C=2.0, mu_c=0.2, mu_s=0.3,
                         v_s=0.3, variant=variant)
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.5, 1.2), damping=0.05)
    hb = jf.harmonic_balance(system, harmonics=16, warn=False)
    assert marched(system) and hb.internal == "marched" and hb.converged and hb.stable
    assert hb.repeat_mismatch < 1e-12  # every element slips within the period: its state forgets the start
    period, n = 2 * np.pi / 1.2, 26180
    traj = jf.simulate(system, system.initial_state(jnp.zeros(1), jnp.zeros(1)), 0.0, 30 * period, period / n,
                       save_every=1)
    assert int(traj.status) == 0
    ys = np.asarray(traj.ys)
    amplitude = np.ptp(ys[-n - 1:, 0]) / 2
    dissipation = float(traj.friction_dissipation[-1] - traj.friction_dissipation[-n - 1])
    assert abs(float(hb.amplitude[0]) - amplitude) <= np.max(hb.error_estimate[:2])
    assert abs(float(hb.dissipation) / dissipation - 1) <= 2 * hb.relative_error
    assert abs(float(hb.amplitude[0]) / amplitude - 1) < 5e-4 and abs(float(hb.dissipation) / dissipation - 1) < 5e-4


@pytest.mark.slow
def test_a_marched_maxwell_slip_solution_has_exact_derivatives_and_batches():
    """The march is differentiable: the first harmonic's derivative in the Stribeck velocity
    by the implicit function theorem equals central differences (measured 1.1e-8 relative);
    a batch over the attraction parameter equals the single solve at its value; a backbone
    (EPMC) marches the elements too."""
    law = jf.MaxwellSlip(jnp.array([2.0, 1.0, 0.5]), jnp.array([0.5, 0.3, 0.2]), C=2.0, mu_c=0.2, mu_s=0.3,
                         v_s=0.3)
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.5, 1.2), damping=0.05)
    base = jf.harmonic_balance(system, harmonics=16, estimate=False, warn=False)

    def first_harmonic(v_s):
        s = jf.set_parameters(system, {"law.v_s": v_s})
        c = jf.solve_balance(s, jnp.asarray(base.coefficients), frequency="force.omega", t0=0.0,
                             samples=base.samples, tol=1e-12, max_steps=30, march=True)["coefficients"]
        return jnp.sqrt(c[1, 0] ** 2 + c[2, 0] ** 2)

    value, h = jax.jit(first_harmonic), 3e-6
    grad = float(jax.jit(jax.grad(first_harmonic))(0.3))
    fd = (float(value(0.3 + h)) - float(value(0.3 - h))) / (2 * h)
    assert np.isfinite(grad) and abs(grad - fd) < 1e-6 * abs(fd)
    out = jf.harmonic_balance_batch(system, {"law.C": np.array([1.0, 2.0])}, harmonics=16)
    assert out["converged"].all() and abs(out["amplitude"][1, 0] - base.amplitude[0]) < 1e-9
    # its backbone starts stuck, at sqrt(k + sum k_i) (below the smallest stick range alpha_i g(0) / k_i, 0.075)
    backbone = jf.nonlinear_mode(system, [0.01, 0.5], harmonics=8)
    assert backbone["converged"].all() and backbone.attrs["internal"] == "marched"
    assert abs(float(backbone["frequency"][0]) - np.sqrt(4.5)) < 1e-12
    assert float(backbone["frequency"][1]) < 1.2 and float(backbone["damping_ratio"][1]) > 0.1
