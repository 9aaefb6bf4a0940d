import importlib.util
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import jaxfriction as jf
from jaxfriction._workflows.sweep.engine import run_sweep

GRID = {"mu": np.linspace(0.1, 1.0, 5), "alpha": np.linspace(0.2, 2.0, 4)}


def oscillator(mu, alpha):
    traj = jf.simulate(jf.Oscillator(law=jf.Quinn(mu, 0.02), force=jf.Harmonic(alpha, 0.5)), jnp.zeros(2), 0.0, 20.0,
                       0.01, save_every=None)
    return {"E": traj.friction_dissipation[-1], "x": traj.position[-1], "status": traj.status}


def test_grid_results_match_direct_evaluation_and_chunking():
    ds = run_sweep(oscillator, GRID, chunk_size=3, progress=False)
    assert ds["E"].dims == ("mu", "alpha") and ds["E"].shape == (5, 4)
    direct = oscillator(0.55, 2.0)  # one lane's compiled program, not the batch's: equal to round-off
    np.testing.assert_allclose(float(ds["E"].sel(mu=0.55, alpha=2.0)), float(direct["E"]), rtol=1e-14, atol=0)
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
    with pytest.raises(ValueError, match="fn must return a dict"):
        run_sweep(lambda mu, alpha: mu * alpha, GRID, progress=False)


def test_a_chunk_whose_results_were_rewritten_is_refused_on_resume(tmp_path):
    # a valid .npz with its lane range and lane digest kept, but other values: never loaded
    first = run_sweep(oscillator, GRID, chunk_size=8, out_dir=tmp_path, progress=False)
    file = tmp_path / "chunk_000001.npz"
    with np.load(file) as data:
        entries = {k: data[k] for k in data.files}
    entries["E"] = entries["E"] * 1.01
    np.savez(file, **entries)
    with pytest.raises(ValueError, match=r"chunk_000001.npz: its results do not match the digest"):
        run_sweep(oscillator, GRID, chunk_size=8, out_dir=tmp_path, progress=False)
    file.unlink()  # deleted, as the message says: computed again, the dataset is the first one
    again = run_sweep(oscillator, GRID, chunk_size=8, out_dir=tmp_path, progress=False)
    assert again.attrs["chunks_computed"] == 1 and np.array_equal(again["E"].values, first["E"].values)


def test_chunk_files_carry_their_identity(tmp_path):
    run_sweep(oscillator, GRID, chunk_size=8, out_dir=tmp_path, progress=False)  # chunks 0..2
    (tmp_path / "manifest.json").unlink()  # without the manifest, a resume with another grid ...
    other = {"mu": np.linspace(0.2, 1.1, 5), "alpha": GRID["alpha"]}
    with pytest.raises(ValueError, match=r"chunk_000000.npz belongs to another sweep"):
        run_sweep(oscillator, other, chunk_size=8, out_dir=tmp_path, progress=False)  # ... is refused by chunk
    (tmp_path / "manifest.json").unlink()
    a, b = tmp_path / "chunk_000000.npz", tmp_path / "chunk_000001.npz"
    a.rename(tmp_path / "swap"), b.rename(a), (tmp_path / "swap").rename(b)  # two chunk files swapped
    with pytest.raises(ValueError, match=r"chunk_000000.npz holds lanes \[8, 16\], but chunk 0 is lanes \[0, 8\]"):
        run_sweep(oscillator, GRID, chunk_size=8, out_dir=tmp_path, progress=False)
    b.write_bytes(b"junk")
    (tmp_path / "manifest.json").unlink(missing_ok=True)
    a.unlink()
    with pytest.raises(ValueError, match=r"chunk_000001.npz: not a readable chunk file"):
        run_sweep(oscillator, GRID, chunk_size=8, out_dir=tmp_path, progress=False)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        run_sweep(oscillator, GRID, out_dir=tmp_path / "file", progress=False)


def test_concurrent_sweeps_into_one_folder_all_succeed_alike(tmp_path):
    # three processes start the same sweep into one folder at once: one computes while the
    # others wait on the folder's lock, then load its chunks; result.nc is whole at every moment
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    procs = [subprocess.Popen([sys.executable, str(script), str(out), "200"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [p.communicate(timeout=240) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1][-2000:] for r in results]
    counts = sorted(tuple(map(int, r[0].split())) for r in results)
    assert counts[-1] == (12, 0) and counts[0] == (0, 12) and counts[1] == (0, 12)  # one computed everything
    assert not list(out.glob("*.tmp*")) and sorted(p.name for p in out.glob("chunk_*")) == [
        f"chunk_{i:06d}.npz" for i in range(12)]
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("chunk_")) == ["manifest.json", "result.nc"]
    with xr.open_dataset(out / "result.nc", engine="h5netcdf") as ds:
        assert ds["E"].shape == (6, 4) and np.all(np.isfinite(ds["E"]))


SCRIPT = textwrap.dedent("""
    import sys, jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp, numpy as np, jaxfriction as jf
    from jaxfriction._workflows.sweep.engine import run_sweep
    def fn(mu, alpha):  # long enough per chunk to be killed in the middle of the sweep
        traj = jf.simulate(jf.Oscillator(law=jf.Quinn(mu, 0.02), force=jf.Harmonic(alpha, 0.5)), jnp.zeros(2), 0.0,
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
        from jaxfriction._workflows.sweep.engine import run_sweep
        def fn(mu, alpha):
            traj = jf.simulate(jf.Oscillator(law=jf.Quinn(mu, 0.02), force=jf.Harmonic(alpha, 0.5)), jnp.zeros(2),
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


WORKER = Path(__file__).with_name("_distributed_worker.py")


def _load_worker():
    spec = importlib.util.spec_from_file_location("_distributed_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port():
    """A port free on every interface: the coordinator binds ``[::]:PORT``."""
    try:
        sock = socket.socket(socket.AF_INET6)
        sock.bind(("::", 0))
    except OSError:
        sock = socket.socket()
        sock.bind(("", 0))
    with sock:
        return sock.getsockname()[1]


def _run_cluster(out_dir, processes, runs=1, timeout=120, attempts=3):
    """Start ``processes`` workers joined by jax.distributed on localhost, each sweeping ``runs`` times.

    Returns, per run, the list of the processes' RESULT records. Starts again on another port
    when the coordinator's port was taken between choosing it and binding it.
    """
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # one CPU device per process
    env["JAX_PLATFORMS"] = "cpu"
    for attempt in range(attempts):
        port = _free_port()

        def command(i):
            return [sys.executable, str(WORKER), str(port), str(processes), str(i), str(out_dir), str(runs)]

        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "env": env}
        procs = [subprocess.Popen(command(i), **pipes) for i in range(processes)]
        results, deadline = [], time.monotonic() + timeout
        try:
            for proc in procs:
                stdout, stderr = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
                if proc.returncode and "Failed to add port" in stderr and attempt + 1 < attempts:
                    break  # the finally clause ends the others, which wait for the coordinator
                assert proc.returncode == 0, stderr[-3000:]
                lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
                assert len(lines) == runs, stdout[-3000:] + stderr[-3000:]
                results.append([json.loads(line[len("RESULT "):]) for line in lines])
            else:
                return [list(run) for run in zip(*results)]
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


def test_multi_process_sweep_splits_chunks_and_resumes(tmp_path):
    worker, processes = _load_worker(), 3
    single = run_sweep(worker.fn, worker.GRID, chunk_size=worker.CHUNK_SIZE, devices=jax.local_devices()[:1],
                       progress=False)
    n_chunks = single.attrs["chunks_computed"]
    assert n_chunks == 11 and single.attrs["process_count"] == 1 and single.attrs["process_index"] == 0
    expected = {k: np.ascontiguousarray(single[k].values).tobytes().hex() for k in ("E", "x", "status")}
    out = tmp_path / "shared"

    first, again = _run_cluster(out, processes, runs=2)  # the second call: a restart after the finish
    assert [r["process_index"] for r in first] == list(range(processes))
    for p, r in enumerate(first):
        mine = [i for i in range(n_chunks) if i % processes == p]  # round robin: chunk i belongs to i % P
        assert r["process_count"] == processes and r["local_devices"] == 1 and r["devices"] == 1
        assert r["chunk_size"] == single.attrs["chunk_size"]
        assert sorted(r["written"]) == mine and r["chunks_computed"] == len(mine)  # only its own share
        assert r["chunks_loaded"] == n_chunks - len(mine)  # the others' chunks, read from out_dir
        assert r["outputs"] == expected  # every process returns the full dataset, bitwise the 1-process one
        assert "out_dir is required" in r["missing_out_dir"]  # raised alike in every process
        assert "other arguments" in r["other_arguments"] and "process(es) [1, 2]" in r["other_arguments"]
        assert r["foreign_devices"].startswith("devices must be local")
    assert sorted(i for r in first for i in r["written"]) == list(range(n_chunks))  # every chunk exactly once
    assert sorted(p.name for p in out.glob("chunk_*")) == [f"chunk_{i:06d}.npz" for i in range(n_chunks)]
    with xr.open_dataset(out / "result.nc", engine="h5netcdf") as written:  # by process 0
        assert written.attrs["process_index"] == 0 and written.attrs["process_count"] == processes
        for k in ("E", "x", "status"):
            np.testing.assert_array_equal(written[k], single[k])

    # the restart computes nothing, loads everything, and returns the same
    assert [(r["chunks_computed"], r["chunks_loaded"], r["written"]) for r in again] == [(0, 11, [])] * 3
    assert all(r["outputs"] == expected for r in again)

    for i in (2, 3, 7):  # as if killed before these chunks were written; owners 2, 0, 1 of 3
        (out / f"chunk_{i:06d}.npz").unlink()
    (resumed,) = _run_cluster(out, 2)  # new processes resume on another process count: owners now 0, 1, 1
    assert [sorted(r["written"]) for r in resumed] == [[2], [3, 7]]
    assert [(r["chunks_computed"], r["chunks_loaded"]) for r in resumed] == [(1, 10), (2, 9)]
    assert all(r["outputs"] == expected and r["process_count"] == 2 for r in resumed)
