"""Cost of the workflow layer, measured side by side in one run (issue 7's performance report).

On the default sweep's kernel (Quinn's forced oscillator, RK4, dt = 0.01, float64):

1. throughput with 1 device against all devices (the host split into one CPU device per
   core with ``jax_num_cpu_devices``), ``jf.sweep`` in memory;
2. the overhead of ``jf.sweep`` writing every chunk to disk (resumable, netCDF at the end)
   against the same lanes in memory;
3. the cost of dD/d(mu N, alpha) against the forward run, forward and reverse mode;
4. the command line, in fresh processes (issue 24, "fast to the first result"): the CPU time
   of ``jaxfriction --help`` and ``jaxfriction sweep --help`` (against the interpreter alone
   and ``import jax``, which ``--help`` paid while the package imported its core eagerly),
   and the wall and compile time of a small ``jaxfriction sweep`` (``CLI_SWEEP``) run twice
   with the persistent compilation cache (a fresh cache folder, then the filled one) and twice
   with ``--no-cache``, interleaved;
5. compile time of a sweep's lane program against the same sweep written in plain diffrax +
   ``vmap`` (issue 24: "compile no slower than the plain diffrax program"), 256 lanes, D and
   dD/d law.mu by forward mode, on the oscillator template and on a researcher's own 2-dof
   system (``tests/_user_model.py``), each in a fresh process: trace + lower + compile, CPU
   seconds. "two legs" is the lane as it was before the transient and the window shared one
   loop (an ``RK4`` subclass, which takes the two-``simulate`` path).

Part 4 on 2026-11-25, the 2-core CI machine (2 JAX CPU devices, jax 0.10.2, other jobs
sharing it), ``--cli-only``, medians of 3 rounds::

    command (fresh process)                          wall s   CPU s
    python -c pass                                    0.03     0.01
    python -c 'import jax'                            1.34     0.66
    jaxfriction --help                                0.07     0.06
    jaxfriction sweep --help                          0.08     0.06

(Both ``--help`` took 1.0 s CPU at commit 35e57bd, whose ``import jaxfriction`` loaded the
core and JAX: median of 7 fresh processes, the same day and machine.)

    jaxfriction sweep (4 x 4 grid, 5 cycles)         wall s   compile s   run s
    cache, first run (empty cache)                    9.2      4.15        0.23
    cache, repeated run                               5.7      1.33        0.13
    --no-cache, first run                             9.3      4.06        0.19
    --no-cache, repeated run                          8.5      3.68        0.13

The repeated run loads the lane program (``jit_batch``, the one entry stored) from the
cache; its remaining compile time is tracing and lowering, which no cache skips.

Part 5 on 2026-11-25, the same machine (shared), ``--compile-only``, medians of 3 fresh
processes, trace + lower + compile in CPU seconds::

    system       program         outputs               CPU s
    oscillator   plain diffrax   D, dD/dmu             1.41
    oscillator   two legs        D, dD/dmu             1.38
    oscillator   one loop        D, dD/dmu             1.07
    oscillator   two legs        default observables   1.77
    oscillator   one loop        default observables   1.50
    2-dof        plain diffrax   D, dD/dmu             1.81
    2-dof        two legs        D, dD/dmu             2.78
    2-dof        one loop        D, dD/dmu             1.82
    2-dof        two legs        default observables   3.27
    2-dof        one loop        default observables   2.26

Medians of ``--repeats`` runs after a warm-up (part 4: of ``--cli-repeats`` rounds); compile
time reported apart. Speed is measured here, never in tests. Usage: ``python
scripts/benchmarks/bench_workflows.py [--cycles 50] [--batch 1024] [--cli-repeats 3] [--cli-only]
[--json PATH]``.
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_num_cpu_devices", os.cpu_count())

import numpy as np  # noqa: E402
from timing import timed  # noqa: E402

import jaxfriction as jf  # noqa: E402

#: The small sweep of part 4: the oscillator template on a 4 x 4 grid, 5 cycles.
CLI_SWEEP = ["sweep", "--param", "law.mu=0.1:1:4", "--param", "force.amplitude=0.5:2:4", "--cycles", "5",
             "--no-progress"]


def _child(argv, env):
    """Run ``python argv`` in a fresh process: ``(wall s, CPU s (user + sys), stdout)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{argv} failed:\n{out.stdout}\n{out.stderr}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, out.stdout


def cli_rows(repeats, sweep_args=CLI_SWEEP):
    """Part 4: the command line's ``--help`` CPU time and a small sweep with and without the cache.

    Args:
        repeats: rounds; each runs every ``--help`` case once and the sweep four times (cold
            cache, no cache, warm cache, no cache), each in a fresh process.
        sweep_args: the ``jaxfriction`` arguments of the sweep (``--out`` is added).

    Returns:
        Rows ``{"case", "wall_s", "cpu_s"}`` (``--help``) and ``{"case", "wall_s", "compile_s",
        "run_s"}`` (the sweep), medians over the rounds.
    """
    import xarray as xr

    package_root = str(Path(jf.__file__).resolve().parents[1])  # the children import this tree's package
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXFRICTION_")}
    env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
    helps = {"python -c pass (the interpreter)": ["-c", "pass"],
             "python -c 'import jax' (--help with an eager package import)": ["-c", "import jax"],
             "jaxfriction --help": ["-m", "jaxfriction.cli", "--help"],
             "jaxfriction sweep --help": ["-m", "jaxfriction.cli", "sweep", "--help"]}
    samples = {name: [] for name in helps}
    runs = {k: [] for k in ("cache, first run (empty cache)", "cache, repeated run", "--no-cache, first run",
                            "--no-cache, repeated run")}
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**6))

        def sweep(case, cache_dir):
            out = os.path.join(tmp, f"out{next(counter)}")
            options = ["--no-cache"] if cache_dir is None else ["--cache-dir", cache_dir]
            wall, _, _ = _child(["-m", "jaxfriction.cli", *options, *sweep_args, "--out", out], env)
            attrs = xr.open_dataset(os.path.join(out, "result.nc"), engine="h5netcdf").attrs
            runs[case].append((wall, attrs["compile_seconds"], attrs["run_seconds"]))

        for _ in range(repeats):
            for name, argv in helps.items():
                samples[name].append(_child(argv, env)[:2])
            cache = os.path.join(tmp, f"cache{next(counter)}")  # empty: every round compiles once
            sweep("cache, first run (empty cache)", cache)
            sweep("--no-cache, first run", None)
            sweep("cache, repeated run", cache)
            sweep("--no-cache, repeated run", None)
            files = sorted(os.listdir(cache))
    rows = [{"case": name, "wall_s": round(float(np.median([w for w, _ in v])), 3),
             "cpu_s": round(float(np.median([c for _, c in v])), 3)} for name, v in samples.items()]
    rows += [{"case": f"jaxfriction sweep, {name}", "wall_s": round(float(np.median([r[0] for r in v])), 2),
              "compile_s": round(float(np.median([r[1] for r in v])), 2),
              "run_s": round(float(np.median([r[2] for r in v])), 2)} for name, v in runs.items()]
    rows.append({"case": "cache entries after a sweep", "files": files})
    return rows


COMPILE_CASES = [(system, path, kind) for system in ("oscillator", "2-dof") for path in ("plain diffrax", "two legs",
                                                                                      "one loop")
                 for kind in (("D",) if path == "plain diffrax" else ("D", "default observables"))]


def compile_child(system_name, path, kind):
    """Trace + lower + compile one case of part 5 in this process; prints ``{"cpu_s": ...}``."""
    import math

    import diffrax
    import equinox as eqx
    import jax.numpy as jnp

    if system_name == "oscillator":
        tpl = jf.template("oscillator")
        system, dt, swept = tpl.system, tpl.dt, "force.amplitude"
        period = 2 * math.pi / float(jf.get_parameter(system, "force.omega"))
        t_end, window = 50 * period, period
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
        from _user_model import FrictionJoint, TanhViscous

        system, dt, swept = FrictionJoint(law=TanhViscous()), 0.01, "amplitude"
        period = 2 * math.pi / 0.8
        t_end, window = 20 * period, period
    points = {"law.mu": jnp.linspace(0.05, 1.0, 256), swept: jnp.linspace(0.05, 2.0, 256)}
    if path == "plain diffrax":
        def run(mu, value):
            s = jf.set_parameters(system, {"law.mu": mu, swept: value})
            term = diffrax.ODETerm(s.vector_field)
            kw = dict(stepsize_controller=diffrax.ConstantStepSize(), saveat=diffrax.SaveAt(t1=True), max_steps=None,
                      adjoint=diffrax.ForwardMode())
            y0 = s.as_state(jnp.zeros(2 * s.n_dof))
            h_pre = (t_end - window) / math.ceil((t_end - window) / dt)
            h = window / math.ceil(window / dt)
            y = diffrax.diffeqsolve(term, jf.ClassicRK4(), 0.0, t_end - window, h_pre, y0, **kw).ys[-1]
            y2 = diffrax.diffeqsolve(term, jf.ClassicRK4(), t_end - window, t_end, h, y, **kw).ys[-1]
            return jf.window_dissipation(jf.Trajectory(ts=jnp.array([t_end - window, t_end]), ys=jnp.stack([y, y2]),
                                                       system=s, status=0))

        fn = jax.vmap(lambda mu, value: jax.jvp(lambda m: run(m, value), (mu,), (jnp.ones_like(mu),)))
        args = (points["law.mu"], points[swept])
    else:
        class TwoLegs(jf.RK4):
            """The lane before one loop: transient and window as two simulate calls."""

        options = {} if kind == "default observables" else {"observables": {"dissipation": jf.window_dissipation},
                                                               "saveat": jf.SaveAt(n=1)}
        plan = jf.plan_sweep(system, {k: np.asarray(v) for k, v in points.items()}, samples=True, t1=t_end,
                             window=window, dt=dt, wrt=["law.mu"], progress=False, kernel="vmap",
                             solver=TwoLegs() if path == "two legs" else jf.RK4(), **options)
        dynamic, static = eqx.partition(plan.program, eqx.is_array)
        fn = lambda d, pts: jax.vmap(lambda q: eqx.combine(d, static)(**q))(pts)  # noqa: E731
        args = (dynamic, points)
    start = time.process_time()
    jax.jit(fn).lower(*args).compile()
    print(json.dumps({"cpu_s": time.process_time() - start}))


def compile_rows(repeats):
    """Part 5: every case of :data:`COMPILE_CASES` in ``repeats`` fresh processes (medians)."""
    env = {**os.environ, "JAXFRICTION_NO_CACHE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(jf.__file__).resolve().parents[1]),
                                         *filter(None, [env.get("PYTHONPATH")])])
    samples = {case: [] for case in COMPILE_CASES}
    for _ in range(repeats):
        for case in COMPILE_CASES:
            out = _child([__file__, "--compile-child", *case], env)[2]
            samples[case].append(json.loads(out.strip().splitlines()[-1])["cpu_s"])
    return [{"system": c[0], "path": c[1], "outputs": c[2], "cpu_s": round(float(np.median(v)), 2)}
            for c, v in samples.items()]


def print_compile_rows(rows):
    print("\n| system | program | outputs | trace + compile, CPU s |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['system']} | {r['path']} | {r['outputs']} | {r['cpu_s']} |")


def print_cli_rows(rows):
    """Print part 4 as two markdown tables."""
    print("\n| command (fresh process) | wall s | CPU s |\n|---|---|---|")
    for r in rows:
        if "cpu_s" in r:
            print(f"| {r['case']} | {r['wall_s']} | {r['cpu_s']} |")
    print(f"\n| {' '.join(CLI_SWEEP)} | wall s | compile s | run s |\n|---|---|---|---|")
    for r in rows:
        if "compile_s" in r:
            print(f"| {r['case']} | {r['wall_s']} | {r['compile_s']} | {r['run_s']} |")
    print(f"\ncache entries after a sweep: {rows[-1]['files']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cli-repeats", type=int, default=3, help="rounds of part 4 (the command line)")
    parser.add_argument("--cli-only", action="store_true", help="measure part 4 only")
    parser.add_argument("--compile-only", action="store_true", help="measure part 5 only")
    parser.add_argument("--compile-child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    machine = {"date": time.strftime("%Y-%m-%d"), "machine": platform.processor() or platform.machine(),
               "cores": os.cpu_count(), "jax": jax.__version__}
    if args.compile_child:
        compile_child(*args.compile_child)
        sys.exit(0)
    for only, key, measure, show in ((args.compile_only, "compile", compile_rows, print_compile_rows),
                                     (args.cli_only, "cli", cli_rows, print_cli_rows)):
        if only:  # one part alone
            rows = measure(args.cli_repeats)
            show(rows)
            if args.json:
                with open(args.json, "w") as fh:
                    json.dump({**machine, key: rows}, fh, indent=1)
            sys.exit(0)
    side = int(round(args.batch ** 0.5))
    grid = {"law.mu": np.linspace(0.05, 1.0, side), "force.amplitude": np.linspace(0.05, 2.0, side)}
    tpl = jf.template("oscillator")

    def sweep(**kw):
        return jf.sweep(tpl, grid, cycles=args.cycles, progress=False, **kw)

    steps = side * side * sweep().attrs["steps_per_lane"]
    rows = []

    def row(name, compile_s, run_s, reference=None):
        rows.append({"case": name, "compile_s": round(compile_s, 2), "run_s": round(run_s, 3),
                     "Msteps_per_s": round(steps / run_s / 1e6, 2),
                     "relative_cost": None if reference is None else round(run_s / reference, 2)})
        print(rows[-1], flush=True)

    devices = jax.local_devices()
    _, c1, one = timed(lambda: sweep(devices=devices[:1]), args.repeats)
    row("forward, 1 device, in memory", c1, one)
    _, call, base = timed(lambda: sweep(), args.repeats)
    row(f"forward, {len(devices)} devices, in memory", call, base, one)
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**6))
        chunk = max(len(devices), side * side // 8)

        def saved():  # wall time of a fresh sweep minus its compile time
            start = time.perf_counter()
            ds = sweep(chunk_size=chunk, out_dir=os.path.join(tmp, str(next(counter))))
            return ds.attrs["compile_seconds"], time.perf_counter() - start - ds.attrs["compile_seconds"]

        runs = [saved() for _ in range(args.repeats)]
        row(f"forward, {len(devices)} devices, 8 chunks saved to disk + netCDF", float(np.median([c for c, _ in runs])),
            float(np.median([r for _, r in runs])), base)
    for mode in ("forward", "reverse"):
        _, cg, grad_s = timed(lambda: sweep(wrt=["law.mu", "force.amplitude"], gradient=mode), args.repeats)
        row(f"D and dD/d(mu N, alpha), {mode} mode, {len(devices)} devices", cg, grad_s, base)
    cli = cli_rows(args.cli_repeats)
    compile_table = compile_rows(args.cli_repeats)
    report = {**machine, "batch": side * side, "cycles": args.cycles, "steps_per_trajectory": steps // (side * side),
              "rows": rows, "cli": cli, "compile": compile_table}
    print("\n| case | compile s | run s | M traj-steps/s | cost vs previous reference |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['compile_s']} | {r['run_s']} | {r['Msteps_per_s']} | {r['relative_cost'] or ''} |")
    print_cli_rows(cli)
    print_compile_rows(compile_table)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
