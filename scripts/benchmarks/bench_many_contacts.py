"""Many contacts through ``jf.sweep``: Quinn's Burridge-Knopoff chain against ``n``.

Side by side in one run, for each ``n``: the XLA path (``kernel="vmap"``), the compiled loop
written as loops over each lane's arrays (the default on CPUs for states of more than 64
numbers, ``jaxfriction._lanes.looped``), what ``jf.sweep`` picks by default (``"default"``:
the same looped program for the chains, one expression per component for an Iwan joint of
up to 62 sliders) and the hand-written numba ``prange`` loop of
``scripts/benchmarks/contenders.py`` (the same RK4 arithmetic). The sweeps ask what numba's
loop computes, the final positions and the friction's work (``OBSERVABLES``; until 2026-11-30
the chain's sweeps measured all five default observables, a peak slip, a stick fraction and
energy books more per step than numba's loop). Reports M block-steps/s (lane-steps times
blocks), the first sweep's wall time (planning and compiling), the largest difference of the
final positions against numba and the relative difference of the dissipations. Speed is measured
here, never in tests.

``--iwan 16 100 1000`` adds an Iwan joint of that many Jenkins sliders (default: none, the chain
alone): :func:`jaxfriction.jointed_oscillator` with Segalman's joint (``F_S = 1``, ``K_T = 3``,
``chi = -0.5``, ``beta = 0.1``, ``n - 1`` elements and the atom: ``n`` sliders), ``omega = 0.5``,
``dt = 0.01``, one lane per force amplitude in ``[0.1, 1.5]`` (micro- to macroslip), swept over
``force.amplitude`` with the observables ``final_position`` and ``dissipation``, on the XLA path,
the looped program and against ``C.numba_iwan`` (the same RK4 arithmetic over the sliders'
tables ``law.elements()``; ``prange`` over the lanes, and serial for reference).
``--iwan-law tables`` runs the same tables as ``jf.Iwan(k, phi)`` instead. Reports M
slider-steps/s (lane-steps times sliders), the first sweep's wall time (``jf.plan_sweep`` and
the plan's first run, compiling) with its planning alone (``plan_s``), a warm ``plan_sweep``, the
largest relative differences of the final positions and dissipations against numba (each over
the largest magnitude among the lanes), and the whole final state ``[x, v, z]`` of the first
and last lanes by ``jf.simulate`` against numba (``state_diff_vs_simulate``). A kernel that
cannot run the sweep gets its reason instead of numbers. Usage:
``--bar 10 40 160`` adds the reduced-order jointed bar of :func:`jaxfriction.jointed_bar` with
that many Jenkins contacts (4 modes, ``dt = 0.01``, one lane per force amplitude in ``[0.02,
0.2]``, observable the dissipation) against ``C.numba_modal`` (M contact-steps/s).

The M steps/s columns are each contender's best of its runs; ``ratio_to_numba`` is the median
over five rounds in which numba's loop and the warm sweep run one after the other
(:func:`alternating`), so that a drift of the machine between two separate timings does not
enter the ratio.

The compiled loop's programs go to a fresh temporary folder (unless ``JAXFRICTION_CACHE_DIR``
is set), so a kernel's first sweep (``first_s``) includes numba's compile of its program: the
compile time against ``n``.

``python scripts/benchmarks/bench_many_contacts.py [--ns 32 256 1024] [--lanes 8] [--steps 2000]
[--iwan 16 100 1000] [--iwan-law segalman|tables] [--bar 10 40 160] [--kernels xla looped
default]`` (``--ns`` with no value: no chain).
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import jax

jax.config.update("jax_enable_x64", True)
# the compiled loop's programs go to a fresh folder: a kernel's first sweep compiles, and is timed
os.environ.setdefault("JAXFRICTION_CACHE_DIR", tempfile.mkdtemp(prefix="jf-bench-cache-"))

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import contenders as C  # noqa: E402
from timing import alternating  # noqa: E402

import jaxfriction as jf  # noqa: E402


def timed(fn, runs=3):
    """The best of ``runs`` calls of ``fn``: its seconds and its output."""
    best, kept = np.inf, None
    for _ in range(runs):
        began = time.perf_counter()
        out = fn()
        if time.perf_counter() - began < best:
            best, kept = time.perf_counter() - began, out
    return best, kept


#: What the chain's and the Iwan joint's sweeps measure: what their numba contenders compute
#: (the final state and the friction's work), so that both do the same work per step.
OBSERVABLES = {"final_position": jf.final_position, "dissipation": jf.window_dissipation}
#: The Iwan joint's forcing frequency (rad/s), step and lanes' force amplitudes.
IWAN_OMEGA = 0.5
IWAN_DT = 0.01
IWAN_AMPLITUDES = (0.1, 1.5)
#: The kernels compared: the XLA path, the looped program forced, and what ``jf.sweep`` picks
#: by default (the looped program for states of more than 64 numbers, else one expression per
#: component).
KERNELS = (("xla", "vmap"), ("looped", jf.CompiledLoopKernel(loops=True)), ("default", "auto"))


def rel_diff(a, b):
    """``max |a - b| / max |b|``: the largest difference over the largest magnitude."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), np.finfo(float).tiny))


def iwan_row(n, lanes, steps, law_kind):
    """One slider count: the XLA path, the looped program and numba side by side."""
    segalman = jf.SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=n - 1)
    k, phi = (np.asarray(a, dtype=float) for a in segalman.elements())
    law = jf.Iwan(k, phi) if law_kind == "tables" else segalman
    system = jf.jointed_oscillator(law, omega=IWAN_OMEGA)
    amplitudes = np.linspace(*IWAN_AMPLITUDES, lanes)
    t1 = steps * IWAN_DT
    _, h = C.step_grid(0.0, t1, IWAN_DT)  # the library's grid: (t1 - 0) / ceil(t1 / dt)
    slider_steps = lanes * steps * n
    grid = {"force.amplitude": amplitudes}
    options = dict(t1=t1, dt=IWAN_DT, observables=OBSERVABLES, progress=False)
    numba_kw = dict(stiffness=k, slip_force=phi, steps=steps, h=h, omega=IWAN_OMEGA, parallel=True)
    row = {"n_sliders": n, "law": type(law).__name__}
    began = time.perf_counter()
    C.numba_iwan(amplitudes[:2], **{**numba_kw, "steps": 2})  # compiles on the first slider count only
    first = time.perf_counter() - began
    best, ref = timed(lambda: C.numba_iwan(amplitudes, **numba_kw))
    row["numba_prange"] = {"M_slider_steps_s": round(slider_steps / best / 1e6, 1), "first_s": round(first, 1)}
    C.numba_iwan(amplitudes[:2], **{**numba_kw, "steps": 2, "parallel": False})
    serial, _ = timed(lambda: C.numba_iwan(amplitudes, **{**numba_kw, "parallel": False}))
    row["numba_serial"] = {"M_slider_steps_s": round(slider_steps / serial / 1e6, 1)}  # threads' cost on a busy machine
    kernel_rows(row, system, grid, options, "M_slider_steps_s", slider_steps,
                {"final_position": ref[:, 0], "dissipation": ref[:, n + 2]}, lambda: C.numba_iwan(amplitudes, **numba_kw))
    ends = sorted({0, lanes - 1})  # the whole final state [x, v, z], the energy books left out
    lanes_of = [jf.jointed_oscillator(law, force_amplitude=float(amplitudes[j]), omega=IWAN_OMEGA) for j in ends]
    row["state_diff_vs_simulate"] = state_diff(lanes_of, ends, ref, 2, t1, IWAN_DT, n + 2)
    return row


def kernel_rows(row, system, grid, options, unit, work, refs, numba):
    """Each of :data:`KERNELS` on ``grid`` into ``row[name]``: ``unit`` (``work`` per second,
    millions), the first sweep's time with its planning apart, a warm planning, the best warm
    sweep (``sweep_ms``) with its engine stage (``engine_run_ms``), the speed ratio to the
    call ``numba`` (:func:`alternating`), the kernel's reason, the flagged lanes and the largest
    relative differences of the observables ``refs`` (name -> numba's column); a kernel that
    refuses the sweep gets its reason."""
    for name, kernel in KERNELS:
        try:
            began = time.perf_counter()
            plan = jf.plan_sweep(system, grid, kernel=kernel, **options)
            plan_s = time.perf_counter() - began
        except ValueError as exc:
            row[name] = {"unsupported": str(exc)}
            continue
        began = time.perf_counter()
        plan.run()
        first = plan_s + time.perf_counter() - began
        best, ds, ratio = alternating(lambda kernel=kernel: jf.sweep(system, grid, kernel=kernel, **options), numba)
        warm, _ = timed(lambda kernel=kernel: jf.plan_sweep(system, grid, kernel=kernel, **options), runs=1)
        rate = work / best / 1e6
        row[name] = {
            unit: round(rate, 1), "first_s": round(first, 1), "plan_s": round(plan_s, 2),
            "plan_warm_s": round(warm, 3), "ratio_to_numba": round(ratio, 2),
            # the best warm sweep's milliseconds, and of them the engine's computing stage
            # (the executor's call); the rest is planning and the dataset
            "sweep_ms": round(best * 1e3, 2), "engine_run_ms": round(ds.attrs["run_seconds"] * 1e3, 2),
            "kernel_reason": ds.attrs.get("kernel_reason"), "flagged": int(np.count_nonzero(np.asarray(ds["status"]))),
            "max_rel_diff_vs_numba": {k: rel_diff(ds[k], ref) for k, ref in refs.items()},
        }


def state_diff(systems, lanes, ref, n_y0, t1, dt, n_state):
    """The largest relative difference of ``jf.simulate``'s final state (its first ``n_state``
    components, from rest: ``n_y0`` zeros) of each of ``systems`` against numba's row of its lane."""
    diffs = []
    for system, j in zip(systems, lanes):
        y = np.asarray(jf.simulate(system, np.zeros(n_y0), 0.0, t1, dt, save_every=None).ys[-1])
        diffs.append(rel_diff(y[:n_state], ref[j, :n_state]))
    return max(diffs)


#: The jointed bar's modes, step, forcing frequency (its default) and lanes' force amplitudes.
BAR_MODES = 4
BAR_DT = 0.01
BAR_AMPLITUDES = (0.02, 0.2)


def bar_row(c, lanes, steps):
    """The jointed bar of ``c`` Jenkins contacts: the XLA path, the looped program, the
    default kernel and numba side by side (M contact-steps/s: lane-steps times contacts)."""
    system = jf.jointed_bar(n_contacts=c, n_modes=BAR_MODES)
    omega = float(system.force.omega)
    amplitudes = np.linspace(*BAR_AMPLITUDES, lanes)
    t1 = steps * BAR_DT
    _, h = C.step_grid(0.0, t1, BAR_DT)
    grid = {"force.amplitude": amplitudes}
    options = dict(t1=t1, dt=BAR_DT, observables={"dissipation": jf.window_dissipation}, progress=False)
    arrays = dict(frequencies=system.frequencies, damping_ratios=system.damping_ratios,
                  contact_modes=system.contact_modes, force_modes=system.force_modes,
                  stiffness=system.law.stiffness, slip_force=system.law.slip_force)
    numba_kw = dict(arrays, steps=steps, h=h, omega=omega, parallel=True)
    contact_steps = lanes * steps * c
    row = {"n_contacts": c, "n_modes": BAR_MODES}
    C.numba_modal(amplitudes[:2], **{**numba_kw, "steps": 2})
    best, ref = timed(lambda: C.numba_modal(amplitudes, **numba_kw))
    row["numba_prange"] = {"M_contact_steps_s": round(contact_steps / best / 1e6, 1)}
    kernel_rows(row, system, grid, options, "M_contact_steps_s", contact_steps, {"dissipation": ref[:, -1]},
                lambda: C.numba_modal(amplitudes, **numba_kw))
    ends = sorted({0, lanes - 1})  # the whole final state [q, q', z]
    lanes_of = [jf.set_parameters(system, {"force.amplitude": float(amplitudes[j])}) for j in ends]
    row["state_diff_vs_simulate"] = state_diff(lanes_of, ends, ref, 2 * BAR_MODES, t1, BAR_DT, 2 * BAR_MODES + c)
    return row


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ns", type=int, nargs="*", default=[32, 256, 1024])
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--iwan", type=int, nargs="*", default=[], metavar="N_SLIDERS",
                        help="slider counts of the Iwan joint (default: none)")
    parser.add_argument("--iwan-law", choices=("segalman", "tables"), default="segalman",
                        help="the joint as SegalmanIwan (default) or as Iwan of the same tables")
    parser.add_argument("--bar", type=int, nargs="*", default=[], metavar="N_CONTACTS",
                        help="contact counts of the jointed bar (default: none)")
    parser.add_argument("--kernels", nargs="*", choices=[name for name, _ in KERNELS], default=None,
                        help="the kernels measured (default: all; the XLA path takes most of a long run)")
    args = parser.parse_args()
    if args.kernels is not None:
        KERNELS = tuple((name, kernel) for name, kernel in KERNELS if name in args.kernels)
    rows = []
    for n in args.ns:
        dt = min(0.01, 1.0 / n)  # dt = 0.01 is unstable for n >= 256
        eps = 10 * 0.5 * dt  # Quinn: eps = 10 omega dt
        system = jf.BurridgeKnopoffChain(law=jf.Quinn(mu=1.0, eps=eps), n=n)
        alphas = np.linspace(0.1, 0.9, args.lanes)
        block_steps = args.lanes * args.steps * n
        row = {"n": n}
        C.numba_chain(alphas[:2], n=n, steps=2, h=dt, omega=0.5, eps=eps, parallel=True)

        def numba(alphas=alphas, n=n, dt=dt, eps=eps):
            return C.numba_chain(alphas, n=n, steps=args.steps, h=dt, omega=0.5, eps=eps, parallel=True)

        best, ref = timed(numba)
        row["numba_prange"] = {"M_block_steps_s": round(block_steps / best / 1e6, 1)}
        for name, kernel in KERNELS:
            def run(kernel=kernel):
                return jf.sweep(system, {"alpha": alphas}, kernel=kernel, t1=args.steps * dt, dt=dt,
                                observables=OBSERVABLES, progress=False)

            try:
                first, ds = timed(run, runs=1)
            except ValueError as exc:  # e.g. the XLA path's saved states past its memory bound
                row[name] = {"unsupported": str(exc)}
                continue
            best, ds, ratio = alternating(run, numba)
            row[name] = {"M_block_steps_s": round(block_steps / best / 1e6, 1), "first_s": round(first, 1),
                         "ratio_to_numba": round(ratio, 2),
                         "max_diff_vs_numba": float(np.max(np.abs(np.asarray(ds["final_position"]) - ref[:, :n]))),
                         "dissipation_rel_diff_vs_numba": rel_diff(np.asarray(ds["dissipation"]), ref[:, 2 * n])}
        rows.append(row)
        print(json.dumps(row), flush=True)
    iwan_rows = []
    for n in args.iwan:
        iwan_rows.append(iwan_row(n, args.lanes, args.steps, args.iwan_law))
        print(json.dumps(iwan_rows[-1]), flush=True)
    bar_rows = []
    for c in args.bar:
        bar_rows.append(bar_row(c, args.lanes, args.steps))
        print(json.dumps(bar_rows[-1]), flush=True)
    out = {"cpu": platform.processor() or platform.machine(), "jax": jax.__version__,
           "lanes": args.lanes, "steps": args.steps, "rows": rows}
    if iwan_rows:
        out["iwan"] = {"law": args.iwan_law, "omega": IWAN_OMEGA, "dt": IWAN_DT, "amplitudes": IWAN_AMPLITUDES,
                       "rows": iwan_rows}
    if bar_rows:
        out["bar"] = {"n_modes": BAR_MODES, "dt": BAR_DT, "amplitudes": BAR_AMPLITUDES, "rows": bar_rows}
    print(json.dumps(out, indent=1))
