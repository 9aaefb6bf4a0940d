"""Parameter identification: jaxfriction.fit on synthetic records with known parameters.

Every record is simulated with the fit's own step (the identification is then exact up to
the noise) and Gaussian noise of known sigma (fixed seeds). Checks: the estimates lie within
3 Gauss-Newton standard errors of the truth, the standard errors are small, and the
residual standard deviation matches the noise.
"""

import json
import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction.cli import main

Measurement, fit, load_measurement = jf.Measurement, jf.fit, jf.load_measurement

# the templates' systems (eps = 0.02 for the belt and oscillator, the paper's 1e-3 for the disc)
SYSTEMS = {"belt": jf.template("belt").system, "oscillator": jf.template("oscillator").system,
           "disc": jf.template("disc").system}

BELT = dict(
    truth={"law.mu_s": 0.6, "law.mu_k": 0.4},
    guess={"law.mu_s": 0.75, "law.mu_k": 0.3},
    y0=(0.0, 0.5),
    t1=30.0,
    dt=0.01,  # the template's eps = 2 dt: at dt = eps the breakaway takes less than a step
    interval=0.1,
    sigma=0.01,
)
OSC = dict(
    truth={"law.mu": 1.0, "force.amplitude": 1.2},
    guess={"law.mu": 0.8, "force.amplitude": 1.44},
    y0=(0.0, 0.0),
    t1=25.0,
    dt=0.02,
    interval=0.1,
    sigma=0.01,
)
DISC = dict(
    truth={"law.mu_s": 20.0, "law.delta": 3.0},
    guess={"law.mu_s": 25.0, "law.delta": 2.3},
    y0=(0.0, 0.3),
    t1=6.0,
    dt=1e-3,
    interval=0.05,
    sigma=0.005,
)


def clean(name, case):
    system = jf.set_parameters(SYSTEMS[name], case["truth"])
    traj = jf.simulate(
        system,
        jnp.asarray(case["y0"], dtype=float),
        0.0,
        case["t1"],
        case["dt"],
        save_every=round(case["interval"] / case["dt"]),
    )
    assert int(traj.status) == 0
    return traj


def synthetic(name, case, seed=0, known_y0=True):
    return Measurement.from_trajectory(clean(name, case), noise=case["sigma"], seed=seed, known_y0=known_y0)


def check_recovered(result, case, max_rel_stderr=0.05):
    assert result.converged, result.summary()
    assert np.all(np.isfinite(result.loss_history))
    for name, true in case["truth"].items():
        est, se = result.params[name], result.stderr[name]
        assert 0 < se < max_rel_stderr * true, (name, est, se)
        assert abs(est - true) < 3 * se, (name, est, se)
    assert result.residual_std == pytest.approx(case["sigma"], rel=0.2)


@pytest.fixture(scope="module")
def belt_data():
    return synthetic("belt", BELT, seed=1)


@pytest.fixture(scope="module")
def belt_truth_loss(belt_data):
    # the loss at the true parameters (no step taken): the optimum lies at or below it
    return fit(SYSTEMS["belt"], BELT["truth"], belt_data, dt=BELT["dt"], steps=0).loss_history[-1]


@pytest.fixture(scope="module")
def belt_adam(belt_data):
    return fit(SYSTEMS["belt"], BELT["guess"], belt_data, dt=BELT["dt"])


def test_belt_recovers_static_and_kinetic_friction_with_adam(belt_adam, belt_truth_loss):
    # stick-slip record: ~5 cycles, the block sticks about 20 % of the time
    r = belt_adam
    assert r.optimizer == "adam" and r.gradient == "forward" and r.n_variables == 2 and r.n_residuals == 301
    check_recovered(r, BELT, max_rel_stderr=0.005)  # measured: 0.12 % and 0.13 %
    assert r.loss_history[-1] <= belt_truth_loss < 2e-3 * r.loss_history[0]  # 8.502e-5, 8.583e-5, 0.0977
    assert isinstance(r.system.law, jf.StaticKineticQuinn)
    assert r.system.law.mu_s == pytest.approx(r.params["law.mu_s"])


def test_lbfgs_reaches_the_adam_optimum(belt_data, belt_adam):
    # the slowest test here (~14 s on a loaded 2-core machine): the zoom line search compiles
    # three copies of the simulation's Jacobian
    r = fit(SYSTEMS["belt"], BELT["guess"], belt_data, dt=BELT["dt"], optimizer="lbfgs")
    assert r.converged and r.n_steps < belt_adam.n_steps / 5  # measured: 18 vs 343
    for name in BELT["truth"]:
        assert abs(r.params[name] - belt_adam.params[name]) < 0.02 * belt_adam.stderr[name]
    # adam stops 1.3e-9 (relative) above the optimum L-BFGS finds; the standard errors at the
    # two end points differ by 5e-5 (relative, measured)
    assert r.loss_history[-1] <= belt_adam.loss_history[-1] * (1 + 1e-8)
    assert r.loss_history[-1] == pytest.approx(belt_adam.loss_history[-1], rel=1e-7)
    assert r.stderr == pytest.approx(belt_adam.stderr, rel=1e-3)


def test_oscillator_recovers_mu_n_and_alpha_from_two_records():
    # Quinn 2004 Fig. 7 case (a). Two records share the parameters: one from rest (25 s), one
    # from (1.5, -0.5) with measured velocity (20 s); both initial states are estimated
    first = synthetic("oscillator", OSC, seed=1, known_y0=False)
    system = jf.set_parameters(SYSTEMS["oscillator"], OSC["truth"])
    traj = jf.simulate(system, jnp.array([1.5, -0.5]), 0.0, 20.0, OSC["dt"], save_every=5)
    second = Measurement.from_trajectory(traj, noise=OSC["sigma"], seed=2, with_velocity=True)
    r = fit(SYSTEMS["oscillator"], OSC["guess"], [first, second], dt=OSC["dt"], optimizer="lm")
    assert r.n_variables == 2 + 2 + 2 and r.n_residuals == 251 + 2 * 201
    check_recovered(r, OSC, max_rel_stderr=0.005)  # measured: 0.13 % and 0.11 %
    # the start of the moving record is fitted to a fraction of sigma; the start velocity of
    # the record from rest is not identifiable (the block sticks: any small velocity decays)
    np.testing.assert_allclose(r.initial_states[1][0], [1.5, -0.5], atol=OSC["sigma"])
    assert abs(r.initial_states[0][0, 0]) < OSC["sigma"]


def test_disc_recovers_static_level_and_velocity_weakening():
    data = synthetic("disc", DISC, seed=3)
    r = fit(jf.template("disc"), DISC["guess"], data, optimizer="lm")  # the template's step, 1e-3 s (paper 002)
    check_recovered(r, DISC, max_rel_stderr=0.02)


def test_multiple_shooting_recovers_the_oscillator_on_a_longer_record():
    # 60 s record (5 forcing periods), 6 segments whose start states are fitted too; the
    # guess has mu N > alpha (simulated from rest the block would never leave stick)
    case = dict(OSC, guess={"law.mu": 1.3, "force.amplitude": 0.9}, t1=60.0, dt=0.01)
    data = synthetic("oscillator", case, seed=2, known_y0=False)
    r = fit(jf.template("oscillator"), case["guess"], data, optimizer="lm", shooting_segments=6)
    assert r.n_variables == 2 + 2 * 6 and sorted(r.params) == ["force.amplitude", "law.mu"]
    check_recovered(r, case, max_rel_stderr=0.005)  # measured: 0.09 % and 0.08 %
    states = r.initial_states[0]
    assert states.shape == (6, 2)
    np.testing.assert_allclose(states[:, 0], data.q[[0, 100, 200, 300, 400, 500], 0], atol=5 * case["sigma"])


def test_gauss_newton_stderr_matches_the_scatter_over_noise_seeds():
    # ten noise realisations of the belt record, each fitted from the truth (LM)
    traj = clean("belt", BELT)
    fits = [
        fit(
            SYSTEMS["belt"],
            BELT["truth"],
            Measurement.from_trajectory(traj, noise=BELT["sigma"], seed=s, known_y0=True),
            dt=BELT["dt"],
            optimizer="lm",
        )
        for s in range(10, 20)
    ]
    assert all(f.converged for f in fits)
    for name, true in BELT["truth"].items():
        est = np.array([f.params[name] for f in fits])
        se = np.mean([f.stderr[name] for f in fits])
        ratio = np.std(est, ddof=1) / se
        assert 0.6 < ratio < 1.5, (name, ratio)  # 10 seeds: the sd of this ratio is ~0.24
        assert abs(np.mean(est) - true) < 3 * se / math.sqrt(len(fits))


@pytest.mark.slow  # ~8 s, nearly all compiling the reverse pass
def test_reverse_mode_gradients_through_stick_slip_are_finite_and_match_finite_differences(belt_data):
    # 10 s of the belt record: stick, break-away at k x = mu_s N, slip, re-stick
    q = jnp.asarray(belt_data.q[:101])

    @jax.jit
    def loss(p):
        traj = jf.simulate(
            jf.set_parameters(SYSTEMS["belt"], {"law.mu_s": p[0], "law.mu_k": p[1]}),
            jnp.asarray(belt_data.y0),
            0.0,
            10.0,
            BELT["dt"],
            save_every=5,
        )
        return jnp.sum((traj.position - q[:, 0]) ** 2)

    # a generic point: at mu_s = 0.63 the break-away k x = mu_s N would fall exactly on a step
    # (x = v0 t), a kink of the discrete model where AD takes one side and differences average
    p = jnp.array([0.6137, 0.3871])
    grad = np.asarray(jax.jit(jax.grad(loss))(p))
    fd = [(loss(p.at[i].add(1e-6)) - loss(p.at[i].add(-1e-6))) / 2e-6 for i in range(2)]
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def test_measurement_validation_names_the_argument():
    t = np.linspace(0.0, 1.0, 11)
    with pytest.raises(ValueError, match="q must be finite, got nan at row 3"):
        Measurement(t, np.where(np.arange(11) == 3, np.nan, 0.0))
    with pytest.raises(ValueError, match="t must be uniformly spaced"):
        Measurement(np.r_[t[:5], t[5:] + 0.01], np.zeros(11))
    with pytest.raises(ValueError, match="t must be strictly increasing"):
        Measurement(t[::-1], np.zeros(11))
    with pytest.raises(ValueError, match=r"q must have shape \(n,\) or \(n, k\) with n = len\(t\) = 11"):
        Measurement(t, np.zeros(10))
    with pytest.raises(ValueError, match="v must be finite"):
        Measurement(t, np.zeros(11), v=np.full(11, np.inf))
    with pytest.raises(ValueError, match=r"y0 must have shape \(2 n_dof,\)"):
        Measurement(t, np.zeros(11), y0=[0.0])
    with pytest.raises(ValueError, match="t must have at least 3 samples"):
        Measurement(t[:2], np.zeros(2))
    with pytest.raises(ValueError, match="needs measured positions q or velocities v"):
        Measurement(t)
    with pytest.raises(ValueError, match="q_dofs must list 2 distinct"):
        Measurement(t, np.zeros((11, 2)), q_dofs=(1, 1))


def test_fit_errors_name_the_argument(belt_data):
    belt = SYSTEMS["belt"]
    cases = [
        (dict(initial={"law.mu_x": 0.5}), "initial: 'law.mu_x' is not a field; did you mean"),
        (dict(initial={"law": 0.5}), "initial: 'law' is a StaticKineticQuinn, not a floating-point parameter"),
        (dict(initial={"law.mu_s": -0.5}), r"initial\['law.mu_s'\] = -0.5 must lie strictly inside bounds"),
        (dict(initial={"law.mu_s": 0.5}, bounds={"law.mu_s": (1.0, 0.2)}), r"bounds\['law.mu_s'\] must have lo < hi"),
        (dict(initial={"law.mu_s": 0.5}, bounds={"law.mu_s": (-1.0, 0.2)}),
         r"initial\['law.mu_s'\] = 0.5 must lie strictly inside"),
        (dict(initial={"law.mu_s": 0.5}, bounds={"law.mu_k": (0.1, 1.0)}), r"bounds: \['law.mu_k'\] are not estimated"),
        (dict(initial={"law.mu_s": 0.5}, bounds={"law.mu_s": "big"}), r"bounds\['law.mu_s'\] must be \(lo, hi\)"),
        (dict(initial={"law.mu_s": float("nan")}), r"initial\['law.mu_s'\] must be finite"),
        (dict(initial={}), "initial must be a non-empty dict"),
        (dict(initial={"law.mu_s": 0.5}, optimizer="sgd"), "optimizer must be"),
        (dict(initial={"law.mu_s": 0.5}, steps=-1), "steps must be an int"),
        (dict(initial={"law.mu_s": 0.5}, dt=0.0), "dt must be > 0"),
        (dict(initial={"law.mu_s": 0.5}, shooting_segments=200), "shooting_segments = 200 is too many"),
        (dict(initial={"law.mu_s": 0.5}, weights=[1.0, 2.0]), "weights must be 1 positive numbers"),
        (dict(initial={"law.mu_s": 0.5}, data=[]), "data must be a Measurement"),
        (dict(initial={"law.mu_s": 0.5}, optimizer="lm", gradient="reverse"), "forward-mode Jacobian"),
        (dict(initial={"law.mu_s": 0.5}, system="belt"), "system must be a jaxfriction system"),
        (dict(initial={"law.mu_s": 0.5}, data=Measurement(belt_data.t, belt_data.q, q_dofs=(1,))),
         "measures degree of freedom 1, but the system has 1"),
    ]
    for kwargs, match in cases:
        kwargs = {"system": belt, "data": belt_data, **kwargs}
        with pytest.raises(ValueError, match=match):
            fit(kwargs.pop("system"), kwargs.pop("initial"), kwargs.pop("data"), **kwargs)


def test_optimizer_objects_optax_and_optimistix(belt_data, belt_truth_loss):
    import optax
    import optimistix as optx

    gn = fit(SYSTEMS["belt"], BELT["guess"], belt_data, dt=BELT["dt"], optimizer=optx.GaussNewton(rtol=1e-8, atol=1e-10))
    check_recovered(gn, BELT, max_rel_stderr=0.005)
    assert gn.optimizer == "GaussNewton" and gn.n_steps < 20  # measured: 8
    adam = fit(SYSTEMS["belt"], BELT["guess"], belt_data, dt=BELT["dt"], optimizer=optax.adam(0.01), steps=600)
    assert adam.optimizer == "optax" and adam.loss_history[-1] <= belt_truth_loss
    for name in BELT["truth"]:
        assert abs(adam.params[name] - gn.params[name]) < 0.5 * gn.stderr[name]


def test_csv_round_trip_and_malformed_files(tmp_path, belt_data):
    path = tmp_path / "belt.csv"
    belt_data.to_csv(path)
    assert path.read_text().splitlines()[0] == "t,q"
    back = load_measurement(path)
    np.testing.assert_array_equal(back.t, belt_data.t)
    np.testing.assert_array_equal(back.q, belt_data.q)
    assert back.v is None and back.name == "belt.csv" and back.q_dofs == (0,)
    with_v = Measurement(belt_data.t, belt_data.q, v=np.cos(belt_data.t))
    with_v.to_csv(path)
    np.testing.assert_array_equal(load_measurement(path, y0=[0.0, 0.5]).v, with_v.v)
    several = Measurement(belt_data.t, np.column_stack([belt_data.q[:, 0], 2 * belt_data.q[:, 0]]), q_dofs=(0, 2),
                          v=np.cos(belt_data.t), v_dofs=(1,))
    several.to_csv(path)
    assert path.read_text().splitlines()[0] == "t,q0,q2,v1"
    back = load_measurement(path)
    assert back.q_dofs == (0, 2) and back.v_dofs == (1,)
    np.testing.assert_array_equal(back.q, several.q)

    bad = tmp_path / "bad.csv"
    for text, match in [
        ("# comment\ntime,q\n0,1\n", r"bad.csv:2: the header must be t followed by measured columns"),
        ("t,q,q0\n0,1,1\n", r"bad.csv:1: the header must be t followed"),
        ("t,q\n0,1\n0.1,2,3\n", r"bad.csv:3: expected 2 values \(t,q\), got 3"),
        ("t,q\n0,1\n0.1,abc\n", r"bad.csv:3: 'abc' is not a number"),
        ("t,q\n", "bad.csv: no data rows"),
        ("t,q\n0,1\n0.1,2\n0.3,3\n", "bad.csv: t must be uniformly spaced"),
        ("t,q\n0,1\n0.1,nan\n0.2,3\n", "bad.csv: q must be finite"),
    ]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_measurement(bad)
    bad.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ValueError, match="bad.csv: not a text"):
        load_measurement(bad)
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_measurement(tmp_path / "missing.csv")


def test_cli_fit(tmp_path, belt_data):
    path = tmp_path / "belt.csv"
    belt_data.to_csv(path)
    runner = CliRunner()
    args = ["fit", str(path), "--system", "belt", "--params", "law.mu_s,law.mu_k", "--initial", "law.mu_s=0.75",
            "--initial", "law.mu_k=0.3", "--y0", "0,0.5", "--dt", "0.01", "--set", "law.eps=0.02", "--optimizer", "lm"]
    out = runner.invoke(main, args + ["--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    for name, true in BELT["truth"].items():
        assert abs(report["params"][name] - true) < 3 * report["stderr"][name]
    assert report["converged"] and report["n_residuals"] == 301

    text = runner.invoke(main, args + ["--set", "stiffness=1.0"])
    assert text.exit_code == 0, text.output
    assert "law.mu_s" in text.output and "rel. stderr" in text.output and "converged" in text.output

    for extra, match in [
        (["--params", "law.mu_s,law.mu_k,law.mu_x"], "'law.mu_x' is not a field"),
        (["--set", "k2"], "--set expects NAME=VALUE"),
        (["--y0", "0"], "y0 must have shape"),
        (["--system", "tribometer"], "system must be one of"),
    ]:
        bad = runner.invoke(main, args + extra)
        assert bad.exit_code == 1
        lines = [line for line in bad.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error:") and match in lines[0], bad.output


def test_least_squares_rejects_trial_points_where_the_simulation_is_not_finite(belt_data):
    # a law of the user's own that is NaN for mu_s > 0.59, short of the optimum (0.5998): LM must
    # reject the trial points there and stay on the finite side; a NaN at the guess is an error
    class Fragile(jf.AbstractFrictionLaw):
        mu_s: float
        mu_k: float
        eps: float = 0.02

        def __call__(self, v, f_eq, normal):
            mu_k = self.mu_k * jnp.where(self.mu_s > 0.59, jnp.nan, 1.0)
            return jf.static_kinetic_quinn(v, f_eq, normal, self.mu_s, mu_k, self.eps)

        def static_limit(self, normal):
            return self.mu_s * normal

    system = jf.Oscillator(law=Fragile(0.6, 0.4), surface=jf.Constant(0.5))
    r = fit(system, {"law.mu_s": 0.5, "law.mu_k": 0.3}, belt_data, dt=BELT["dt"], optimizer="lm", steps=10)
    assert np.all(np.isfinite(r.loss_history)) and np.all(np.diff(r.loss_history) <= 0)
    assert 0.58 < r.params["law.mu_s"] <= 0.59
    with pytest.raises(ValueError, match="loss at the initial guess .* is not finite"):
        fit(system, {"law.mu_s": 0.6, "law.mu_k": 0.3}, belt_data, dt=BELT["dt"], optimizer="lm")
