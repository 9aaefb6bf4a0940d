import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import pytest

import jaxfriction as jf
from jaxfriction._workflows import finite_difference_gradient, parameter_names, sensitivity, sensitivity_map

T = 4 * math.pi


def last_cycle_dissipation(system):
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 4 * T, 0.01, save_every=1257)
    return jf.dissipation_per_cycle(traj, T, 4)[-1]


SYSTEM = jf.ForcedOscillator(law=jf.Quinn(0.8, 0.02), alpha=1.2, omega=0.5)


def test_parameter_names():
    assert parameter_names(SYSTEM) == ["law.mu", "law.eps", "alpha", "omega", "mass", "stiffness", "damping", "normal"]


def test_gradients_match_finite_differences_and_modes_agree():
    params = ["law.mu", "law.eps", "alpha"]
    fwd = sensitivity(last_cycle_dissipation, SYSTEM, params, mode="forward")
    rev = sensitivity(last_cycle_dissipation, SYSTEM, params, mode="reverse")
    fd = finite_difference_gradient(last_cycle_dissipation, SYSTEM, params)
    for name in params:
        assert fwd["gradient"][name] == pytest.approx(fd[name], rel=1e-6)
        assert rev["gradient"][name] == pytest.approx(fwd["gradient"][name], rel=1e-10)
    assert fwd["value"] > 1.0 and fwd["mode"] == "forward"
    assert sensitivity(last_cycle_dissipation, SYSTEM)["mode"] == "reverse"  # 8 parameters


def test_elasticities_of_a_power_law():
    result = sensitivity(lambda s: s.law.mu**3 * s.alpha / s.omega, SYSTEM, ["law.mu", "alpha", "omega"])
    assert result["elasticity"] == pytest.approx({"law.mu": 3.0, "alpha": 1.0, "omega": -1.0}, rel=1e-12)


def test_rest_position_sensitivity_matches_the_exact_coulomb_rate():
    # one half cycle from (x0, 0) ends at 2 mu N - x0 (Quinn Sec. 3.1.1): d(rest)/d(mu) = 2
    system = jf.ForcedOscillator(law=jf.Quinn(1.0, 0.01))

    def rest(s):
        return jf.rest_position(jf.simulate(s, jnp.array([2.75, 0.0]), 0.0, 20.0, 0.005, save_every=None))

    assert sensitivity(rest, system, ["law.mu"])["gradient"]["law.mu"] == pytest.approx(2.0, abs=2e-3)


def test_sensitivity_map_matches_pointwise():
    def make(mu, alpha):
        return jf.ForcedOscillator(law=jf.Quinn(mu, 0.02), alpha=alpha, omega=0.5)

    ds = sensitivity_map(last_cycle_dissipation, make, {"mu": [0.3, 0.8], "alpha": [0.5, 1.2, 2.0]},
                         ["law.mu", "law.eps"])
    assert ds["d_law_mu"].shape == (2, 3)
    point = sensitivity(last_cycle_dissipation, make(0.8, 1.2), ["law.mu", "law.eps"])
    assert float(ds["d_law_eps"].sel(mu=0.8, alpha=1.2)) == pytest.approx(point["gradient"]["law.eps"], rel=1e-10)
    assert abs(float(ds["value"].sel(mu=0.8, alpha=0.5))) < 1e-15  # alpha < mu N from rest: stuck


def test_bad_input():
    with pytest.raises(ValueError, match="params"):
        sensitivity(last_cycle_dissipation, SYSTEM, ["law.nope"])
    with pytest.raises(ValueError, match="mode"):
        sensitivity(last_cycle_dissipation, SYSTEM, ["alpha"], mode="sideways")
