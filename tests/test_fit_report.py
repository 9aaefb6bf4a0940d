"""The fit's global search and report, each field against a case with a known answer.

Data come from closed forms (a constant force; Coulomb's free oscillator), never from
jaxfriction's own simulation.
"""

import jax

jax.config.update("jax_enable_x64", True)

import math
import warnings

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction._workflows.fit.diagnostics import noise_from_differences, runs_test


def constant_force_record(noise=0.01, seed=0, n=201):
    # x'' = F (m = 1, no spring, no friction): x = x0 + v0 t + F t^2 / 2, exact under RK4
    t = np.linspace(0.0, 2.0, n)
    x = 0.3 + 0.5 * t + 0.5 * 1.7 * t**2
    q = x + noise * np.random.default_rng(seed).standard_normal(n)
    return t, q


def free_system():
    return jf.Oscillator(law=jf.Coulomb(mu=0.0), stiffness=0.0, force=jf.Constant(1.0))


def test_linear_model_estimates_and_covariance_are_exact():
    # unknown start: (F, x0, v0) enter linearly, so Gauss-Newton is exact: the estimate and
    # covariance are ordinary least squares' (X = [t^2 / 2, 1, t])
    t, q = constant_force_record()
    record = jf.Measurement(t=t, q=q)
    result = jf.fit(free_system(), {"force.value": 1.0}, record, bounds={"force.value": None}, optimizer="lm",
                    dt=0.01, noise=0.01)
    X = np.column_stack([t**2 / 2, np.ones_like(t), t])
    beta, rss, *_ = np.linalg.lstsq(X, q, rcond=None)
    s2 = rss[0] / (len(t) - 3)
    cov = s2 * np.linalg.inv(X.T @ X)
    assert result.converged and result.stderr_reliable
    assert result.params["force.value"] == pytest.approx(beta[0], rel=1e-9)
    assert result.stderr["force.value"] == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-6)
    np.testing.assert_allclose(result.initial_states[0][0, :2], beta[1:], rtol=1e-8)
    g = result.goodness
    assert g["fits_data"] and g["noise_source"] == "given"
    assert g["chi2"] == pytest.approx(rss[0] / 0.01**2, rel=1e-8) and g["dof"] == len(t) - 3
    assert 1e-3 < g["chi2_p"] < 1 and abs(g["lag1_autocorrelation"]) < 0.25
    assert result.identifiability["weak_combinations"] == [] and not result.warnings


def test_chi_square_flags_noise_larger_than_stated():
    t, q = constant_force_record(noise=0.03)
    # the previous test's problem (F unbounded): its compiled step is reused; the default
    # (log-scaled F) reaches the same optimum (noise ratio 2.888 both ways, measured)
    with pytest.warns(jf.FitWarning, match="does not explain the data: chi-square"):
        result = jf.fit(free_system(), {"force.value": 1.0}, jf.Measurement(t=t, q=q), bounds={"force.value": None},
                        optimizer="lm", dt=0.01, noise=0.01)
    assert not result.fits_data and result.goodness["noise_ratio"] == pytest.approx(3.0, rel=0.15)


def test_noise_estimate_from_differences():
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 10.0, 2001)
    x = np.sin(t) + 0.02 * rng.standard_normal(t.size)
    assert noise_from_differences(x) == pytest.approx(0.02, rel=0.06)
    assert math.isnan(noise_from_differences(x[:5]))


def test_runs_test_on_white_and_systematic_residuals():
    rng = np.random.default_rng(0)
    z, p = runs_test([rng.standard_normal(1000)])
    assert abs(z) < 3 and p > 1e-3
    z, p = runs_test([np.sin(np.linspace(0, 20, 1000))])  # 7 runs in 1000 samples
    assert z < -20 and p < 1e-10


def test_unidentifiable_product_is_named():
    # x'' = F N / m with F and the mass both estimated: only F / m is determined
    t, q = constant_force_record()
    record = jf.Measurement(t=t, q=q, y0=np.array([0.3, 0.5]))
    with pytest.warns(jf.FitWarning):
        result = jf.fit(free_system(), {"force.value": 1.2, "mass": 0.8}, record, optimizer="lm", dt=0.01, steps=20)
    assert not result.stderr_reliable and not result.converged
    weak = result.identifiability["weak_combinations"]
    assert weak and "force.value" in weak[0]["combination"] and "mass" in weak[0]["combination"]
    v = weak[0]["vector"]
    assert abs(abs(v["force.value"]) - abs(v["mass"])) < 1e-3 and v["force.value"] * v["mass"] > 0
    assert "[" in result.summary()  # standard errors bracketed as unreliable
    assert result.params["force.value"] / result.params["mass"] == pytest.approx(1.7, rel=1e-2)


def test_parameter_the_record_does_not_depend_on():
    t, q = constant_force_record()
    record = jf.Measurement(t=t, q=q, y0=np.array([0.3, 0.5]))
    # no friction (mu = 0): the normal force has no effect
    with pytest.warns(jf.FitWarning, match="do not depend on it"):
        result = jf.fit(free_system(), {"force.value": 1.5, "normal": 2.0}, record, optimizer="lm", dt=0.01,
                        bounds={"force.value": None}, steps=5)
    assert result.identifiability["zero_sensitivity"] == ["normal"] and not result.stderr_reliable


class RateIntegratedSegalman(jf.SegalmanIwan):
    """Segalman's joint with its exact switch integrated through the state rate, as a user's law
    with an exact switch that does not declare ``marched_in_rk4`` is (and as adaptive solvers
    integrate every law): the slip forces act only through when an element stops."""

    marched_in_rk4 = False


def _segalman_joint(law_class):
    law = law_class(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=8)
    return jf.jointed_oscillator(law, force_amplitude=1.5, omega=0.5, damping=0.1)


def _final_position(system):
    # x(12), saved every 10th step as the record of the exact-switch test below: the same compiled
    # run for RateIntegratedSegalman (the last saved point is the last step's either way)
    return jf.simulate(system, jnp.zeros(2), 0.0, 12.0, dt=0.01, save_every=10).ys[-1, 0]


def test_exact_switch_is_named_as_the_reason_for_zero_sensitivity():
    # AD gives 0 for F_S while the record does depend on it
    system = _segalman_joint(RateIntegratedSegalman)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 12.0, dt=0.01, save_every=10)
    record = jf.Measurement(t=np.asarray(traj.ts), q=np.asarray(traj.ys[:, 0]), y0=np.zeros(2))
    with pytest.warns(jf.FitWarning, match="exact switch"):
        result = jf.fit(system, {"law.F_S": 1.0, "law.K_T": 3.0}, record, optimizer="lm", dt=0.01, steps=3)
    assert "law.F_S" in result.identifiability["zero_sensitivity"]
    assert "exact switch" in result.identifiability["reasons"]["law.F_S"]
    assert not result.stderr_reliable


def test_sensitivity_warns_when_a_derivative_is_zero_because_of_a_switch():
    system = _segalman_joint(RateIntegratedSegalman)
    with pytest.warns(UserWarning, match="exact switch"):
        out = jf.sensitivity(_final_position, system, ["law.F_S", "law.K_T"], gradient="forward")
    assert abs(out["gradient"]["law.F_S"]) < 1e-15 and abs(out["gradient"]["law.K_T"]) > 1e-3


def test_the_marched_exact_switch_has_the_finite_difference_derivatives():
    """Fixed-step RK4 marches Segalman's elements (their return map ``clip(z + slip, -phi / k, phi / k)``
    is exact within a step), so AD differentiates the slip limits: measured d x(12) / d F_S 0.4712990456
    by AD against central differences of 1e-6 (agreement 5e-12), d / d K_T -0.0451923, and no warning."""
    system = _segalman_joint(jf.SegalmanIwan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jf.sensitivity(_final_position, system, ["law.F_S", "law.K_T"], gradient="forward")
    for name, get in (("law.F_S", lambda s: s.law.F_S), ("law.K_T", lambda s: s.law.K_T)):
        h = 1e-6
        up, down = (eqx.tree_at(get, system, get(system) + d) for d in (h, -h))
        fd = float(_final_position(up) - _final_position(down)) / (2 * h)
        assert out["gradient"][name] == pytest.approx(fd, rel=1e-7, abs=1e-9), name
    assert out["gradient"]["law.F_S"] == pytest.approx(0.47129905, rel=1e-6)


def coulomb_free_oscillation(mu, omega2, x0, t):
    """Closed form of x'' + omega2 x = -mu sgn(x') from rest at x0 > 0 (unit mass and normal
    force): half-cycles of length pi / omega about the offsets +-mu / omega2."""
    w = math.sqrt(omega2)
    half = math.pi / w
    x = np.empty_like(t)
    xn = x0
    for n in range(int(t[-1] // half) + 1):
        c = (-1) ** n * mu / omega2
        sel = (t >= n * half) & (t < (n + 1) * half + 1e-12)
        x[sel] = c + (xn - c) * np.cos(w * (t[sel] - n * half))
        xn = 2 * c - xn
    return x


def coulomb_model():
    """Quinn's law (eps = 1e-3) on the free oscillator: the command line's ``--system oscillator
    --set force.amplitude=0 --set law.eps=0.001`` (test_cli_fit_from_bounds_alone_and_compare), so
    that the fits here and there share their compiled programs."""
    return jf.template("oscillator", dt=0.01).with_parameters({"force.amplitude": 0.0, "law.eps": 1e-3,
                                                               "law.mu": 0.05}).system


@pytest.fixture(scope="module")
def coulomb_record():
    t = np.linspace(0.0, 20.0, 401)
    q = coulomb_free_oscillation(0.05, 1.3, 1.0, t) + 0.005 * np.random.default_rng(1).standard_normal(t.size)
    return jf.Measurement(t=t, q=q, y0=np.array([1.0, 0.0]))


def test_global_search_from_bounds_alone_finds_the_optimum_a_local_fit_misses(coulomb_record):
    system = coulomb_model()
    box = {"law.mu": (0.02, 0.2), "stiffness": (0.4, 1.6)}
    centre = {"law.mu": math.sqrt(0.02 * 0.2), "stiffness": math.sqrt(0.4 * 1.6)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        local = jf.fit(system, centre, coulomb_record, bounds=box, optimizer="lm", dt=0.01)
    # the design and refinement of the next test and of the command line's (32 candidates, 2
    # refined): their compiled programs are shared. 64 and 4 found the same optimum (1.14 and 1.40
    # stderr from the truth, measured, both ways), in 141 evaluations (74 with 32 and 2)
    found = jf.fit(system, None, coulomb_record, bounds=box, dt=0.01,
                   search=jf.GlobalSearch(candidates=32, refine=2))
    # three periods: the phase has several minima (measured: the local fit's loss 7.1e3 x the found one)
    assert local.loss_history[-1] > 10 * found.loss_history[-1]
    assert found.converged and found.fits_data and found.stderr_reliable
    for path, true in {"law.mu": 0.05, "stiffness": 1.3}.items():
        assert abs(found.params[path] - true) < 3 * found.stderr[path], path
    s = found.search
    assert s["candidates"] == 32 and s["refined"] == 2 and s["optima"][0]["loss"] <= s["best_design_loss"]
    assert found.n_evaluations > 32
    assert "global search: 32 sobol candidates" in found.summary()


def test_refinement_one_by_one_reaches_the_batched_refinements_optimum(coulomb_record, monkeypatch):
    # with XLA's loop kernels on a CPU the starts are refined one by one with the local
    # optimiser's compiled step (no second, batched program); the optimum is the same
    from jaxfriction._workflows.fit import search as S

    system = coulomb_model()
    box = {"law.mu": (0.02, 0.2), "stiffness": (0.4, 1.6)}
    calls = []
    one_by_one = S._refine_one_by_one
    monkeypatch.setattr(S, "_refine_one_by_one", lambda *a: calls.append(1) or one_by_one(*a))
    runs = []
    for active in (False, True):
        monkeypatch.setattr(S, "loop_kernels_active", lambda active=active: active)
        runs.append(jf.fit(system, None, coulomb_record, bounds=box, dt=0.01,
                           search=jf.GlobalSearch(candidates=32, refine=2)))
    assert len(calls) == 1 and all(r.converged for r in runs)
    for path in box:
        assert abs(runs[0].params[path] - runs[1].params[path]) < 0.01 * runs[0].stderr[path], path


def test_compare_models_flags_viscous_damping_on_coulomb_data(coulomb_record):
    # Quinn's model inside the box of the searches above (the optimum is interior): their
    # compiled step is reused; measured delta AIC of the viscous model 1031, noise ratio 3.43
    box = {"law.mu": (0.02, 0.2), "stiffness": (0.4, 1.6)}
    models = {
        "coulomb": (coulomb_model(), {"law.mu": 0.06, "stiffness": 1.25}, box),
        "viscous": (jf.Oscillator(law=jf.Coulomb(mu=0.0), damping=0.05), {"damping": 0.03, "stiffness": 1.25}, None),
    }
    table = jf.compare_models(models, coulomb_record, dt=0.01, optimizer="lm")
    assert table.best == "coulomb"
    rows = {r["model"]: r for r in table.rows()}
    assert rows["coulomb"]["fits_data"] and not rows["viscous"]["fits_data"]
    assert rows["viscous"]["delta_aic"] > 100 and rows["coulomb"]["delta_aic"] == 0.0
    assert rows["viscous"]["noise_ratio"] > 2
    text = table.table()
    assert text.splitlines()[1].startswith("coulomb") and "DOES NOT FIT" in text


def test_bad_input_names_the_argument(coulomb_record):
    system = coulomb_model()
    with pytest.raises(ValueError, match=r"bounds\['law.mu'\] must have lo < hi"):
        jf.fit(system, None, coulomb_record, bounds={"law.mu": (0.2, 0.1)})
    with pytest.raises(ValueError, match=r"initial\['law.mu'\] = 0.5 must lie strictly inside"):
        jf.fit(system, {"law.mu": 0.5}, coulomb_record, bounds={"law.mu": (0.01, 0.1)})
    with pytest.raises(ValueError, match="a global search needs a finite"):
        jf.fit(system, None, coulomb_record, bounds={"law.mu": (0.01, None)})
    with pytest.raises(ValueError, match="a global search needs a finite"):
        jf.fit(system, {"law.mu": 0.05}, coulomb_record, search=jf.GlobalSearch())
    with pytest.raises(ValueError, match="initial: give initial guesses, or bounds"):
        jf.fit(system, None, coulomb_record)
    with pytest.raises(ValueError, match="data: give the measured record"):
        jf.fit(system, {"law.mu": 0.1})
    short = jf.Measurement(t=[0.0, 0.1, 0.2], q=[1.0, 0.99, 0.98])
    with pytest.raises(ValueError, match="data: 3 residuals are too few for 4 free variables"):
        jf.fit(system, {"law.mu": 0.1, "stiffness": 1.0}, short)
    with pytest.raises(ValueError, match="q must be finite, got nan at row 0"):
        jf.Measurement(t=[0.0, 0.1, 0.2], q=[np.nan] * 3)
    with pytest.raises(ValueError, match="noise must be > 0"):
        jf.fit(system, {"law.mu": 0.1}, coulomb_record, noise=0.0)
    with pytest.raises(ValueError, match="GlobalSearch refine"):
        jf.GlobalSearch(candidates=4, refine=8)
    with pytest.raises(ValueError, match="shooting_segments must be an integer >= 1 or 'auto'"):
        jf.fit(system, {"law.mu": 0.1}, coulomb_record, shooting_segments="many")


def test_auto_segments_count_periods():
    t = np.linspace(0.0, 40.0, 2001)
    record = jf.Measurement(t=t, q=np.sin(2 * math.pi * t / 5.0))
    assert jf.auto_segments(record) == 8
    assert jf.auto_segments(jf.Measurement(t=t, q=t**2)) == 1


def test_cli_fit_from_bounds_alone_and_compare(tmp_path, coulomb_record):
    import json

    from click.testing import CliRunner

    from jaxfriction.cli import main

    path = tmp_path / "free.csv"
    coulomb_record.to_csv(path)
    args = ["fit", str(path), "--system", "oscillator", "--set", "force.amplitude=0", "--set", "law.eps=0.001", "--y0", "1,0", "--dt", "0.01",
            "--bounds", "law.mu=0.02:0.2", "--bounds", "stiffness=0.4:1.6", "--candidates", "32", "--refine", "2"]
    out = CliRunner().invoke(main, args + ["--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["search"]["candidates"] == 32 and "loss_history" not in report
    assert report["converged"] and report["fits_data"] and report["stderr_reliable"]
    assert abs(report["params"]["stiffness"] - 1.3) < 3 * report["stderr"]["stiffness"]
    text = CliRunner().invoke(main, args + ["--compare", "oscillator:velocity-limited"])
    assert text.exit_code == 0, text.output
    assert "AIC" in text.output and "oscillator:velocity-limited" in text.output
    bad = CliRunner().invoke(main, [a if a != "law.mu=0.02:0.2" else "law.mu=0.3:0.1" for a in args])
    assert bad.exit_code == 1 and "Error:" in bad.output and "lo < hi" in bad.output


def test_a_second_fit_from_another_guess_or_box_compiles_nothing(coulomb_record):
    # the fitted leaves enter the template as arrays: Python floats there were part of every
    # program's identity, so each new guess recompiled (5 s a fit and 50 MB more memory on the
    # Dahl benchmark problem; 0.3-0.7 s and flat memory after)
    from jaxfriction._workflows.fit.local_phase import _ls_step
    from jaxfriction._workflows.fit.search import _refine

    system = coulomb_model()
    box = {"law.mu": (0.02, 0.2), "stiffness": (0.4, 1.6)}  # the local fits inside the box of the searches above
    jf.fit(system, {"law.mu": 0.06, "stiffness": 1.2}, coulomb_record, bounds=box, optimizer="lm", dt=0.01, steps=2)
    search = jf.GlobalSearch(candidates=32, refine=2)  # the search above: its programs are reused
    jf.fit(system, None, coulomb_record, bounds=box, dt=0.01, search=search, steps=2)
    sizes = _ls_step._cached._cache_size(), _refine._cached._cache_size()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        jf.fit(system, {"law.mu": 0.04, "stiffness": 1.4}, coulomb_record, bounds=box, optimizer="lm", dt=0.01,
               steps=2)
        jf.fit(system, None, coulomb_record, bounds={"law.mu": (0.03, 0.3), "stiffness": (0.5, 2.0)}, dt=0.01,
               search=search, steps=2)
    assert (_ls_step._cached._cache_size(), _refine._cached._cache_size()) == sizes
