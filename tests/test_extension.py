"""A user's own law and two-degree-of-freedom system through every workflow, without editing the library."""

import importlib.util
import json
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction.cli import main
from jaxfriction.testing import check_law, check_system

MODEL = Path(__file__).with_name("_user_model.py")
spec = importlib.util.spec_from_file_location("_user_model", MODEL)
user = importlib.util.module_from_spec(spec)
spec.loader.exec_module(user)

TRUTH = {"law.mu": 0.3, "law.c": 0.05}
SIGMA = 0.005


def test_the_user_law_and_system_pass_the_contract_checks():
    check_law(user.TanhViscous())
    check_system(user.FrictionJoint(law=user.TanhViscous()), dt=0.01)
    with pytest.raises(AssertionError, match="odd symmetry"):  # a broken law is caught
        check_law(_Lopsided())
    with pytest.raises(ValueError, match="eps must be > 0"):  # its constraints are checked when built
        user.TanhViscous(eps=0.0)


class _Lopsided(jf.AbstractFrictionLaw):
    keeps_coulomb_structure = False
    mu: float = 0.3

    def __call__(self, v, f_eq, normal):
        return -self.mu * normal * jnp.tanh(v + 0.1)

    def static_limit(self, normal):
        return self.mu * normal


def test_sweep_of_the_user_system():
    tpl = user.joint_template()
    ds = jf.sweep(tpl, {"law.mu": [0.1, 0.3, 0.5], "amplitude": [0.5, 1.5]}, wrt=["law.mu", "k2"], progress=False)
    assert ds["dissipation"].dims == ("law.mu", "amplitude") and ds["final_position"].dims[-1] == "dof"
    assert int(ds["status"].max()) == 0 and np.all(np.isfinite(ds["grad_dissipation"]))
    assert np.all(ds["energy_residual"] < 1e-5)  # RK4 at dt = 0.01 through the steep tanh: ~1e-7
    # one lane against a direct run of the same system
    period = 2 * np.pi / 0.8
    system = jf.set_parameters(tpl.system, {"law.mu": 0.3, "amplitude": 1.5})
    pre = jf.simulate(system, jnp.zeros(4), 0.0, 9 * period, period / np.ceil(period / 0.01),  # the window's step
                      save_every=None)
    last = jf.simulate(system, pre.ys[-1], 9 * period, 10 * period, 0.01)
    np.testing.assert_allclose(ds["dissipation"].sel({"law.mu": 0.3, "amplitude": 1.5}),
                               jf.window_dissipation(last), rtol=1e-12)
    # a stronger forcing dissipates more in the joint at every mu
    d = ds["dissipation"].values
    assert np.all(d > 0) and np.all(d[:, 1] > 2 * d[:, 0])


@pytest.fixture(scope="module")
def record():
    """Noisy positions of body 2 and velocities of body 1 (a subset of the state), 30 s."""
    system = jf.set_parameters(user.FrictionJoint(law=user.TanhViscous()), TRUTH)
    traj = jf.simulate(system, jnp.zeros(4), 0.0, 30.0, 0.01, save_every=10)
    rng = np.random.default_rng(7)
    ys = np.asarray(traj.ys)
    return jf.Measurement(t=np.asarray(traj.ts), q=ys[:, 1] + SIGMA * rng.standard_normal(ys.shape[0]), q_dofs=(1,),
                          v=ys[:, 2] + SIGMA * rng.standard_normal(ys.shape[0]), v_dofs=(0,), y0=np.zeros(4))


def test_fit_recovers_the_user_parameters_from_noisy_partial_data(record):
    start = user.FrictionJoint(law=user.TanhViscous(mu=0.4, c=0.1))
    r = jf.fit(start, {"law.mu": 0.4, "law.c": 0.1}, record, optimizer="lm", dt=0.01)
    assert r.converged, r.summary()
    assert r.n_residuals == 2 * 301 and r.names == ("law.mu", "law.c")
    for path, true in TRUTH.items():
        assert abs(r.params[path] - true) < 3 * r.stderr[path], r.summary()
        assert r.stderr[path] < 0.05 * true
    assert r.residual_std == pytest.approx(SIGMA, rel=0.2)
    assert isinstance(r.system.law, user.TanhViscous) and r.system.law.mu == pytest.approx(r.params["law.mu"])


def test_the_command_line_takes_the_user_template(tmp_path, record):
    spec = f"{MODEL}:joint_template"
    out = CliRunner().invoke(main, ["sweep", "--system", spec, "--param", "law.mu=0.2,0.4", "--out",
                                    str(tmp_path / "s"), "--no-progress"])
    assert out.exit_code == 0, out.output
    ds = xr.load_dataset(tmp_path / "s" / "result.nc", engine="h5netcdf")
    assert list(ds["wrt"].values) == ["law.mu"] and ds.attrs["template"] == "friction-joint"
    path = tmp_path / "joint.csv"
    record.to_csv(path)
    assert path.read_text().splitlines()[0] == "t,q1,v0"
    fit = CliRunner().invoke(main, ["fit", str(path), "--system", spec, "--params", "law.mu,law.c", "--initial",
                                    "law.mu=0.4", "--initial", "law.c=0.1", "--y0", "0,0,0,0", "--optimizer", "lm",
                                    "--json"])
    assert fit.exit_code == 0, fit.output
    report = json.loads(fit.output)
    for name, true in TRUTH.items():
        assert abs(report["params"][name] - true) < 3 * report["stderr"][name]
    bad = CliRunner().invoke(main, ["sweep", "--system", spec, "--law", "quinn", "--out", str(tmp_path / "b")])
    assert bad.exit_code == 1 and "law" in bad.output
