"""Validation-based model selection: the figures of merit against numpy formulas, the validation
simulation against an independent scipy solution, and model comparisons ranked by held-out
simulation error (a validation record, K-fold windows) on records made by scipy's solve_ivp.
"""

import jax

jax.config.update("jax_enable_x64", True)

import dataclasses
import json
import math
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

import jaxfriction as jf
from jaxfriction._workflows.fit.validation import error_metrics, report_from

# --- the figures of merit --------------------------------------------------------------------


def test_error_metrics_are_the_numpy_formulas():
    y = np.array([1.0, -2.0, 0.5, 3.0, 4.5, -1.0])
    s = np.array([1.2, -1.5, 0.0, 3.3, 4.0, -0.4])
    e = y - s
    m = error_metrics(y, s)
    rms = math.sqrt(np.mean(e**2))
    assert m["rms"] == pytest.approx(rms, rel=1e-14)
    assert m["nrmse"] == pytest.approx(rms / np.std(y), rel=1e-14)  # ||e|| / ||y - mean y||
    assert m["fit_percent"] == pytest.approx(100 * (1 - np.linalg.norm(e) / np.linalg.norm(y - y.mean())), rel=1e-14)
    assert m["relative_error_percent"] == pytest.approx(100 * np.linalg.norm(e) / np.linalg.norm(y), rel=1e-14)
    assert m["max_abs_error"] == pytest.approx(0.6, rel=1e-14) and m["n"] == 6
    # hand values: sum e^2 = 0.04 + 0.25 + 0.25 + 0.09 + 0.25 + 0.36 = 1.24
    assert m["rms"] == pytest.approx(math.sqrt(1.24 / 6), rel=1e-14)
    # a perfect simulation, one no better than the mean, a constant column
    assert error_metrics(y, y)["fit_percent"] == 100.0
    assert error_metrics(y, np.full_like(y, y.mean()))["fit_percent"] == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(error_metrics(np.ones(4), np.zeros(4))["nrmse"])
    assert error_metrics(np.ones(4), np.zeros(4))["relative_error_percent"] == pytest.approx(100.0)
    # pooled columns: each about its own mean
    z, zs = np.array([10.0, 11.0, 13.0]), np.array([10.5, 11.0, 12.0])
    pooled = error_metrics([y, z], [s, zs])
    err2 = np.sum(e**2) + np.sum((z - zs) ** 2)
    dev2 = np.sum((y - y.mean()) ** 2) + np.sum((z - z.mean()) ** 2)
    assert pooled["rms"] == pytest.approx(math.sqrt(err2 / 9), rel=1e-14)
    assert pooled["nrmse"] == pytest.approx(math.sqrt(err2 / dev2), rel=1e-14)
    assert pooled["max_abs_error"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="simulated must have the shape of measured"):
        error_metrics(y, s[:3])


# --- a linear spring-damper driven by a measured force: validate against solve_ivp -----------

K, C = 2.0, 0.3


def force_samples(t, seed):
    rng = np.random.default_rng(seed)
    a, w = rng.uniform(0.5, 1.5, 3), rng.uniform(0.3, 2.0, 3)
    return sum(ai * np.sin(wi * t + i) for i, (ai, wi) in enumerate(zip(a, w)))


def spring_damper(t, force, k, c, y0):
    """Exact samples of x'' = F(t) - k x - c x' (unit mass) with F linear between samples: the
    first-order-hold discretization, one matrix exponential of the augmented system per step
    (Franklin, Powell & Workman, Digital Control of Dynamic Systems, 3rd ed., sec. 6.3.2)."""
    h = float(t[1] - t[0])
    m = np.zeros((4, 4))
    m[:2, :2] = [[0.0, 1.0], [-k, -c]]
    m[1, 2] = 1.0  # the force drives the velocity
    m[2, 3] = 1.0 / h  # the force ramps by delta over the step
    e = expm(m * h)
    x = np.empty((len(t), 2))
    x[0] = y0
    for i in range(len(t) - 1):
        x[i + 1] = e[:2, :2] @ x[i] + e[:2, 2] * force[i] + e[:2, 3] * (force[i + 1] - force[i])
    return x[:, 0], x[:, 1]


def threlfall_oscillator(t, force, k, c, y0, mu, v0):
    """solve_ivp of x'' = F(t) - k x - c x' - f(x') with F linear between samples and
    Threlfall's friction f = mu (1 - exp(-3|v|/v0)) / (1 - exp(-3)) sgn(v) below v0, mu beyond."""

    def friction(v):
        a = abs(v)
        return math.copysign(mu * (1 - math.exp(-3 * a / v0)) / (1 - math.exp(-3)) if a <= v0 else mu, v)

    def rhs(tt, y):
        return [y[1], np.interp(tt, t, force) - k * y[0] - c * y[1] - friction(y[1])]

    sol = solve_ivp(rhs, (t[0], t[-1]), y0, t_eval=t, rtol=1e-9, atol=1e-12, max_step=float(t[1] - t[0]))
    return sol.y[0], sol.y[1]


def oscillator(k, c):
    """The linear spring-damper (Quinn's law at mu = 0: no friction); array parameters, so
    that every value runs the same compiled simulation."""
    return jf.Oscillator(law=jf.Quinn(mu=jnp.asarray(0.0), eps=1e-3), stiffness=jnp.asarray(k),
                         damping=jnp.asarray(c))


def driven_record(seed, noise=0.0, n=801, t1=16.0, y0=(0.2, 0.0)):
    t = np.linspace(0.0, t1, n)
    force = force_samples(t, seed)
    q, v = spring_damper(t, force, K, C, list(y0))
    rng = np.random.default_rng(seed + 100)
    return jf.Measurement(t=t, q=q + noise * rng.standard_normal(n), v=v + noise * rng.standard_normal(n),
                          y0=np.array(y0), inputs={"force": force}, name=f"record {seed}")


def test_validate_simulates_the_record_s_own_input_as_scipy_does():
    record = driven_record(seed=1, noise=0.01)
    model = oscillator(2.3, 0.25)  # a wrong model
    report = jf.validate(model, record)
    q_sim, v_sim = spring_damper(record.t, record.inputs["force"], 2.3, 0.25, [0.2, 0.0])
    for column, y, s in (("q", record.q[:, 0], q_sim), ("v", record.v[:, 0], v_sim)):
        expected = error_metrics(y, s)
        for figure in ("rms", "nrmse", "fit_percent", "relative_error_percent", "max_abs_error"):
            assert report.metrics[column][figure] == pytest.approx(expected[figure], rel=1e-5), (column, figure)
    np.testing.assert_allclose(report.predictions[0].q[:, 0], q_sim, atol=1e-6)
    pooled = error_metrics([record.q[:, 0], record.v[:, 0]], [q_sim, v_sim])
    assert report.rms == pytest.approx(pooled["rms"], rel=1e-5)
    assert 0.05 < report.metrics["q"]["rms"] < 1.0  # the wrong model is visibly wrong
    # the right model simulates the record to its noise
    right = jf.validate(oscillator(K, C), record)
    assert right.metrics["q"]["rms"] == pytest.approx(0.01, rel=0.1)
    assert right.metric("q.fit_percent") > 95 and right.metric("rms") == right.rms
    text = report.summary()
    assert "validation on record 1 (801 samples)" in text and "pooled" in text and "fit %" in text
    assert json.loads(json.dumps(report.to_dict()))["metrics"]["q"]["n"] == 801


def test_validate_refuses_records_of_another_system():
    model = oscillator(K, C)
    t = np.linspace(0, 1, 11)
    with pytest.raises(ValueError, match=r"record\[0\].*degree of freedom 1"):
        jf.validate(model, jf.Measurement(t=t, q=np.zeros((11, 2))))
    with pytest.raises(ValueError, match=r"record\[0\].*channel 'psi'"):
        jf.validate(model, jf.Measurement(t=t, q=t, channels={"psi": t}))
    with pytest.raises(ValueError, match="record must be a Measurement or a non-empty list"):
        jf.validate(model, [])
    with pytest.raises(ValueError, match=r"record\[0\].*inputs\['belt'\] must name a drive"):
        jf.validate(model, jf.Measurement(t=t, q=t, inputs={"belt": t}))
    record = jf.Measurement(t=t, q=t, name="line")
    report = report_from([record], [jf.Measurement(t=t, q=t + 0.1)])
    assert report.metric("q.rms") == pytest.approx(0.1) and report.records == ("line",)
    with pytest.raises(ValueError, match="rank_by must be one of"):
        report.metric("q.bogus")


def test_fit_with_a_validation_record_reports_its_simulation_error():
    fitted_on, held_out = driven_record(seed=1, noise=0.01), driven_record(seed=2, noise=0.01, y0=(-0.1, 0.3))
    model = oscillator(1.5, 0.5)
    result = jf.fit(model, {"stiffness": 1.5, "damping": 0.5}, fitted_on, optimizer="lm", validation=held_out)
    assert result.params["stiffness"] == pytest.approx(K, rel=0.01)
    v = result.validation
    assert isinstance(v, jf.ValidationReport) and v.records == ("record 2",)
    q_sim, _ = spring_damper(held_out.t, held_out.inputs["force"], result.params["stiffness"],
                             result.params["damping"], [-0.1, 0.3])
    assert v.metrics["q"]["rms"] == pytest.approx(error_metrics(held_out.q[:, 0], q_sim)["rms"], rel=1e-5)
    assert v.metrics["q"]["rms"] == pytest.approx(0.01, rel=0.15)  # the noise: the model is right
    assert "validation on record 2: q RMS" in result.summary()
    assert result.to_dict()["validation"]["metrics"]["q"]["n"] == 801
    no_input = jf.Measurement(t=held_out.t, q=held_out.q, name="no input")
    with pytest.raises(ValueError, match=r"validation\[0\] \(no input\) has no inputs for \['force'\]"):
        jf.fit(model, {"stiffness": 1.5}, fitted_on, optimizer="lm", validation=no_input)


def test_a_model_whose_fit_fails_is_listed_not_ranked():
    fitted_on, held_out = driven_record(seed=1, noise=0.01), driven_record(seed=2, noise=0.01, y0=(-0.1, 0.3))
    models = {"right": (oscillator(1.5, 0.5), {"stiffness": 1.5, "damping": 0.5}, None),
              "stiff": (oscillator(1e5, 0.5), {"stiffness": 1e5, "damping": 0.5}, None)}  # RK4 diverges
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        table = jf.compare_models(models, fitted_on, validation=held_out, optimizer="lm")
    assert table.best == "right" and list(table.results) == ["right"]
    assert table.failures["stiff"].startswith("fit failed: initial: the loss at the initial guess")
    assert table.ranking() == ["right", "stiff"]
    assert table.table().splitlines()[2].startswith("stiff") and "FAILED: fit failed" in table.table()
    assert table.scores["right"] == pytest.approx(0.01, rel=0.15)


# --- model selection by validation --------------------------------------------------------------

MU, V0 = 0.4, 0.05


def friction_record(seed, noise, phi, n=601, t1=12.0):
    """A mass on a spring with Coulomb (Threlfall-regularized) and viscous friction, driven by a
    measured force (solve_ivp), positions with AR(1) noise ``e_i = phi e_{i-1} + w_i`` (std
    ``noise``): the slowly wandering error of an encoder under drift."""
    t = np.linspace(0.0, t1, n)
    force = 2.0 * force_samples(t, seed)
    q, _ = threlfall_oscillator(t, force, K, C, [0.0, 0.0], MU, V0)
    rng = np.random.default_rng(seed + 7)
    w = noise * math.sqrt(1 - phi**2) * rng.standard_normal(n)
    e = np.zeros(n)
    e[0] = noise * rng.standard_normal()
    for i in range(1, n):
        e[i] = phi * e[i - 1] + w[i]
    return jf.Measurement(t=t, q=q + e, y0=np.array([0.0, 0.0]), inputs={"force": force}, name=f"friction {seed}")


def candidates():
    """The right law and one whose friction rises over a tolerance velocity 60 times too wide
    (friction still rising at the record's speeds); one structure with array leaves and the same
    estimated paths, so that the two share their compiled fit and simulation."""

    def model(v0):
        law = jf.Threlfall(mu=jnp.asarray(0.3), v0=jnp.asarray(v0))
        return jf.Oscillator(law=law, stiffness=K, damping=jnp.asarray(0.2)), {"law.mu": 0.3, "damping": 0.2}, None

    return {"coulomb+viscous": model(V0), "wide": model(60 * V0)}


@pytest.fixture(scope="module")
def friction_records():
    return friction_record(seed=3, noise=0.01, phi=0.98), friction_record(seed=4, noise=0.01, phi=0.0)


def test_compare_models_ranks_by_validation_error(friction_records):
    data, held_out = friction_records
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        by_aic = jf.compare_models(candidates(), data, optimizer="lm")
        table = jf.compare_models(candidates(), data, validation=held_out, optimizer="lm")
    assert by_aic.ranked_by == "aic" and not by_aic.validation
    assert table.ranked_by == "rms" and table.folds is None
    scores = {name: jf.validate(r, held_out).rms for name, r in table.results.items()}
    for name, score in scores.items():
        assert table.scores[name] == pytest.approx(score, rel=1e-10)
    assert table.best == min(scores, key=scores.get) == "coulomb+viscous"
    assert table.ranking() == sorted(scores, key=scores.get)
    assert table.scores["coulomb+viscous"] == pytest.approx(0.01, rel=0.2)  # the held-out noise
    assert table.scores["wide"] > 1.5 * table.scores["coulomb+viscous"]
    # AR(1) residuals: the note that AIC and BIC assume independence
    assert table.results["coulomb+viscous"].goodness["lag1_autocorrelation"] > 0.5
    text = table.table()
    assert text.splitlines()[1].startswith("coulomb+viscous") and "val. rms" in text and "AIC" in text
    assert "note: information criteria assume independent residuals; rank by validation" in text
    assert "note: information criteria assume independent residuals" in by_aic.table()
    out = json.loads(json.dumps(table.to_dict()))
    assert out["ranking"][0] == "coulomb+viscous" and out["validation"]["wide"]["metrics"]["q"]["n"] == 601
    # ranking on a larger-is-better figure
    fit_pct = jf.compare_models(candidates(), data, validation=held_out, rank_by="q.fit_percent", optimizer="lm")
    assert fit_pct.best == "coulomb+viscous" and fit_pct.scores["coulomb+viscous"] > fit_pct.scores["wide"]


@pytest.mark.slow  # eight fits, four compiled programs: about a minute on an idle 2-core machine
def test_k_fold_cross_validation_over_contiguous_windows(friction_records):
    _, data = friction_records  # white noise: each window's start is estimated from its first samples
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        table = jf.compare_models(candidates(), data, folds=3, optimizer="lm")
    assert table.folds == 3 and table.best == "coulomb+viscous"
    for name, reports in table.fold_reports.items():
        assert len(reports) == 3 and all(r is not None for r in reports)
        assert [r.n_samples for r in reports] == [(200,)] * 3  # contiguous; the 601st sample left out
        assert table.scores[name] == pytest.approx(np.mean([r.rms for r in reports]), rel=1e-12)
    # each held-out window starts from a state estimated from its first noisy samples: its
    # error is larger than the noise, and larger still for the wrong law
    assert table.scores["wide"] > table.scores["coulomb+viscous"]
    # the first window's report against the fit on windows 2 and 3, independently
    windows = [dataclasses.replace(data.window(data.t[a], data.t[a + 199]), y0=None) for a in (0, 200, 400)]
    spec = candidates()["coulomb+viscous"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jf.FitWarning)
        refit = jf.fit(spec[0], spec[1], windows[1:], optimizer="lm")
    assert table.fold_reports["coulomb+viscous"][0].rms == pytest.approx(jf.validate(refit, windows[0]).rms,
                                                                        rel=1e-8)
    assert "3-fold rms" in table.table()


def test_comparison_bad_arguments_name_them(friction_records):
    data, held_out = friction_records
    with pytest.raises(ValueError, match="folds: give a validation record or folds, not both"):
        jf.compare_models(candidates(), data, validation=held_out, folds=3)
    with pytest.raises(ValueError, match="folds must be an integer >= 2"):
        jf.compare_models(candidates(), data, folds=1)
    with pytest.raises(ValueError, match="folds = 300 leaves windows of 2 samples"):
        jf.compare_models(candidates(), data, folds=300)
    with pytest.raises(ValueError, match="rank_by must be one of"):
        jf.compare_models(candidates(), data, validation=held_out, rank_by="aic")
    with pytest.raises(ValueError, match="rank_by: column 'v' is not measured"):
        jf.compare_models(candidates(), data, validation=held_out, rank_by="v.rms")
    with pytest.raises(ValueError, match="validation must be a Measurement"):
        jf.compare_models(candidates(), data, validation=[1.0])
    other = jf.Measurement(t=held_out.t, q=np.zeros((len(held_out), 2)), inputs=held_out.inputs)
    with pytest.raises(ValueError, match=r"models\['coulomb\+viscous'\]: validation\[0\].*degree of freedom 1"):
        jf.compare_models(candidates(), data, validation=other)


# --- the command line ------------------------------------------------------------------------


def rig_files(tmp_path):
    """Two CSV records t, q, motor (the measured force) of the spring-damper, noise 1e-4."""
    paths = []
    for seed, y0 in ((1, (0.2, 0.0)), (2, (-0.1, 0.3))):
        rec = driven_record(seed=seed, noise=1e-4, y0=y0)
        path = tmp_path / f"rig{seed}.csv"
        np.savetxt(path, np.column_stack([rec.t, rec.q[:, 0], rec.inputs["force"]]), delimiter=",",
                   header="t,q,motor", comments="", fmt="%.17g")
        paths.append(path)
    return ["fit", str(paths[0]), "--system", "oscillator", "--set", "law.mu=0", "--input", "motor=force",
            "--y0", "0.2,0", "--dt", "0.02", "--validation", str(paths[1])]


def test_cli_fit_prints_the_validation_figures(tmp_path):
    from click.testing import CliRunner

    from jaxfriction.cli import main

    args = rig_files(tmp_path)
    local = ["--params", "stiffness,damping", "--initial", "stiffness=1.5", "--initial", "damping=0.5",
             "--optimizer", "lm"]
    out = CliRunner().invoke(main, args + local + ["--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["params"]["stiffness"] == pytest.approx(K, rel=0.01)
    v = report["validation"]
    assert v["records"] == ["rig2.csv"] and v["metrics"]["q"]["n"] == 801
    # noise 1e-4; the start state of the validation record is estimated from its first samples
    assert v["metrics"]["q"]["rms"] < 1e-3 and v["metrics"]["q"]["fit_percent"] > 99
    text = CliRunner().invoke(main, args + local)
    assert text.exit_code == 0, text.output
    assert "validation on rig2.csv (801 samples)" in text.output and "rel. err %" in text.output
    missing = CliRunner().invoke(main, args[:-1] + [str(tmp_path / "none.csv")] + local)
    assert missing.exit_code == 1 and "none.csv: no such file" in missing.output


@pytest.mark.slow  # two global searches
def test_cli_compare_ranks_by_the_validation_record(tmp_path):
    from click.testing import CliRunner

    from jaxfriction.cli import main

    compared = CliRunner().invoke(main, rig_files(tmp_path) + [
        "--bounds", "stiffness=1:3", "--bounds", "damping=0.1:1", "--candidates", "16", "--refine", "2",
        "--compare", "oscillator:velocity-limited"])
    assert compared.exit_code == 0, compared.output
    assert "ranked by their simulation error on" in compared.output and "val. rms" in compared.output
    table = compared.output.split("\n")
    header = next(i for i, line in enumerate(table) if line.startswith("model"))
    scores = [float(line.split()[8]) for line in table[header + 1:header + 3]]
    assert scores == sorted(scores) and scores[0] < 1e-3
