"""An honest benchmark of jaxfriction against what a user would otherwise write.

Workloads (float64, classical RK4, the library's step-aligned grids):

- **A**, the default sweep: Quinn's forced oscillator ``x'' + x = f + alpha sin(omega t)``,
  Quinn's law, ``dt = 0.01``, 50 cycles at ``omega = 0.5`` (62,850 steps), output the
  dissipation ``D`` of the last cycle, over batches of ``(mu N, alpha)`` lanes.
- **B**, the Burridge-Knopoff chain (``n = 32`` and ``n = 1024``) over a batch of loads,
  output the final state ``[q, v, E_friction]``.
- **C**, the gradient ``(dD/d mu N, dD/d alpha)`` per trajectory.

Contenders, in the same run and on the same RK4 arithmetic: jaxfriction (``jf.sweep`` over
the paths ``law.mu`` and ``force.amplitude`` as samples, in memory, with its default kernel:
on a CPU the compiled loop, :class:`~jaxfriction.CompiledLoopKernel`, compiled afresh into
a temporary cache folder so that its compile time is measured; the chain through
``simulate``), jaxfriction on the XLA path (``kernel="vmap"``, sharded over one CPU device
per core), a
hand-written numba loop over lanes (serial and ``prange``), vectorized numpy, scipy
``solve_ivp`` (fixed-grid RK4 ``OdeSolver``, small batches) and plain diffrax (RK4 from its
Butcher tableau, ``StepTo`` grids). Kernels live in ``scripts/benchmarks/contenders.py``.

Method: throughput is trajectory-steps per second (lanes x RK4 steps per call / call time),
the median of ``--runs`` (default 5) timed calls after one warm-up call; a cell whose call
is slow (over ``--cell-seconds`` for all its runs) gets fewer runs, at least 3, and the
table says how many. JAX compile time is reported apart (first call minus the median);
numba's one-time JIT compile is measured on a tiny first call. The ratio of jaxfriction to
numba's ``prange`` loop is also measured paired (``paired`` in the table): five rounds in
which the two warm calls run one after the other, and the median of the rounds' ratios, so
that the machine's drift between two cells does not enter it. A JAX or numba contender
whose call, predicted from its previous (smaller) batch, would take longer than
``--call-seconds`` at the full 50 cycles runs 10 or 5 cycles instead (same step cost; the
library saves the measured cycle's trajectory, so its scaled rate is if anything a slight
underestimate), and the table says so; numpy and scipy always run 2 cycles (they cost
microseconds per step in Python). Past ``--budget`` seconds every remaining cell takes its
fewest cycles and runs, so that the whole run stays under 10 minutes on a 2-core machine.

Agreement: every result is compared with jaxfriction's on the same lanes and cycles.
``agrees`` is the largest ``|x - x_jf| / max(|x_jf|, 1e-6 max|x_jf|)`` over the lanes checked
(lanes that stay stuck have D ~ 1e-20, pure round-off of the stick band, hence the floor).
Lanes are a fixed low-discrepancy sequence over ``mu N in [0, 1)``, ``alpha in [0.05, 2)``
(lane 1 has ``mu N = 0``), so every batch is a prefix of the larger ones: a batch is checked
on the lanes jaxfriction computed at that cycle count, its own timed run or an untimed
reference on the first 256 lanes (64 for gradients). Tolerances: 1e-9 for A and B, 1e-7
for C; the run ends with a warning if a cell misses them.

Ceiling: the flops (adds, muls; an FMA is 2) and divisions per RK4 step are counted from the
numba kernel (``contenders.py`` docstring: 65 flops, 16 min/max, 0 divisions per lane-step
for A; 223 flops for C); the machine's FMA and division rates are measured with numba
micro-kernels on one core and on all cores. ``frac. of ceiling`` is ``flops/step x steps/s /
(2 x FMA rate, all cores)``.

Usage: ``python scripts/benchmarks/bench.py [--quick] [--batches 1 64 1024 8192] [--json PATH]
[--markdown PATH]``. Speed is measured here, never in tests.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import os
import platform
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fast smoke run: 3 cycles, small batches, 3 runs")
    p.add_argument("--batches", type=int, nargs="+", help="batch sizes of workload A (default 1 64 1024 8192; "
                   "65536 added on GPU)")
    p.add_argument("--grad-batches", type=int, nargs="+", help="batch sizes of workload C (default 1 64 1024)")
    p.add_argument("--chain", nargs="+", help="workload B as n:batch pairs (default 32:64 1024:8)")
    p.add_argument("--chain-steps", type=int, help="RK4 steps of workload B (default 2000)")
    p.add_argument("--cycles", type=int, help="forcing cycles of workloads A and C (default 50)")
    p.add_argument("--runs", type=int, help="timed calls per cell (default 5; 3 with --quick)")
    p.add_argument("--call-seconds", type=float, default=4.0,
                   help="largest predicted call time at full cycles before a contender runs fewer cycles")
    p.add_argument("--cell-seconds", type=float, default=12.0,
                   help="time for the timed runs of one cell; slower cells get fewer runs (>= 3)")
    p.add_argument("--budget", type=float, default=420.0,
                   help="seconds after which every remaining cell runs its fewest cycles and runs")
    p.add_argument("--max-reverse-batch", type=int, default=64,
                   help="largest batch for diffrax reverse mode (RecursiveCheckpointAdjoint)")
    p.add_argument("--scipy-batches", type=int, nargs="+", default=[1, 64], help="batches for solve_ivp")
    p.add_argument("--numba-anchor", type=int, default=64,
                   help="numba forcing: rotation recurrence re-anchored with sin every N steps (1: sin at every "
                        "stage; checked against jaxfriction like every result)")
    p.add_argument("--only", nargs="+", choices=["A", "B", "C"], default=["A", "B", "C"], help="workloads to run")
    p.add_argument("--cpu-devices", type=int, default=os.cpu_count(),
                   help="split the CPU into N JAX devices, jf.sweep shards over them (default: one per "
                        "core, as the jaxfriction CLI does; 1 for a single device)")
    p.add_argument("--json", default="bench_results.json", help="JSON output path ('' for none)")
    p.add_argument("--markdown", default="", help="also write the markdown tables to this path")
    args = p.parse_args(argv)
    if args.quick:
        args.cycles = args.cycles or 3
        args.batches = args.batches or [1, 16]
        args.grad_batches = args.grad_batches or [1, 16]
        args.chain = args.chain or ["32:8", "1024:2"]
        args.chain_steps = args.chain_steps or 200
        args.runs = args.runs or 3
        args.scipy_batches = [b for b in args.scipy_batches if b <= 16] or [1]
    args.cycles = args.cycles or 50
    args.chain = args.chain or ["32:64", "1024:8"]
    args.chain_steps = args.chain_steps or 2000
    args.runs = args.runs or 5
    return args


ARGS = parse_args() if __name__ == "__main__" else None

import jax

jax.config.update("jax_enable_x64", True)
if ARGS is not None and ARGS.cpu_devices:
    jax.config.update("jax_num_cpu_devices", ARGS.cpu_devices)

import jax.numpy as jnp
import numba
import numpy as np

import jaxfriction as jf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contenders as C
from timing import alternating

# the compiled loop's programs go to a fresh folder: its first call compiles, and is timed
os.environ.setdefault("JAXFRICTION_CACHE_DIR", __import__("tempfile").mkdtemp(prefix="jf-bench-cache-"))
T_START = time.perf_counter()
FLOOR = 1e-6  # relative floor of the agreement check (see the module docstring)
#: Lanes of a reference computed only for checking (jaxfriction untimed), workloads A and C.
REF_LANES = {"A": 256, "C": 64}


def reference_lanes(batches, cap):
    """Lanes of an untimed reference: up to ``cap``, never a timed batch size (the library caches
    its compiled program per batch size; a reference must not compile a timed cell's program)."""
    lanes = min(max(batches), cap)
    return lanes + 1 if lanes in batches else lanes


def ladders(full):
    """Cycle counts to fall back on: JAX and numba contenders ``full, 10, 5`` (the library's measured
    cycle saves its trajectory, so it should stay a small part of the run); numpy and scipy 2."""
    fast = sorted({c for c in (full, 10, 5) if c <= full}, reverse=True)
    return fast, min(2, full)


def log(*a):
    print(f"[{time.perf_counter() - T_START:6.0f} s]", *a, flush=True)


def block(out):
    return jax.block_until_ready(out)


# ----------------------------------------------------------------------------- jaxfriction side


class Workload:
    """Workload A's settings: Quinn 2004 eq. 5 with Quinn's law, eps = 2 dt, from rest."""

    omega, dt, eps = 0.5, 0.01, 0.02

    def __init__(self, cycles):
        self.cycles = cycles


SYSTEM = jf.Oscillator(law=jf.Quinn(1.0, Workload.eps), force=jf.Harmonic(1.0, Workload.omega))


def sweep_config(cycles):
    return Workload(cycles)


def steps_of(cycles):
    period = 2 * math.pi / Workload.omega
    window = jf.fixed_grid(0.0, period, Workload.dt, None)[1]
    return cycles * window  # the transient of whole periods runs on the window's step


def _sweep(cycles, mu, alpha, kernel="auto", **kw):
    """``jf.sweep`` of workload A on the lanes ``(mu, alpha)`` (samples, in memory)."""
    return jf.sweep(SYSTEM, {"law.mu": np.asarray(mu), "force.amplitude": np.asarray(alpha)}, samples=True,
                    cycles=cycles, frequency="force.omega", dt=Workload.dt, progress=False,
                    observables={"dissipation": jf.window_dissipation, "stick_fraction": jf.stick_fraction},
                    kernel=kernel, **kw)


def jf_sweep(cycles, kernel="auto"):
    """jaxfriction's batch call for workload A: ``(fn(mu, alpha) -> D, label)``."""
    return (lambda mu, alpha: _sweep(cycles, mu, alpha, kernel)["dissipation"].values), "jf.sweep"


def jf_gradient(cycles, mode: str, kernel="auto"):
    """jaxfriction's gradient of D in (mu N, alpha): ``fn(mu, alpha) -> (dD/dmu, dD/dalpha)``."""

    def fn(mu, alpha):
        grad = _sweep(cycles, mu, alpha, kernel, wrt=["law.mu", "force.amplitude"],
                      gradient=mode)["grad_dissipation"]
        return grad.sel(wrt="law.mu").values, grad.sel(wrt="force.amplitude").values

    return fn


def jf_chain(n, steps, dt, eps):
    def run(alpha):
        system = jf.BurridgeKnopoffChain(law=jf.Quinn(1.0, eps), n=n, alpha=alpha)
        return jf.simulate(system, jnp.zeros(2 * n), 0.0, steps * dt, dt, save_every=None).ys[-1]

    return jax.jit(jax.vmap(run))


# ----------------------------------------------------------------------------- measurement


def rel_diff(x, ref):
    """Largest ``|x - ref| / max(|ref|, FLOOR max|ref|)`` over the common prefix of lanes."""
    x = np.asarray(x, dtype=float)
    ref = np.asarray(ref, dtype=float)
    k = min(len(x), len(ref))
    x, ref = x[:k], ref[:k]
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    if scale == 0.0:
        return float(np.max(np.abs(x - ref))), k
    return float(np.max(np.abs(x - ref) / np.maximum(np.abs(ref), FLOOR * scale))), k


def rel_diff_states(x, ref):
    """Chain states: per lane ``max|x - ref| / max|ref|``, largest over lanes."""
    x = np.asarray(x, dtype=float)
    ref = np.asarray(ref, dtype=float)
    k = min(len(x), len(ref))
    d = np.max(np.abs(x[:k] - ref[:k]), axis=1) / np.maximum(np.max(np.abs(ref[:k]), axis=1), 1e-300)
    return float(np.max(d)), k


BUDGET = [math.inf]


def timed(call, runs, cell_seconds):
    """Warm-up call (compile for JAX), then timed calls: ``(out, first_s, [times])``.

    ``runs`` timed calls, or fewer (>= 3) when the first timed call shows they would take
    longer than ``cell_seconds``.
    """
    t = time.perf_counter()
    out = block(call())
    first = time.perf_counter() - t
    times = []
    target = runs
    while len(times) < target:
        t = time.perf_counter()
        block(call())
        times.append(time.perf_counter() - t)
        if len(times) == 1:
            if time.perf_counter() - T_START > BUDGET[0]:
                cell_seconds = 0.0  # over budget: the fewest runs allowed
            if times[0] * runs > cell_seconds:
                target = max(min(3, runs), min(runs, int(cell_seconds / max(times[0], 1e-9))))
    return out, first, times


class Rates:
    """Throughput seen so far per contender, to predict a call's time before making it."""

    def __init__(self):
        self.rate = {}

    def predict(self, name, steps):
        r = self.rate.get(name)
        return None if r is None else steps / r

    def update(self, name, rate):
        self.rate[name] = rate  # the latest (largest) batch predicts the next one best


def choose_cycles(rates, name, batch, full_cycles, ladder, call_seconds, slow=None):
    """Cycles for a cell: ``slow`` (numpy, scipy) if given, else the full count unless the call
    predicted from the contender's last cell is over ``call_seconds``; past ``--budget`` seconds,
    the fewest cycles of the ladder."""
    if slow is not None:
        return slow
    if time.perf_counter() - T_START > BUDGET[0]:
        return ladder[-1]
    for cycles in ladder:
        pred = rates.predict(name, batch * steps_of(cycles))
        if pred is None or pred <= call_seconds:
            return cycles
    return ladder[-1]


def fmt_rate(x):
    if x is None or not np.isfinite(x):
        return "-"
    for unit, f in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= f:
            return f"{x / f:.3g} {unit}"
    return f"{x:.3g}"


def fmt_g(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return f"{x:.{digits}g}"


# ----------------------------------------------------------------------------- machine info, ceiling


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    dev = jax.devices()
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "cpu_model": cpu,
        "cpu_cores": cores,
        "jax_backend": jax.default_backend(),
        "jax_devices": [str(d) for d in dev],
        "jax_device_kind": dev[0].device_kind,
        "jax": jax.__version__,
        "jaxlib": getattr(__import__("jaxlib"), "__version__", "?"),
        "numba": numba.__version__,
        "numba_threads": numba.get_num_threads(),
        "numpy": np.__version__,
        "scipy": __import__("scipy").__version__,
        "diffrax": __import__("diffrax").__version__,
        "jaxfriction": jf.__version__,
        "jaxfriction_entry": "jf.sweep",
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def measure_ceiling(quick, cores):
    secs = 0.1 if quick else 0.3
    out = {}
    for label, threads in (("1 core", 1), (f"{cores} cores", cores)):
        out[label] = {
            "fma_per_s": C.fma_rate(threads, secs),
            "div_scalar_per_s": C.div_rate_scalar(threads, secs),
            "div_packed_per_s": C.div_rate_packed(threads, secs),
        }
        log(f"ceiling {label}: FMA {out[label]['fma_per_s'] / 1e9:.3g} G/s, divisions scalar "
            f"{out[label]['div_scalar_per_s'] / 1e9:.3g} G/s, packed {out[label]['div_packed_per_s'] / 1e9:.3g} G/s")
    # all cores can do no less than one (a busy machine can make the all-core figure look lower)
    peak_flops = 2 * max(v["fma_per_s"] for v in out.values())
    div_rate = max(max(v["div_scalar_per_s"], v["div_packed_per_s"]) for v in out.values())
    return {
        "rates": out,
        "peak_flops_all_cores": peak_flops,
        "div_rate_all_cores": div_rate,
        "A": {"flops_per_step": C.FLOPS_PER_STEP_A, "minmax_per_step": C.MINMAX_PER_STEP_A,
              "divs_per_step_numba": C.DIVS_PER_STEP_A_NUMBA,
              "sines_per_step_shared_by_batch": C.SINES_PER_STEP_A,
              "flop_bound_steps_per_s": peak_flops / C.FLOPS_PER_STEP_A},
        "C": {"flops_per_step": C.FLOPS_PER_STEP_C, "flop_bound_steps_per_s": peak_flops / C.FLOPS_PER_STEP_C},
    }


def numba_compile_times():
    """Compile every numba kernel on a tiny problem; the first call's time is the compile time."""
    seg = C.sweep_segments(0.5, 0.5, 2)
    mu, al = C.sweep_lanes(2 * max(C.LANES, C.LANES_GRAD) + 1)  # full blocks, a partial block, a lone lane
    times = {}
    for name, call in (
        ("sweep serial", lambda: C.numba_sweep(mu, al, omega=0.5, eps=1.0, segments=seg, anchor=ANCHOR)),
        ("sweep prange", lambda: C.numba_sweep(mu, al, omega=0.5, eps=1.0, segments=seg, anchor=ANCHOR, parallel=True)),
        ("grad serial", lambda: C.numba_sweep_grad(mu, al, omega=0.5, eps=1.0, segments=seg, anchor=ANCHOR)),
        ("grad prange", lambda: C.numba_sweep_grad(mu, al, omega=0.5, eps=1.0, segments=seg, anchor=ANCHOR,
                                                   parallel=True)),
        ("chain serial", lambda: C.numba_chain(al[:2], n=4, steps=2, h=0.01, omega=0.5, eps=0.05)),
        ("chain prange", lambda: C.numba_chain(al[:2], n=4, steps=2, h=0.01, omega=0.5, eps=0.05, parallel=True)),
    ):
        t = time.perf_counter()
        call()
        times[name] = time.perf_counter() - t
    log("numba compile: " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()))
    return times


# ----------------------------------------------------------------------------- workloads


ANCHOR = 64


def run_sweep_workload(args, rows, ceiling, numba_compile):
    """Workload A: D of the last cycle."""
    full = args.cycles
    ladder, slow_cycles = ladders(full)
    rates = Rates()
    refs = {}  # cycles -> D of the first lanes, from jaxfriction
    jf_rate = {}
    label = None
    ref_lanes = reference_lanes(args.batches, REF_LANES["A"])

    def ref_for(cycles):
        if cycles not in refs or len(refs[cycles]) < ref_lanes:
            fn, _ = jf_sweep(cycles)
            mu, al = C.sweep_lanes(ref_lanes)
            refs[cycles] = np.asarray(block(fn(jnp.asarray(mu), jnp.asarray(al))))
            log(f"  reference: jaxfriction at {cycles} cycles on {len(refs[cycles])} lanes (untimed)")
        return refs[cycles]

    def kw(cycles):
        cfg = sweep_config(cycles)
        return {"omega": cfg.omega, "eps": cfg.eps, "segments": C.sweep_segments(cfg.omega, cfg.dt, cfg.cycles)}

    diffrax_fns = {}

    def diffrax_forward(cycles):
        if cycles not in diffrax_fns:
            diffrax_fns[cycles] = C.diffrax_sweep_fns(**kw(cycles))
        return diffrax_fns[cycles][0]

    contenders = [
        ("jaxfriction", False, None),
        ("jaxfriction vmap", False, None),
        ("numba serial", False, lambda mu, al, c: C.numba_sweep(mu, al, anchor=ANCHOR, **kw(c))),
        ("numba prange", False, lambda mu, al, c: C.numba_sweep(mu, al, anchor=ANCHOR, parallel=True, **kw(c))),
        ("numpy", True, lambda mu, al, c: C.numpy_sweep(mu, al, **kw(c))),
        ("scipy solve_ivp", True, lambda mu, al, c: C.scipy_sweep(mu, al, **kw(c))),
        ("diffrax", False, None),
    ]
    for batch in args.batches:
        mu_np, al_np = C.sweep_lanes(batch)
        mu_j, al_j = jnp.asarray(mu_np), jnp.asarray(al_np)
        calls = {}
        for name, slow, fn in contenders:
            if name == "scipy solve_ivp" and batch not in args.scipy_batches:
                continue
            cycles = choose_cycles(rates, name, batch, full, ladder, args.call_seconds, slow_cycles if slow else None)
            steps = steps_of(cycles)
            note = []
            if name == "jaxfriction":
                call_fn, label = jf_sweep(cycles)
                call = functools.partial(call_fn, mu_j, al_j)
            elif name == "jaxfriction vmap":
                call = functools.partial(jf_sweep(cycles, "vmap")[0], mu_j, al_j)
            elif name == "diffrax":
                fwd = diffrax_forward(cycles)
                call = functools.partial(fwd, mu_j, al_j)
            else:
                call = functools.partial(fn, mu_np, al_np, cycles)
            try:
                out, first, times = timed(call, args.runs, args.cell_seconds)
            except Exception as exc:  # noqa: BLE001 -- report the failure in the table, keep going
                log(f"A {name} B={batch}: FAILED {type(exc).__name__}: {exc}")
                rows.append({"workload": "A", "contender": name, "batch": batch, "cycles": cycles,
                             "error": f"{type(exc).__name__}: {exc}"})
                continue
            calls[name] = (call, cycles)
            med = float(np.median(times))
            rate = batch * steps / med
            rates.update(name, rate)
            if name == "jaxfriction":
                jf_rate[batch] = rate
                if cycles not in refs or len(refs[cycles]) < batch:
                    refs[cycles] = np.asarray(out)
                agree, lanes = 0.0, batch
            else:
                agree, lanes = rel_diff(out, ref_for(cycles))
            if name.startswith("numba"):
                compile_s = numba_compile["sweep prange" if "prange" in name else "sweep serial"]
                note.append("numba JIT once for all batches")
                if "prange" in name and batch < 2 * C.LANES:
                    note.append(f"serial kernel below {2 * C.LANES} lanes")
                if ANCHOR > 1:
                    note.append(f"sin by rotation, re-anchored every {ANCHOR} steps")
            elif name in ("jaxfriction", "jaxfriction vmap", "diffrax"):
                compile_s = max(first - med, 0.0)
            else:
                compile_s = None
            if cycles != full:
                note.append(f"{cycles} cycles ({steps} steps), scaled")
            if len(times) < 5:
                note.append(f"{len(times)} runs")
            row = {"workload": "A", "contender": name if name != "jaxfriction" else f"jaxfriction ({label})",
                   "family": name, "batch": batch, "cycles": cycles, "steps_per_call": batch * steps,
                   "runs": len(times), "median_s": med, "times_s": times, "first_call_s": first,
                   "steps_per_s": rate, "compile_s": compile_s, "agree_max_rel": agree, "agree_lanes": lanes,
                   "frac_ceiling": rate * C.FLOPS_PER_STEP_A / ceiling["peak_flops_all_cores"] if ceiling else None,
                   "reference": name == "jaxfriction", "note": "; ".join(note)}
            rows.append(row)
            log(f"A {name:16s} B={batch:<6d} cycles={cycles:<3d} {fmt_rate(rate)} steps/s, runs {len(times)}, "
                f"first {first:.2f} s, agree {agree:.2e} on {lanes} lanes")
        for row in rows:
            if row.get("workload") == "A" and row.get("batch") == batch and "steps_per_s" in row:
                row["ratio_jf"] = jf_rate.get(batch, math.nan) / row["steps_per_s"]
        pair_with_numba(rows, "A", batch, calls, "jaxfriction")
    return forcing_check(ref_for(full), full, kw(full))


def pair_with_numba(rows, workload, batch, calls, ours):
    """The speed ratio of ``ours`` over numba's ``prange`` loop at this batch, measured in five
    alternating rounds (:func:`timing.alternating`) when both ran at the same cycles: set as
    ``ratio_paired`` on the numba ``prange`` row. The two best-of-five medians of the table ran
    minutes apart, and a shared machine drifts between them (workload A at 1,024 lanes gave
    0.67x to 0.87x in four runs of the unpaired ratio while numba's loop stayed within 6 %)."""
    if ours not in calls or "numba prange" not in calls or calls[ours][1] != calls["numba prange"][1]:
        return
    mine, theirs = calls[ours][0], calls["numba prange"][0]
    _, _, ratio = alternating(lambda: block(mine()), lambda: block(theirs()))
    for row in rows:
        if row.get("workload") == workload and row.get("batch") == batch and row.get("contender") == "numba prange":
            row["ratio_paired"] = ratio
    log(f"{workload} paired ratio {ours} / numba prange B={batch}: {ratio:.3f}x (median of 5 alternating rounds)")


def forcing_check(ref, cycles, kw):
    """The numba kernel with the forcing from ``sin`` at every stage, the rotation recurrence
    re-anchored every ``ANCHOR`` steps, and never re-anchored: agreement with jaxfriction over all
    the reference lanes at the full cycle count, and the time of one lane (where the forcing
    costs most)."""
    mu, al = C.sweep_lanes(len(ref))
    out = []
    for anchor, label in ((1, "sin at every stage (3 per step)"),
                          (ANCHOR, f"rotation, re-anchored every {ANCHOR} steps"),
                          (10**9, "rotation, never re-anchored")):
        agree, lanes = rel_diff(C.numba_sweep(mu, al, anchor=anchor, **kw), ref)
        one_lane = functools.partial(C.numba_sweep, mu[:1], al[:1], anchor=anchor, **kw)
        _, _, times = timed(one_lane, 5, 10.0)
        rate = steps_of(cycles) / float(np.median(times))
        out.append({"forcing": label, "anchor": anchor, "agree_max_rel": agree, "agree_lanes": lanes,
                    "cycles": cycles, "steps_per_s_batch1": rate})
        log(f"A numba forcing {label}: agree {agree:.2e} on {lanes} lanes, B=1 {fmt_rate(rate)} steps/s")
    return out


def numba_gradient(mu, alpha, **kw):
    """``(dD/d mu N, dD/d alpha)`` from the numba tangent kernel."""
    return C.numba_sweep_grad(mu, alpha, **kw)[1:]


def run_grad_workload(args, rows, ceiling, numba_compile, fwd_rates):
    """Workload C: (dD/d mu N, dD/d alpha) per trajectory."""
    full = args.cycles
    ladder, _ = ladders(full)
    rates = Rates()
    refs = {}
    jf_rate = {}
    ref_lanes = reference_lanes(args.grad_batches, REF_LANES["C"])

    def ref_for(cycles):
        if cycles not in refs or len(refs[cycles][0]) < ref_lanes:
            fn = jf_gradient(cycles, "forward")
            mu, al = C.sweep_lanes(ref_lanes)
            refs[cycles] = tuple(np.asarray(a) for a in block(fn(jnp.asarray(mu), jnp.asarray(al))))
            log(f"  reference: jaxfriction forward-mode gradient at {cycles} cycles on {len(refs[cycles][0])} lanes")
        return refs[cycles]

    def kw(cycles):
        cfg = sweep_config(cycles)
        return {"omega": cfg.omega, "eps": cfg.eps, "segments": C.sweep_segments(cfg.omega, cfg.dt, cfg.cycles)}

    diffrax_fns = {}

    def diffrax_fn(cycles, which):
        if cycles not in diffrax_fns:
            diffrax_fns[cycles] = C.diffrax_sweep_fns(**kw(cycles))
        return diffrax_fns[cycles][which]

    contenders = [
        ("jaxfriction forward", "jaxfriction"),
        ("jaxfriction forward vmap", "jaxfriction vmap"),
        ("jaxfriction reverse", "jaxfriction"),
        ("numba serial", "numba serial"),
        ("numba prange", "numba prange"),
        ("diffrax jacfwd (ForwardMode)", "diffrax"),
        ("diffrax grad (RecursiveCheckpointAdjoint)", "diffrax"),
    ]
    for batch in args.grad_batches:
        mu_np, al_np = C.sweep_lanes(batch)
        mu_j, al_j = jnp.asarray(mu_np), jnp.asarray(al_np)
        calls = {}
        for name, family in contenders:
            if name.startswith("diffrax grad") and batch > args.max_reverse_batch:
                continue
            cycles = choose_cycles(rates, name, batch, full, ladder, args.call_seconds)
            steps = steps_of(cycles)
            note = []
            if name.startswith("jaxfriction"):
                gfn = jf_gradient(cycles, name.split()[1], "vmap" if name.endswith("vmap") else "auto")
                if gfn is None:
                    continue
                call = functools.partial(gfn, mu_j, al_j)
            elif name.startswith("numba"):
                call = functools.partial(numba_gradient, mu_np, al_np, parallel="prange" in name, anchor=ANCHOR,
                                         **kw(cycles))
            elif name.startswith("diffrax jacfwd"):
                dfn = diffrax_fn(cycles, 1)
                call = functools.partial(dfn, mu_j, al_j)
            else:
                dfn = diffrax_fn(cycles, 2)
                call = functools.partial(dfn, mu_j, al_j)
            try:
                out, first, times = timed(call, args.runs, args.cell_seconds)
            except Exception as exc:  # noqa: BLE001 -- report the failure in the table, keep going
                log(f"C {name} B={batch}: FAILED {type(exc).__name__}: {exc}")
                rows.append({"workload": "C", "contender": name, "batch": batch, "cycles": cycles,
                             "error": f"{type(exc).__name__}: {exc}"})
                continue
            calls[name] = (call, cycles)
            med = float(np.median(times))
            rate = batch * steps / med
            rates.update(name, rate)
            dm, da = (np.asarray(o) for o in out)
            if name == "jaxfriction forward":
                jf_rate[batch] = rate
                if cycles not in refs or len(refs[cycles][0]) < batch:
                    refs[cycles] = (dm, da)
                agree, lanes = 0.0, batch
            else:
                rm, ra = ref_for(cycles)
                a1, lanes = rel_diff(dm, rm)
                a2, _ = rel_diff(da, ra)
                agree = max(a1, a2)
            if family.startswith("numba"):
                compile_s = numba_compile["grad prange" if "prange" in family else "grad serial"]
                note.append("numba JIT once for all batches")
                if "prange" in family and batch < 2 * C.LANES_GRAD:
                    note.append(f"serial kernel below {2 * C.LANES_GRAD} lanes")
            else:
                compile_s = max(first - med, 0.0)
            if cycles != full:
                note.append(f"{cycles} cycles ({steps} steps), scaled")
            if len(times) < 5:
                note.append(f"{len(times)} runs")
            fwd = fwd_rates.get((family, batch))
            row = {"workload": "C", "contender": name, "family": family, "batch": batch, "cycles": cycles,
                   "steps_per_call": batch * steps, "runs": len(times), "median_s": med, "times_s": times,
                   "first_call_s": first, "steps_per_s": rate, "compile_s": compile_s, "agree_max_rel": agree,
                   "agree_lanes": lanes, "cost_vs_forward": fwd / rate if fwd else None,
                   "frac_ceiling": rate * C.FLOPS_PER_STEP_C / ceiling["peak_flops_all_cores"] if ceiling else None,
                   "reference": name == "jaxfriction forward", "note": "; ".join(note)}
            rows.append(row)
            log(f"C {name:42s} B={batch:<5d} cycles={cycles:<3d} {fmt_rate(rate)} steps/s, runs {len(times)}, "
                f"first {first:.2f} s, agree {agree:.2e} on {lanes} lanes")
        for row in rows:
            if row.get("workload") == "C" and row.get("batch") == batch and "steps_per_s" in row:
                row["ratio_jf"] = jf_rate.get(batch, math.nan) / row["steps_per_s"]
        pair_with_numba(rows, "C", batch, calls, "jaxfriction forward")


def chain_dt(n):
    """RK4 step of the chain: 0.01, or 1/n for n > 100. The chain's highest frequency is about
    2n, and RK4 is stable for |omega dt| < 2.8: dt = 0.01 blows up from n ~ 140 on."""
    return 0.01 if n <= 100 else 1.0 / n


def run_chain_workload(args, rows, numba_compile):
    """Workload B: final state of the chain over a batch of loads."""
    omega = 0.5
    for spec in args.chain:
        n, batch = (int(s) for s in spec.split(":"))
        dt = chain_dt(n)
        eps = 10 * omega * dt  # Quinn's eps = 10 omega dt for the chain
        n_steps, h = C.step_grid(0.0, args.chain_steps * dt, dt)
        alphas = np.linspace(0.1, 0.9, batch)
        jf_fn = jf_chain(n, args.chain_steps, dt, eps)
        ref = None
        jf_r = None
        kw = {"n": n, "steps": n_steps, "h": h, "omega": omega, "eps": eps}
        for name in ("jaxfriction", "numba serial", "numba prange", "numpy"):
            if name == "jaxfriction":
                a_j = jnp.asarray(alphas)
                call = functools.partial(jf_fn, a_j)
            elif name == "numpy":
                call = functools.partial(C.numpy_chain, alphas, **kw)
            else:
                call = functools.partial(C.numba_chain, alphas, parallel="prange" in name, **kw)
            out, first, times = timed(call, args.runs, args.cell_seconds)
            med = float(np.median(times))
            rate = batch * n_steps / med
            out = np.asarray(out)[:, : 2 * n + 1]
            if name == "jaxfriction":
                ref, jf_r, agree, lanes = out, rate, 0.0, batch
                compile_s = max(first - med, 0.0)
            else:
                agree, lanes = rel_diff_states(out, ref)
                compile_s = numba_compile["chain prange" if "prange" in name else "chain serial"] \
                    if name.startswith("numba") else None
            note = "numba JIT once for all sizes" if name.startswith("numba") else ""
            if len(times) < 5:
                note = (note + "; " if note else "") + f"{len(times)} runs"
            rows.append({"workload": "B", "contender": name, "family": name, "n": n, "batch": batch,
                         "steps": n_steps, "dt": h, "steps_per_call": batch * n_steps, "runs": len(times), "median_s": med,
                         "times_s": times, "first_call_s": first, "steps_per_s": rate,
                         "block_steps_per_s": rate * n, "compile_s": compile_s, "agree_max_rel": agree,
                         "agree_lanes": lanes, "ratio_jf": jf_r / rate, "reference": name == "jaxfriction",
                         "note": note})
            log(f"B n={n:<5d} {name:14s} B={batch:<4d} {fmt_rate(rate)} steps/s, runs {len(times)}, "
                f"first {first:.2f} s, agree {agree:.2e}")


# ----------------------------------------------------------------------------- report


def markdown(meta, ceiling, rows, args, elapsed, checks=()):
    out = []
    out.append("# jaxfriction benchmark\n")
    out.append(f"- date: {meta['date']}; CPU: {meta['cpu_model']}, {meta['cpu_cores']} cores; "
               f"JAX device: {', '.join(meta['jax_devices'])} ({meta['jax_backend']}, {meta['jax_device_kind']})")
    out.append(f"- jax {meta['jax']} (jaxlib {meta['jaxlib']}), numba {meta['numba']} ({meta['numba_threads']} threads), "
               f"numpy {meta['numpy']}, scipy {meta['scipy']}, diffrax {meta['diffrax']}, python {meta['python']}; "
               f"float64")
    out.append(f"- jaxfriction entry point: {meta['jaxfriction_entry']}" +
               (f"; XLA_FLAGS={meta['xla_flags']}" if meta["xla_flags"] else ""))
    out.append(f"- steps/s: trajectory-steps per second, median of the timed runs after a warm-up call "
               f"({args.runs} unless the note says fewer); compile s: JAX first call minus the median, numba "
               f"one-time JIT; agrees: max relative difference to jaxfriction over the lanes checked "
               f"(floor {FLOOR:g} x max|ref|); total run time {elapsed:.0f} s\n")
    if ceiling:
        r = ceiling["rates"]
        out.append("## Machine ceiling\n")
        out.append("| cores | FMA rate (FMA/s) | peak flops/s (2 per FMA) | scalar divisions/s | packed divisions/s |")
        out.append("|---|---|---|---|---|")
        for label, v in r.items():
            out.append(f"| {label} | {fmt_rate(v['fma_per_s'])} | {fmt_rate(2 * v['fma_per_s'])} | "
                       f"{fmt_rate(v['div_scalar_per_s'])} | {fmt_rate(v['div_packed_per_s'])} |")
        a = ceiling["A"]
        out.append("")
        out.append(f"Per lane and RK4 step of workload A (numba kernel): {a['flops_per_step']} flops (adds + muls), "
                   f"{a['minmax_per_step']} min/max, {a['divs_per_step_numba']} divisions (reciprocals of mu N and "
                   f"eps precomputed), 0 transcendentals ({a['sines_per_step_shared_by_batch']} sines per step shared "
                   f"by the whole batch). Workload C: {ceiling['C']['flops_per_step']} flops per lane-step.")
        out.append(f"Ceilings (all cores): flop-bound A {fmt_rate(a['flop_bound_steps_per_s'])} steps/s; "
                   f"C {fmt_rate(ceiling['C']['flop_bound_steps_per_s'])} steps/s. `frac. of ceiling` = flops/step x steps/s / peak flops/s (all cores; a serial "
                   f"contender can reach at most 1/{meta['cpu_cores']}).\n")
    titles = {
        "A": f"## Workload A: default sweep (Quinn oscillator, RK4, dt = 0.01, {args.cycles} cycles at omega = 0.5, "
             f"{steps_of(args.cycles)} steps), output D of the last cycle\n",
        "B": f"## Workload B: Burridge-Knopoff chain, {args.chain_steps} RK4 steps (dt = 0.01, 1/n for n > 100; "
             f"eps = 10 omega dt), output the final state [q, v, E_friction]\n",
        "C": f"## Workload C: gradient (dD/d mu N, dD/d alpha) per trajectory, {args.cycles} cycles\n",
    }
    for wl in ("A", "B", "C"):
        wrows = [r for r in rows if r["workload"] == wl]
        if not wrows:
            continue
        out.append(titles[wl])
        if wl == "B":
            out.append("| contender | n | batch | steps/s | block-steps/s | runs | compile s | jaxfriction / contender | "
                       "agrees (max rel diff, lanes) | note |")
            out.append("|---|---|---|---|---|---|---|---|---|---|")
        elif wl == "C":
            out.append("| contender | batch | cycles | steps/s | runs | compile s | jaxfriction fwd / contender | "
                       "cost vs own forward | agrees (max rel diff, lanes) | frac. of ceiling | note |")
            out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        else:
            out.append("| contender | batch | cycles | steps/s | runs | compile s | jaxfriction / contender | "
                       "agrees (max rel diff, lanes) | frac. of ceiling | note |")
            out.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in wrows:
            if "error" in r:
                out.append(f"| {r['contender']} | {r['batch']} | | failed: {r['error'][:120]} |")
                continue
            agree = "reference" if r.get("reference") else f"{r['agree_max_rel']:.1e} ({r['agree_lanes']})"
            comp = fmt_g(r["compile_s"], 2) if r["compile_s"] is not None else "-"
            ratio = fmt_g(r.get("ratio_jf"))
            if r.get("ratio_paired") is not None:
                ratio += f" (paired {fmt_g(r['ratio_paired'])})"
            frac = f"{r['frac_ceiling']:.2%}" if r.get("frac_ceiling") is not None else "-"
            if wl == "B":
                out.append(f"| {r['contender']} | {r['n']} | {r['batch']} | {fmt_rate(r['steps_per_s'])} | "
                           f"{fmt_rate(r['block_steps_per_s'])} | {r['runs']} | {comp} | {ratio} | {agree} | {r['note']} |")
            elif wl == "C":
                cost = fmt_g(r["cost_vs_forward"]) if r.get("cost_vs_forward") else "-"
                out.append(f"| {r['contender']} | {r['batch']} | {r['cycles']} | {fmt_rate(r['steps_per_s'])} | "
                           f"{r['runs']} | {comp} | {ratio} | {cost} | {agree} | {frac} | {r['note']} |")
            else:
                out.append(f"| {r['contender']} | {r['batch']} | {r['cycles']} | {fmt_rate(r['steps_per_s'])} | "
                           f"{r['runs']} | {comp} | {ratio} | {agree} | {frac} | {r['note']} |")
        out.append("")
        if wl == "A" and checks:
            out.append("Forcing of the numba kernel (the same kernel; only how sin(omega t) is formed differs), "
                       f"checked at {checks[0]['cycles']} cycles:\n")
            out.append("| forcing | agrees (max rel diff, lanes) | steps/s at batch 1 |")
            out.append("|---|---|---|")
            for c in checks:
                out.append(f"| {c['forcing']} | {c['agree_max_rel']:.1e} ({c['agree_lanes']}) | "
                           f"{fmt_rate(c['steps_per_s_batch1'])} |")
            out.append("")
    return "\n".join(out)


def main(args):
    global ANCHOR
    ANCHOR = args.numba_anchor
    BUDGET[0] = args.budget
    if args.batches is None:
        args.batches = [1, 64, 1024, 8192] + ([65536] if jax.default_backend() != "cpu" else [])
    if args.grad_batches is None:
        args.grad_batches = [1, 64, 1024] + ([8192] if jax.default_backend() != "cpu" else [])
    meta = machine_info()
    log(f"{meta['date']} | {meta['cpu_model']}, {meta['cpu_cores']} cores | JAX {meta['jax']} on "
        f"{meta['jax_devices']} | numba {meta['numba']} ({meta['numba_threads']} threads) | "
        f"jaxfriction via {meta['jaxfriction_entry']}")
    ceiling = measure_ceiling(args.quick, meta["cpu_cores"])
    numba_compile = numba_compile_times()
    rows = []
    fwd_rates = {}
    checks = []
    if "A" in args.only:
        checks = run_sweep_workload(args, rows, ceiling, numba_compile)
        for r in rows:
            if r["workload"] == "A" and "steps_per_s" in r:
                fwd_rates[(r["family"], r["batch"])] = r["steps_per_s"]
    if "B" in args.only:
        run_chain_workload(args, rows, numba_compile)
    if "C" in args.only:
        run_grad_workload(args, rows, ceiling, numba_compile, fwd_rates)
    elapsed = time.perf_counter() - T_START
    md = markdown(meta, ceiling, rows, args, elapsed, checks)
    print()
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "args": vars(args), "numba_compile_s": numba_compile, "ceiling": ceiling,
                       "rows": rows, "forcing_check": checks, "elapsed_s": elapsed}, f, indent=1, default=float)
        log(f"wrote {args.json}")
    failed = [r for r in rows if "error" in r]
    disagree = [r for r in rows if r.get("agree_max_rel", 0) > (1e-9 if r["workload"] != "C" else 1e-7)]
    if failed or disagree:
        log(f"WARNING: {len(failed)} failed cells, {len(disagree)} cells above the agreement tolerance "
            "(1e-9 for A and B, 1e-7 for C)")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
