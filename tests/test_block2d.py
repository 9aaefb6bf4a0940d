import math
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction import default_eps, fragility_sweep, quake_response
from jaxfriction.cli import main

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ground_motions"
needs_data = pytest.mark.skipif(not DATA.exists(), reason="shared ground-motion data not present")
# PGA (cm/s^2) of each component, from the data README
RECORDS = {"elcentro": (6000, 307, 211), "erzikan": (4260, 506, 486), "jiji": (18000, 502, 362),
           "kobe": (6000, 825, 619), "newhall": (6000, 722, 643), "rinaldi": (6000, 824, 467),
           "sylmar": (6000, 858, 593)}
M, MU, G = 1.0, 0.3, 9.81
# paper 003 prints no floor motion; this one (1 Hz in x, 1.5 Hz in y) gives frequent stick-slip
HARMONIC = jf.Harmonic(amplitude=jnp.array([3.0, 2.25]), omega=jnp.array([2 * math.pi, 3 * math.pi]),
                       phase=jnp.array([0.0, 0.5]))


@needs_data
@pytest.mark.parametrize("name", sorted(RECORDS))
def test_loader_reads_every_shared_record(name):
    motion = jf.load_ground_motion(DATA / f"{name}.txt")
    n, pga_fn, pga_fp = RECORDS[name]
    assert motion.values.shape == (n, 2) and motion.dt == 0.005
    np.testing.assert_allclose(np.abs(np.asarray(motion.values)).max(axis=0) / 0.01, [pga_fn, pga_fp], atol=1.0)


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("% dt=0.005 sec\n1.0 2.0\n1.0 abc\n", 3, "non-numeric"),
        ("% header\n1.0 2.0\n1.0 2.0 3.0\n", 3, "expected 2 columns"),
        ("1.0 2.0\nnan 2.0\n", 2, "non-finite"),
        ("% Acc. in cm/sec^2 and dt=0.01 sec.\n1 2\n3 4\n", 1, "dt"),
    ],
)
def test_malformed_two_column_files_name_file_and_line(tmp_path, text, line, what):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"bad\.txt:{line}: .*{what}"):
        jf.load_ground_motion(path)


def test_crlf_tabs_and_zero_rows(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_bytes(b"%c\r\n1.00E+00\t\t-2.0\r\n0\t0\r\n  3.5   4.5\r\n")
    motion = jf.load_ground_motion(path)
    np.testing.assert_allclose(motion.values, [[0.01, -0.02], [0, 0], [0.035, 0.045]])
    np.testing.assert_allclose(motion(0.0025), [0.005, -0.01])  # linear interpolation
    np.testing.assert_allclose(motion(1.0), [0.0, 0.0])  # after the record the floor is still


def test_at2_files(tmp_path):
    good = tmp_path / "rec.AT2"
    good.write_text("PEER NGA\nevent\nACCELERATION TIME SERIES IN UNITS OF G\nNPTS=    5, DT=   .0100 SEC\n"
                    " .1 .2 .3\n .4 .5\n")
    motion = jf.load_ground_motion(good)
    assert motion.dt == 0.01 and motion.values.shape == (5, 1)
    np.testing.assert_allclose(motion.values[:, 0], np.array([0.1, 0.2, 0.3, 0.4, 0.5]) * 9.80665)
    bad = tmp_path / "bad.AT2"
    bad.write_text("a\nb\nc\nno header here\n .1\n")
    with pytest.raises(ValueError, match=r"bad\.AT2:4: .*NPTS"):
        jf.load_ground_motion(bad)
    short = tmp_path / "short.AT2"
    short.write_text("a\nb\nc\nNPTS= 3, DT= .01\n .1 .2\n")
    with pytest.raises(ValueError, match="NPTS=3"):
        jf.load_ground_motion(short)


@pytest.mark.parametrize("law", [jf.VectorQuinn(0.3, 0.01), jf.VectorCoulomb(0.3, 0.2), jf.VectorThrelfall(0.3, 0.05)],
                         ids=lambda l: type(l).__name__)
def test_vector_laws_properties(law):
    rng = np.random.default_rng(0)
    v = rng.normal(size=(2000, 2)) * rng.choice([1e-4, 1e-2, 1.0], size=(2000, 1))
    v[:200] = 0.0
    f = rng.normal(size=(2000, 2)) * 4.0
    out = law(jnp.asarray(v), jnp.asarray(f), 9.81)
    assert out.shape == (2000, 2)
    np.testing.assert_allclose(law(-jnp.asarray(v), -jnp.asarray(f), 9.81), -out, atol=1e-12)
    assert np.all(np.linalg.norm(out, axis=1) <= np.asarray(law.bound(jnp.asarray(v), 9.81)) * (1 + 1e-12) + 1e-12)
    if law.keeps_coulomb_structure:  # at zero slip: f_eq projected onto the static disc
        limit = 0.3 * 9.81
        n = np.linalg.norm(f[:200], axis=1, keepdims=True)
        np.testing.assert_allclose(out[:200], np.where(n <= limit, f[:200], f[:200] * limit / n), atol=1e-12)
    for arg in (0, 1):  # finite gradients at zero slip and zero f_eq
        for point in (jnp.zeros(2), jnp.array([1e-300, 0.0])):
            g = jax.jacfwd(lambda x: law(x, jnp.zeros(2), 9.81) if arg == 0 else law(jnp.zeros(2), x, 9.81))(point)
            assert np.all(np.isfinite(g))


def test_vector_laws_reduce_to_scalar_laws_on_one_axis():
    v = jnp.linspace(-0.05, 0.05, 101)
    f = jnp.linspace(4.0, -4.0, 101)
    z = jnp.zeros_like(v)
    pairs = [(jf.VectorQuinn(0.3, 0.01), jf.Quinn(0.3, 0.01)), (jf.VectorCoulomb(0.3, 0.2), jf.ViscousCoulomb(0.3, 0.2)),
             (jf.VectorThrelfall(0.3, 0.02), jf.Threlfall(0.3, 0.02))]
    for vec, scalar in pairs:
        out = vec(jnp.stack([v, z], -1), jnp.stack([f, z], -1), 9.81)
        np.testing.assert_allclose(out[:, 0], scalar(v, f, 9.81), atol=1e-12)
        np.testing.assert_allclose(out[:, 1], 0.0, atol=1e-15)
    # Threlfall is smooth through zero: Jacobian -3 mu N / (v0 (1 - e^-3)) I
    jac = jax.jacfwd(lambda x: jf.VectorThrelfall(0.3, 0.02)(x, jnp.zeros(2), 9.81))(jnp.zeros(2))
    np.testing.assert_allclose(jac, -3 * 0.3 * 9.81 / (0.02 * -math.expm1(-3)) * np.eye(2), rtol=1e-12)


def test_one_dimensional_motion_reproduces_the_scalar_solver():
    ground = jf.Harmonic(amplitude=jnp.array([4.0, 0.0]), omega=jnp.array([2 * math.pi, 2 * math.pi]))
    block = jf.BlockOnShakingFloor(law=jf.VectorQuinn(MU, 0.01), ground=ground)
    scalar = jf.Oscillator(law=jf.Quinn(MU, 0.01), force=jf.Harmonic(amplitude=-4.0, omega=2 * math.pi), normal=M * G, stiffness=0.0)
    a = jf.simulate(block, jnp.zeros(4), 0.0, 3.0, 1e-3, save_every=10)
    b = jf.simulate(scalar, jnp.zeros(2), 0.0, 3.0, 1e-3, save_every=10)
    np.testing.assert_allclose(a.ys[:, 0], b.ys[:, 0], atol=1e-13)
    np.testing.assert_allclose(a.ys[:, 2], b.ys[:, 1], atol=1e-13)
    np.testing.assert_allclose(a.ys[:, 1], 0.0, atol=1e-15)
    assert float(jnp.max(jnp.abs(a.ys[:, 0]))) > 0.01  # it does slide


def test_floor_acceleration_below_mu_g_gives_no_sliding():
    ground = jf.Harmonic(amplitude=jnp.array([2.0, 1.5]), omega=jnp.array([5.0, 7.0]))  # |a_g| <= 2.5 < 2.943
    quinn = jf.simulate(jf.BlockOnShakingFloor(law=jf.VectorQuinn(MU, 0.01), ground=ground), jnp.zeros(4), 0.0, 5.0, 1e-3)
    exact = jf.simulate(jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=ground), jnp.zeros(4), 0.0,
                                 5.0, 1e-3, solver=jf.MoreauJean())
    assert float(jnp.max(jnp.abs(quinn.ys[:, :4]))) < 1e-14
    assert float(jnp.max(jnp.abs(exact.ys[:, :4]))) == 0.0


def test_rotating_the_input_rotates_the_output():
    values = jnp.asarray(np.random.default_rng(3).normal(size=(400, 2)) * 5.0)
    motion = jf.GroundMotion(values=values, dt=0.01)
    theta = 0.7
    rotated = eqx.tree_at(lambda m: m.rotation, motion, theta)
    run = lambda m: jf.simulate(jf.BlockOnShakingFloor(law=jf.VectorQuinn(MU, 0.01), ground=m), jnp.zeros(4), 0.0,  # noqa: E731
                                4.0, 1e-3, save_every=50)
    a, b = run(motion), run(rotated)
    r = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    np.testing.assert_allclose(b.ys[:, 0:2], a.ys[:, 0:2] @ r.T, atol=1e-12)
    assert float(jnp.max(jnp.abs(a.ys[:, 0:2]))) > 1e-3


def test_paper_003_case_quinn_smfm_and_exact():
    # m = 1 kg, mu = 0.3, N = 9.81 N, dt = 0.2 ms, SMFM k_t = 40000 N/m; harmonic floor in x and y
    dt = 2e-4
    kw = {"t0": 0.0, "t1": 3.0, "dt": dt, "save_every": 1}
    quinn = jf.simulate(jf.BlockOnShakingFloor(law=jf.VectorQuinn(MU, default_eps(MU, dt)), ground=HARMONIC),
                        jnp.zeros(4), **kw)
    exact = jf.simulate(jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=HARMONIC), jnp.zeros(4), **kw, solver=jf.MoreauJean())
    smfm = jf.simulate(jf.GriffinSpringBlock(ground=HARMONIC, mu=MU, k_t=40000.0), jnp.zeros(4), **kw)
    assert float(jnp.max(jnp.abs(quinn.ys[:, 2:4] - exact.ys[:, 2:4]))) < 5e-3  # velocities agree
    assert float(jnp.max(jnp.abs(smfm.ys[:, 2:4] - exact.ys[:, 2:4]))) < 2e-2
    # the block's absolute acceleration f / m: the spring model rings at sqrt(k_t / m) after each
    # transition (paper 003 Fig. 2), the regularized law does not
    def extrema(traj):
        d = np.diff(np.asarray(traj.friction_force) / M, axis=0)
        return int(np.sum(d[1:] * d[:-1] < 0))
    assert extrema(smfm) > 5 * extrema(quinn)
    assert extrema(quinn) <= extrema(exact) + 4
    assert float(jf.stick_fraction(quinn, 1e-4)) > 0.3 > float(jf.stick_fraction(smfm, 1e-4))
    assert float(jf.relative_energy_residual(quinn)) < 1e-8
    # the spring's force passes a kink where it reaches the disc: RK4 is second order there
    assert float(jf.relative_energy_residual(smfm)) < 1e-4
    assert float(jnp.max(jnp.linalg.norm(smfm.friction_force, axis=-1))) <= MU * M * G * (1 + 1e-12)


def test_fragility_sweep_is_one_batched_call():
    values = jnp.asarray(np.random.default_rng(5).normal(size=(300, 2)) * 3.0)
    motion = jf.GroundMotion(values=values, dt=0.01, name="noise")
    out = fragility_sweep(motion, [0.1, 0.3, 0.6], [0.5, 1.0, 2.0], dt=2e-3)
    r = out["residual_sliding"]
    assert r.shape == (3, 3) and np.all(np.isfinite(r))
    assert np.all(np.diff(out["peak_sliding"], axis=1) > 0)  # larger records slide more
    assert np.all(np.diff(out["peak_sliding"], axis=0) < 0)  # more friction slides less


@needs_data
def test_quake_cli_on_a_record(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXFRICTION_DATA", str(DATA))
    result = CliRunner().invoke(main, ["quake", "kobe", "--json", "--dt", "2e-3", "--figure", str(tmp_path / "k.png")])
    assert result.exit_code == 0, result.output
    import json
    summary = json.loads(result.output)
    assert 0.3 < summary["peak_sliding"] < 0.45 and summary["status"] == 0
    bad = CliRunner().invoke(main, ["quake", "no-such-record"])
    assert bad.exit_code != 0 and "Error: no ground-motion record" in bad.output


@needs_data
@pytest.mark.slow
def test_every_record_quinn_against_exact():
    for name in RECORDS:
        motion = jf.load_ground_motion(DATA / f"{name}.txt")
        _, q = quake_response(motion, MU)
        _, e = quake_response(motion, MU, exact=True)
        assert q["status"] == e["status"] == 0
        assert abs(q["peak_sliding"] - e["peak_sliding"]) <= 0.02 * e["peak_sliding"] + 1e-4, name


def test_three_dimensional_contact_with_tangential_projection():
    n = jnp.array([0.0, 0.0, 1.0])
    v = jf.tangential_projection(jnp.array([0.3, -0.4, 2.0]), n)  # the normal part is removed
    np.testing.assert_allclose(v, [0.3, -0.4, 0.0])
    f = jf.vector_quinn(v, jnp.zeros(3), 2.0, 0.5, 0.01)
    np.testing.assert_allclose(f, -1.0 * np.array([0.6, -0.8, 0.0]), atol=1e-12)  # -mu N v/|v|
    np.testing.assert_allclose(jf.vector_coulomb(jnp.zeros(3), jnp.array([0.3, 0.4, 0.0]), 2.0, 0.5), [0.3, 0.4, 0.0])
    assert np.all(np.isfinite(jax.jacfwd(lambda x: jf.vector_quinn(x, jnp.zeros(3), 2.0, 0.5, 0.01))(jnp.zeros(3))))
