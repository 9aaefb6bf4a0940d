"""GPU benchmark: the fused Pallas kernel against vmap-of-scan, side by side in one run.

Workload A, the default sweep: Quinn's forced oscillator (``jf.template("oscillator")``:
Quinn's law, ``eps = 2 dt``, ``dt = 0.01``, 50 cycles at ``omega = 0.5``, 62,850 RK4 steps),
``D`` of the last cycle, without and with ``dD/d(mu N)`` (forward mode), over ``B`` lanes of
``(mu N, alpha)``, for ``B = 1e3 ... 1e7``, in float64 and float32. Workload B: the
Burridge-Knopoff chain (``jf.template("chain", n=32)``: 4 cycles, the last measured), its
window observables, over a batch of forcing amplitudes ``alpha``.

Every cell runs ``jf.sweep`` twice on the same lanes: ``kernel=jf.FusedKernel()`` (one
Pallas program per block of lanes, Triton) and ``kernel="vmap"`` (vmap of lax.scan), in
memory, chunks of ``--chunk`` lanes. Throughput is lanes x RK4 steps / run time (compile
excluded: a warm-up call first), the median of ``--runs`` calls. The XLA path saves every
step of the window, so its chunks are cut to fit ``jf.MAX_SAVED_BYTES`` (2 GiB). A call that would take
longer than ``--call-seconds`` at the rate measured so far runs fewer cycles (the cost of a
step does not depend on the cycle count; the table says how many). The two paths' results
are compared on every cell (largest relative difference of ``D``).

Fraction of peak: the per-lane arithmetic of one RK4 step is counted from the kernel's own
trace (adds, subtractions, multiplications and divisions the kernel does per lane, shared
and constant values excluded; an FMA counts as two), times the fused path's steps/s, over
the GPU's vector float64 peak (``--peak-tflops``, or looked up for known GPUs).

Usage::

    python scripts/benchmarks/bench_gpu.py                        # everything, on the first GPU
    python scripts/benchmarks/bench_gpu.py --batches 1e3 1e5 --dtypes float64 --runs 3
    python scripts/benchmarks/bench_gpu.py --workloads A          # the oscillator only (the n=32 chain's kernel compiles for minutes)
    python scripts/benchmarks/bench_gpu.py --quick                # smoke run (1 cycle, 1024 lanes; runs on CPU too)
    python scripts/benchmarks/bench_gpu.py --markdown gpu.md --json gpu.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import math

import jax
import numpy as np
from timing import timed

import jaxfriction as jf
from jaxfriction._lanes.traced import LaneProgram

#: Vector (non-tensor-core) float64 peaks, TFLOP/s, from the vendors' data sheets.
FP64_PEAK_TFLOPS = {"H100 SXM": 33.5, "H100 80GB HBM3": 33.5, "H100 PCIe": 25.6, "H100 NVL": 30.0, "H200": 33.5,
                    "GH200": 33.5, "A100": 9.7, "L40S": 1.4, "L4": 0.5, "V100": 7.8}
ARITHMETIC = ("add", "sub", "mul", "div", "add_any")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=float, nargs="+", default=[1e3, 1e4, 1e5, 1e6, 1e7])
    parser.add_argument("--dtypes", nargs="+", default=["float64", "float32"], choices=["float64", "float32"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--call-seconds", type=float, default=20.0, help="longest timed call before cycles are cut")
    parser.add_argument("--chunk", type=int, default=1 << 20, help="lanes per compiled call (jf.sweep chunk_size)")
    parser.add_argument("--block", type=int, default=128, help="FusedKernel(block=...)")
    parser.add_argument("--num-warps", type=int, default=4, help="FusedKernel(num_warps=...)")
    parser.add_argument("--workloads", nargs="+", default=["A", "B"], choices=["A", "B"],
                        help="A: the oscillator, B: the chain (its kernel compiles for minutes on a GPU)")
    parser.add_argument("--chain-batch", type=int, default=65536)
    parser.add_argument("--chain-ns", type=int, nargs="+", default=[32], help="chain lengths of workload B")
    parser.add_argument("--chain-paths", nargs="+", default=["fused", "vmap"], choices=["fused", "vmap"],
                        help="paths of workload B (the fused kernel refuses steps over 1,000 operations)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="float64 vector peak of the GPU")
    parser.add_argument("--quick", action="store_true", help="1024 lanes, 1 cycle, 1 run: a smoke test")
    parser.add_argument("--json", default="bench_gpu.json")
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.runs, args.chain_batch, args.call_seconds = [1024], 1, 256, 0.0
    return args


def lanes(batch):
    """``(mu N, alpha)`` of the first ``batch`` lanes of an R2 low-discrepancy sequence."""
    i = np.arange(batch, dtype=float)
    return 0.05 + 0.95 * ((0.5 + i * 0.7548776662466927) % 1.0), 0.05 + 1.95 * ((0.5 + i * 0.5698402909980532) % 1.0)


class Cell:
    """One measured configuration of one path."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def vmap_chunk(template, cap):
    """The largest chunk the XLA path may run: it saves every step of the window (one forcing
    period) of every lane, at most ``jf.MAX_SAVED_BYTES`` per chunk; the fused kernel saves
    none."""
    period = 2 * math.pi / float(jf.get_parameter(template.system, template.frequency))
    saves = jf.fixed_grid(0.0, period, template.dt, 1)[0] + 1
    itemsize = jax.numpy.zeros(()).dtype.itemsize
    return max(1, min(cap, jf.MAX_SAVED_BYTES // (saves * template.system.state_size * itemsize)))


def oscillator_cells(args, dtype, grad, kernel_of, rates):
    tpl = jf.template("oscillator")
    cells = []
    for batch in (int(b) for b in args.batches):
        mu, alpha = lanes(batch)
        results = {}
        for path in ("fused", "vmap"):
            key = (dtype, grad, path)
            per_cycle = math.ceil(2 * math.pi / 0.5 / tpl.dt)
            cycles = 50
            if key in rates:  # the call at 50 cycles would take longer than --call-seconds: fewer cycles
                cycles = max(1, min(50, int(args.call_seconds * rates[key] / (batch * per_cycle))))
            if args.quick:
                cycles = 1

            def call(path=path, cycles=cycles, mu=mu, alpha=alpha, batch=batch):
                ds = jf.sweep(tpl, {"law.mu": mu, "force.amplitude": alpha}, samples=True, cycles=cycles,
                              observables={"dissipation": jf.window_dissipation}, wrt=("law.mu",) if grad else (),
                              gradient="forward", kernel=kernel_of(path), progress=False,
                              chunk_size=min(args.chunk, batch) if path == "fused" else vmap_chunk(tpl, min(args.chunk,
                                                                                                          batch)))
                return ds

            ds, compile_s, seconds = timed(call, args.runs)
            steps = ds.attrs["steps_per_lane"]
            rate = batch * steps / seconds
            rates[key] = rate
            results[path] = (ds, cycles)
            cells.append(Cell(workload="A", dtype=dtype, gradient=grad, batch=batch, path=path, cycles=cycles,
                              steps=steps, seconds=seconds, compile_seconds=compile_s, rate=rate,
                              kernel=ds.attrs["kernel"], flagged=ds.attrs["flagged"]))
            print(f"A {dtype} {'dD/dmu' if grad else 'D     '} B={batch:>9,d} {path:5s} {cycles:2d} cycles "
                  f"{rate / 1e9:9.3f} G steps/s  (compile {compile_s:.1f} s, {ds.attrs['kernel']})", flush=True)
        (a, ca), (b, cb) = results["fused"], results["vmap"]
        if ca == cb:
            x, y = a["dissipation"].values, b["dissipation"].values
            cells[-2].agreement = float(np.max(np.abs(x - y) / np.maximum(np.abs(y), 1e-3 * np.max(np.abs(y)))))
    return cells


def chain_cells(args, dtype, kernel_of):
    cells = []
    for n in args.chain_ns:
        tpl = jf.template("chain", n=n)
        cycles = 1 if args.quick else tpl.cycles
        loads = np.linspace(0.05, 0.5, args.chain_batch)
        path_name = next(iter(tpl.grid))
        for path in args.chain_paths:
            def call(path=path, tpl=tpl, cycles=cycles, loads=loads):
                chunk = min(args.chunk, loads.size)
                return jf.sweep(tpl, {path_name: loads}, cycles=cycles, kernel=kernel_of(path), progress=False,
                                chunk_size=chunk if path == "fused" else vmap_chunk(tpl, chunk))

            ds, compile_s, seconds = timed(call, args.runs)
            steps = ds.attrs["steps_per_lane"]
            rate = loads.size * steps / seconds
            cells.append(Cell(workload="B", n=n, dtype=dtype, gradient=False, batch=loads.size, path=path,
                              cycles=cycles, steps=steps, seconds=seconds, compile_seconds=compile_s, rate=rate,
                              kernel=ds.attrs["kernel"], flagged=ds.attrs["flagged"]))
            print(f"B {dtype} chain n={n} B={loads.size:,d} {path:5s} {rate / 1e9:9.4f} G steps/s "
                  f"({rate * n / 1e9:.3f} G block-steps/s, compile {compile_s:.1f} s, {ds.attrs['kernel']})",
                  flush=True)
    return cells


def flops_per_step(grad):
    program = jf.plan_sweep(jf.template("oscillator"), {"law.mu": [0.5], "force.amplitude": [1.0]},
                            samples=True, kernel=jf.FusedKernel(), wrt=("law.mu",) if grad else (),
                            observables={"dissipation": jf.window_dissipation}).program
    counts = LaneProgram(program.lane).pieces(["law.mu", "force.amplitude"])[0].operations_per_step()
    return sum(counts.get(k, 0) for k in ARITHMETIC), counts


def peak_of(device, given):
    if given:
        return given * 1e12
    for name, tflops in FP64_PEAK_TFLOPS.items():
        if name.lower() in device.lower():
            return tflops * 1e12
    return None


def main(argv=None):
    args = parse_args(argv)
    device = jax.devices()[0]
    name = getattr(device, "device_kind", device.platform)
    print(f"device: {name} ({device.platform}), {jax.device_count()} device(s); jax {jax.__version__}")
    if device.platform != "gpu":
        print("no GPU: the fused path runs in Pallas' interpret mode (a smoke test, not a measurement)")

    def kernel_of(path):
        return jf.FusedKernel(block=args.block, num_warps=args.num_warps) if path == "fused" else "vmap"

    cells, flops, rates = [], {}, {}
    for dtype in args.dtypes:
        with jax.enable_x64(dtype == "float64"):
            for grad in (False, True) if "A" in args.workloads else ():
                cells += oscillator_cells(args, dtype, grad, kernel_of, rates)
                flops[(dtype, grad)] = flops_per_step(grad)
            if "B" in args.workloads:
                cells += chain_cells(args, dtype, kernel_of)
    peak = peak_of(name, args.peak_tflops)
    rows = [("| workload | dtype | batch | fused (G steps/s) | vmap of scan (G steps/s) | fused / vmap | "
             "fused: fraction of fp64 peak | cycles | agreement |"), "|" + "---|" * 9]
    oscillator = [c for c in cells if c.workload == "A"]
    for fused, vmap in zip(oscillator[0::2], oscillator[1::2]):
        what = "dD/dmu" if fused.gradient else "D"
        fraction = ""
        if fused.workload == "A" and fused.dtype == "float64" and peak:
            fraction = f"{flops[(fused.dtype, fused.gradient)][0] * fused.rate / peak:.1%}"
        agree = f"{fused.agreement:.1e}" if hasattr(fused, "agreement") else ""
        rows.append(f"| {what} | {fused.dtype} | {fused.batch:,d} | {fused.rate / 1e9:.3f} | {vmap.rate / 1e9:.3f} | "
                    f"{fused.rate / vmap.rate:.1f}x | {fraction} | {fused.cycles or ''}/{vmap.cycles or ''} | "
                    f"{agree} |")
    header = (f"{name}, {datetime.date.today().isoformat()}, jax {jax.__version__}, FusedKernel(block={args.block}, "
              f"num_warps={args.num_warps}); per-lane flops per RK4 step (from the kernel's trace): "
              + ", ".join(f"{d} {'dD/dmu' if g else 'D'}: {f[0]}" for (d, g), f in flops.items())
              + (f"; fp64 peak {peak / 1e12:.1f} TFLOP/s" if peak else "; fp64 peak unknown (--peak-tflops)"))
    table = header + "\n\n" + "\n".join(rows)
    chain = [c for c in cells if c.workload == "B"]
    if chain:
        table += ("\n\n| chain n | dtype | batch | path | G steps/s | G block-steps/s | compile (s) | kernel |\n"
                  + "|" + "---|" * 8 + "\n"
                  + "\n".join(f"| {c.n} | {c.dtype} | {c.batch:,d} | {c.path} | {c.rate / 1e9:.4f} | "
                              f"{c.rate * c.n / 1e9:.3f} | {c.compile_seconds:.1f} | {c.kernel} |" for c in chain))
    largest = [(f, v) for f, v in zip(oscillator[0::2], oscillator[1::2])
               if f.dtype == "float64" and not f.gradient]
    if largest:  # the targets for one H100, at the largest batch of the float64 default workload
        f, v = max(largest, key=lambda fv: fv[0].batch)
        table += (f"\n\ntargets at B = {f.batch:,d}, float64, D: {f.rate:.3g} steps/s against 2e10 "
                  f"({'met' if f.rate >= 2e10 else 'not met'}); {f.rate / v.rate:.1f}x vmap of scan against 20x "
                  f"({'met' if f.rate >= 20 * v.rate else 'not met'})")
    print("\n" + table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    with open(args.json, "w") as f:
        json.dump({"device": name, "date": datetime.date.today().isoformat(), "peak_flops": peak,
                   "flops_per_step": {f"{d}/{'grad' if g else 'forward'}": v[1] for (d, g), v in flops.items()},
                   "cells": [c.__dict__ for c in cells]}, f, indent=1)


if __name__ == "__main__":
    main()
