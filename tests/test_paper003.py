"""Paper 003's own models: Westermo-Udwadia in 1-D and Na et al.'s 2-D algorithm."""

import math

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

import jaxfriction as jf
from jaxfriction._exact.na_eltawil import na_eltawil_step

MU, G, W = 0.3, 9.81, 2 * math.pi
T = 2 * math.pi / W


def floor_block(amplitude, mu=MU):
    """The rigid block of paper 003 in 1-D, floor frame: x'' = -A sin(w t) + f."""
    return jf.Oscillator(law=jf.Coulomb(mu), force=jf.Harmonic(-amplitude, W), stiffness=0.0, normal=G)


def test_westermo_udwadia_stick_slip_closed_form():
    # A = 4 < 1.862 mu g: the block sticks until A sin(w t_s) = mu g, slides with
    # v = (A/w)(cos w t - cos w t_s) + mu g (t - t_s) until v(t_e) = 0, sticks again; mirrored
    # every half period (Westermo & Udwadia's periodic response, rigid block)
    a = 4.0
    traj = jf.simulate(floor_block(a), jnp.zeros(2), 0.0, 4 * T, 1e-3, solver=jf.WestermoUdwadia(), save_every=5)
    t_s = math.asin(MU * G / a) / W
    slide = lambda t: (a / W) * (math.cos(W * t) - math.cos(W * t_s)) + MU * G * (t - t_s)  # noqa: E731
    t_e = brentq(slide, t_s + 1e-9, t_s + T / 2)
    assert abs(a * math.sin(W * t_e)) <= MU * G  # it does stick at t_e

    def exact(t):
        k, tau = divmod(t, T / 2)
        return (-1) ** int(k) * slide(tau) if t_s <= tau <= t_e else 0.0

    ts, v = np.asarray(traj.ts), np.asarray(traj.velocity)
    np.testing.assert_allclose(v, [exact(t) for t in ts], atol=1e-11)
    assert int(traj.status) == 0 and np.max(np.abs(v)) > 0.15
    stuck = np.asarray(jf.stick_mask(traj, 1e-300))  # stick is exact: v == 0
    np.testing.assert_allclose(stuck[1:].mean(), 1 - 2 * (t_e - t_s) / T, atol=2 * 5e-3 / T)
    assert float(jf.relative_energy_residual(traj)) < 1e-12


def test_westermo_udwadia_continuous_sliding_closed_form():
    # A = 8 > mu g sqrt(1 + pi^2/4): after a transient the block slides without stopping,
    # v > 0 from t1 = (pi + arccos(pi mu g / 2A)) / w for half a period
    a = 8.0
    traj = jf.simulate(floor_block(a), jnp.zeros(2), 0.0, 10 * T, 1e-3, solver=jf.WestermoUdwadia(), save_every=5)
    t1 = (math.pi + math.acos(math.pi * MU * G / (2 * a))) / W

    def exact(t):
        k, tau = divmod(t - t1, T / 2)
        return (-1) ** int(k) * ((a / W) * (math.cos(W * (t1 + tau)) - math.cos(W * t1)) - MU * G * tau)

    ts, v = np.asarray(traj.ts), np.asarray(traj.velocity)
    err = [np.max(np.abs(v[m] - [exact(t) for t in ts[m]])) for m in (ts > 6 * T, ts > 9 * T)]
    assert err[1] < 1e-7 and err[1] < err[0] / 10  # the transient dies out geometrically


def test_westermo_udwadia_matches_event_driven_on_a_sliding_oscillator():
    # Westermo & Udwadia's sliding oscillator: mass on a spring, mu_s > mu_k, belt and force
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(0.4, 0.3), force=jf.Harmonic(0.5, 1.3), surface=jf.Constant(0.2),
                           stiffness=1.0, damping=0.05, normal=1.0)
    wu = jf.simulate(system, jnp.array([0.1, 0.0]), 0.0, 30.0, 0.01, solver=jf.WestermoUdwadia(), save_every=10)
    ed = jf.simulate(system, jnp.array([0.1, 0.0]), 0.0, 30.0, solver=jf.EventDriven(), saveat=jf.SaveAt(ts=wu.ts))
    np.testing.assert_allclose(wu.ys[:, :2], ed.ys[:, :2], atol=1e-9)
    np.testing.assert_allclose(wu.friction_dissipation, ed.friction_dissipation, atol=1e-9)
    assert 0.03 < float(jf.stick_fraction(wu, 1e-300)) < 0.9  # it sticks, exactly


def test_westermo_udwadia_gradients_match_finite_differences_and_vmap():
    @jax.jit  # its few operations on the run's end state compiled with the run, not one by one
    def final(p):
        mu, a = p
        traj = jf.simulate(floor_block(a, mu), jnp.zeros(2), 0.0, 1.7 * T, 1e-3, solver=jf.WestermoUdwadia(),
                           save_every=None)
        return traj.ys[-1, 0] + 3.0 * traj.ys[-1, 2]  # rest position + dissipated energy

    p = jnp.array([MU, 4.0])
    grad = jax.grad(final)(p)
    fd = [(final(p + d) - final(p - d)) / 2e-6 for d in 1e-6 * jnp.eye(2)]
    np.testing.assert_allclose(grad, fd, rtol=1e-5)
    assert np.all(np.abs(grad) > 1e-3)
    mus = jnp.array([0.2, 0.3, 0.35])
    batch = jax.vmap(lambda mu: final(jnp.array([mu, 4.0])))(mus)
    np.testing.assert_allclose(batch, [final(jnp.array([m, 4.0])) for m in mus], rtol=1e-12)


def test_na_eltawil_reduces_to_westermo_udwadia_in_one_dimension():
    # w''_y = 0: V_y stays 0 and counts as changing, eq. (7) is eq. (6) and case 2.1 sticks;
    # transitions are placed to a sub-step, h/20, so the difference is first order in h
    ground = jf.Harmonic(amplitude=jnp.array([4.0, 0.0]), omega=jnp.array([W, W]))
    block = jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=ground)
    errors = []
    for dt in (1e-3, 2e-4):
        na = jf.simulate(block, jnp.zeros(4), 0.0, 2.5, dt, solver=jf.NaEltawil2D(), save_every=1)
        wu = jf.simulate(floor_block(4.0), jnp.zeros(2), 0.0, 2.5, dt, solver=jf.WestermoUdwadia(), save_every=1)
        na_ys, wu_ys = np.asarray(na.ys), np.asarray(wu.ys)  # compared in NumPy: no program per op and shape
        assert float(np.max(np.abs(na_ys[:, [1, 3]]))) == 0.0
        np.testing.assert_allclose(jf.stick_fraction(na, 1e-300), jf.stick_fraction(wu, 1e-300), atol=2 * dt / 2.5)
        errors.append(float(np.max(np.abs(na_ys[:, 2] - wu_ys[:, 1]))))
    assert errors[0] < 2e-4 and 3.5 < errors[0] / errors[1] < 7


HARMONIC = jf.Harmonic(amplitude=jnp.array([3.0, 2.25]), omega=jnp.array([2 * math.pi, 3 * math.pi]),
                       phase=jnp.array([0.0, 0.5]))


def test_na_eltawil_paper_validation_case_against_exact_coulomb():
    # paper 003 Sec. 3: m = 1 kg, mu = 0.3, N = 9.81 N, dt = 0.2 ms; reference: Moreau-Jean at 1 us
    block = jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=HARMONIC)
    na = jf.simulate(block, jnp.zeros(4), 0.0, 3.0, 2e-4, solver=jf.NaEltawil2D(), save_every=1)
    ref = jf.simulate(block, jnp.zeros(4), 0.0, 3.0, 1e-6, solver=jf.MoreauJean(), save_every=200)
    err = np.max(np.abs(np.asarray(na.ys)[:, 2:4] - np.asarray(ref.ys)[:, 2:4]), axis=0)
    assert np.all(err < 0.02) and np.max(err) > 2e-3  # velocities agree, but not to first order in h
    assert abs(float(jf.stick_fraction(na, 1e-300)) - float(jf.stick_fraction(ref, 1e-300))) < 0.01
    assert float(jf.relative_energy_residual(na)) < 1e-5
    # the paper reports oscillation-free accelerations; as read here, the relative velocity's
    # y component, near 0 while x slides, flips every step or two (case 2.2 repeated: eq. (7)
    # drives it along w''_y, eq. (6) back), so the acceleration chatters where exact
    # Coulomb's is smooth; the spring model rings at sqrt(k_t / m) after transitions
    def extrema(tr):
        acc = np.diff(np.asarray(tr.ys[:, 2:4]), axis=0)
        return [int(np.sum(np.abs(np.diff(np.sign(np.diff(acc[:, i])))) > 0)) for i in (0, 1)]

    smfm = jf.simulate(jf.GriffinSpringBlock(ground=HARMONIC, mu=MU), jnp.zeros(4), 0.0, 3.0, 2e-4, save_every=1)
    mj = jf.simulate(block, jnp.zeros(4), 0.0, 3.0, 2e-4, solver=jf.MoreauJean(), save_every=1)
    assert max(extrema(mj)) < 50
    assert min(extrema(na)) > 500 and min(extrema(smfm)) > 2 * max(extrema(mj))
    # compiled as one program (evaluated op by op, each operation compiled a program of its own)
    cases = jax.jit(jax.vmap(lambda t, y: na_eltawil_step(block, MU, MU, t, y, 2e-4)[1]))(na.ts[:-1], na.ys[:-1])
    assert float(np.mean(np.asarray(cases) == 22)) > 0.1


def test_eq7_splits_the_limit_by_the_floor_acceleration_not_the_slip():
    # x-slip about to reverse, y-slip not (case 1.3): the force has magnitude mu m g but is
    # split by |w''_x| : |w''_y| and points along w''_x in x, against the slip in y
    block = jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=jf.Constant(jnp.array([4.0, 1.0])))
    y = block.as_state(jnp.array([0.0, 0.0, 1e-4, 0.05]))
    h = 1e-4
    # one compiled program (evaluated op by op, each operation compiled a program of its own)
    out, case = eqx.filter_jit(na_eltawil_step)(block, MU, MU, 0.0, y, h)
    assert int(case) == 13
    out, y = np.asarray(out), np.asarray(y)
    force = (out[2:4] - y[2:4]) / h + np.array([4.0, 1.0])  # block acceleration = f / m
    np.testing.assert_allclose(force, MU * G * np.array([4.0, -1.0]) / math.hypot(4.0, 1.0), rtol=1e-12)
    slip = np.array([1e-4, 0.05])  # exact Coulomb: -mu g V/|V|, almost all along -y
    angle = math.degrees(math.acos(-np.dot(force, slip) / (np.linalg.norm(force) * np.linalg.norm(slip))))
    assert 75 < angle < 77  # 76 degrees off the slip direction


def test_na_eltawil_is_not_rotation_invariant_exact_coulomb_is():
    values = jnp.asarray(np.random.default_rng(3).normal(size=(300, 2)) * 5.0)
    motion = jf.GroundMotion(values=values, dt=0.01)

    def sliding(solver, theta):
        # the angle as an array, also 0: one compiled run per solver (a literal 0.0 is static, another program)
        ground = eqx.tree_at(lambda m: m.rotation, motion, jnp.asarray(theta))
        block = jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=ground)
        traj = jf.simulate(block, jnp.zeros(4), 0.0, 3.0, 1e-3, solver=solver, save_every=10)
        return float(jnp.max(jnp.linalg.norm(traj.ys[:, 0:2], axis=1)))

    thetas = (0.0, 0.4, 0.8)
    mj = [sliding(jf.MoreauJean(), th) for th in thetas]
    na = [sliding(jf.NaEltawil2D(), th) for th in thetas]
    np.testing.assert_allclose(mj, mj[0], rtol=1e-9)
    assert np.ptp(na) / np.mean(na) > 1e-3
    np.testing.assert_allclose(na, mj, rtol=0.05)


def test_solver_arguments_are_checked():
    block = jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=HARMONIC)
    with pytest.raises(ValueError, match="NaEltawil2D integrates a BlockOnShakingFloor with VectorCoulomb"):
        jf.simulate(floor_block(4.0), jnp.zeros(2), 0.0, 1.0, 1e-3, solver=jf.NaEltawil2D())
    with pytest.raises(ValueError, match="NaEltawil2D integrates"):
        jf.simulate(jf.BlockOnShakingFloor(law=jf.VectorQuinn(MU, 0.01), ground=HARMONIC), jnp.zeros(4), 0.0, 1.0,
                    1e-3, solver=jf.NaEltawil2D())
    for viscous in (0.1, jnp.array(0.1)):  # a float or an array (the run is compiled with arrays)
        with pytest.raises(ValueError, match="law.viscous must be 0"):
            jf.simulate(jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU, viscous), ground=HARMONIC), jnp.zeros(4), 0.0,
                        1.0, 1e-3, solver=jf.NaEltawil2D())
    with pytest.raises(ValueError, match="substeps must be an integer >= 1"):
        jf.NaEltawil2D(substeps=0)
    with pytest.raises(ValueError, match="Oscillator for WestermoUdwadia"):
        jf.simulate(block, jnp.zeros(4), 0.0, 1.0, 1e-3, solver=jf.WestermoUdwadia())
    with pytest.raises(ValueError, match="law must be Coulomb"):
        jf.simulate(jf.Oscillator(law=jf.Quinn(MU, 0.01)), jnp.zeros(2), 0.0, 1.0, 1e-3, solver=jf.WestermoUdwadia())
    with pytest.raises(ValueError, match="dt"):
        jf.simulate(block, jnp.zeros(4), 0.0, 1.0, -1e-3, solver=jf.NaEltawil2D())


def test_quake_methods():
    values = jnp.asarray(np.random.default_rng(5).normal(size=(200, 2)) * 4.0)
    motion = jf.GroundMotion(values=values, dt=0.01, name="noise")
    out = {m: jf.quake_response(motion, MU, method=m, dt=1e-3, tail=1.0)[1] for m in
           ("quinn", "moreau-jean", "griffin-spring", "na-eltawil")}
    assert all(s["status"] == 0 and s["scheme"] == m for m, s in out.items())
    exact = out["moreau-jean"]["peak_sliding"]
    assert exact > 1e-3
    for m, tol in (("quinn", 0.05), ("na-eltawil", 0.05), ("griffin-spring", 0.25)):
        assert abs(out[m]["peak_sliding"] - exact) < tol * exact, m
    assert jf.quake_response(motion, MU, exact=True, dt=1e-3, tail=1.0)[1] == out["moreau-jean"]
    with pytest.raises(ValueError, match="method must be one of"):
        jf.quake_response(motion, MU, method="abaqus")
    with pytest.raises(ValueError, match="exact=True means"):
        jf.quake_response(motion, MU, exact=True, method="quinn")


@pytest.mark.slow  # moved out of the fast default (suite time); Na et al.'s validation case stays fast
def test_reproduce_na2d_cli(tmp_path):
    import json

    from click.testing import CliRunner

    from jaxfriction.cli import main

    figure = tmp_path / "na2d.png"
    result = CliRunner().invoke(main, ["reproduce", "na2d", "--json", "--t1", "0.5", "--figure", str(figure)])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    methods = numbers["methods"]
    assert figure.stat().st_size > 10_000
    assert max(methods["moreau-jean"]["max_velocity_error"]) < 5e-4 > max(methods["quinn"]["max_velocity_error"])
    assert max(methods["na-eltawil"]["max_velocity_error"]) > 1e-3  # V_y held at 0 after it crosses
    assert methods["na-eltawil"]["case_fractions"]["2.2"] > 0.1
    assert min(methods["griffin-spring"]["acceleration_extrema"]) > 3 * max(methods["moreau-jean"]["acceleration_extrema"])
    bad = CliRunner().invoke(main, ["reproduce", "na2d", "--dt", "0"])
    assert bad.exit_code != 0 and "dt" in bad.output
