import json
import os
import subprocess
import sys
import textwrap
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction.workflows import run_sweep

GRID = {"mu": np.linspace(0.1, 1.0, 5), "alpha": np.linspace(0.2, 2.0, 4)}


def oscillator(mu, alpha):
    traj = jf.simulate(jf.ForcedOscillator(law=jf.Quinn(mu, 0.02), alpha=alpha, omega=0.5), jnp.zeros(2), 0.0, 20.0,
                       0.01, save_every=None)
    return {"E": traj.friction_dissipation[-1], "x": traj.position[-1], "status": traj.status}


def test_grid_results_match_direct_evaluation_and_chunking():
    ds = run_sweep(oscillator, GRID, chunk_size=3, progress=False)
    assert ds["E"].dims == ("mu", "alpha") and ds["E"].shape == (5, 4)
    direct = oscillator(0.55, 2.0)
    assert float(ds["E"].sel(mu=0.55, alpha=2.0)) == float(direct["E"])
    other = run_sweep(oscillator, GRID, chunk_size=7, progress=False)
    np.testing.assert_array_equal(ds["E"], other["E"])  # chunking does not change a bit
    assert int(ds["status"].max()) == 0


def test_samples_and_per_lane_status():
    def fn(mu, alpha):
        return {"q": jnp.sqrt(mu - 0.5) * alpha}

    ds = run_sweep(fn, {"mu": [0.2, 0.7, 1.0], "alpha": [1.0, 2.0, 3.0]}, samples=True, progress=False)
    assert ds["q"].dims == ("sample",)
    np.testing.assert_array_equal(ds["status"], [jf.STATUS_NONFINITE, 0, 0])  # the NaN lane is flagged


def test_resume_refuses_other_arguments(tmp_path):
    run_sweep(oscillator, GRID, chunk_size=8, out_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="other arguments"):
        run_sweep(oscillator, {"mu": [0.1], "alpha": [0.2]}, out_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="chunk_size"):
        run_sweep(oscillator, GRID, chunk_size=0)
    with pytest.raises(ValueError, match="grid"):
        run_sweep(oscillator, {"mu": [np.nan]})


SCRIPT = textwrap.dedent("""
    import sys, jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp, numpy as np, jaxfriction as jf
    from jaxfriction.workflows import run_sweep
    def fn(mu, alpha):  # long enough per chunk to be killed in the middle of the sweep
        traj = jf.simulate(jf.ForcedOscillator(law=jf.Quinn(mu, 0.02), alpha=alpha, omega=0.5), jnp.zeros(2), 0.0,
                           float(sys.argv[2]), 0.01, save_every=None)
        return {"E": traj.friction_dissipation[-1]}
    grid = {"mu": np.linspace(0.1, 1.0, 6), "alpha": np.linspace(0.2, 2.0, 4)}
    ds = run_sweep(fn, grid, chunk_size=2, out_dir=sys.argv[1], progress=False)
    print(ds.attrs["chunks_computed"], ds.attrs["chunks_loaded"])
""")


def test_killed_sweep_resumes_to_the_same_dataset(tmp_path):
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(script), str(out), "3000"])
    deadline = time.time() + 240
    def finished():
        return [p for p in out.glob("chunk_*.npz") if not p.name.endswith(".tmp.npz")]

    while time.time() < deadline and len(finished()) < 3:
        time.sleep(0.05)
    proc.kill()  # SIGKILL: no clean-up, a chunk may be half written
    proc.wait()
    done = len(finished())
    assert 3 <= done < 12, done
    resumed = subprocess.run([sys.executable, str(script), str(out), "3000"], capture_output=True, text=True, check=True)
    computed, loaded = map(int, resumed.stdout.split())
    assert loaded == done and computed == 12 - done  # nothing computed twice, nothing lost
    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, str(script), str(fresh), "3000"], capture_output=True, text=True, check=True)
    import xarray as xr

    a = xr.open_dataset(out / "result.nc", engine="h5netcdf")
    b = xr.open_dataset(fresh / "result.nc", engine="h5netcdf")
    np.testing.assert_array_equal(a["E"], b["E"])  # bitwise the uninterrupted result


def test_two_host_devices_give_the_same_result(tmp_path):
    code = textwrap.dedent("""
        import json, jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp, numpy as np, jaxfriction as jf
        from jaxfriction.workflows import run_sweep
        def fn(mu, alpha):
            traj = jf.simulate(jf.ForcedOscillator(law=jf.Quinn(mu, 0.02), alpha=alpha, omega=0.5), jnp.zeros(2),
                               0.0, 20.0, 0.01, save_every=None)
            return {"E": traj.friction_dissipation[-1]}
        grid = {"mu": np.linspace(0.1, 1.0, 5), "alpha": np.linspace(0.2, 2.0, 3)}
        two = run_sweep(fn, grid, chunk_size=4, progress=False)
        one = run_sweep(fn, grid, chunk_size=4, devices=jax.local_devices()[:1], progress=False)
        print(json.dumps({"devices": two.attrs["devices"], "diff": float(np.max(np.abs(two.E - one.E)))}))
    """)
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["devices"] == 2 and result["diff"] < 1e-12
