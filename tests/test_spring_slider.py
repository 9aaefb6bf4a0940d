"""Rate-and-state friction on the spring-slider: closed forms, linear stability, velocity steps."""

import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction._reproduce.rate_state import (
    STABILITY,
    STEP,
    V,
    law,
    oscillation_fit,
    stability_system,
    step_system,
    velocity_controlled_friction,
)

EVOLUTIONS = ["aging", "slip"]


def test_step_drive():
    sharp = jf.Step(1.0, 3.0, t_step=2.0)
    assert [float(sharp(t)) for t in (0.0, 1.999, 2.0, 5.0)] == [1.0, 1.0, 3.0, 3.0]
    smooth = jf.Step(1.0, 3.0, t_step=2.0, width=0.1)
    assert float(smooth(2.0)) == pytest.approx(2.0, abs=1e-15)
    assert float(smooth(2.3)) == pytest.approx(1.0 + 2.0 * 0.5 * (1 + np.tanh(3.0)), rel=1e-15)
    traced = jax.jit(lambda w, t: jf.Step(1.0, 3.0, 2.0, w)(t))  # a traced zero width is the sharp step
    assert float(traced(0.0, 2.0)) == 3.0 and float(traced(0.0, 1.9)) == 1.0
    assert np.isfinite(float(jax.grad(lambda w: jf.Step(1.0, 3.0, 2.0, w)(2.1))(0.1)))
    with pytest.raises(ValueError, match="width"):
        jf.Step(1.0, 2.0, 0.0, width=-1.0)


def test_construction_errors():
    with pytest.raises(ValueError, match="load"):
        jf.SpringSlider(law=jf.RateState(), load=1.0)
    with pytest.raises(ValueError, match="stiffness"):
        jf.SpringSlider(law=jf.RateState(), stiffness=0.0)
    with pytest.raises(ValueError, match="scalar law"):
        jf.SpringSlider(law=jf.VectorQuinn(0.3, 0.01))
    with pytest.raises(ValueError, match="RateState"):
        jf.SpringSlider(law=jf.Quinn(0.5, 0.01)).critical_stiffness()


@pytest.mark.parametrize("evolution", EVOLUTIONS)
def test_steady_sliding_through_the_system(evolution):
    # from a state far from steady sliding (psi = 0 and v = V_0 = V / 10: steady at V_0) the stable
    # slider (k = 2 k_c) relaxes to v = V, mu = mu_ss(V) = mu_0 + (a - b) ln(V / V_0). Not from
    # rest: at v = 0 the regularized law's slip-rate stiffness N a exp(mu / a) / (2 m V_0) is
    # ~1e26 and an RK4 step from there is flagged STATUS_UNSTABLE_STEP (test_step_honesty.py)
    system = jf.set_parameters(stability_system(evolution), {"stiffness": 2.0})
    rs = system.law
    traj = jf.simulate(system, jnp.array([0.5, rs.V_0, 0.0]), 0.0, 2000.0, dt=1e-2, save_every=None)
    mu_ss = rs.mu_0 + (rs.a - rs.b) * np.log(V / rs.V_0)
    assert int(traj.status) == 0
    assert float(-traj.friction_force[-1] / system.normal) == pytest.approx(mu_ss, rel=1e-12)
    assert float(traj.velocity[-1]) == pytest.approx(V, rel=1e-10)
    assert float(traj.position[-1]) == pytest.approx(mu_ss * system.normal / system.stiffness, rel=1e-12)
    np.testing.assert_allclose(system.steady_sliding(), traj.ys[-1, :3], rtol=1e-10)


@pytest.mark.parametrize("evolution", EVOLUTIONS)
@pytest.mark.parametrize("mass", [1.0, 1e-3])
def test_linearization_matches_the_closed_form(evolution, mass):
    # eigenvalues of jax.jacobian of the vector field at steady sliding against the roots of
    # lambda^3 + A lambda^2 + B lambda + C; at k_c the pair is +- i omega_c
    base = jf.set_parameters(stability_system(evolution), {"mass": mass})
    kc = float(base.critical_stiffness())
    rs = base.law
    quasi_static = base.normal * (rs.b - rs.a) / rs.D_c
    assert kc == pytest.approx(quasi_static * (1 + mass * V**2 / (base.normal * rs.a * rs.D_c)), rel=1e-15)
    for ratio in (0.5, 0.9, 1.0, 1.1, 3.0):
        system = jf.set_parameters(base, {"stiffness": ratio * kc})
        y = system.as_state(system.steady_sliding())
        assert np.max(np.abs(np.asarray(system.vector_field(0.0, y)[:3]))) < 1e-14
        jac = jax.jacobian(lambda x: system.vector_field(0.0, jnp.concatenate([x, y[3:]]))[:3])(y[:3])
        numeric = np.linalg.eigvals(np.asarray(jac))
        numeric = numeric[np.argsort(-numeric.real)]
        closed = system.linear_eigenvalues()
        np.testing.assert_allclose(numeric, closed, rtol=1e-9, atol=1e-12 * np.abs(closed).max())
        lead = closed[0]
        assert abs(lead.imag) > 0 and closed[2].real < 0 and closed[2].imag == 0
        assert np.sign(lead.real) == np.sign(1.0 - ratio) or ratio == 1.0
        if ratio == 1.0:
            A, B, C = (float(c) for c in system.linear_coefficients())
            assert A * B == pytest.approx(C, rel=1e-12)
            assert abs(lead.real) < 1e-12 * abs(lead)
            assert abs(lead.imag) == pytest.approx(float(system.critical_frequency()), rel=1e-12)
            assert float(system.critical_frequency()) ** 2 == pytest.approx(B, rel=1e-12)


@pytest.mark.parametrize("evolution", EVOLUTIONS)
def test_perturbations_grow_below_k_c_and_decay_above_at_the_linear_rates(evolution):
    # a 1e-7 perturbation of the stretch; the leading pair's growth rate and frequency from the
    # peaks of v - V (measured relative errors ~1e-6 at 0.9 and 1.1; 4e-9 in omega at k_c)
    ratios = (0.9, 1.0, 1.1)
    kc = float(stability_system(evolution).critical_stiffness())

    def run(k):
        system = jf.set_parameters(stability_system(evolution), {"stiffness": k})
        y0 = system.steady_sliding().at[0].multiply(1.0 + STABILITY["perturbation"])
        traj = jf.simulate(system, y0, 0.0, 200.0, STABILITY["dt"], save_every=1)
        return traj.ts, traj.ys[:, 1], traj.status

    ts, vs, status = jax.jit(jax.vmap(run))(jnp.asarray(ratios) * kc)
    assert np.all(np.asarray(status) == 0)
    ts, fit = np.asarray(ts[0]), np.asarray(ts[0]) >= STABILITY["t_fit"]
    for ratio, v in zip(ratios, np.asarray(vs)):
        lam = stability_system(evolution, ratio).linear_eigenvalues()[0]
        rate, omega, peaks = oscillation_fit(ts[fit], v[fit] - V)
        assert peaks >= 15
        assert omega == pytest.approx(abs(lam.imag), rel=1e-5)
        if ratio == 1.0:
            assert abs(rate) < 1e-7  # neutral: the period is 2 pi / omega_c
            assert 2 * np.pi / omega == pytest.approx(2 * np.pi / float(stability_system(evolution).critical_frequency()),
                                                      rel=1e-6)
        else:
            assert np.sign(rate) == np.sign(1.0 - ratio)
            assert rate == pytest.approx(lam.real, rel=1e-3)


def _independent_rhs(t, y, p):
    """The step slider written out independently of the library: unregularized law, and the
    block's velocity in log form, ``y = (delta, ln v, psi)`` (keeps ``v > 0`` in Newton iterates)."""
    delta, w, psi = y[0], y[1], y[2]
    v = jnp.exp(w)
    load = p["V1"] + (p["V2"] - p["V1"]) * 0.5 * (1 + jnp.tanh((t - p["t_step"]) / p["width"]))
    mu = p["mu_0"] + p["a"] * (w - jnp.log(p["V_0"])) + p["b"] * psi
    if p["evolution"] == "aging":
        psi_dot = (p["V_0"] * jnp.exp(-psi) - v) / p["D_c"]
    else:
        psi_dot = -(v / p["D_c"]) * (psi + w - jnp.log(p["V_0"]))
    return jnp.stack([load - v, (p["k"] * delta - p["N"] * mu) / (p["m"] * v), psi_dot])


@pytest.mark.parametrize("evolution", EVOLUTIONS)
def test_velocity_step_transient(evolution):
    # V -> 10 V on a stiff, light machine (k = 1000 N (b - a)/D_c, m = 1e-5 kg): RK4 at 1e-5 s
    # against an independent adaptive Tsit5 solve (rtol 1e-10) of the equations written out in
    # (delta, ln v, psi) (measured gap in mu: 7e-8 inside the 0.1 ms ramp of the load, 1.2e-8 after), the direct effect
    # a ln e in the peak (measured 0.023029 aging, 0.022945 slip vs 0.023026: the machine's
    # finite stiffness) and the evolution of the velocity-controlled closed form (measured
    # largest gap 8.6e-5 aging, 1.7e-4 slip, out of b ln e = 0.035), energy residual 1.4e-13
    e = 10.0
    system = step_system(evolution, e)
    rs = system.law
    t1 = STEP["t_step"] + 3 * rs.D_c / (e * V)
    traj = jf.simulate(system, system.steady_sliding(), 0.0, t1, STEP["dt"], save_every=10)
    assert int(traj.status) == 0
    ts, mu = np.asarray(traj.ts), -np.asarray(traj.friction_force) / system.normal
    p = dict(V1=V, V2=e * V, t_step=STEP["t_step"], width=STEP["width"], mu_0=rs.mu_0, a=rs.a, b=rs.b, V_0=rs.V_0,
             D_c=rs.D_c, k=system.stiffness, N=system.normal, m=system.mass, evolution=evolution)
    y0 = system.steady_sliding()
    sol = diffrax.diffeqsolve(diffrax.ODETerm(_independent_rhs), diffrax.Tsit5(), 0.0, t1, 1e-6,
                              y0.at[1].set(jnp.log(y0[1])), args=p, saveat=diffrax.SaveAt(ts=jnp.asarray(ts)),
                              stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-13), max_steps=100_000)
    y = np.asarray(sol.ys)
    mu_ref = rs.mu_0 + rs.a * (y[:, 1] - np.log(rs.V_0)) + rs.b * y[:, 2]
    np.testing.assert_allclose(mu, mu_ref, rtol=0, atol=1.5e-7)
    mu_before = rs.mu_0 + (rs.a - rs.b) * np.log(V / rs.V_0)
    assert mu[0] == pytest.approx(mu_before, rel=1e-14)
    assert mu.max() - mu_before == pytest.approx(rs.a * np.log(e), rel=5e-3)
    after = ts >= STEP["t_step"] + 0.2 * rs.D_c / (e * V)
    closed = velocity_controlled_friction(rs, V, e * V, ts[after] - STEP["t_step"])
    assert np.max(np.abs(mu[after] - closed)) < 2.5e-4
    assert float(jf.relative_energy_residual(traj)) < 1e-11


def test_stiff_velocity_step_needs_an_implicit_solver():
    # the light block relaxes at N a / (m V) = 1e5 /s: RK4 at dt = 1e-3 (100 steps per D_c / (e V))
    # blows up; Kvaerno5 (implicit, adaptive) through simulate matches RK4 at 1e-5 s
    system = step_system("aging", 10.0)
    y0, t1 = system.steady_sliding(), STEP["t_step"] + 0.2
    coarse = jf.simulate(system, y0, 0.0, t1, 1e-3, save_every=None)
    assert int(coarse.status) != 0
    fine = jf.simulate(system, y0, 0.0, t1, STEP["dt"], save_every=None)
    implicit = jf.simulate(system, y0, 0.0, t1, 1e-6, solver=diffrax.Kvaerno5(), saveat=jf.SaveAt(n=1))
    assert int(implicit.status) == 0
    np.testing.assert_allclose(implicit.ys[-1, :3], fine.ys[-1, :3], rtol=1e-7)
    assert float(jf.relative_energy_residual(implicit)) < 1e-8


@pytest.mark.parametrize("load", [jf.Step(V, 3 * V, 5.0, 0.5), jf.Step(V, V / 3, 5.0)], ids=["up", "down-sharp"])
def test_energy_balance(load):
    # W_input = int k delta V dt = Delta E_mech + E_friction (measured 1.4e-11 for the sharp step:
    # RK4 takes the jump inside a step, first order there)
    system = jf.SpringSlider(law=law("slip"), load=load, mass=1.0, stiffness=2.0, normal=1.0)
    y0 = system.steady_sliding(V)
    traj = jf.simulate(system, y0, 0.0, 30.0, dt=1e-3, save_every=100)
    assert int(traj.status) == 0
    assert float(jf.relative_energy_residual(traj)) < 1e-9
    assert float(traj.friction_dissipation[-1]) > 0
    work = np.trapezoid(np.asarray(system.stiffness * traj.position * jax.vmap(load)(traj.ts)), np.asarray(traj.ts))
    # trapezoid on the saved 0.1 s grid: 1e-4 for the smooth load, 3e-3 across the sharp jump
    assert float(traj.input_work[-1]) == pytest.approx(work, rel=1e-4 if load.width else 5e-3)


def test_a_static_law_spring_slider_slides_at_its_kinetic_friction():
    system = jf.SpringSlider(law=jf.Quinn(0.4, 1e-3), load=jf.Constant(0.5), mass=1.0, stiffness=4.0, normal=2.0)
    y0 = system.steady_sliding()
    assert float(y0[0]) == pytest.approx(0.4 * 2.0 / 4.0, rel=1e-14)
    traj = jf.simulate(system, y0, 0.0, 5.0, dt=1e-3, save_every=None)
    np.testing.assert_allclose(traj.ys[-1, :2], y0, rtol=1e-12)


def test_gradients_match_finite_differences():
    # friction 2 s after a velocity step V -> 3 V on the m = 1 kg slider (k = 2 k_c), by
    # reverse mode through RK4, against central differences
    base = eqx.tree_at(lambda s: s.load, stability_system("aging", 2.0), jf.Step(V, 3 * V, 1.0, 0.05))

    def observable(params):
        system = jf.set_parameters(base, params)
        traj = jf.simulate(system, system.steady_sliding(V), 0.0, 3.0, dt=1e-2, save_every=None)
        return traj.friction_force[-1] + 10.0 * traj.ys[-1, 2]

    params = {"law.a": 0.01, "law.b": 0.015, "law.D_c": 1e-2, "stiffness": 2.0}
    observable = jax.jit(observable)
    grad = jax.grad(observable)(params)
    for path, value in params.items():
        h = 1e-5 * value
        fd = (observable({**params, path: value + h}) - observable({**params, path: value - h})) / (2 * h)
        assert np.isfinite(float(grad[path]))
        assert float(grad[path]) == pytest.approx(float(fd), rel=1e-6, abs=1e-10), path


@pytest.mark.slow  # moved out of the fast default (suite time); the stability closed forms stay fast
def test_reproduce_rate_state_cli(tmp_path):
    import json

    from click.testing import CliRunner

    from jaxfriction.cli import main

    figure = tmp_path / "rs.png"
    result = CliRunner().invoke(main, ["reproduce", "rate-state", "--json", "--evolution", "slip", "--ratio", "0.9",
                                       "--ratio", "1.1", "--figure", str(figure)])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    step = numbers["laws"]["slip"]["step"]
    assert step["status"] == 0 and step["energy_residual"] < 1e-11
    assert step["peak_rise"] == pytest.approx(numbers["direct_effect"], rel=5e-3)  # measured 0.022945 vs 0.023026
    assert step["max_gap_to_velocity_controlled"] < 2.5e-4  # measured 1.7e-4
    stab = numbers["laws"]["slip"]["stability"]
    assert stab["k_c"] == pytest.approx(2 * stab["k_c_quasi_static"], rel=1e-12)  # m V^2 / (N a D_c) = 1
    for point in stab["points"]:
        assert point["growth_rate"] == pytest.approx(point["theory_growth_rate"], rel=1e-3)
        assert point["omega"] == pytest.approx(point["theory_omega"], rel=1e-5)
    assert figure.stat().st_size > 10_000
    bad = CliRunner().invoke(main, ["reproduce", "rate-state", "--e", "0", "--figure", str(tmp_path / "x.png")])
    assert bad.exit_code != 0 and "Traceback" not in bad.output and "e" in bad.output
