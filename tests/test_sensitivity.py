import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import pytest

import jaxfriction as jf
from jaxfriction import (
    finite_difference_gradient,
    parameter_paths,
    sensitivity,
    sensitivity_map,
)

T = 4 * math.pi


def last_cycle_dissipation(system):
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 4 * T, 0.01, save_every=1257)
    return jf.dissipation_per_cycle(traj, T, 4)[-1]


SYSTEM = jf.Oscillator(law=jf.Quinn(0.8, 0.02), force=jf.Harmonic(1.2, 0.5))


def test_parameter_paths():
    assert parameter_paths(SYSTEM) == ["law.mu", "law.eps", "force.amplitude", "force.omega", "force.phase",
                                       "surface.value", "mass", "stiffness", "damping", "normal"]


def test_gradients_match_finite_differences_and_modes_agree():
    params = ["law.mu", "law.eps", "force.amplitude"]
    fwd = sensitivity(last_cycle_dissipation, SYSTEM, params, gradient="forward")
    # reverse mode over every parameter: the program the default call below reuses (one program
    # compiled for the three and another for the ten before)
    rev = sensitivity(last_cycle_dissipation, SYSTEM, gradient=jf.ReverseMode())
    fd = finite_difference_gradient(last_cycle_dissipation, SYSTEM, params)
    for name in params:
        assert fwd["gradient"][name] == pytest.approx(fd[name], rel=1e-6)
        assert rev["gradient"][name] == pytest.approx(fwd["gradient"][name], rel=1e-10)
    assert fwd["value"] > 1.0 and fwd["mode"] == "ForwardMode"
    assert sensitivity(last_cycle_dissipation, SYSTEM)["mode"] == "ReverseMode"  # 10 parameters > 8


def test_elasticities_of_a_power_law():
    result = sensitivity(lambda s: s.law.mu**3 * s.force.amplitude / s.force.omega, SYSTEM,
                         ["law.mu", "force.amplitude", "force.omega"])
    assert result["elasticity"] == pytest.approx({"law.mu": 3.0, "force.amplitude": 1.0, "force.omega": -1.0},
                                                 rel=1e-12)


def test_rest_position_sensitivity_matches_the_exact_coulomb_rate():
    # one half cycle from (x0, 0) ends at 2 mu N - x0 (Quinn Sec. 3.1.1): d(rest)/d(mu) = 2
    system = jf.Oscillator(law=jf.Quinn(1.0, 0.01))

    def rest(s):
        return jf.rest_position(jf.simulate(s, jnp.array([2.75, 0.0]), 0.0, 20.0, 0.005, save_every=None))

    assert sensitivity(rest, system, ["law.mu"])["gradient"]["law.mu"] == pytest.approx(2.0, abs=2e-3)


def test_sensitivity_map_matches_pointwise():
    grid = {"law.mu": [0.3, 0.8], "force.amplitude": [0.5, 1.2, 2.0]}
    ds = sensitivity_map(last_cycle_dissipation, SYSTEM, grid, ["law.mu", "law.eps"])
    assert ds["grad_value"].dims == ("law.mu", "force.amplitude", "wrt") and ds["grad_value"].shape == (2, 3, 2)
    # the three parameters of the test above (forward mode): the program compiled there
    point = sensitivity(last_cycle_dissipation, SYSTEM, ["law.mu", "law.eps", "force.amplitude"])
    here = ds["grad_value"].sel({"law.mu": 0.8, "force.amplitude": 1.2})
    assert float(here.sel(wrt="law.eps")) == pytest.approx(point["gradient"]["law.eps"], rel=1e-10)
    assert float(here.sel(wrt="law.mu")) == pytest.approx(point["gradient"]["law.mu"], rel=1e-10)
    # alpha < mu N from rest: stuck, nothing dissipated
    assert abs(float(ds["value"].sel({"law.mu": 0.8, "force.amplitude": 0.5}))) < 1e-15
    assert int(ds["status"].max()) == 0


def test_bad_input():
    with pytest.raises(ValueError, match="wrt: 'law.nope' is not a field; did you mean"):
        sensitivity(last_cycle_dissipation, SYSTEM, ["law.nope"])
    with pytest.raises(ValueError, match="gradient"):
        sensitivity(last_cycle_dissipation, SYSTEM, ["force.amplitude"], gradient="sideways")
    with pytest.raises(ValueError, match="wrt"):
        sensitivity_map(last_cycle_dissipation, SYSTEM, {"law.mu": [0.5]}, [])


def test_a_second_call_at_other_values_compiles_nothing():
    # one program per observable code and system structure; the observable written again (a
    # fresh lambda) and the differentiated values at other numbers reuse it
    from jaxfriction._workflows.sensitivity import _value_and_jacobian

    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 0.5))
    before = _value_and_jacobian._cached._cache_size()
    values = []
    for mu in (0.4, 0.5, 0.6):
        out = jf.sensitivity(lambda s: jf.simulate(s, jnp.zeros(2), 0.0, 5.0, dt=0.01).friction_dissipation[-1],
                             jf.set_parameters(system, {"law.mu": mu}), ["law.mu", "force.amplitude"])
        values.append(out["gradient"]["law.mu"])
    assert _value_and_jacobian._cached._cache_size() - before <= 1  # none if an earlier test compiled it
    assert len(set(values)) == 3


def test_an_observable_that_needs_concrete_times_runs_on_the_eager_path():
    # dissipation_per_cycle without n_cycles reads the (concrete) time grid: under jit it
    # would raise; sensitivity falls back to evaluating the observable eagerly
    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 0.5))
    period = 4 * math.pi

    def last_cycle(s):
        return jf.dissipation_per_cycle(jf.simulate(s, jnp.zeros(2), 0.0, 3 * period, dt=0.01), period)[-1]

    out = jf.sensitivity(last_cycle, system, ["law.mu"])
    fd = jf.finite_difference_gradient(last_cycle, system, ["law.mu"])
    assert out["gradient"]["law.mu"] == pytest.approx(fd["law.mu"], rel=1e-5)


def test_issue_25_rel_step_and_a_non_scalar_observable_are_refused_by_name():
    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02))
    with pytest.raises(ValueError, match="rel_step must be > 0"):
        finite_difference_gradient(lambda s: s.law.mu**2, system, ["law.mu"], rel_step=0.0)
    with pytest.raises(ValueError, match="rel_step must be finite"):
        finite_difference_gradient(lambda s: s.law.mu**2, system, ["law.mu"], rel_step=float("nan"))

    def pair(s):
        return jnp.stack([s.law.mu, s.law.eps])

    with pytest.raises(ValueError, match=r"observable must return a scalar, got an array of shape \(2,\)"):
        sensitivity(pair, system, ["law.mu"])
    with pytest.raises(ValueError, match="observable must return a scalar"):
        finite_difference_gradient(pair, system, ["law.mu"])


def test_wrt_is_the_keyword_and_params_a_deprecated_alias():
    # the same keyword as jf.sweep's; the old one still works for one release, with a warning
    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02))

    def cube(s):
        return s.law.mu**3

    new = sensitivity(cube, system, wrt=["law.mu"])
    with pytest.warns(DeprecationWarning, match="sensitivity: the keyword params is now wrt"):
        old = sensitivity(cube, system, params=["law.mu"])
    assert new["gradient"] == old["gradient"] == {"law.mu": pytest.approx(3 * 0.5**2, rel=1e-12)}
    with pytest.warns(DeprecationWarning, match="finite_difference_gradient: the keyword params is now wrt"):
        fd = finite_difference_gradient(cube, system, params=["law.mu"])
    assert fd["law.mu"] == pytest.approx(0.75, rel=1e-8)
    with pytest.raises(TypeError, match="give wrt, not both wrt and params"):
        sensitivity(cube, system, wrt=["law.mu"], params=["law.mu"])
