"""The compiled CPU loop (CompiledLoopKernel: the fused lane program emitted for numba) against
the XLA path.

What is particular to the compiled loop: AutoKernel takes it on CPUs and says why when it
cannot (one decision per sweep structure), the program is kept on disk and heals when
damaged, its blocks run on the caller's thread and a kept pool, books no output reads are
not integrated, the line limit. The laws and contract systems through it (one expression per
component, or loops where it chooses them) are in ``test_executors.py`` (executor ``compiled``).
"""

import logging
import re

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from test_contracts import SYSTEMS

import jaxfriction as jf
from jaxfriction._lanes.compiled_loop import CompiledLoop
from jaxfriction._lanes.traced import LaneProgram
from jaxfriction._workflows.sweep.sweep import default_chunk_size
from jaxfriction.testing import check_fused

SHORT = {"t1": 0.6, "window": 0.3, "dt": 0.01}


def _check(system, grid, **options):
    return check_fused(system, grid, kernel="compiled", **options)


@pytest.mark.slow
def test_a_program_past_the_line_limit_is_written_as_loops():
    """The contract's 8-element jointed oscillator with a tangent emits 5,455 lines one
    expression per component (numba: tens of seconds): AutoKernel writes it as loops and says
    why. With 4 elements it runs one expression per component and agrees with the XLA path."""
    options = {"wrt": ("law.F_S",), "dt": 1e-3, "t1": 0.04, "window": 0.02,
               "y0": jnp.array([0.05, 0.1])}
    for n in (8, 4):
        joint = jf.SegalmanIwan(F_S=0.5, K_T=10.0, n_elements=n, smoothing=0.1)
        system = jf.jointed_oscillator(joint, force_amplitude=0.8, damping=0.05)
        lane = jf.plan_sweep(system, {"law.F_S": [0.5]}, **options).lane
        _, name, reason = jf.AutoKernel().program(lane, ["law.F_S"], jax.devices("cpu"), dry=True)
        assert name == "compiled", reason
        assert ("loops over each lane's arrays" in str(reason)) == (n == 8)
    _check(system, {"law.F_S": [0.5, 0.56]}, **options)


def test_a_division_by_a_constant_is_a_product_by_its_reciprocal():
    """As XLA's algebraic simplifier rewrites it on the path the program matches (``A / Const
    => A * (1 / Const)``, and ``A * 1 => A``): the acceleration ``force / m`` of a body of mass
    2 costs no division per lane-step, and the sweep still agrees with the XLA path."""
    system = jf.Oscillator(law=jf.Quinn(1.0, 0.05), force=jf.Harmonic(1.0, 0.5), mass=2.0)
    grid, options = {"law.mu": [0.2, 0.7]}, {"t1": 0.6, "dt": 0.01}
    kernel, _ = LaneProgram(jf.plan_sweep(system, grid, kernel="vmap", **options).lane).pieces(list(grid))
    source = CompiledLoop(kernel, 8, compile=False).source
    one = re.search(r"^(K\d+) = np.float64\(float.fromhex\('0x1.0000000000000p\+0'\)\)$", source, re.M).group(1)
    assert not re.search(r"/ K\d+\b", source) and not re.search(rf"\* {one}\b|\b{one} \*", source)
    _check(system, grid, **options)


@pytest.fixture(scope="module")
def default_sweep():
    """Quinn's oscillator template as ``jaxfriction sweep`` runs it (cycles, transient, D and
    dD/dmu), with a stuck lane, an invalid one (mu < 0) and one unstable in the stick band."""
    tpl = jf.template("oscillator")
    grid = {"law.mu": [-0.5, 0.2, 1.2], "force.amplitude": [0.5, 2.0], "law.eps": [0.02, 1e-4]}
    return check_fused(tpl, grid, cycles=2, wrt=("law.mu",), kernel="compiled", block=8)


def test_the_default_sweep_agrees_to_round_off_with_its_statuses(default_sweep):
    xla, loop = default_sweep
    assert loop.attrs["kernel"] == "compiled" and xla.attrs["kernel"] == "vmap"
    status = loop["status"].values
    assert np.all(status[0] == jf.STATUS_INVALID_PARAMETER) and np.all(np.isnan(loop["dissipation"].values[0]))
    assert np.all(status[1:, :, 1] == jf.STATUS_UNSTABLE_STEP) and np.all(status[1:, :, 0] == jf.STATUS_OK)
    ok = status == 0
    # the loop contracts a * b + c to one fused multiply-add as XLA:CPU does: the slipping lanes
    # agree to a few units in the last place after 1,300 steps, the stuck ones to round-off itself
    np.testing.assert_allclose(loop["dissipation"].values[ok], xla["dissipation"].values[ok], rtol=1e-13,
                               atol=1e-16)
    np.testing.assert_allclose(loop["grad_dissipation"].values[ok], xla["grad_dissipation"].values[ok],
                               rtol=1e-12, atol=1e-15)
    assert np.nanmax(xla["dissipation"].values[ok]) > 5.0  # a lane that slips through the window


def test_auto_picks_the_compiled_loop_on_cpu_and_falls_back_with_the_reason(caplog):
    tpl = jf.template("oscillator")
    assert jf.plan_sweep(tpl, {"law.mu": [0.5]}, cycles=1).kernel == "compiled"
    with caplog.at_level(logging.INFO, logger="jaxfriction"):
        plan = jf.plan_sweep(tpl, {"law.mu": [0.5]}, cycles=1, wrt=("law.mu",), gradient="reverse")
    assert plan.kernel == "vmap" and "ReverseMode" in plan.kernel_reason and "falls back" in caplog.text
    with pytest.raises(ValueError, match="kernel: the compiled loop .*component-wise"):
        jf.plan_sweep(SYSTEMS["two-blocks"][0], {"law.mu[0]": [0.5]}, t1=0.1, dt=0.01, kernel="compiled")
    with pytest.raises(ValueError, match="lanes"):
        jf.CompiledLoopKernel(lanes=0)


def test_a_plan_decides_its_kernel_once_per_sweep_structure(monkeypatch):
    """A small sweep runs in milliseconds, so its planning must not repeat work: the default
    kernel's check and its program share one decision, a second plan of the same structure
    (another system object of equal structure, other values along the grid) makes none, and
    the structure's key is the same object for both (the caches compare it by identity)."""
    from jaxfriction._lanes import compiled
    from jaxfriction._lanes.structure import structure

    calls = []
    choose = compiled.CompiledLoopKernel._choose
    monkeypatch.setattr(compiled.CompiledLoopKernel, "_choose",
                        lambda self, lane, paths: calls.append(paths) or choose(self, lane, paths))

    def plan(amplitudes):  # t1 = 3.217 s: a structure no other test plans
        system = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=1e-3), force=jf.Harmonic(1.0, 0.8))
        return jf.plan_sweep(system, {"force.amplitude": amplitudes}, t1=3.217, dt=0.01, progress=False)

    first = plan(np.linspace(0.5, 1.0, 4))
    assert first.kernel == "compiled" and len(calls) == 1  # the check and the program: one decision
    again = plan(np.linspace(1.5, 3.0, 8))
    assert again.kernel == "compiled" and len(calls) == 1 and again.lane is not first.lane
    assert structure(again.lane) is structure(first.lane)
    xla = jf.plan_sweep(again.lane.system, {"force.amplitude": np.linspace(1.5, 3.0, 8)}, t1=3.217, dt=0.01,
                        kernel="vmap", progress=False).run()
    assert np.all(xla["dissipation"].values > 1e-3)  # the lanes slip
    np.testing.assert_allclose(again.run()["dissipation"].values, xla["dissipation"].values, rtol=1e-12)


def test_a_second_sweep_compiles_nothing_and_the_program_is_kept_on_disk(tmp_path, monkeypatch):
    """The program is cached in the process by its source and on disk next to its source file:
    loading it in a fresh namespace (as a new process does) reuses numba's machine code."""
    from jaxfriction._lanes import numba_program

    monkeypatch.setenv("JAXFRICTION_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("JAXFRICTION_NO_CACHE", raising=False)
    lane = jf.plan_sweep(jf.template("oscillator"), {"law.mu": [0.5]}, t1=0.2, dt=0.01, kernel="vmap").lane
    kernel, _ = LaneProgram(lane).pieces(["law.mu"])
    loop = CompiledLoop(kernel, 8)
    loop.run.compiled()  # numba compiles in a thread of its own: wait for it
    assert CompiledLoop(kernel, 8).run is loop.run  # in this process: the same compiled program
    folder = tmp_path / "compiled_loop"
    assert len(list(folder.glob("jf_compiled_loop_*.py"))) == 1 and list(folder.glob("__pycache__/*.nbc"))
    monkeypatch.setattr(numba_program, "_PROGRAMS", {})
    again = CompiledLoop(kernel, 8)
    assert again.run is not loop.run and again.compile_seconds < loop.compile_seconds


def test_blocks_are_dealt_to_the_callers_thread_and_a_kept_pool_and_a_slow_thread_takes_fewer(monkeypatch):
    """A program deals its blocks in shares (share ``k`` of ``m``: blocks ``k, k + m, ...``)
    to the calling thread and the workers of one pool kept between calls (new threads for
    every call lost a varying part of the parallelism), each thread taking the next share when
    it is done: a thread on a slower core runs fewer blocks (with a fixed half each, the
    slower thread decided the time). An error in a worker is raised by the call, not lost in
    a thread."""
    import threading
    import time

    from jaxfriction._lanes import numba_program

    monkeypatch.setattr(numba_program, "numba_threads", lambda: 2)
    caller, seen = threading.current_thread(), []

    def blocks(shared, p, out, first, stride):
        mine = threading.current_thread() is caller
        seen.append((first, stride, threading.current_thread()))
        for b in range(first, p.shape[1] // 4, stride):
            time.sleep(0.002 if mine else 0.03)  # the worker's core is slow
            out[:, 4 * b: 4 * b + 4] = b
            if shared[0] < 0 and not mine:
                raise FloatingPointError(f"block {b}")

    program = numba_program.Program(lambda: blocks, lanes=4)
    out = np.zeros((1, 64))
    for _ in range(2):
        program(np.ones(1), np.zeros((1, 64)), out)
        np.testing.assert_array_equal(out[0], np.repeat(np.arange(16.0), 4))  # every block once
        out[:] = 0
    assert sorted((first, stride) for first, stride, _ in seen) == sorted([(k, 16) for k in range(16)] * 2)
    workers = {thread for _, _, thread in seen if thread is not caller}
    assert len(workers) == 1  # the same pool thread in both calls
    by_worker = sum(thread is not caller for _, _, thread in seen)
    assert 1 <= by_worker <= 6, by_worker  # of 32 shares; a fixed half would be 16
    with pytest.raises(FloatingPointError, match="block"):
        program(-np.ones(1), np.zeros((1, 64)), out)


def test_chunked_sweep_resumes_from_the_xla_paths_chunks(tmp_path):
    tpl = jf.template("oscillator")
    grid = {"law.mu": [0.3, 0.6, 0.9, 1.2]}
    options = {"cycles": 1, "wrt": ("law.mu",), "chunk_size": 2, "out_dir": tmp_path, "progress": False}
    whole = jf.sweep(tpl, grid, kernel="vmap", **options)
    (tmp_path / "chunk_000001.npz").unlink()  # as if killed before the second chunk was saved
    resumed = jf.sweep(tpl, grid, kernel="compiled", **options)
    assert (resumed.attrs["chunks_loaded"], resumed.attrs["chunks_computed"]) == (1, 1)
    for name in ("dissipation", "grad_dissipation", "stick_fraction"):
        np.testing.assert_allclose(resumed[name], whole[name], rtol=1e-12, atol=1e-15)


def test_the_default_chunk_grows_on_compiled_kernels_only_while_a_chunk_stays_cheap():
    # the default oscillator's 50 cycles (62,832 steps of 5 numbers: x, v and three books): 8,192
    # lanes; a chain of 4,096 blocks at 20,000 steps: the old 1,024; 40 numbers at 1e5 steps: 2,048
    assert default_chunk_size("compiled", 62_832, 5) == 8192
    assert default_chunk_size("compiled", 20_000, 8195) == 1024
    assert default_chunk_size("fused", 100_000, 40) == 2048
    assert default_chunk_size("vmap", 100, 2) == default_chunk_size("compiled", None, 2) == 1024


def test_a_compiled_sweep_takes_one_chunk_and_resumes_a_folder_saved_in_smaller_ones(tmp_path):
    """Without ``chunk_size`` the compiled loop runs these 2,400 lanes as one chunk, with the
    results of chunks of 1,024 bit for bit; a folder saved in chunks of 1,024 (as the XLA path or
    an earlier version saves it) resumes with its own chunk size instead of being refused."""
    tpl = jf.template("oscillator")
    grid = {"law.mu": np.linspace(0.1, 1.5, 40), "force.amplitude": np.linspace(0.5, 2.0, 60)}
    options = {**SHORT, "kernel": "compiled", "progress": False}
    whole = jf.sweep(tpl, grid, **options)
    assert (whole.attrs["chunk_size"], whole.attrs["chunks_computed"]) == (2400, 1)
    saved = jf.sweep(tpl, grid, chunk_size=1024, out_dir=tmp_path, **options)
    (tmp_path / "chunk_000001.npz").unlink()  # as if killed before the second chunk was saved
    resumed = jf.sweep(tpl, grid, out_dir=tmp_path, **options)
    assert resumed.attrs["chunk_size"] == 1024
    assert (resumed.attrs["chunks_loaded"], resumed.attrs["chunks_computed"]) == (2, 1)
    for name in ("dissipation", "stick_fraction", "final_position"):
        np.testing.assert_array_equal(saved[name], whole[name])
        np.testing.assert_array_equal(resumed[name], whole[name])
    with pytest.raises(ValueError, match="chunk_size 2048"):  # a chunk size given is still checked
        jf.sweep(tpl, grid, chunk_size=2048, out_dir=tmp_path, **options)


def test_a_program_too_long_for_one_expression_per_component_is_written_as_loops():
    # 8 Segalman elements with a tangent: 5,455 emitted lines one expression per component (the
    # jointed template's 64: 22,497, minutes of numba compile); loops over the elements instead
    # (tests/test_looped_program.py)
    system = jf.jointed_oscillator(jf.SegalmanIwan(F_S=0.5, K_T=10.0, n_elements=8, smoothing=0.1),
                                   force_amplitude=0.8, damping=0.05)
    options = {"wrt": ("law.F_S",), "dt": 1e-3, "t1": 0.04, "window": 0.02}
    plan = jf.plan_sweep(system, {"force.amplitude": [0.1]}, **options)
    assert plan.kernel == "compiled" and "loops over each lane's arrays" in plan.kernel_reason
    with pytest.raises(ValueError, match="lines, more than the compiled loop's 4000"):
        jf.plan_sweep(system, {"force.amplitude": [0.1]}, **options, kernel=jf.CompiledLoopKernel(loops=False))


def _live(system, observables, **options):
    """The kernel's integrated state components for a sweep of ``system`` asking ``observables``."""
    plan = jf.plan_sweep(system, {"force.amplitude": [0.5, 1.0]}, observables=observables, kernel="vmap",
                         **SHORT, **options)
    return LaneProgram(plan.lane).pieces(["force.amplitude"])[0].live


def test_books_no_output_reads_are_not_integrated():
    """Workload A asks D and the stick fraction: the damping and input-work books are not
    integrated (they were a quarter of the loop's arithmetic); with ``energy_residual``
    every book is. The outputs are the XLA path's either way."""
    system = jf.Oscillator(law=jf.Quinn(0.4, 0.02), force=jf.Harmonic(0.8, 2.0), damping=0.05)
    few = {"dissipation": jf.window_dissipation, "stick_fraction": jf.stick_fraction}
    np.testing.assert_array_equal(_live(system, few), [True, True, True, False, False])
    assert _live(system, {"final_position": jf.final_position}).tolist() == [True, True, False, False, False]
    assert _live(system, None) is None  # the defaults include energy_residual: every book
    # with no end-point observable the motion is still integrated: its finiteness is the status
    np.testing.assert_array_equal(_live(system, {"peak_slip": jf.peak_slip}), [True, True, False, False, False])
    _check(system, {"force.amplitude": [0.3, 0.9, 1.5]}, observables=few, wrt=("law.mu",), y0=jnp.array([0.2, 0.0]),
           **SHORT)


class _FedBack(jf.Oscillator):
    """A system whose acceleration reads its own input-work book (the layout allows it)."""

    def rates(self, t, y):
        r = super().rates(t, y)
        return r._replace(acceleration=r.acceleration - 0.3 * self.input_work(y))


def test_a_book_the_dynamics_read_stays_integrated():
    system = _FedBack(law=jf.Quinn(0.4, 0.02), force=jf.Harmonic(0.8, 2.0))
    few = {"dissipation": jf.window_dissipation}
    np.testing.assert_array_equal(_live(system, few), [True, True, True, False, True])
    _check(system, {"force.amplitude": [0.3, 0.9]}, observables=few, y0=jnp.array([0.2, 0.0]), **SHORT)


def test_components_read_walks_the_scalar_trace():
    from jaxfriction._lanes.pieces import components_read

    spec = (jax.ShapeDtypeStruct((4,), jnp.float64), jax.ShapeDtypeStruct((), jnp.float64))
    assert components_read(lambda y, s: y[2] * s + jnp.sin(y[0]), spec) == {0, 2}
    assert components_read(lambda y, s: jnp.stack([y[3], s]), spec) == {3}
    assert components_read(lambda y, s: jnp.sum(y) * 0.0, spec) == {0, 1, 2, 3}  # x * 0 is not 0 (NaN)


_CACHED_SWEEP = """
import sys, logging
logging.basicConfig(level=logging.WARNING, format="LOG %(message)s")
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np, jaxfriction as jf
ds = jf.sweep(jf.template("oscillator"), {"law.mu": [0.3, 0.5]}, t1=0.5, dt=0.01, kernel="compiled", progress=False)
np.save(sys.argv[1], np.stack([np.asarray(ds[k].values, dtype=float).ravel() for k in sorted(ds.data_vars)]))
"""


def _sweep_in_a_process(cache, out):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "JAXFRICTION_NO_CACHE"}
    env["JAXFRICTION_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", _CACHED_SWEEP, str(out)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return np.load(out), done.stderr


@pytest.fixture(scope="module")
def clean_cache(tmp_path_factory):
    """A compiled-loop cache written by one process, and that process's sweep result."""
    folder = tmp_path_factory.mktemp("clean")
    result, _ = _sweep_in_a_process(folder / "cache", folder / "clean.npy")
    return folder / "cache", result


_DAMAGE = {"truncate": lambda b: b[: len(b) // 2], "zero": lambda b: b"", "garble": lambda b: bytes(x ^ 0x5A for x in b)}
_FAST_DAMAGE = {(".nbi", "truncate")}  # the reported case; the other eight are slow (two processes each)


@pytest.mark.parametrize("suffix,damage", [
    pytest.param(s, d, id=f"{s[1:]}-{d}", marks=() if (s, d) in _FAST_DAMAGE else pytest.mark.slow)
    for s in (".nbi", ".nbc", ".py") for d in _DAMAGE])
def test_a_damaged_cache_entry_heals_and_the_sweep_gives_the_clean_result(clean_cache, tmp_path, suffix, damage):
    """Issue 38: a truncated .nbi made every later sweep exit with numba's UnpicklingError. Now
    the entry is removed (one log line naming the folder), the program compiled again and
    the cache rewritten; the result is bitwise that of the clean run."""
    import shutil

    shutil.copytree(clean_cache[0], tmp_path / "cache")
    folder = tmp_path / "cache" / "compiled_loop"
    (entry,) = [p for p in folder.rglob(f"jf_compiled_loop_*{suffix}")]
    entry.write_bytes(_DAMAGE[damage](entry.read_bytes()))
    result, log = _sweep_in_a_process(tmp_path / "cache", tmp_path / "out.npy")
    np.testing.assert_array_equal(result, clean_cache[1])
    assert f"LOG compiled-loop cache in {folder}: the entry of jf_compiled_loop_" in log, log[-2000:]
    assert "removed, compiling it again" in log
    # healed: the next process loads the rewritten entries without a word
    again, log = _sweep_in_a_process(tmp_path / "cache", tmp_path / "again.npy")
    np.testing.assert_array_equal(again, clean_cache[1])
    assert "compiled-loop cache" not in log, log[-2000:]
