import json
import os
import subprocess
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import xarray as xr
from click.testing import CliRunner

import jaxfriction as jf
from jaxfriction.cli import main


def sweep(tmp_path, *args):
    return CliRunner().invoke(main, ["sweep", "--out", str(tmp_path / "sweep"), "--no-progress", *args])


def test_sweep_writes_results_and_figure_and_resumes(tmp_path):
    args = ["--param", "law.mu=0.2:1.0:3", "--param", "force.amplitude=0.1,0.9,2.0", "--cycles", "3",
            "--chunk-size", "4"]
    result = sweep(tmp_path, *args)
    assert result.exit_code == 0, result.output
    assert "trajectory-steps/s" in result.output and "3 chunks computed, 0 loaded" in result.output
    assert "0 of 9 trajectories flagged" in result.output
    ds = xr.load_dataset(tmp_path / "sweep" / "result.nc", engine="h5netcdf")
    assert ds["dissipation"].dims == ("law.mu", "force.amplitude") and ds["dissipation"].shape == (3, 3)
    assert ds.attrs["template"] == "oscillator" and ds["dissipation"].dtype == np.float64
    assert ds.attrs["gradient"] == "ForwardMode" and list(ds["wrt"].values) == ["law.mu"]
    # the same numbers as the Python API on the template (eps = 2 dt)
    ref = jf.sweep(jf.template("oscillator"), {"law.mu": [0.2, 0.6, 1.0], "force.amplitude": [0.1, 0.9, 2.0]},
                   cycles=3, wrt=["law.mu"], progress=False)
    np.testing.assert_allclose(ds["dissipation"], ref["dissipation"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ds["grad_dissipation"], ref["grad_dissipation"], rtol=1e-12, atol=1e-15)
    assert (tmp_path / "sweep" / "sweep.png").stat().st_size > 10_000
    # a second run must say --resume; with it, nothing is recomputed and the result is the same
    again = sweep(tmp_path, *args)
    assert again.exit_code != 0 and "--resume" in again.output
    resumed = sweep(tmp_path, *args, "--resume")
    assert resumed.exit_code == 0 and "0 chunks computed, 3 loaded" in resumed.output
    xr.testing.assert_identical(xr.load_dataset(tmp_path / "sweep" / "result.nc", engine="h5netcdf")["dissipation"],
                                ds["dissipation"])
    # and from another process: the sweep's identity holds no memory address (the default
    # observables' nested code objects were once hashed by repr, so this resume was refused)
    other = subprocess.run([sys.executable, "-c", "from jaxfriction.cli import main; main()", "sweep", "--out",
                            str(tmp_path / "sweep"), "--no-progress", *args, "--resume"],
                           capture_output=True, text=True)
    assert other.returncode == 0 and "0 chunks computed, 3 loaded" in other.stdout, other.stdout + other.stderr


def test_sweep_of_the_belt_from_a_toml_file(tmp_path):
    config = tmp_path / "belt.toml"
    config.write_text('system = "belt"\nt1 = 30.0\nwindow = 10.0\nwrt = "law.mu_s,law.mu_k"\n'
                      '[param]\n"surface.value" = [0.1, 0.3]\n[set]\n"law.mu_s" = 0.6\n"law.mu_k" = 0.4\n')
    result = sweep(tmp_path, "--config", str(config))
    assert result.exit_code == 0, result.output
    ds = xr.load_dataset(tmp_path / "sweep" / "result.nc", engine="h5netcdf")
    assert ds["dissipation"].dims == ("surface.value",) and ds.attrs["template"] == "belt"
    assert list(ds["wrt"].values) == ["law.mu_s", "law.mu_k"]
    assert set(ds.data_vars) >= {"grad_dissipation", "peak_slip", "stick_fraction", "energy_residual"}
    # stick-slip: the block sticks part of each cycle, slips at up to well above v0
    assert np.all(ds["stick_fraction"] > 0.05) and np.all(ds["peak_slip"] > ds["surface.value"])
    assert np.all(np.isfinite(ds["grad_dissipation"])) and int(ds["status"].max()) == 0


def test_sweep_command_line_options_win_over_the_toml_file(tmp_path):
    config = tmp_path / "osc.toml"
    config.write_text('cycles = 20\n[param]\n"force.amplitude" = [1.5]\n[set]\n"law.mu" = 0.5\n')
    result = sweep(tmp_path, "--config", str(config), "--t1", "12.0", "--window", "3.0", "--gradient", "none")
    assert result.exit_code == 0, result.output
    ds = xr.load_dataset(tmp_path / "sweep" / "result.nc", engine="h5netcdf")
    assert ds.attrs["t_measure"] == 9.0 and ds.attrs["window"] == 3.0 and "grad_dissipation" not in ds
    assert json.loads(ds.attrs["fixed"])["law.mu"] == 0.5


def test_sweep_counts_flagged_lanes(tmp_path):
    result = sweep(tmp_path, "--param", "law.mu=-0.5,0.5", "--param", "force.amplitude=1.0", "--cycles", "2")
    assert result.exit_code == 0, result.output
    assert "1 of 2 trajectories flagged: 1 invalid parameter" in result.output


def test_sweep_on_the_fused_kernel_flags_the_same_lanes(tmp_path):
    """--kernel fused runs the Pallas kernel (interpret mode on a CPU) with the same status codes."""
    result = sweep(tmp_path, "--param", "law.mu=-0.5,0.5", "--param", "force.amplitude=1.0", "--cycles", "2",
                   "--kernel", "fused")
    assert result.exit_code == 0, result.output
    assert "fused kernel" in result.output and "1 of 2 trajectories flagged: 1 invalid parameter" in result.output


def test_sweep_bad_input_names_the_option(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('sytem = "belt"\n')
    kernel = tmp_path / "kernel.toml"
    kernel.write_text('kernel = "triton"\n')
    (tmp_path / "file").write_text("")
    for args, word in [(["--param", "law.mu=1:0:3"], "law.mu"), (["--param", "nu=0:1:3"], "nu"),
                       (["--system", "belt", "--param", "surface.value=0.1:0.2:2", "--cycles", "3"], "frequency"),
                       (["--system", "tribometer"], "system must be one of"), (["--devices", "0"], "--devices"),
                       (["--system", "oscilator"], "did you mean 'oscillator'?"),
                       (["--set", "omega"], "--set"), (["--set", "force.omega=fast"], "force.omega"),
                       (["--config", str(config)], "sytem"), (["--config", str(kernel)], "kernel"), (["--system", "no_such_module:tpl"], "no_such_module"),
                       (["--figure", str(tmp_path / "file" / "f.png")], "--figure")]:
        result = sweep(tmp_path, *args)
        assert result.exit_code != 0
        assert "Traceback" not in result.output and word in result.output, (args, result.output)
        assert result.output.strip().startswith("Error:")
    out = CliRunner().invoke(main, ["sweep", "--out", str(tmp_path / "file"), "--no-progress"])
    assert out.exit_code != 0 and "--out" in out.output
    # TOML values of the wrong type, string numbers, malformed axes: named
    for text, word in [('cycles = "50"\n', "cycles must be an integer"), ('dt = "0.01"\n', "dt must be a number"),
                       ('t1 = true\n', "t1 must be a number"), ('[set]\n"law.mu" = "0.5"\n', "set.law.mu must be a number"),
                       ('[param]\n"law.mu" = [0.1, "x"]\n', "--param law.mu"),
                       ('[param]\n"law.mu" = { min = 0.1, max = 1.0 }\n', "--param law.mu"),
                       ('param = 3\n', "param must be a table")]:
        config.write_text(text)
        result = sweep(tmp_path, "--config", str(config))
        assert result.exit_code == 1 and word in result.output and "Traceback" not in result.output, (text, result.output)


def test_reproduce_quinn_fig5_json(tmp_path):
    result = CliRunner().invoke(main, ["reproduce", "quinn-fig5", "--json", "--t1", "20",
                                       "--figure", str(tmp_path / "f.png")])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    assert round(numbers["laws"]["quinn"]["rest_position"], 6) == -0.750090
    assert round(numbers["quinn_rest_position_by_eps"]["2dt"], 6) == -0.750352
    assert numbers["exact_rest_position"] == -0.75
    assert numbers["laws"]["coulomb"]["chatter_count"] > 1000
    assert numbers["laws"]["velocity_limited"]["rest_position"] > -0.7  # drifts toward the origin


def test_bad_input_gives_one_line_and_nonzero_exit(tmp_path):
    for args, word in [(["sweep", "--dt", "-1", "--out", str(tmp_path)], "dt"),
                       (["sweep", "--law", "magic", "--out", str(tmp_path)], "law"),
                       (["reproduce", "quinn-fig5", "--dt", "0"], "dt")]:
        result = CliRunner().invoke(main, args + ["--figure", str(tmp_path / "x.png")])
        assert result.exit_code != 0
        assert "Traceback" not in result.output and word in result.output
        assert result.output.strip().startswith("Error:")


def test_reproduce_quinn_fig7_orders(tmp_path):
    result = CliRunner().invoke(main, ["reproduce", "quinn-fig7", "--json", "--cycles", "10", "--dt", "0.02",
                                       "--dt", "0.01", "--dt", "0.005", "--figure", str(tmp_path / "f7.png")])
    assert result.exit_code == 0, result.output
    a = json.loads(result.output)["cases"]["a_sticking"]
    assert 1.8 < a["laws"]["quinn"]["order"] < 2.2
    assert 0.8 < a["laws"]["velocity_limited"]["order"] < 1.2
    assert abs(a["laws"]["quinn"]["percent_error"][-1]) < 0.01
    assert (tmp_path / "f7.png").stat().st_size > 10_000


def test_own_template_file_gets_the_devices_asked_for(tmp_path):
    # a template file that builds arrays when loaded used to start JAX before the CPU split,
    # so "--devices 2" ran on one device without a word
    model = tmp_path / "model.py"
    model.write_text("import jax.numpy as jnp\nimport jaxfriction as jf\nSHIFT = jnp.zeros(3) + 1.0\n"
                     "def belt(dt=0.01):\n    return jf.template('belt', dt=dt)\n")
    run = subprocess.run([sys.executable, "-c", "from jaxfriction.cli import main; main()", "sweep", "--system",
                          f"{model}:belt", "--param", "law.mu_k=0.3,0.4", "--set", "law.mu_s=0.6", "--t1", "2",
                          "--window", "1", "--devices", "2", "--gradient", "none", "--no-progress", "--out",
                          str(tmp_path / "out"), "--figure", str(tmp_path / "s.png")], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 devices" in run.stdout, run.stdout


def test_sweep_summary_devices_and_round_off_dissipation():
    import xarray as xr

    from jaxfriction._cli.sweep import sweep_summary

    ds = xr.Dataset({"dissipation": ("x", [-7.35e-18, 2.13]), "status": ("x", [0, 0])},
                    attrs={"devices": 1, "gradient": "none", "chunks_computed": 1, "chunks_loaded": 0,
                           "compile_seconds": 1.0, "run_seconds": 1.0})
    text = sweep_summary(ds)
    assert "1 device," in text and "D over the window: 0 (round-off -7.4e-18) .. 2.13" in text
    ds["dissipation"][0] = -0.5  # a real negative value is printed as it is
    assert "D over the window: -0.5 .. 2.13" in sweep_summary(ds)


def test_help_imports_neither_jax_nor_numpy():
    # the command group, its options and every command's --help are built without JAX, NumPy
    # or the library's modules (which bring them): `jaxfriction --help` answers at once
    code = ("import sys\nfrom jaxfriction.cli import main\n"
            "for args in (['--help'], ['sweep', '--help'], ['fit', '--help'], ['quake', '--help'], "
            "['reproduce', '--help'], ['reproduce', 'quinn-fig5', '--help']):\n"
            "    main(args, standalone_mode=False)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'jax', 'jaxlib', 'numpy', 'equinox', 'xarray'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "--no-cache" in out.stdout and "--param PATH=MIN:MAX:N" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout[-300:]
    # and from the module's own entry point
    code = "import runpy, sys\nsys.argv = ['jaxfriction', 'sweep', '--help']\ntry:\n    " \
           "runpy.run_module('jaxfriction.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n" \
           "print('jax' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split()[-2:] == ["False", "False"], out.stdout[-300:] + out.stderr


def _cached_sweep(tmp_path, out, *options, env=None):
    """A tiny sweep in a subprocess, its compilation cache in tmp_path/cache (every program stored)."""
    env = {k: v for k, v in os.environ.items() if k != "JAXFRICTION_NO_CACHE"} | {
        "JAXFRICTION_CACHE_DIR": str(tmp_path / "cache"), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        **(env or {})}
    return subprocess.run([sys.executable, "-m", "jaxfriction.cli", *options, "sweep", "--param", "law.mu=0.2,0.4",
                           "--cycles", "1", "--gradient", "none", "--devices", "1", "--no-progress", "--out",
                           str(tmp_path / out)], capture_output=True, text=True, env=env)


def test_the_compilation_cache_is_loaded_by_a_repeated_run_and_survives_truncated_entries(tmp_path):
    """A sweep stores its programs and a second process loads them; JAX's entries cut short (a
    process killed while writing, a full disk) are recompiled by a third, whose result is bitwise
    that of the clean run (issue 38; numba's side: test_compiled_loop). One first run serves both."""
    first = _cached_sweep(tmp_path, "a")
    assert first.returncode == 0, first.stdout + first.stderr
    stored = {p.name for p in (tmp_path / "cache").iterdir()}
    assert any(name.startswith("jit_") for name in stored), stored  # JAX's programs
    # the lane program, the compiled loop on a CPU: its source and numba's machine code
    loop = tmp_path / "cache" / "compiled_loop"
    programs = sorted(p.name for p in loop.glob("jf_compiled_loop_*.py"))
    assert len(programs) == 1 and list(loop.glob("__pycache__/*.nbc")), sorted(loop.rglob("*"))
    # a second process compiling the same programs loads them from the cache
    again = _cached_sweep(tmp_path, "b", env={"JAX_LOG_COMPILES": "1"})
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Persistent compilation cache hit" in again.stderr, again.stderr[-2000:]
    assert sorted(p.name for p in loop.glob("jf_compiled_loop_*.py")) == programs
    assert (tmp_path / "b" / "result.nc").exists()
    entries = [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("jit_")]
    assert entries
    for p in entries:
        p.write_bytes(p.read_bytes()[:50])
    third = _cached_sweep(tmp_path, "c")
    assert third.returncode == 0, third.stdout + third.stderr
    with xr.open_dataset(tmp_path / "a" / "result.nc") as a, xr.open_dataset(tmp_path / "c" / "result.nc") as c:
        for name in a.data_vars:
            np.testing.assert_array_equal(a[name].values, c[name].values)


def test_no_cache_writes_no_cache_entries(tmp_path):
    off = _cached_sweep(tmp_path, "a", "--no-cache")
    assert off.returncode == 0, off.stdout + off.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    assert (tmp_path / "a" / "result.nc").exists()


def test_cache_options_and_environment(tmp_path, monkeypatch):
    from jaxfriction._cli.cache import default_cache_dir

    assert default_cache_dir({"XDG_CACHE_HOME": "/xdg"}) == Path("/xdg/jaxfriction/jax-cache")
    home = Path.home() / ".cache" / "jaxfriction" / "jax-cache"
    assert default_cache_dir({"XDG_CACHE_HOME": "relative"}) == default_cache_dir({}) == home  # the XDG rule
    monkeypatch.setenv("JAXFRICTION_NO_CACHE", "1")
    monkeypatch.setenv("JAXFRICTION_CACHE_DIR", str(tmp_path / "c"))
    assert main.make_context("jaxfriction", ["sweep"]).params == {"no_cache": True, "cache_dir": str(tmp_path / "c")}
    monkeypatch.setenv("JAXFRICTION_NO_CACHE", "0")
    assert main.make_context("jaxfriction", ["sweep"]).params["no_cache"] is False
    assert main.make_context("jaxfriction", ["--no-cache", "sweep"]).params["no_cache"] is True


def test_an_unusable_cache_folder_warns_and_runs_without_it(tmp_path, capsys):
    from jaxfriction._cli.cache import configure_compilation_cache

    blocker = tmp_path / "file"
    blocker.write_text("")
    enabled = jax.config.jax_enable_compilation_cache
    try:
        assert configure_compilation_cache(blocker / "cache") is None
        assert jax.config.jax_enable_compilation_cache is False
    finally:
        jax.config.update("jax_enable_compilation_cache", enabled)
    err = capsys.readouterr().err
    assert f"cache folder {blocker / 'cache'} (--cache-dir" in err and "without the compilation cache" in err


def test_issue_25_inputs_refused_before_computing_with_one_error_line(tmp_path):
    """Issue 25: a user's template file or function that fails, a figure that cannot be written,
    a config that is not UTF-8, an invalid fixed value, a step that does not resolve the run,
    an absurd grid and a precision the CLI does not have: one Error: line naming the culprit."""
    (tmp_path / "raises.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "syntax.py").write_text("def f(:\n")
    (tmp_path / "needs.py").write_text("def make(n, m):\n    return None\n")
    (tmp_path / "latin1.toml").write_bytes(b'system = "\xff\xfe"\n')
    (tmp_path / "f16.toml").write_text('precision = "float16"\n')
    for args, word in [(["--system", f"{tmp_path / 'raises.py'}:x"], "raises.py"),
                       (["--system", f"{tmp_path / 'syntax.py'}:x"], "syntax.py"),
                       (["--system", f"{tmp_path / 'needs.py'}:make"], "needs ['n', 'm']"),
                       (["--system", "builtins:len"], "builtins:len"),
                       (["--figure", str(tmp_path / "f.xyz")], "--figure"),
                       (["--figure", str(tmp_path)], "--figure"),
                       (["--config", str(tmp_path / "latin1.toml")], "latin1.toml"),
                       (["--config", str(tmp_path / "f16.toml")], "precision"),
                       (["--set", "law.eps=-1"], "eps must be > 0"),
                       (["--t1", "2", "--window", "1", "--dt", "5"], "dt"),
                       (["--t1", "40", "--window", "20", "--dt", "1"], "steps per period"),
                       (["--param", "law.mu=0:1:1000000", "--param", "force.amplitude=0:1:1000000"], "grid"),
                       (["--param", "law.mu=0:1:1000000000000"], "law.mu"),
                       # issue 38: a name given twice was resolved silently to one of the values
                       (["--param", "law.mu=0.2,0.4", "--param", "law.mu=0.3"], "--param law.mu: given twice")]:
        result = sweep(tmp_path, *args)
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 1, (args, result.output)
        assert len(lines) == 1 and lines[0].startswith("Error:") and word in lines[0], (args, result.output)
        assert not (tmp_path / "sweep" / "result.nc").exists(), args
    result = CliRunner().invoke(main, ["reproduce", "quinn-fig5", "--figure", str(tmp_path)])
    assert result.exit_code == 1 and result.output.startswith("Error: --figure"), result.output


def test_issue_25_fit_blames_the_csv_column_not_y0(tmp_path):
    data = tmp_path / "two.csv"
    data.write_text("t,q0,q1\n0,0,0\n0.1,0.01,0.02\n0.2,0.02,0.03\n0.3,0.03,0.03\n")
    result = CliRunner().invoke(main, ["fit", str(data), "--system", "oscillator", "--params", "law.mu",
                                       "--y0", "0,0"])
    assert result.exit_code == 1 and result.output.startswith("Error:"), result.output
    assert "two.csv" in result.output and "degree of freedom 1" in result.output and "y0" not in result.output


def test_a_fit_option_given_twice_for_one_name_is_refused(tmp_path):
    """Issue 38: two boxes for law.mu_s exited 0 using one of them."""
    data = tmp_path / "one.csv"
    data.write_text("t,q0\n0,0\n0.1,0.01\n0.2,0.02\n0.3,0.03\n")
    result = CliRunner().invoke(main, ["fit", str(data), "--system", "oscillator", "--params", "law.mu",
                                       "--bounds", "law.mu=0.3:1.2", "--bounds", "law.mu=0.4:1.0"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: --bounds law.mu: given twice"), result.output


def test_issue_25_devices_beyond_the_cores_is_said(tmp_path):
    result = sweep(tmp_path, "--devices", str(10 * (os.cpu_count() or 1)), "--param", "law.mu=0.5", "--cycles", "2")
    assert result.exit_code == 0, result.output
    assert "Warning: --devices" in result.output and "CPU cores" in result.output
