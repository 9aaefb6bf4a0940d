"""Periodic steady states: shooting, Floquet multipliers, implicit sensitivities, continuation.

References the library did not make: the belt's closed-form stick-slip cycle, Den Hartog's
forced response, central differences of re-solved orbits, and the 50-cycle transient run
of :func:`~jaxfriction.simulate` (the sweep's default measure of Quinn's D).
"""

import math

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import pytest

import jaxfriction as jf


@pytest.fixture(scope="module")
def oscillator():
    return jf.template("oscillator")


@pytest.fixture(scope="module")
def quinn_orbit(oscillator):
    return jf.periodic_orbit(oscillator)


def test_quinn_orbit_is_the_50_cycle_steady_state(oscillator, quinn_orbit):
    o = quinn_orbit
    assert o.converged and o.status == "converged" and o.residual < 1e-12
    assert o.period == pytest.approx(4 * math.pi, rel=1e-14)
    # the 50-cycle transient on the same step (h = T / n): its last cycle is the orbit
    h = o.period / o.n_steps
    traj = jf.simulate(oscillator.system, [0.0, 0.0], 0.0, 50 * o.period, dt=h, save_every=o.n_steps)
    d50 = float(jf.dissipation_per_cycle(traj, o.period, 50)[-1])
    assert abs(o.dissipation - d50) < 1e-10
    np.testing.assert_allclose(o.y0, np.asarray(traj.ys[-1, :2]), atol=1e-10)
    assert 0.2 < o.stick_fraction < 0.4  # Quinn's case (a): sustained sticking
    # stick contracts: the multipliers are well inside the circle
    assert o.stable and np.max(np.abs(o.multipliers)) < 0.2


@pytest.mark.slow
def test_belt_stick_slip_cycle_against_closed_form():
    """The autonomous belt: period and peak spring force of the stick-slip limit cycle
    (paper 004) to O(eps), eps = 2 dt."""
    exact = jf.belt_limit_cycle(0.5, 0.6, 0.4)
    tpl = jf.template("belt", dt=0.0025)
    o = jf.periodic_orbit(tpl, y0=[0.0, 0.5], transient=30.0)
    assert o.converged and o.autonomous and o.residual < 1e-12
    assert o.period == pytest.approx(exact["period"], rel=1.5e-3)
    peak = float(np.max(np.asarray(o.trajectory.position)))
    assert peak == pytest.approx(exact["peak_spring_force"], rel=5e-3)
    assert o.stick_fraction == pytest.approx(exact["stick_duration"] / exact["period"], abs=0.02)
    # one trivial multiplier (near 1), the other ~0: the stick phase forgets the state
    mu = np.sort(np.abs(o.multipliers))
    assert mu[0] < 1e-6 and abs(mu[1] - 1) < 0.05 and o.stable


@pytest.mark.slow
def test_implicit_sensitivities_match_central_differences(oscillator, quinn_orbit):
    params = ["law.mu", "force.omega"]
    s = jf.orbit_sensitivity(quinn_orbit, params)
    assert s["period"]["force.omega"] == pytest.approx(-2 * math.pi / 0.5**2, rel=1e-12)
    assert s["period"]["law.mu"] == 0.0
    for p in params:
        h, v = 1e-5, float(jf.get_parameter(oscillator.system, p))
        plus = jf.periodic_orbit(oscillator.with_parameters({p: v + h}), y0=quinn_orbit.y0, transient=0)
        minus = jf.periodic_orbit(oscillator.with_parameters({p: v - h}), y0=quinn_orbit.y0, transient=0)
        assert plus.n_steps == minus.n_steps == quinn_orbit.n_steps
        assert s["dissipation"][p] == pytest.approx((plus.dissipation - minus.dissipation) / (2 * h), rel=1e-6)
        assert s["amplitude"][p] == pytest.approx((plus.amplitude - minus.amplitude) / (2 * h), rel=1e-6)


@pytest.mark.slow
def test_dynamic_law_orbit_newton_and_lm_agree():
    tpl = jf.template("lugre")
    newton = jf.periodic_orbit(tpl)
    lm = jf.periodic_orbit(tpl, solver="lm")
    assert newton.converged and lm.converged
    assert newton.y0.shape == (tpl.system.dynamical_size,)  # the bristle state is part of the orbit
    np.testing.assert_allclose(lm.y0, newton.y0, atol=1e-10)
    assert lm.dissipation == pytest.approx(newton.dissipation, rel=1e-10)


def test_bad_input_gets_a_clear_error_or_status(oscillator, quinn_orbit):
    with pytest.warns(UserWarning, match="did not converge"):
        o = jf.periodic_orbit(oscillator, transient=0.0, max_steps=1)
    assert not o.converged and o.status == "not converged" and o.residual > 1e-6
    with pytest.raises(ValueError, match="period"):
        jf.periodic_orbit(oscillator, period=3.0)
    with pytest.raises(ValueError, match="period"):
        jf.periodic_orbit(jf.template("belt"))
    with pytest.raises(ValueError, match="solver"):
        jf.periodic_orbit(oscillator, solver="broyden")
    with pytest.raises(ValueError, match="dt"):
        jf.periodic_orbit(oscillator.system)
    with pytest.raises(ValueError, match="did not converge"):
        jf.orbit_sensitivity(o, "law.mu")
    with pytest.raises(ValueError, match="not a floating-point parameter|not a field"):
        jf.orbit_sensitivity(quinn_orbit, "law")
    with pytest.raises(TypeError, match="orbit_sensitivity: missing the argument wrt"):
        jf.orbit_sensitivity(quinn_orbit)
    with pytest.warns(DeprecationWarning, match="orbit_sensitivity: the keyword params is now wrt"):
        old = jf.orbit_sensitivity(quinn_orbit, params="law.mu")
    assert old["dissipation"] == jf.orbit_sensitivity(quinn_orbit, wrt="law.mu")["dissipation"]


def test_frequency_response_follows_den_hartog():
    """A continued frequency-response curve of the Coulomb-damped oscillator (Quinn's law,
    eps = dt / 2) against Den Hartog's closed form (1931), above resonance."""
    P, mu = 1.0, 0.3
    system = jf.Oscillator(law=jf.Quinn(mu=mu, eps=1e-3), force=jf.Harmonic(P, 1.6))
    start = jf.periodic_orbit(system, dt=4e-3, transient=60.0)
    branch = jf.continue_orbits(start, "force.omega", bounds=(1.55, 2.4), ds=0.1, ds_max=0.2)
    assert branch.attrs["status"] == "bounds reached" and branch.sizes["point"] >= 5
    omega = branch["force.omega"].values
    assert np.all(np.diff(omega) > 0) and not branch["fold"].any()
    assert np.all(branch["residual"].values < 1e-10)
    exact = np.array([jf.den_hartog_response(P, float(w), mu)[0] for w in omega if w <= 2.4])
    np.testing.assert_allclose(branch["amplitude"].values[: exact.size], exact, rtol=1.5e-3)
    # the dissipation per cycle of the non-sticking motion: 4 mu N X (Den Hartog)
    np.testing.assert_allclose(branch["dissipation"].values[: exact.size], 4 * mu * exact, rtol=1.5e-3)
    assert branch["stable"].all()
    ax = jf.plot_branch(branch)
    assert ax.get_xlabel() == "force.omega"
    with pytest.raises(ValueError, match="bounds"):
        jf.continue_orbits(start, "force.omega", bounds=(2.0, 3.0))
    with pytest.raises(ValueError, match="path"):
        jf.continue_orbits(start, "law", bounds=(0.0, 1.0))


@pytest.mark.slow
def test_steady_state_sweep_lanes_and_statuses(oscillator):
    """Steady-state lanes against the 50-cycle default where its transient has died out
    (sticking lanes: multipliers <= 0.6), IFT gradients against the 50-cycle forward-mode
    gradients, and lane statuses."""
    grid = {"law.mu": np.array([0.6, 0.9]), "force.amplitude": np.array([1.2, 1.6])}
    a = jf.sweep(oscillator, grid, wrt="law.mu", progress=False)
    b = jf.sweep(oscillator, grid, wrt="law.mu", progress=False, steady_state=True)
    assert (b["status"].values == 0).all() and float(b["residual"].max()) < 1e-12
    # the 50-cycle sweep's transient runs on its window's step h = T / ceil(T / dt), so its last
    # cycle is the orbit of the same RK4 map (on its own step, 49 T / ceil(49 T / dt), D was
    # 1e-6 off: in the stick band, h mu / eps = 0.5, the discrete orbit moves at first order in h)
    np.testing.assert_allclose(b["dissipation"].values, a["dissipation"].values, rtol=1e-8)  # 9e-10: decay left
    # the lanes' IFT gradients are the steady state's (central differences of re-solved orbits);
    # the 50-cycle forward-mode gradient is 2 % off at mu = 0.9 (its tangent has not settled)
    h, base = 1e-6, oscillator.with_parameters({"force.amplitude": 1.2})
    fd = (jf.periodic_orbit(base.with_parameters({"law.mu": 0.9 + h})).dissipation
          - jf.periodic_orbit(base.with_parameters({"law.mu": 0.9 - h})).dissipation) / (2 * h)
    assert float(b["grad_dissipation"].values[1, 0, 0]) == pytest.approx(fd, rel=1e-6)
    np.testing.assert_allclose(b["grad_dissipation"].values, a["grad_dissipation"].values, rtol=0.05)
    np.testing.assert_allclose(b["period"].values, 4 * math.pi, rtol=1e-14)
    assert b.attrs["steady_state"] == 1 and "residual" in b.attrs["observables"]
    # a lane that cannot converge in one Newton step from rest is flagged, its residual kept
    c = jf.sweep(oscillator, {"law.mu": np.array([0.3, 0.05])}, progress=False,
                 steady_state=jf.SteadyState(transient_cycles=0, max_steps=1))
    assert (c["status"].values == jf.STATUS_NOT_PERIODIC).all() and (c["residual"].values > 1e-6).all()
    assert "steady state not found" in c.attrs["flagged"]
    with pytest.raises(ValueError, match="steady_state"):
        jf.sweep(oscillator, grid, steady_state="yes")
    with pytest.raises(ValueError, match="steady_state"):
        jf.sweep(jf.template("belt"), {"law.mu_k": np.array([0.3])}, steady_state=True)


@pytest.mark.slow
def test_reproduce_den_hartog_cli(tmp_path):
    """``jaxfriction reproduce den-hartog`` on short branches: both sides of resonance against
    Den Hartog's closed form (~45 s, two compilations of the continuation: slow)."""
    import json

    from click.testing import CliRunner

    from jaxfriction.cli import main

    figure = tmp_path / "dh.png"
    result = CliRunner().invoke(main, ["reproduce", "den-hartog", "--json", "--r", "0.3", "--omega-range", "0.8",
                                       "1.3", "--gap", "0.12", "--figure", str(figure)])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    assert figure.stat().st_size > 10_000
    for side in ("below", "above"):
        b = numbers["branches"][f"r=0.3 {side}"]
        assert b["points"] >= 4 and b["status"] == "bounds reached" and b["max_residual"] < 1e-12
        assert b["points_with_closed_form"] == b["points"] and b["max_relative_gap_den_hartog"] < 5e-3
        assert b["all_stable"] and b["stick_fraction_max"] == 0.0
    below, above = numbers["branches"]["r=0.3 below"], numbers["branches"]["r=0.3 above"]
    assert below["omega_range"][1] <= 0.88 and above["omega_range"][0] >= 1.12
    bad = CliRunner().invoke(main, ["reproduce", "den-hartog", "--r", "0.9"])
    assert bad.exit_code != 0 and "ratios" in bad.output


def test_attractor_classes_of_known_signals():
    """``jf.attractor`` on windows whose class is known by construction: rest, a sine, a
    period-2 signal (a subharmonic), a quasi-periodic one (incommensurate frequencies)."""
    from types import SimpleNamespace

    ts = np.linspace(0.0, 100.0, 20001)
    one = SimpleNamespace(n_dof=1)

    def window(q, v):
        return SimpleNamespace(ys=np.stack([q, v], axis=1), system=one)

    cases = {0: (np.full_like(ts, 0.52), np.zeros_like(ts)),
             1: (np.sin(1.3 * ts), 1.3 * np.cos(1.3 * ts)),
             2: (np.sin(2 * ts) + 0.8 * np.sin(ts), 2 * np.cos(2 * ts) + 0.8 * np.cos(ts)),
             5: (np.sin(ts) + 0.5 * np.sin(math.sqrt(2) * ts), np.cos(ts))}
    for code, (q, v) in cases.items():
        assert int(jf.attractor(window(q, v))) == code, jf.ATTRACTORS[code]


def test_sweep_over_initial_conditions_and_basin_stability():
    """y0 paths crossed with a parameter: each lane is the run from its own y0 (against
    jf.simulate), the derivative wrt y0[1] against central differences, basin fractions
    and binomial standard errors."""
    tpl = jf.template("oscillator")
    xs, mus = np.array([0.0, 2.5]), np.array([0.3, 0.9])
    obs = {"final_position": jf.WINDOW_OBSERVABLES["final_position"], "attractor": jf.attractor}
    ds = jf.sweep(tpl, {"y0[0]": xs, "law.mu": mus}, t1=12.0, window=8.0, dt=0.01, y0=[0.0, 0.5],
                  observables=obs, wrt="y0[1]", gradient_of="final_position", progress=False)
    assert ds.attrs["kernel"] == "vmap" and (ds["status"].values == 0).all()
    for i, x in enumerate(xs):
        for j, mu in enumerate(mus):
            system = jf.set_parameters(tpl.system, {"law.mu": mu})

            def end(v0):
                return float(jf.simulate(system, [x, v0], 0.0, 12.0, dt=0.01).ys[-1, 0])

            assert float(ds["final_position"][i, j]) == pytest.approx(end(0.5), abs=1e-12)
    fd = (end(0.5 + 1e-6) - end(0.5 - 1e-6)) / 2e-6  # the last lane: y0 = (2.5, 0.5), mu = 0.9
    assert float(ds["grad_final_position"][1, 1, 0]) == pytest.approx(fd, rel=1e-5, abs=1e-8)
    out = jf.basin_stability(ds)  # forced and still in transient after 12 s: not yet periodic
    p = out["basin_stability"].sel(basin="non-periodic").values
    np.testing.assert_allclose(out["basin_stability"].sum("basin").values, 1.0)
    np.testing.assert_allclose(out["basin_stability_stderr"].sel(basin="non-periodic").values,
                               np.sqrt(p * (1 - p) / 2))
    assert out["basin_lanes"].values.tolist() == [2, 2]
    with pytest.raises(ValueError, match="y0\\[9\\]"):
        jf.sweep(tpl, {"y0[9]": xs}, progress=False)
    with pytest.raises(ValueError, match="variable"):
        jf.basin_stability(ds.drop_vars("attractor"))
