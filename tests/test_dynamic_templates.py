"""The dynamic-friction systems as named templates: every workflow, the command line included."""

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import pytest
import xarray as xr
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction.cli import main


@pytest.mark.parametrize("name, law", [("lugre", "lugre"), ("lugre", "dahl"),
                                       pytest.param("jointed", "segalman", marks=pytest.mark.slow),
                                       ("jointed", "iwan"), ("spring-slider", "aging"), ("spring-slider", "slip")])
def test_templates_sweep_with_their_defaults(name, law):
    tpl = jf.template(name, law=law)
    path, spec = next(iter(tpl.grid.items()))
    lo, hi, _ = (float(x) for x in spec.split(":"))
    ds = jf.sweep(tpl, {path: np.linspace(lo, hi, 3)}, wrt=tpl.wrt, progress=False)
    if name == "spring-slider":
        # the stiffness grid's lanes start at the template's steady sliding (k = 0.8), far from
        # their own: the block nearly stops in the transient, where RK4 at dt = 1e-2 (and 1e-3)
        # does not resolve rate-and-state's slip-rate stiffness N a / (m |v|): flagged (issue 25)
        assert set(np.unique(ds["status"])) <= {0, jf.STATUS_UNSTABLE_STEP}, ds["status"].values
        ds = jf.sweep(tpl, {path: [float(jf.get_parameter(tpl.system, path))]}, wrt=tpl.wrt, progress=False)
    assert np.all(ds["status"] == 0), ds["status"].values
    assert np.all(np.asarray(ds["energy_residual"]) < 1e-4)
    assert np.all(np.asarray(ds["dissipation"]) > -1e-12) and np.asarray(ds["dissipation"])[-1] > 1e-3
    if tpl.wrt:
        assert np.all(np.isfinite(ds["grad_dissipation"]))


def test_jointed_dissipation_grows_with_amplitude_and_spring_slider_goes_unstable_below_k_c():
    ds = jf.sweep(jf.template("jointed"), {"force.amplitude": [0.05, 0.2, 0.8]}, progress=False)
    assert np.all(np.diff(np.log(np.asarray(ds["dissipation"]))) > 2.0)  # D ~ F^(3 + chi) in microslip
    tpl = jf.template("spring-slider")
    assert abs(float(tpl.system.critical_stiffness()) - 1.0) < 1e-12
    out = jf.sweep(tpl, {"stiffness": [0.8, 1.2]}, progress=False,
                   observables={"speed_range": lambda tr: tr.velocity.max() - tr.velocity.min()})
    spread = np.asarray(out["speed_range"])
    # below k_c the start (steady sliding of k = 0.8, kicked) grows into stick-slip; above k_c
    # the offset start decays towards steady sliding
    assert spread[0] > 20 * spread[1] and spread[0] > 1e-2


# slow: test_cli's sweep test holds a command-line sweep equal to jf.sweep the same way
@pytest.mark.slow
def test_cli_sweeps_the_jointed_oscillator(tmp_path):
    # the XLA path: the command line's part is the same with any kernel, and the compiled loop's
    # program for the jointed template (64 elements) is a numba compile of about 30 s; the test
    # above runs the template through the default kernel
    result = CliRunner().invoke(main, ["sweep", "--system", "jointed", "--param", "force.amplitude=0.05:0.8:3",
                                       "--kernel", "vmap", "--out", str(tmp_path / "s"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "0 of 3 trajectories flagged" in result.output
    ds = xr.load_dataset(tmp_path / "s" / "result.nc", engine="h5netcdf")
    ref = jf.sweep(jf.template("jointed"), {"force.amplitude": [0.05, 0.425, 0.8]}, wrt=["law.K_T"], progress=False,
                   kernel="vmap")
    np.testing.assert_allclose(ds["dissipation"], ref["dissipation"], rtol=1e-12)
