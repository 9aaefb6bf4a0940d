"""The fit's report under model error: HAC standard errors, the stopping rule, estimates at a
bound and derived quantities by the delta method.

Data come from closed forms (a constant force; a spring under a constant force) plus AR(1)
noise made with numpy; the sampling spread they should have is computed here by linear
algebra (the model is linear in the fitted parameter, so the estimate is ordinary least
squares and its exact covariance is ``A Sigma A^T`` with ``Sigma`` the AR(1) covariance).
"""

import jax

jax.config.update("jax_enable_x64", True)

import json
import math
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.signal import lfilter

import jaxfriction as jf
from jaxfriction._workflows.fit.hac import andrews_bandwidth, bartlett_long_run, hac_covariance

N = 4001  # samples of the constant-force record (t in [0, 40], dt = 0.01)
SIGMA = 0.01  # AR(1) innovation standard deviation


def ar1(n, phi, seed):
    """A stationary AR(1) sequence ``x_t = phi x_{t-1} + e_t``, ``e ~ N(0, SIGMA^2)``."""
    e = SIGMA * np.random.default_rng(seed).standard_normal(n)
    e[0] /= math.sqrt(1 - phi**2)  # start in the stationary distribution
    return lfilter([1.0], [1.0, -phi], e)


def constant_force():
    # x'' = F (unit mass, no spring, no friction): x = x0 + v0 t + F t^2 / 2, exact under RK4
    t = np.linspace(0.0, 0.01 * (N - 1), N)
    return t, 0.3 + 0.5 * t + 0.5 * 1.7 * t**2


def free_system():
    return jf.Oscillator(law=jf.Coulomb(mu=0.0), stiffness=0.0, force=jf.Constant(1.0))


def fit_force(q, t, **kwargs):
    record = jf.Measurement(t=t, q=q, y0=np.array([0.3, 0.5]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        return jf.fit(free_system(), {"force.value": 1.0}, record, bounds={"force.value": None}, optimizer="lm",
                      dt=0.01, **kwargs)


def exact_stderr(t, phi):
    """Sampling standard deviation of the least-squares F under AR(1) noise, and the white-noise
    formula's value (``sigma_marginal^2 (X^T X)^-1``), for the regressor ``X = t^2 / 2``."""
    x = 0.5 * t**2
    a = x / (x @ x)
    marginal = SIGMA**2 / (1 - phi**2)
    # a^T Sigma a with Sigma_ij = marginal phi^|i - j|, by the AR(1) recursion (no n x n matrix)
    s = lfilter([1.0], [1.0, -phi], a)  # s_i = sum_{j <= i} phi^(i - j) a_j
    quad = marginal * (2 * a @ s - a @ a)
    return math.sqrt(quad), math.sqrt(marginal / (x @ x))


def test_hac_standard_errors_match_the_sampling_spread_under_ar1_noise():
    # phi = 0.8: the white-noise standard error is too small by sqrt((1 + phi) / (1 - phi)) = 3
    # (the regressor is smooth on the noise's 5-sample correlation length). Measured over 12
    # seeds: mean HAC / exact 0.94 (Bartlett's known downward bias at this bandwidth), per-seed
    # scatter 8 %; Gauss-Newton / white formula 1.00
    phi = 0.8
    t, clean = constant_force()
    exact, white = exact_stderr(t, phi)
    assert exact / white == pytest.approx(math.sqrt((1 + phi) / (1 - phi)), rel=0.02)
    fits = [fit_force(clean + ar1(N, phi, seed), t) for seed in range(12)]
    hac = np.array([f.stderr_hac["force.value"] for f in fits])
    gn = np.array([f.stderr["force.value"] for f in fits])
    estimates = np.array([f.params["force.value"] for f in fits])
    assert 0.85 < np.mean(hac) / exact < 1.1
    assert np.mean(gn) / white == pytest.approx(1.0, rel=0.05)
    assert np.std(estimates, ddof=1) > 2 * np.mean(gn)  # the Monte Carlo spread: GN is far too small
    for f in fits:
        assert f.converged and f.stopped_at_optimum and f.trusted_stderr == "hac"
        assert not f.fits_data and not f.stderr_reliable and f.stderr_hac_reliable
        assert 20 < f.hac["bandwidths"][0] < 200 and not f.hac["capped"]
    text = fits[0].summary()
    assert "residuals are autocorrelated (lag-1 0.8" in text and "trust the HAC column" in text
    assert "converged, stopped at an optimum" in text and "reached steps" not in text
    # the verdict's field and the JSON carry the HAC results
    report = json.loads(json.dumps(fits[0].to_dict()))
    assert report["trusted_stderr"] == "hac" and report["stderr_hac"]["force.value"] == pytest.approx(hac[0])
    assert np.asarray(report["covariance_hac"]).shape == (1, 1) and report["stopped_at_optimum"]


def test_white_residuals_trust_gauss_newton_and_both_columns_agree():
    t, clean = constant_force()
    exact, white = exact_stderr(t, 0.0)
    assert exact == pytest.approx(white, rel=1e-12)
    for seed in range(3):
        f = fit_force(clean + ar1(N, 0.0, seed), t)
        assert f.trusted_stderr == "gauss-newton" and f.stderr_reliable and f.stderr_hac_reliable
        assert f.stderr_hac["force.value"] == pytest.approx(f.stderr["force.value"], rel=0.15)
        assert f.stderr["force.value"] == pytest.approx(white, rel=0.05)
        assert f.optimizer_error_negligible and f.step_in_stderr < 1e-3
    assert "residuals look white" in f.summary() and "both columns agree" in f.summary()


def test_hac_sandwich_is_the_parameter_block_of_the_full_sandwich():
    # brute force: B = (J^T J)^-1 over all variables (defect rows included), the meat summed
    # lag by lag within each column only, with the Bartlett weights of the bandwidths found
    rng = np.random.default_rng(5)
    n1, n2, k, p = 60, 40, 4, 2
    jac = rng.standard_normal((n1 + n2 + 3, k))  # 3 trailing rows: continuity defects
    r = np.concatenate([ar1(n1 + n2, 0.7, 1) / SIGMA, 0.1 * rng.standard_normal(3)])
    columns = [np.arange(n1), n1 + np.arange(n2)]
    cov, info = hac_covariance(jac, r, columns, p)
    bread = np.linalg.inv(jac.T @ jac)
    meat = np.zeros((k, k))
    for idx, s in zip(columns, info["bandwidths"]):
        g = jac[idx] * r[idx, None]
        for i in range(len(idx)):
            for j in range(len(idx)):
                w = max(0.0, 1 - abs(i - j) / s) if s > 0 else float(i == j)
                meat += w * np.outer(g[i], g[j])
    expected = (bread @ meat @ bread)[:p, :p] * (n1 + n2) / (n1 + n2 - k)
    np.testing.assert_allclose(cov, expected, rtol=1e-10)
    assert len(info["bandwidths"]) == 2 and all(s > 1 for s in info["bandwidths"])


def test_bartlett_sum_and_andrews_bandwidth_against_their_formulas():
    rng = np.random.default_rng(0)
    h = rng.standard_normal((150, 3))
    for s in (7.3, 90.5):  # summed lag by lag, and by FFT (beyond 64 lags)
        brute = sum(max(0.0, 1 - abs(i - j) / s) * np.outer(h[i], h[j]) for i in range(150) for j in range(150))
        np.testing.assert_allclose(bartlett_long_run(h, s), brute, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(bartlett_long_run(h, 0.5), h.T @ h, rtol=1e-14)  # White's estimator
    # Andrews (1991): S = 1.1447 (alpha T)^(1/3), alpha = 4 rho^2 / ((1 - rho)^2 (1 + rho)^2) for one series
    rho, n = 0.6, 200_000
    x = lfilter([1.0], [1.0, -rho], rng.standard_normal(n))
    alpha = 4 * rho**2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    assert andrews_bandwidth(x) == pytest.approx(1.1447 * (alpha * n) ** (1 / 3), rel=0.02)
    assert andrews_bandwidth(np.zeros(100)) == 0.0


def test_a_run_at_the_step_limit_never_reads_converged():
    t, clean = constant_force()
    q = clean + ar1(N, 0.0, 0)
    # from F = 0.2 with a loose learning rate, Adam is far from the optimum after 3 steps
    record = jf.Measurement(t=t, q=q, y0=np.array([0.3, 0.5]))
    with pytest.warns(jf.FitWarning, match="did not converge"):
        adam = jf.fit(free_system(), {"force.value": 0.2}, record, bounds={"force.value": None}, optimizer="adam",
                      dt=0.01, steps=3)
    assert not adam.converged and not adam.stopped_at_optimum and adam.stop_reason == "step-limit"
    assert adam.message.startswith("stopped at the step limit (3 steps), loss still changing by")
    text = adam.summary()
    assert "NOT converged: stopped at the step limit (3 steps)" in text
    assert "reached steps" not in text and "converged," not in text and "stopped at an optimum" not in text
    # Levenberg-Marquardt stopped after one accepted step: the loss still falls
    with pytest.warns(jf.FitWarning, match="did not converge"):
        lm = jf.fit(free_system(), {"force.value": 0.2}, record, bounds={"force.value": None}, optimizer="lm",
                    dt=0.01, steps=1)
    assert not lm.converged and lm.stop_reason == "step-limit"
    assert lm.message.startswith("stopped at the step limit (1 steps), loss still changing by")
    change = abs(lm.loss_history[-2] - lm.loss_history[-1]) / lm.loss_history[-1]
    assert f"{change:.2g}" in lm.message


def test_a_stalled_loss_is_no_optimum_while_the_gauss_newton_step_is_large():
    # Adam with a tiny learning rate: the loss changes by < 1e-3 over 5 steps long before the
    # optimum; the Gauss-Newton step from there is thousands of standard errors
    t, clean = constant_force()
    q = clean + ar1(N, 0.0, 0)
    record = jf.Measurement(t=t, q=q, y0=np.array([0.3, 0.5]))
    with pytest.warns(jf.FitWarning, match="did not converge"):
        r = jf.fit(free_system(), {"force.value": 1.5}, record, bounds={"force.value": None}, optimizer="adam",
                   learning_rate=1e-6, dt=0.01, tol=1e-3, steps=50)
    assert r.stop_reason == "stagnation" and not r.stopped_at_optimum and not r.converged
    assert "but the Gauss-Newton step from the end point is still" in r.message
    # the step is the remaining distance to the least-squares F
    x = 0.5 * t**2
    beta = x @ (q - 0.3 - 0.5 * t) / (x @ x)
    assert r.gauss_newton_step["force.value"] == pytest.approx(beta - r.params["force.value"], rel=1e-6)


def spring_record(n=801):
    # x'' = F - k x (unit mass): x = F / k + (x0 - F / k) cos(w t) + v0 / w sin(w t)
    t = np.linspace(0.0, 16.0, n)
    f, k, x0, v0 = 1.7, 0.6, 0.3, 0.5
    w = math.sqrt(k)
    q = f / k + (x0 - f / k) * np.cos(w * t) + v0 / w * np.sin(w * t)
    return jf.Measurement(t=t, q=q + ar1(n, 0.5, 3), y0=np.array([x0, v0]))


def spring_system():
    return jf.Oscillator(law=jf.Coulomb(mu=0.0), stiffness=0.6, force=jf.Constant(1.0))


@pytest.fixture(scope="module")
def spring_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        return jf.fit(spring_system(), {"force.value": 1.5, "stiffness": 0.5}, spring_record(), optimizer="lm",
                      dt=0.02, bounds={"force.value": (0.5, 5.0), "stiffness": (0.1, 3.0)})


def test_derived_difference_has_the_closed_form_variance(spring_fit):
    r = spring_fit
    assert r.converged and abs(r.correlation[0, 1]) > 0.5  # F and k are strongly correlated
    d = r.derived(lambda p: p["force.value"] - p["stiffness"], name="F - k")
    for cov, err in ((r.covariance, d.stderr), (r.covariance_hac, d.stderr_hac)):
        expected = math.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
        assert err == pytest.approx(expected, rel=1e-10)
    assert d.name == "F - k" and d.value == pytest.approx(r.params["force.value"] - r.params["stiffness"], rel=1e-14)
    assert d.gradient == {"force.value": 1.0, "stiffness": -1.0}


def test_derived_nonlinear_expression_against_finite_differences(spring_fit):
    r = spring_fit
    names = list(r.names)

    def offset(p):  # the static deflection F / k and the frequency sqrt(k)
        return {"offset": p["force.value"] / p["stiffness"], "omega": jnp.sqrt(p["stiffness"])}

    out = r.derived(offset)
    theta = np.array([r.params[n] for n in names])
    for key in ("offset", "omega"):
        def f(x, key=key):
            return float(offset(dict(zip(names, x)))[key])

        h = 1e-6 * np.abs(theta)
        grad = np.array([(f(theta + h[i] * np.eye(2)[i]) - f(theta - h[i] * np.eye(2)[i])) / (2 * h[i])
                         for i in range(2)])
        np.testing.assert_allclose([out[key].gradient[n] for n in names], grad, rtol=1e-7)
        assert out[key].stderr == pytest.approx(math.sqrt(grad @ r.covariance @ grad), rel=1e-6)
        assert out[key].stderr_hac == pytest.approx(math.sqrt(grad @ r.covariance_hac @ grad), rel=1e-6)
    assert out["offset"].value == pytest.approx(r.params["force.value"] / r.params["stiffness"], rel=1e-14)
    json.dumps(out["omega"].to_dict())


def test_derived_bad_input_names_the_argument(spring_fit):
    with pytest.raises(ValueError, match="function must be a callable"):
        spring_fit.derived(3.0)
    with pytest.raises(ValueError, match="unknown path 'law.a'"):
        spring_fit.derived(lambda p: p["law.a"] - p["stiffness"])
    with pytest.raises(ValueError, match="must return a real scalar"):
        spring_fit.derived(lambda p: jnp.stack([p["stiffness"], p["force.value"]]))
    with pytest.raises(ValueError, match="name must be a string"):
        spring_fit.derived(lambda p: p["stiffness"], name=3)


def test_estimates_at_a_bound_are_flagged_by_name():
    # the record's F = 1.7 lies above the box (0.5, 1.6) and below the half-line (1.75, inf)
    record = spring_record()
    with pytest.warns(jf.FitWarning, match=r"force.value = 1.59\d* is at the upper bound 1.6 of its box"):
        boxed = jf.fit(spring_system(), {"force.value": 1.0, "stiffness": 0.5}, record, optimizer="lm", dt=0.02,
                       bounds={"force.value": (0.5, 1.6), "stiffness": (0.1, 3.0)}, steps=15)
    assert boxed.at_bounds == ["force.value"] and boxed.bound_edges["force.value"]["side"] == "upper"
    assert 1.6 - boxed.params["force.value"] <= 1e-3 * (1.6 - 0.5)
    assert not boxed.stderr_reliable and not boxed.stderr_hac_reliable
    row = next(line for line in boxed.summary().splitlines() if line.startswith("force.value"))
    assert row.endswith("AT UPPER BOUND 1.6")
    assert json.loads(json.dumps(boxed.to_dict()))["at_bounds"] == ["force.value"]


def test_bound_margin_on_half_lines_and_intervals():
    # the rule, on the problem's transforms: 1e-3 of the box width; for a half-line, 1e-3 of
    # max(|bound|, |initial guess - bound|)
    from types import SimpleNamespace

    from jaxfriction._workflows.fit.report import _bound_edges

    problem = SimpleNamespace(names=("a", "b", "c", "d"), kinds=("interval", "lower", "upper", "free"),
                              lo=np.array([0.0, 1.75, -np.inf, -np.inf]), hi=np.array([10.0, np.inf, -2.0, np.inf]),
                              p0=np.array([5.0, 2.0, -2.5, 1.0]))
    edges = _bound_edges(problem, np.array([9.995, 1.7515, -2.0015, 1e9]))
    assert set(edges) == {"a", "b", "c"}
    assert edges["a"] == {"side": "upper", "bound": 10.0, "margin": pytest.approx(0.01), "interval": True}
    assert edges["b"]["side"] == "lower" and edges["b"]["margin"] == pytest.approx(1.75e-3)
    assert edges["c"]["side"] == "upper" and edges["c"]["margin"] == pytest.approx(2e-3)
    # just outside each margin: nothing flagged; a lower bound at 0 takes the guess's distance
    assert _bound_edges(problem, np.array([9.985, 1.7525, -2.0025, 0.0])) == {}
    zero = SimpleNamespace(names=("d",), kinds=("lower",), lo=np.array([0.0]), hi=np.array([np.inf]),
                           p0=np.array([0.05]))
    assert list(_bound_edges(zero, np.array([4e-5]))) == ["d"] and _bound_edges(zero, np.array([6e-5])) == {}


def test_an_interior_estimate_is_not_flagged(spring_fit):
    assert spring_fit.at_bounds == [] and "BOUND" not in spring_fit.summary()
    assert spring_fit.params["force.value"] == pytest.approx(1.7, rel=0.02)


def run_scripted(monkeypatch, step, steps, tol, negligible=0.0):
    """run_least_squares from u = 0 with ``step`` standing in for the compiled solver step and
    a solver whose own termination test never passes."""
    from jaxfriction._workflows.fit import local_phase as P

    class NeverDone:
        def terminate(self, *args):
            return False, None

    monkeypatch.setattr(P, "_ls_init", lambda u, problem, solver: None)
    monkeypatch.setattr(P, "_ls_step", step)
    return P.run_least_squares(jnp.zeros(1), None, NeverDone(), steps, tol, lambda _: None, negligible)


def scripted_least_squares(monkeypatch, losses, rejections):
    """run_least_squares on a scripted solver: accepted steps at ``losses`` (after the initial
    guess at ``losses[0]``), then ``rejections`` trials that leave the iterate unchanged, then
    accepted steps again. The Jacobian at every iterate predicts a 1e-3 relative decrease (the
    rough misfit of an EMPS fit under model error: no trial step along it realises it)."""
    r, jac = np.array([1.0, 0.0]), np.array([[-0.0316], [0.0]])  # |J step|^2 / |r|^2 = 1e-3
    calls = {"n": 0, "accepted": 0}

    def step(u, state, problem, solver):
        calls["n"] += 1
        k = calls["accepted"]
        if 1 <= k < len(losses) or calls["n"] > len(losses) + rejections:
            calls["accepted"] += 1
            return u + 1.0, state, losses[min(k, len(losses) - 1)], (r, jac)
        if k == 0:
            calls["accepted"] += 1
            return u, state, losses[0], (r, jac)
        return u, state, losses[-1], (r, jac)  # rejected: the iterate is unchanged

    return run_scripted(monkeypatch, step, 30, 1e-10), calls


def test_a_stagnated_loss_with_rejected_trials_stops_at_an_optimum(monkeypatch):
    from jaxfriction._workflows.fit.report import _stop_kind

    # the loss changes by 1e-12 (relative) per step: stagnated at tol = 1e-10 over 5 steps
    losses = [1.0, 0.999, 0.998] + [0.998 * (1 - 1e-12 * i) for i in range(1, 8)]
    (u, history, taken, message, _), calls = scripted_least_squares(monkeypatch, losses, 40)
    assert taken == len(losses) - 1 and history == pytest.approx(losses, rel=0, abs=0)
    assert calls["n"] == len(losses) + 3  # stopped at the third rejected trial, not the 25th
    assert message.startswith("no decrease along the solver's direction (the loss changed by < 1e-10")
    assert _stop_kind(message) == "no-decrease"


def test_rejected_trials_while_the_loss_still_falls_do_not_stop_the_run(monkeypatch):
    # the last 5 accepted steps lowered the loss by 1e-3 each: three rejections are a shrinking
    # trust region, not an optimum; the run goes on until the accepted steps end at the limit
    losses = [1.0 - 1e-3 * i for i in range(8)]
    (u, history, taken, message, _), calls = scripted_least_squares(monkeypatch, losses, 10)
    assert calls["n"] == 30 + 1 + 10 and taken == 30
    assert message.startswith("stopped at the step limit (30 steps)")


def scripted_small_steps(monkeypatch, slope, negligible, steps=12, reject=True):
    """run_least_squares on a scripted solver whose first trial is rejected and every later
    step is accepted and lowers the loss by 1e-8 (relative); the Jacobian ``[[slope], [0]]``
    at ``r = [1, 0]`` predicts a relative decrease of ``1 - (1 + slope)^2`` for the unit step
    it takes. ``reject=False``: no trial is rejected."""
    r, jac = np.array([1.0, 0.0]), np.array([[slope], [0.0]])
    calls = {"n": 0}

    def step(u, state, problem, solver):
        calls["n"] += 1
        if reject and calls["n"] == 2:
            return u, state, 1.0, (r, jac)
        return u + 1.0, state, (1 - 1e-8) ** calls["n"], (r, jac)

    return run_scripted(monkeypatch, step, steps, 0.0, negligible)


def test_two_steps_of_negligible_decrease_end_a_least_squares_run(monkeypatch):
    from jaxfriction._workflows.fit.report import _stop_kind

    # realised 1e-8 and predicted 2e-8 per step, below 1e-6: stopped after the second such step
    u, history, taken, message, _ = scripted_small_steps(monkeypatch, -1e-8, 1e-6)
    assert taken == 2 and message.startswith("the loss stopped improving (the last 2 accepted steps")
    assert _stop_kind(message) == "negligible-decrease"
    # the linearisation still promises a 6 % decrease for the step taken: a damped crawl, not an
    # optimum, so the run goes on to the step limit; and negligible = 0 turns the rule off
    # ... and before any trial was rejected the small steps may be the solver's initial damping
    for slope, negligible, reject in ((-0.0316, 1e-6, True), (-1e-8, 0.0, True), (-1e-8, 1e-6, False)):
        _, _, taken, message, _ = scripted_small_steps(monkeypatch, slope, negligible, reject=reject)
        assert taken == 12 and message.startswith("stopped at the step limit (12 steps)")

