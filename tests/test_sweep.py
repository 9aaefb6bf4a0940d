"""jaxfriction.sweep: lanes named by leaf paths, observables, gradients, status codes, templates."""

import json

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import jaxfriction as jf

OMEGA = 0.5
PERIOD = 2 * np.pi / OMEGA
SYSTEM = jf.Oscillator(law=jf.Quinn(1.0, 0.02), force=jf.Harmonic(1.2, OMEGA))


# slow: test_extension's user-system sweep checks a lane against simulate, and the forward and
# reverse gradient test below the same system's dD/dmu against finite differences
@pytest.mark.slow
def test_lane_matches_direct_simulation_and_finite_differences():
    ds = jf.sweep(SYSTEM, {"law.mu": [0.8]}, cycles=4, frequency="force.omega", dt=0.01, wrt="law.mu",
                  progress=False)
    system = jf.set_parameters(SYSTEM, {"law.mu": 0.8})
    # the transient (whole windows) on the window's step: ceil(T / dt) steps per period
    pre = jf.simulate(system, jnp.zeros(2), 0.0, 3 * PERIOD, PERIOD / np.ceil(PERIOD / 0.01), save_every=None)
    last = jf.simulate(system, pre.ys[-1], 3 * PERIOD, 4 * PERIOD, 0.01)
    np.testing.assert_allclose(ds["dissipation"].values[0], jf.dissipation_per_cycle(last, PERIOD, 1)[0], rtol=1e-12)
    np.testing.assert_allclose(ds["stick_fraction"].values[0], jf.stick_fraction(last), rtol=1e-14)
    np.testing.assert_allclose(ds["final_position"].values[0], last.position[-1], rtol=1e-14)

    def d(mu):
        return float(jf.sweep(SYSTEM, {"law.mu": [mu]}, cycles=4, frequency="force.omega", dt=0.01,
                              progress=False)["dissipation"][0])

    h = 1e-6
    np.testing.assert_allclose(ds["grad_dissipation"].sel(wrt="law.mu").values[0], (d(0.8 + h) - d(0.8 - h)) / (2 * h),
                               rtol=1e-5)
    assert ds["energy_residual"].values[0] < 1e-6 and int(ds["status"][0]) == 0


def test_dataset_over_paths_with_closed_form_lanes():
    grid = {"law.mu": np.array([0.2, 1.0]), "force.amplitude": np.array([0.2, 0.9, 2.0])}
    ds = jf.sweep(jf.template("oscillator"), grid, cycles=3, chunk_size=4, progress=False)
    assert ds["dissipation"].dims == ("law.mu", "force.amplitude") and ds["dissipation"].shape == (2, 3)
    np.testing.assert_array_equal(ds["law.mu"], grid["law.mu"])
    # alpha < mu N from rest: f_eq = -alpha sin(omega t) never leaves the static band
    stuck = ds.sel({"law.mu": 1.0, "force.amplitude": 0.2})
    assert abs(float(stuck["dissipation"])) < 1e-15 and float(stuck["final_position"]) == 0.0
    assert float(ds["stick_fraction"].sel({"law.mu": 1.0, "force.amplitude": 0.9})) == 1.0
    slipping = ds.sel({"law.mu": 0.2, "force.amplitude": 2.0})
    assert float(slipping["dissipation"]) > 1.0 and float(slipping["stick_fraction"]) == 0.0
    assert int(ds["status"].max()) == 0 and ds.attrs["steps_per_second"] > 0
    assert ds.attrs["template"] == "oscillator" and json.loads(ds.attrs["fixed"])["force.omega"] == 0.5
    again = jf.sweep(jf.template("oscillator"), grid, cycles=3, chunk_size=64, progress=False)
    np.testing.assert_array_equal(ds["dissipation"], again["dissipation"])  # chunking changes no bit
    samples = jf.sweep(jf.template("oscillator"), {k: v[[0, 1]] for k, v in {
        "law.mu": grid["law.mu"], "force.amplitude": grid["force.amplitude"][[0, 2]]}.items()}, cycles=3,
        samples=True, progress=False)
    assert samples["dissipation"].dims == ("sample",)
    np.testing.assert_array_equal(samples["dissipation"].values,
                                  [ds["dissipation"].values[0, 0], ds["dissipation"].values[1, 2]])


def test_forward_and_reverse_gradients_agree_with_finite_differences():
    grid = {"law.mu": np.array([0.3, 0.8, 1.0]), "force.amplitude": np.array([1.6, 1.2, 0.4])}
    kw = dict(cycles=4, frequency="force.omega", dt=0.01, samples=True, progress=False)
    fwd = jf.sweep(SYSTEM, grid, wrt=["law.mu", "force.amplitude"], gradient="forward", **kw)
    rev = jf.sweep(SYSTEM, grid, wrt=["law.mu", "force.amplitude"], gradient=jf.ReverseMode(), **kw)
    plain = jf.sweep(SYSTEM, grid, **kw)
    assert "grad_dissipation" not in plain and fwd.attrs["gradient"] == "ForwardMode"
    np.testing.assert_array_equal(fwd["dissipation"], plain["dissipation"])
    np.testing.assert_allclose(rev["grad_dissipation"], fwd["grad_dissipation"], rtol=1e-10, atol=1e-13)
    h = 1e-6
    for path in grid:
        up = jf.sweep(SYSTEM, {**grid, path: grid[path] + h}, **kw)["dissipation"]
        down = jf.sweep(SYSTEM, {**grid, path: grid[path] - h}, **kw)["dissipation"]
        np.testing.assert_allclose(fwd["grad_dissipation"].sel(wrt=path), (up - down) / (2 * h), rtol=1e-5, atol=1e-8)
    # alpha < mu N: the block never leaves the stick band, D and its gradient vanish
    assert abs(float(fwd["grad_dissipation"][2].max())) < 1e-12


def test_belt_steady_window_custom_observable_and_gradient_of_an_unswept_path():
    # belt at v0 with mu_s = mu_k = 1 (Quinn's law, eps = 2 dt): after the first grazing stick
    # the block slips for good, x = 1 + v0 sin(t) under the constant friction force mu N = 1,
    # so the slip v - v0 peaks at 2 v0 and the friction work over a window W is
    # v0 W - (x_end - x_start), with |x_end - x_start| <= 2 v0.
    belt = jf.Oscillator(law=jf.Quinn(mu=1.0, eps=0.004), surface=jf.Constant(0.2))
    observables = {**jf.WINDOW_OBSERVABLES, "belt_work": lambda traj: traj.input_work[-1] - traj.input_work[0]}
    ds = jf.sweep(belt, {"surface.value": [0.2]}, t1=60.0, window=20.0, dt=0.002, observables=observables,
                  wrt=["surface.value", "stiffness"], gradient_of=["dissipation", "belt_work"], progress=False)
    out = ds.isel({"surface.value": 0})
    assert int(out["status"]) == 0 and float(out["stick_fraction"]) < 0.01
    np.testing.assert_allclose(out["peak_slip"], 0.4, atol=2e-3)
    assert 0.8 - 1e-3 <= float(out["final_position"]) <= 1.2 + 1e-3
    assert abs(float(out["dissipation"]) - 0.2 * 20.0) <= 0.4 + 1e-3
    # steady sliding under the constant force mu N = 1: the belt's motor works v0 W = 4
    np.testing.assert_allclose(out["belt_work"], 0.2 * 20.0, rtol=1e-6)
    assert out["grad_belt_work"].dims == ("wrt",) and np.all(np.isfinite(out["grad_belt_work"]))

    def d(v0):
        return float(jf.sweep(belt, {"surface.value": [v0]}, t1=60.0, window=20.0, dt=0.002,
                              progress=False)["dissipation"][0])

    np.testing.assert_allclose(out["grad_dissipation"].sel(wrt="surface.value"), (d(0.2 + 1e-6) - d(0.2 - 1e-6)) / 2e-6,
                               rtol=1e-5)
    assert float(abs(out["grad_dissipation"].sel(wrt="stiffness"))) > 0  # an unswept path is differentiated too


def test_lanes_are_flagged_never_silently_wrong():
    # mu < 0 is out of range; eps = 0.01 / 2.9 makes RK4 unstable in Quinn's band (h mu N / eps
    # = 2.9); sqrt(|x|) of a block that never leaves x = 0 has an infinite derivative
    grid = {"law.mu": np.array([-0.5, 1.0, 1.0]), "law.eps": np.array([0.02, 0.01 / 2.9, 0.02])}
    observables = {"dissipation": jf.window_dissipation, "root": lambda traj: jnp.sqrt(jnp.abs(traj.position[-1]))}
    ds = jf.sweep(jf.set_parameters(SYSTEM, {"force.amplitude": 0.5}), grid, t1=10.0, dt=0.01, samples=True,
                  observables=observables, wrt="force.amplitude", gradient_of=["dissipation", "root"],
                  progress=False)
    np.testing.assert_array_equal(ds["status"], [jf.STATUS_INVALID_PARAMETER, jf.STATUS_UNSTABLE_STEP,
                                                 jf.STATUS_NONFINITE_GRADIENT])
    assert np.isnan(ds["dissipation"][0]) and np.all(np.isnan(ds["grad_dissipation"][0]))  # no number at all
    assert json.loads(ds.attrs["flagged"]) == {"invalid parameter": 1, "RK4 step too long (stick band, internal state, or exact-Coulomb stick)": 1,
                                               "non-finite gradient": 1}
    assert list(ds["status"].attrs["flag_values"]) == sorted(jf.STATUS_MEANINGS)
    # a NaN parameter of a drive: flagged as invalid as well
    nan_scale = jf.sweep(SYSTEM, {"force.amplitude": [0.5, 1.0]}, t1=5.0, dt=0.01, progress=False,
                         derive=lambda s: jf.set_parameters(s, {"force.omega": jnp.where(
                             s.force.amplitude > 0.7, jnp.nan, 0.5)}))
    np.testing.assert_array_equal(nan_scale["status"], [0, jf.STATUS_INVALID_PARAMETER])


def test_multi_dof_template_and_netcdf_round_trip(tmp_path):
    tpl = jf.template("chain", n=4)
    ds = jf.sweep(tpl, {"alpha": [0.3, 0.6]}, cycles=2, wrt=["law.mu"], out_dir=tmp_path, progress=False)
    assert ds["final_position"].dims == ("alpha", "dof") and ds["final_position"].shape == (2, 4)
    assert ds["grad_dissipation"].dims == ("alpha", "wrt") and int(ds["status"].max()) == 0
    with xr.open_dataset(tmp_path / "result.nc", engine="h5netcdf") as saved:
        np.testing.assert_array_equal(saved["grad_dissipation"], ds["grad_dissipation"])
        assert list(saved["wrt"].values) == ["law.mu"]
    resumed = jf.sweep(tpl, {"alpha": [0.3, 0.6]}, cycles=2, wrt=["law.mu"], out_dir=tmp_path, progress=False)
    assert resumed.attrs["chunks_loaded"] == 1 and resumed.attrs["chunks_computed"] == 0
    with pytest.raises(ValueError, match="other arguments"):  # another template value is another sweep
        jf.sweep(tpl.with_parameters({"omega": 0.4}), {"alpha": [0.3, 0.6]}, cycles=2, wrt=["law.mu"],
                 out_dir=tmp_path, progress=False)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"grid": {"law.nu": [0.5]}}, "grid: 'law.nu' is not a field; did you mean 'law.mu'"),
        ({"grid": {"law": [0.5]}}, "not a floating-point parameter"),
        ({"grid": {"law.mu": [np.nan]}}, r"grid\['law.mu'\] must be"),
        ({"grid": {}}, "grid"),
        ({"grid": {"force.omega": [0.5]}, "cycles": 2}, "swept"),
        ({"cycles": 2, "frequency": None, "system": SYSTEM}, "frequency"),
        ({"t1": 5.0, "window": 6.0}, "window"),
        ({"cycles": 2, "t1": 5.0}, "not both"),
        ({"cycles": 2, "wrt": ["force.omega"]}, "window moves with 'force.omega'"),
        ({"cycles": None, "window": 3.0}, "window needs t1"),
        ({"wrt": ["law.mu"], "gradient_of": "nope"}, "gradient_of"),
        ({"wrt": ["law.mu"], "gradient": "sideways"}, "gradient"),
        ({"dt": -0.1}, "dt"),
        ({"y0": jnp.zeros(3)}, "y0"),
        ({"solver": "euler"}, "solver"),
        ({"system": "oscillator"}, "system"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    args = {"system": jf.template("oscillator"), "grid": {"law.mu": [0.5]}, "cycles": 2, "progress": False, **kwargs}
    for key in ("frequency", "cycles"):
        if key in args and args[key] is None:
            del args[key]
    with pytest.raises(ValueError, match=match):
        jf.sweep(args.pop("system"), args.pop("grid"), **args)


def test_paths_set_elements_and_name_errors():
    two = jf.TwoBlocksOnBelt(law=jf.Quinn(jnp.array([0.5, 0.25]), 0.02))
    assert jf.parameter_paths(two) == ["law.mu", "law.eps", "kappa", "belt_amplitude", "belt_omega"]
    changed = jf.set_parameters(two, {"law.mu[1]": 0.4, "kappa": 3.0})
    np.testing.assert_array_equal(changed.law.mu, [0.5, 0.4])
    assert float(jf.get_parameter(changed, "law.mu[1]")) == 0.4 and changed.kappa == 3.0
    with pytest.raises(ValueError, match="out of range"):
        jf.set_parameters(two, {"law.mu[2]": 0.1})
    with pytest.raises(ValueError, match="derived property"):
        jf.get_parameter(two, "masses")
    with pytest.raises(ValueError, match="static field"):
        jf.get_parameter(jf.BurridgeKnopoffChain(law=jf.Quinn(), n=4), "n")
    with pytest.raises(ValueError, match="twice"):
        jf.set_parameters(two, {"law.mu": jnp.ones(2), "law.mu[0]": 0.1})
    with pytest.raises(ValueError, match="twice"):
        jf.set_parameters(two, {"law.mu[-1]": 1.0, "law.mu[1]": 2.0})
    assert jf.scalar_parameter_paths(two)[:3] == ["law.mu[0]", "law.mu[1]", "law.eps"]
    # int literals are parameters too; a chain's n is structural (static)
    ints = jf.Oscillator(law=jf.Quinn(mu=1, eps=0.02), force=jf.Harmonic(1, 0.5), stiffness=2)
    assert {"law.mu", "force.amplitude", "stiffness"} <= set(jf.parameter_paths(ints))
    assert "n" not in jf.parameter_paths(jf.BurridgeKnopoffChain(law=jf.Quinn(), n=4))
    with pytest.raises(ValueError, match="not a parameter path"):
        jf.get_parameter(two, "law..mu")


FORWARD = {"t1": 5.0, "window": 2.0, "wrt": "law.mu", "progress": False}


def test_diffrax_solver_in_forward_mode():
    # diffrax's default adjoint is reverse-only: the sweep runs diffrax solvers with ForwardMode
    import diffrax

    grid, kw = {"law.mu": [0.4, 0.7]}, FORWARD
    rk4 = jf.sweep(SYSTEM, grid, dt=1e-3, **kw)
    tsit5 = jf.sweep(SYSTEM, grid, solver=jf.Diffrax(diffrax.Tsit5(), rtol=1e-10, atol=1e-12), dt=1e-3, **kw)
    assert int(tsit5["status"].max()) == 0
    np.testing.assert_allclose(tsit5["dissipation"], rk4["dissipation"], rtol=1e-4)
    np.testing.assert_allclose(tsit5["grad_dissipation"], rk4["grad_dissipation"], rtol=1e-3, atol=2e-4)


@pytest.mark.slow  # ~15 s, compiling the event-driven solver with forward-mode adjoints
def test_event_driven_solver_in_forward_mode():
    coulomb = jf.Oscillator(law=jf.Coulomb(1.0), force=jf.Harmonic(1.2, OMEGA))
    grid = {"law.mu": [0.4, 0.7]}
    exact = jf.sweep(coulomb, grid, solver=jf.EventDriven(max_events=8), saveat=jf.SaveAt(n=20), **FORWARD)
    assert int(exact["status"].max()) == 0 and np.all(np.isfinite(exact["grad_dissipation"]))
    h = 1e-6
    d = [jf.sweep(coulomb, {"law.mu": [0.7 + s]}, solver=jf.EventDriven(max_events=8), saveat=jf.SaveAt(n=20),
                  t1=5.0, window=2.0, progress=False)["dissipation"].values[0] for s in (h, -h)]
    np.testing.assert_allclose(exact["grad_dissipation"].values[1, 0], (d[0] - d[1]) / (2 * h), rtol=1e-5)


def test_resume_identifies_user_functions_by_their_code(tmp_path):
    def sweep(observable):
        return jf.sweep(SYSTEM, {"law.mu": [0.5]}, t1=4.0, dt=0.01, observables={"x": observable}, out_dir=tmp_path,
                        progress=False)

    first = sweep(lambda traj: traj.position[-1])
    assert sweep(lambda traj: traj.position[-1]).attrs["chunks_loaded"] == 1  # the same code resumes
    with pytest.raises(ValueError, match="other arguments"):  # another body is another sweep
        sweep(lambda traj: 100 * traj.position[-1])
    assert np.isfinite(first["x"]).all()


def test_resume_identifies_a_recursive_closure(tmp_path):
    # a helper that calls itself sits in its own closure: the identity must not recurse forever
    def scaled(traj):
        def power(n):
            return 1.0 if n == 0 else 2.0 * power(n - 1)
        return lambda t: power(3) * t.position[-1]

    observable = scaled(None)
    run = [jf.sweep(SYSTEM, {"law.mu": [0.5]}, t1=4.0, dt=0.01, observables={"x": observable}, out_dir=tmp_path,
                    progress=False) for _ in range(2)]
    assert run[1].attrs["chunks_loaded"] == 1
    np.testing.assert_array_equal(run[1]["x"], run[0]["x"])


def test_peak_slip_of_a_vector_contact_is_the_slip_speed():
    block = jf.BlockOnShakingFloor(law=jf.VectorQuinn(0.3, 0.01), ground=jf.Harmonic(jnp.array([3.0, 3.0]), 6.0))
    traj = jf.simulate(block, jnp.zeros(4), 0.0, 2.0, 1e-3, save_every=10)
    speed = np.max(np.linalg.norm(np.asarray(traj.ys[:, 2:4]), axis=1))
    np.testing.assert_allclose(jf.peak_slip(traj), speed, rtol=1e-12)
    assert speed > np.max(np.abs(np.asarray(traj.ys[:, 2:4]))) * 1.3  # equal components: sqrt(2) apart


def test_a_lambda_written_again_reuses_the_compiled_lanes():
    def sweep(offset):
        return jf.sweep(SYSTEM, {"law.mu": [0.45, 0.5]}, t1=2.0, dt=0.01, progress=False,
                        observables={"x": lambda traj: traj.position[-1] + offset})

    first = sweep(0.0)
    again = sweep(0.0)  # a fresh lambda with the same code and closure: no compilation
    assert first.attrs["compile_seconds"] > 0 and again.attrs["compile_seconds"] == 0.0
    np.testing.assert_array_equal(first["x"], again["x"])
    shifted = sweep(1.0)  # another closure value is another program
    assert shifted.attrs["compile_seconds"] > 0
    np.testing.assert_allclose(shifted["x"], first["x"] + 1.0, rtol=1e-12)


def test_gradient_none_gives_no_gradients_as_the_cli_does():
    ds = jf.sweep(SYSTEM, {"law.mu": [0.8]}, cycles=2, frequency="force.omega", dt=0.01, wrt="law.mu",
                  gradient="none", progress=False)
    assert "grad_dissipation" not in ds and ds.attrs["gradient"] == "none"
    with pytest.raises(ValueError, match="gradient must be"):
        jf.sweep(SYSTEM, {"law.mu": [0.8]}, cycles=2, frequency="force.omega", dt=0.01, gradient="nothing",
                 progress=False)


def test_issue_25_steps_that_do_not_resolve_the_run_devices_and_absurd_grids_are_refused():
    tpl = jf.template("oscillator")
    with pytest.raises(ValueError, match="dt = 5 is longer than the run"):
        jf.sweep(tpl, {"law.mu": [0.5]}, t1=2.0, window=1.0, dt=5.0, progress=False)
    with pytest.raises(ValueError, match="dt = 2 is longer than the measured window"):
        jf.sweep(tpl, {"law.mu": [0.5]}, t1=40.0, window=1.0, dt=2.0, progress=False)
    with pytest.raises(ValueError, match="12.6 steps per period of force.omega"):
        jf.sweep(tpl, {"law.mu": [0.5]}, t1=40.0, window=20.0, dt=1.0, progress=False)
    with pytest.raises(ValueError, match="force.omega = 100"):  # a swept frequency: its largest value
        jf.sweep(tpl, {"force.omega": [0.5, 100.0]}, t1=4.0, window=2.0, progress=False)
    for devices in (0, -1, 10**6, "cpu", [0]):
        with pytest.raises(ValueError, match="devices"):
            jf.sweep(tpl, {"law.mu": [0.5]}, cycles=2, devices=devices, progress=False)
    big = np.linspace(0.0, 1.0, 10**6)
    with pytest.raises(ValueError, match="grid: 1,000,000,000,000 lanes"):
        jf.sweep(tpl, {"law.mu": big, "force.amplitude": big}, cycles=2, progress=False)
    with pytest.raises(ValueError, match="law: eps must be > 0"):  # a fixed value is checked, not flagged
        tpl.with_parameters({"law.eps": -1.0})
    ds = jf.sweep(tpl, {"law.mu": [0.5]}, cycles=2, devices=1, progress=False)  # a count of devices
    assert int(ds["status"].max()) == 0 and ds.attrs["devices"] == 1
