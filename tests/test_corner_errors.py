"""Issue 38's corners: inputs that raised a traceback (a JAX dtype error, an AttributeError, an
OverflowError, FileNotFoundError) now get a ValueError or TypeError naming the argument."""

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import pytest
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction.cli import main


def _record():
    return jf.Measurement(t=np.linspace(0.0, 1.0, 11), q=np.zeros(11), y0=np.zeros(2))


@pytest.mark.parametrize("call,error,match", [
    (lambda: jf.TwoStateRateState(evolution=None), ValueError, "evolution must be one of"),
    (lambda: jf.Steps(("a", "b"), (1.0,)), ValueError, "values must be a real number"),
    (lambda: jf.Steps((0.0, 1.0), ("t",)), ValueError, "times must be a real number"),
    (lambda: jf.basin_stability(None), TypeError, "ds must be the xarray.Dataset"),
    (lambda: jf.basin_stability({"attractor": 1}), TypeError, "ds must be the xarray.Dataset"),
    (lambda: jf.attractor(np.zeros(3)), TypeError, "traj must be a jf.Trajectory"),
    (lambda: jf.Iwan(["a", "b"], [0.1, 0.2]), ValueError, "stiffness must be a real number"),
    (lambda: jf.Iwan([1.0, 2.0], [0.1, None]), ValueError, "slip_force"),
    (lambda: jf.MaxwellSlip(["a", "b"], [0.1, 0.2]), ValueError, "stiffness must be a real number"),
    (lambda: jf.set_parameters(jf.Oscillator(law=jf.Iwan([1.0, 2.0], [0.1, 0.2])),
                               {"law.stiffness": np.array([1.0, 2.0, 3.0])}),
     ValueError, r"'law.stiffness' has shape \(2,\), got an array of shape \(3,\)"),
    (lambda: jf.fit(jf.Oscillator(law=jf.Coulomb(mu=0.1)), {"law.mu": 0.2}, _record(), noise=1e300, dt=0.01),
     ValueError, r"noise must lie in \(1e-150, 1e150\)"),
    # a system's preferred solve naming no concrete diffrax solver (a typo, an abstract class)
    (lambda: jf.simulate(jf.Oscillator(law=jf.Quinn(0.3, 0.01)), [0.0, 0.0], 0.0, 1.0,
                         solver=jf.AdaptiveSolve("Tsit55")), ValueError, "names no diffrax solver class"),
    (lambda: jf.simulate(jf.Oscillator(law=jf.Quinn(0.3, 0.01)), [0.0, 0.0], 0.0, 1.0,
                         solver=jf.AdaptiveSolve("AbstractSolver")), ValueError, "names no diffrax solver class"),
])
def test_a_bad_argument_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_set_parameters_still_takes_an_array_of_the_parameter_s_shape():
    system = jf.Oscillator(law=jf.Iwan([1.0, 2.0], [0.1, 0.2]))
    np.testing.assert_array_equal(jf.set_parameters(system, {"law.stiffness": np.array([3.0, 4.0])}).law.stiffness,
                                  [3.0, 4.0])


@pytest.mark.parametrize("args", [
    ["sweep", "--param", "law.mu=0.2", "--cycles", "1", "--no-progress", "--out", "/proc/jf/out"],
    ["fit", "DATA", "--system", "oscillator", "--params", "law.mu", "--noise", "1e300"],
])
def test_the_command_line_answers_with_one_error_line(args, tmp_path):
    data = tmp_path / "one.csv"
    data.write_text("t,q0\n0,0\n0.1,0.01\n0.2,0.02\n0.3,0.03\n")
    result = CliRunner().invoke(main, [str(data) if a == "DATA" else a for a in args])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error:"), result.output
    assert ("--out /proc/jf/out: not a writable location" in lines[0]) or ("noise must lie in" in lines[0])
