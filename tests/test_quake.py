"""The ``quake`` application and its inputs: ground-motion files, the CLI's checks (paper 003)."""

import json
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction._applications import quake as app
from jaxfriction._forcing.ground_motion import combine_components
from jaxfriction.cli import main

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ground_motions"
G = 9.80665
HEADER = "PEER NGA STRONG MOTION DATABASE RECORD\nevent, station\nACCELERATION TIME SERIES IN UNITS OF G\n"


def at2(path, values, dt=0.005, npts=None):
    """Write an NGA-West2 style .AT2 file of ``values`` (g), five a row."""
    values = list(values)
    rows = [" ".join(f"{v:.8E}" for v in values[i:i + 5]) for i in range(0, len(values), 5)]
    npts = len(values) if npts is None else npts
    path.write_text(HEADER + f"NPTS=  {npts}, DT=   {dt} SEC\n" + "\n".join(rows) + "\n")
    return path


def two_column(path, values):
    """Write a shared-format two-column file of ``values`` (cm/s^2)."""
    path.write_text("% Acc. in cm/sec^2 and dt=0.005 sec.\n" + "".join(f"{a:.10E}\t{b:.10E}\n" for a, b in values))
    return path


@pytest.fixture
def record(tmp_path):
    rng = np.random.default_rng(7)
    return two_column(tmp_path / "syn.txt", rng.normal(size=(60, 2)) * 400.0)


def quake(*args):
    return CliRunner().invoke(main, ["quake", *map(str, args)])


def one_error_line(result, *words):
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for word in words:
        assert word in lines[0], lines[0]
    assert " mm" not in result.output and "sliding" not in result.output


# 1. non-finite options and non-finite responses

@pytest.mark.parametrize("option, value", [("--scale", "nan"), ("--scale", "inf"), ("--rotation", "nan"),
                                           ("--rotation", "-inf"), ("--mu", "nan"), ("--dt", "inf")])
def test_non_finite_options_are_refused_by_name(record, tmp_path, option, value):
    one_error_line(quake(record, option, value, "--figure", tmp_path / "q.png"), option, "finite")
    assert not (tmp_path / "q.png").exists()


@pytest.mark.parametrize("args, words", [(["--scale", "1e300"], ["status 1", "non-finite state"]),
                                         (["--eps", "1e-9"], ["status 5", "too long"])])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_flagged_run_prints_its_status_not_numbers(record, tmp_path, args, words, as_json):
    result = quake(record, *args, *(["--json"] if as_json else []), "--figure", tmp_path / "q.png")
    one_error_line(result, "syn", *words)
    assert "peak" not in result.output and not (tmp_path / "q.png").exists()


def test_api_reports_the_status_and_refuses_non_finite_scale(record):
    import equinox as eqx

    motion = jf.load_ground_motion(record)
    _, summary = app.quake_response(eqx.tree_at(lambda m: m.scale, motion, 1e300), 0.3, dt=2e-3, tail=0.1)
    assert summary["status"] == jf.STATUS_NONFINITE
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="motion.scale"):
            app.quake_response(eqx.tree_at(lambda m: m.scale, motion, bad), 0.3, dt=2e-3)
        with pytest.raises(ValueError, match="motion.rotation"):
            app.quake_response(eqx.tree_at(lambda m: m.rotation, motion, bad), 0.3, dt=2e-3)


# 2. mu = 0: the frictionless block

def test_default_eps_is_positive_at_mu_zero_also_traced():
    assert app.default_eps(0.3, 1e-3) == pytest.approx(2 * 0.3 * 9.81 * 1e-3)
    assert app.default_eps(0.0, 1e-3) == pytest.approx(2 * 9.81 * 1e-3)
    traced = jax.vmap(lambda mu: app.default_eps(mu, 1e-3))(jnp.array([0.0, 0.3]))
    np.testing.assert_allclose(traced, [2 * 9.81e-3, 2 * 0.3 * 9.81e-3])


@pytest.mark.parametrize("exact", [False, True])
def test_mu_zero_block_keeps_its_velocity(tmp_path, exact):
    values = np.random.default_rng(8).normal(size=(60, 2)) * 400.0
    values[[0, -1]] = 0.0  # starts and ends at rest: no jump at the record's ends
    motion = jf.load_ground_motion(two_column(tmp_path / "calm.txt", values))
    # 0.295 s of record + 1.005 s of tail = 1300 steps of 1 ms: the record's kinks fall on the grid
    traj, summary = app.quake_response(motion, 0.0, exact=exact, dt=1e-3, tail=1.005)
    assert summary["status"] == 0 and summary["dissipated_energy"] == 0.0
    np.testing.assert_allclose(traj.friction_force, 0.0, atol=0.0)
    # relative velocity after the record = minus the integral of the (piecewise linear) floor acceleration
    v_end = -np.trapezoid(np.asarray(motion.values), dx=motion.dt, axis=0)
    np.testing.assert_allclose(traj.ys[-1, 2:4], v_end, rtol=1e-10 if not exact else 0.1, atol=1e-12)
    if not exact:  # after the record the block drifts at that velocity
        n_tail = 50  # 0.5 s of saves, every 10 ms
        drift = (traj.ys[-1, 0:2] - traj.ys[-1 - n_tail, 0:2]) / 0.5
        np.testing.assert_allclose(drift, v_end, rtol=1e-9)


def test_mu_zero_on_the_command_line_and_in_a_sweep(record, tmp_path):
    result = quake(record, "--mu", "0", "--json", "--figure", tmp_path / "q.png")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["peak_sliding"] > 0
    motion = jf.load_ground_motion(record)
    ds = app.fragility_sweep(motion, [0.0, 0.3], [1.0], dt=2e-3, tail=0.5)
    assert np.all(ds["status"].values == 0) and np.all(np.isfinite(ds["residual_sliding"].values))
    assert float(ds["peak_sliding"][0, 0]) > float(ds["peak_sliding"][1, 0])


# 3. malformed AT2, binary data, directories

@pytest.mark.parametrize("header, what", [
    ("NPTS=  5, DT=   0.0 SEC", "DT must be > 0"),
    ("NPTS=  5, DT=   -.01 SEC", "DT must be > 0"),
    ("NPTS=  5, DT=   1e999 SEC", "DT must be > 0"),
    ("NPTS=  0, DT=   .01 SEC", "NPTS must be a positive integer"),
    ("NPTS=  -5, DT=   .01 SEC", "NPTS must be a positive integer"),
    ("NPTS=  4.5, DT=   .01 SEC", "NPTS must be a positive integer"),
    ("NPTS=  6, DT=   .01 SEC", "NPTS=6, found 5"),
    ("ACCELERATION, DT MISSING", "expected 'NPTS= n, DT= dt'"),
])
def test_bad_at2_headers_name_file_and_line(tmp_path, header, what):
    path = tmp_path / "bad.AT2"
    path.write_text(HEADER + header + "\n .1 .2 .3\n .4 .5\n")
    with pytest.raises(ValueError, match=rf"bad\.AT2:4: .*{what}"):
        jf.load_ground_motion(path)
    one_error_line(quake(path, "--figure", tmp_path / "q.png"), "bad.AT2:4:", what.split(",")[0])


def test_older_peer_at2_header_is_read(tmp_path):
    path = tmp_path / "old.at2"
    path.write_text(HEADER + "    5    .0100    NPTS, DT\n .1 .2 .3\n .4 .5\n")
    motion = jf.load_ground_motion(path)
    assert motion.dt == 0.01 and motion.values.shape == (5, 1)


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"


@pytest.mark.parametrize("name", ["junk.txt", "junk.AT2", "image.png", "image.AT2", "latin.txt"])
def test_binary_data_is_refused_naming_the_file(tmp_path, name):
    path = tmp_path / name
    if name.startswith("junk"):
        path.write_bytes(np.random.default_rng(1).bytes(4000))
    elif name.startswith("image"):
        path.write_bytes(PNG)
    else:  # no NUL bytes, not UTF-8
        path.write_bytes(b"% header\n1 2\n\xff\xfe\xfa 3\n")
    with pytest.raises(ValueError, match=rf"{name.replace('.', '[.]')}(:\d+)?: .*(binary|not a text)") as info:
        jf.load_ground_motion(path)
    assert not isinstance(info.value, UnicodeError)
    one_error_line(quake(path, "--figure", tmp_path / "q.png"), name)


def test_a_directory_is_refused_by_name(tmp_path):
    folder = tmp_path / "records.AT2"
    folder.mkdir()
    with pytest.raises(ValueError, match="records.AT2: is a directory"):
        jf.load_ground_motion(folder)
    with pytest.raises(ValueError, match="is a directory"):
        jf.load_two_column(folder)
    one_error_line(quake(folder, "--figure", tmp_path / "q.png"), "records.AT2", "directory")


# 4. one or two AT2 components

def test_one_and_two_at2_components(tmp_path):
    ax, ay = [0.1, -0.2, 0.3, 0.05], [0.01, 0.02, -0.03, 0.04, 0.05, -0.06]
    x, y = at2(tmp_path / "R_X.AT2", ax), at2(tmp_path / "R_Y.AT2", ay)
    one = jf.load_ground_motion(x)
    assert one.values.shape == (4, 1)  # one component, as before
    both = jf.load_ground_motion(x, y)
    assert both.values.shape == (6, 2) and both.dt == 0.005 and both.name == "R_X+R_Y"
    np.testing.assert_allclose(both.values[:, 0], np.array(ax + [0.0, 0.0]) * G, rtol=1e-12)  # x padded with zeros
    np.testing.assert_allclose(both.values[:, 1], np.array(ay) * G, rtol=1e-12)
    np.testing.assert_allclose(combine_components(one).values, np.c_[np.array(ax) * G, np.zeros(4)], rtol=1e-12)
    np.testing.assert_allclose(combine_components(one, jf.load_ground_motion(y)).values, both.values)
    with pytest.raises(ValueError, match="DT"):
        jf.load_ground_motion(x, at2(tmp_path / "R_Z.AT2", ay, dt=0.01))
    with pytest.raises(ValueError, match=r"R_X\.AT2 has DT=0\.005 s but .*R_Z\.AT2 has DT=0\.01"):
        jf.load_ground_motion(x, tmp_path / "R_Z.AT2")
    shared = two_column(tmp_path / "two.txt", [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match=r"two\.txt: has 2 components"):
        jf.load_ground_motion(shared, y)
    with pytest.raises(ValueError, match="one component"):
        combine_components(jf.load_ground_motion(shared))


def test_at2_records_on_the_command_line(tmp_path):
    rng = np.random.default_rng(3)
    x = at2(tmp_path / "R_X.AT2", rng.normal(size=80) * 0.5)
    y = at2(tmp_path / "R_Y.AT2", rng.normal(size=60) * 0.5)
    runs = {}
    for args in ([x], [x, y], [y, x]):
        result = quake(*args, "--json", "--dt", "2e-3", "--figure", tmp_path / "q.png")
        assert result.exit_code == 0, result.output
        runs[len(runs)] = json.loads(result.output)
        assert runs[len(runs) - 1]["status"] == 0 and runs[len(runs) - 1]["peak_sliding"] > 0
    assert runs[1]["record"] == "R_X+R_Y"
    # swapping x and y mirrors the plane: same sliding distances
    assert runs[2]["peak_sliding"] == pytest.approx(runs[1]["peak_sliding"], rel=1e-9)
    one_error_line(quake(x, at2(tmp_path / "R_Z.AT2", [0.1, 0.2], dt=0.01), "--figure", tmp_path / "q.png"),
                   "R_Z.AT2", "DT")


def test_one_component_shakes_along_x_only(tmp_path):
    motion = jf.load_ground_motion(at2(tmp_path / "R_X.AT2", np.random.default_rng(4).normal(size=100) * 0.6))
    traj, summary = app.quake_response(motion, 0.3, dt=2e-3, tail=0.5)
    assert summary["status"] == 0 and summary["peak_sliding"] > 0
    assert float(jnp.max(jnp.abs(traj.ys[:, 1]))) == 0.0 and float(jnp.max(jnp.abs(traj.ys[:, 3]))) == 0.0


def test_at2_pair_equals_the_two_column_file(tmp_path):
    values = np.random.default_rng(5).normal(size=(120, 2)) * 300.0  # cm/s^2
    txt = two_column(tmp_path / "pair.txt", values)
    x = at2(tmp_path / "P_X.AT2", values[:, 0] * 0.01 / G)
    y = at2(tmp_path / "P_Y.AT2", values[:, 1] * 0.01 / G)
    a = jf.load_ground_motion(txt)
    b = jf.load_ground_motion(x, y)
    np.testing.assert_allclose(b.values, a.values, rtol=1e-8)
    _, sa = app.quake_response(a, 0.2, dt=2e-3, tail=0.5)
    _, sb = app.quake_response(b, 0.2, dt=2e-3, tail=0.5)
    assert sb["peak_sliding"] == pytest.approx(sa["peak_sliding"], rel=1e-6)


@pytest.mark.skipif(not DATA.exists(), reason="shared ground-motion data not present")
def test_shared_records_load_as_before():
    if not (DATA / "kobe.txt").exists():
        pytest.skip("kobe.txt not in the shared data")
    motion = jf.load_ground_motion(DATA / "kobe.txt")
    assert motion.values.shape == (6000, 2) and motion.dt == 0.005 and motion.name == "kobe"
    np.testing.assert_allclose(np.abs(np.asarray(motion.values)).max(axis=0) / 0.01, [825, 619], atol=1.0)
    assert app.as_floor_motion(motion) is motion


# 5. the run's size

def test_absurd_step_counts_are_refused_before_running(record, tmp_path, monkeypatch):
    result = quake(record, "--dt", "1e-9", "--figure", tmp_path / "q.png")
    one_error_line(result, "dt 1e-09", "steps", "GiB", "budget")
    motion = jf.load_ground_motion(record)
    with pytest.raises(ValueError, match=r"^dt 1e-09 .*GiB"):
        app.quake_response(motion, 0.3, dt=1e-9)
    steps, saves, size = app.run_size(10.0, 1e-3, 10)
    assert (steps, saves, size) == (10000, 1001, 1001 * 7 * 8)
    monkeypatch.setattr(app, "MAX_STEPS", 5000)
    with pytest.raises(ValueError, match=r"--dt 0\.001 .*1e\+04 steps .*5e\+03 steps"):
        app.run_size(10.0, 1e-3, 1000, name="--dt")


# 6. the figure's location

def test_unwritable_figure_is_refused_before_computing(record, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")

    def no_run(*args, **kwargs):
        raise AssertionError("computed before checking --figure")

    monkeypatch.setattr(app, "quake_response", no_run)
    one_error_line(quake(record, "--figure", blocker / "q.png"), "--figure", "not a writable location")


# issue 25: a step that steps over the record, --eps where the method ignores it, a bad figure

@pytest.mark.parametrize("args, words", [(["--dt", "100"], ["dt = 100", "longer than the run"]),
                                         (["--dt", "0.05"], ["dt = 0.05", "sample interval 0.005"]),
                                         (["--method", "na-eltawil", "--dt", "0.01"], ["dt = 0.01", "sample interval"]),
                                         (["--eps", "0.1", "--method", "moreau-jean"], ["--eps", "moreau-jean"]),
                                         (["--eps", "0.1", "--exact"], ["--eps", "moreau-jean"]),
                                         (["--eps", "0.1", "--method", "griffin-spring"], ["--eps", "griffin-spring"])])
def test_issue_25_unresolved_step_and_ignored_eps_are_refused(record, tmp_path, args, words):
    one_error_line(quake(record, *args, "--figure", tmp_path / "q.png"), *words)
    assert not (tmp_path / "q.png").exists()


@pytest.mark.parametrize("name", ["q.xyz", "q", "."])
def test_issue_25_a_figure_that_cannot_be_written_is_refused_first(record, tmp_path, name):
    one_error_line(quake(record, "--figure", tmp_path / name if name != "." else tmp_path), "--figure")


def test_issue_25_api_refuses_an_unresolved_step_and_an_unused_eps(record):
    motion = jf.load_ground_motion(record)
    with pytest.raises(ValueError, match="dt = 0.01 is longer than the sample interval"):
        jf.quake_response(motion, dt=0.01, method="na-eltawil")
    with pytest.raises(ValueError, match="eps: method 'moreau-jean' does not use it"):
        jf.quake_response(motion, eps=0.1, exact=True)
    with pytest.raises(ValueError, match="dt = 0.01 is longer than the sample interval"):
        jf.fragility_sweep(motion, [0.3], [1.0], dt=0.01)
