"""The compiled CPU loop (CompiledLoopKernel: the fused lane program emitted for numba) against
the XLA path.

Every law of the library (scalar laws in the forced oscillator, vector laws in the block on a
shaking floor, dynamic laws in the oscillator) and the contract systems give the XLA path's
observables, forward-mode gradients and status codes to round-off, in float64 and float32;
AutoKernel takes the loop on CPUs and says why when it cannot.
"""

import logging

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from test_contracts import DYNAMIC_LAWS, LAWS, SHAKE, SYSTEMS

import jaxfriction as jf
from jaxfriction._kernels.compiled_loop import CompiledLoop
from jaxfriction._workflows.sweep.fused import FusedLanes
from jaxfriction.testing import check_fused

SHORT = {"t1": 0.6, "window": 0.3, "dt": 0.01}
#: One law of each kind in the fast suite (each system costs an XLA and a numba compile,
#: ~3-6 s on one core); the rest of the matrix is marked slow.
FAST = {"Quinn", "VectorQuinn", "LuGre", "oscillator"}


def _params(items, name):
    return [pytest.param(x, id=name(x), marks=() if name(x) in FAST else pytest.mark.slow) for x in items]


def _first_parameter(law):
    return "law." + jf.scalar_parameter_paths(law)[0]


def _check(system, grid, **options):
    return check_fused(system, grid, kernel="compiled", **options)


@pytest.mark.parametrize("law", _params([law for law in LAWS if not law.vector], lambda law: type(law).__name__))
def test_scalar_laws_in_the_oscillator(law):
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.8, 2.0), damping=0.05)
    _check(system, {"force.amplitude": [0.3, 0.9, 1.5]}, wrt=(_first_parameter(law),), y0=jnp.array([0.2, 0.0]),
           **SHORT)


@pytest.mark.parametrize("law", _params([law for law in LAWS if law.vector], lambda law: type(law).__name__))
def test_vector_laws_in_the_block(law):
    """In slip: exact Coulomb switches on ``|v| > 0``, a test that round-off can flip at rest."""
    system = jf.BlockOnShakingFloor(law=law, ground=SHAKE)
    _check(system, {"ground.omega": [4.0, 6.0]}, wrt=(_first_parameter(law),), dt=5e-4, t1=0.06, window=0.03,
           y0=jnp.array([0.0, 0.0, 0.5, 0.3]))


@pytest.mark.parametrize("law", _params([law for law, _ in DYNAMIC_LAWS[:1] + DYNAMIC_LAWS[2:]],
                                        lambda law: type(law).__name__))
def test_dynamic_laws_in_the_oscillator(law):
    if isinstance(law, jf.SegalmanIwan):  # 16 elements emit 5,602 lines: past MAX_SOURCE_LINES (the XLA path)
        law = jf.SegalmanIwan(F_S=law.F_S, K_T=law.K_T, n_elements=8)
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.8, 2.0))
    _check(system, {"force.amplitude": [0.4, 1.2]}, wrt=("force.amplitude",), dt=1e-3, t1=0.2, window=0.1)


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


@pytest.mark.parametrize("name", _params([n for n in SYSTEMS if n not in ("two-blocks", "jointed-oscillator")], str))
def test_contract_systems(name):
    system = SYSTEMS[name][0]
    path = jf.scalar_parameter_paths(system)[0]
    value = float(jf.get_parameter(system, path))
    dt = 1e-3 if "block" in name or "griffin" in name or "iwan" in name or "jointed" in name else 0.01
    _check(system, {path: [value, 1.1 * value + 0.01]}, wrt=(path,), dt=dt, t1=40 * dt, window=20 * dt,
           y0=jnp.concatenate([jnp.full(system.n_dof, 0.05), jnp.full(system.n_dof, 0.1)]))


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


def test_float32_loop_agrees_with_the_xla_path():
    with jax.enable_x64(False):
        xla, loop = _check(jf.template("oscillator"), {"law.mu": [0.3, 0.9]}, cycles=1, wrt=("law.mu",),
                           rtol=1e-5, atol=1e-6)
        assert loop["dissipation"].dtype == np.float32 and loop.attrs["kernel"] == "compiled"


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


def test_a_second_sweep_compiles_nothing_and_the_program_is_kept_on_disk(tmp_path, monkeypatch):
    """The program is cached in the process by its source and on disk next to its source file:
    loading it in a fresh namespace (as a new process does) reuses numba's machine code."""
    from jaxfriction._kernels import numba_program

    monkeypatch.setenv("JAXFRICTION_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("JAXFRICTION_NO_CACHE", raising=False)
    lane = jf.plan_sweep(jf.template("oscillator"), {"law.mu": [0.5]}, t1=0.2, dt=0.01, kernel="vmap").lane
    kernel, _ = FusedLanes(lane, 8, 4, True).build(["law.mu"])
    loop = CompiledLoop(kernel, 8)
    loop.run.compiled()  # numba compiles in a thread of its own: wait for it
    assert CompiledLoop(kernel, 8).run is loop.run  # in this process: the same compiled program
    folder = tmp_path / "compiled_loop"
    assert len(list(folder.glob("jf_compiled_loop_*.py"))) == 1 and list(folder.glob("__pycache__/*.nbc"))
    monkeypatch.setattr(numba_program, "_PROGRAMS", {})
    again = CompiledLoop(kernel, 8)
    assert again.run is not loop.run and again.compile_seconds < loop.compile_seconds


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


def test_a_program_too_long_for_one_expression_per_component_is_written_as_loops():
    # the jointed template's 64 Segalman elements: 22,497 emitted lines one expression per
    # component (minutes of numba compile); loops over the elements instead (tests/test_looped_program.py)
    tpl = jf.template("jointed", law="segalman")
    plan = jf.plan_sweep(tpl, {"force.amplitude": [0.1]}, wrt=tpl.wrt)
    assert plan.kernel == "compiled" and "loops over each lane's arrays" in plan.kernel_reason
    with pytest.raises(ValueError, match="lines, more than the compiled loop's 4000"):
        jf.plan_sweep(tpl, {"force.amplitude": [0.1]}, wrt=tpl.wrt, kernel=jf.CompiledLoopKernel(loops=False))


def _live(system, observables, **options):
    """The kernel's integrated state components for a sweep of ``system`` asking ``observables``."""
    plan = jf.plan_sweep(system, {"force.amplitude": [0.5, 1.0]}, observables=observables, kernel="vmap",
                         **SHORT, **options)
    return FusedLanes(plan.program, 8, 4, True).build(["force.amplitude"])[0].live


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
    from jaxfriction._kernels.fused_rk4 import components_read

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
