"""Identification benchmark: how often does ``jf.fit`` find the truth from a box of plausible values?

The data come from independent scipy simulators (``identification_problems.py``: Radau, rtol
1e-11, the equations written out from the papers and docstrings, never jaxfriction), so the
benchmark also checks that jaxfriction's model of each physics is the physics: before the
fits, ``jf.simulate`` at the truth is compared with the reference on the record's grid
(reported as max |difference| / std of the signal; all measured at 3e-10 .. 2.5e-6, far
below the noise).

Problems (``--problems``, comma separated; details and seeds in identification_problems.py):
``lugre-belt`` (LuGre stick-slip on a belt, 6 parameters), ``lugre-forced`` (the fit how-to's
forced LuGre oscillator, 6), ``dahl`` (Dahl friction under a displacement-driven spring, 3),
``position-axis`` (a PD position axis with Coulomb + viscous friction and an offset, EMPS-like:
F_c, F_v, offset, mass), ``rate-state`` (a velocity step 1 -> 10 um/s on a spring-slider,
aging law: a, b, D_c), ``segalman`` (hysteresis loops of a Segalman joint: F_S, K_T, chi, beta).

Protocol. For each problem, ``--boxes`` N boxes (default 20) are drawn from
``numpy.random.default_rng([--box-seed, crc32(problem name)])`` (box i is the same whatever
N). For a parameter with truth T and lower limit L (0 for a positive parameter; -1 for
Segalman's chi, so the box is on chi + 1): ``s ~ U(0.2, 0.8)``, ``lo = L + (T - L) 2^(-2 s)``,
``hi = L + (T - L) 2^(2 (1 - s))``: a box spanning a factor 4 in ``T - L`` (a factor of 2
either side), the truth inside but off-centre. For a signed parameter (the axis's force
offset) the analogue is linear: ``lo = T - 4 |T| s``, ``hi = T + 4 |T| (1 - s)`` (width 4 |T|,
the truth at the fraction s; such a box may contain 0 and both signs). Contenders
(``--method local|global|both``):

- ``local``, today's ``jf.fit``: ``jf.fit(system, initial, record, bounds=box, optimizer="lm",
  dt=dt)`` from the box's centre (geometric in ``p - L``; arithmetic for a signed parameter);
- ``global``, the bounds-only search: ``jf.fit(system, None, record, bounds=box, dt=dt)``. If
  ``jf.fit`` refuses ``initial=None`` (TypeError or ValueError on the first box) the method is
  reported "not available" for that problem.

A fit succeeds when ``result.converged`` and every parameter's truth lies within 2
``result.stderr`` of its estimate. Each problem's record is fixed (one noise seed, chosen so
that the least-squares optimum itself lies within 1 stderr of the truth), so the success rate
measures the search from the boxes, not noise luck: a failure is a search that did not reach
the optimum (or did not say it converged). Reported per problem and method: success rate,
the median wall time per fit (``time.perf_counter`` around each ``jf.fit`` call; the first
fit of a problem includes compiling), and the median number of misfit evaluations when the
result exposes it (``getattr(result, "n_evaluations", None)``).

Mismatch check (``lugre-belt`` in the problems, unless ``--no-mismatch``): a Coulomb +
viscous model (``jf.Threlfall``: Coulomb regularized over v0 = 0.01 m/s plus viscous
friction, continuous in the slip velocity, on the same belt) fitted to the LuGre belt record;
the summary and ``fits_data`` (the goodness-of-fit verdict, where the library has it) are
printed: a model that cannot make stick-slip should be flagged.

Output: a Markdown table on stdout; ``--json PATH`` writes every fit. ``--quick``: 3 boxes and
shorter records where the problem allows (smoke runs; its records differ from the full ones).
The full run is long (20 boxes x 6 problems; a fit takes 2-30 s on 2 CPU cores).

Usage: ``python scripts/benchmarks/bench_identification.py [--problems a,b] [--boxes N] [--method
local|global|both] [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings
import zlib

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np

# the problems and their scipy references live with the studies (scripts/studies/)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "studies"))
from identification_problems import PROBLEMS, agreement

import jaxfriction as jf

SUCCESS_STDERR = 2.0
BOX_SEED = 2024


def draw_boxes(name, problem, n, seed=BOX_SEED):
    """``n`` boxes ``[(bounds {path: (lo, hi)}, centre {path: value})]`` (module docstring)."""
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    out = []
    for _ in range(n):
        bounds, centre = {}, {}
        for path, truth in problem.truth.items():
            s = float(rng.uniform(0.2, 0.8))
            floor = problem.limits[path]
            if floor is None:
                width = 4.0 * abs(truth)
                lo, hi = truth - width * s, truth + width * (1.0 - s)
                mid = 0.5 * (lo + hi)
            else:
                span = truth - floor
                lo, hi = floor + span * 2.0 ** (-2.0 * s), floor + span * 2.0 ** (2.0 * (1.0 - s))
                mid = floor + math.sqrt((lo - floor) * (hi - floor))
            bounds[path], centre[path] = (lo, hi), mid
        out.append((bounds, centre))
    return out


def judge(problem, result):
    """``(success, max |estimate - truth| / stderr)``."""
    worst = 0.0
    for path, truth in problem.truth.items():
        stderr = result.stderr[path]
        z = abs(result.params[path] - truth) / stderr if stderr > 0 and math.isfinite(stderr) else math.inf
        worst = max(worst, z if math.isfinite(z) else math.inf)
    return bool(result.converged) and worst <= SUCCESS_STDERR, worst


class NotAvailable(Exception):
    pass


def one_fit(method, problem, bounds, centre, first):
    """One fit, timed; a dict for the JSON. Raises NotAvailable for a refused ``initial=None``."""
    system, record, _, dt = problem[:4]
    began = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method == "local":
                result = jf.fit(system, centre, record, bounds=bounds, optimizer="lm", dt=dt)
            else:
                result = jf.fit(system, None, record, bounds=bounds, dt=dt)
    except (TypeError, ValueError) as error:
        if method == "global" and first:
            raise NotAvailable(f"{type(error).__name__}: {error}") from error
        return {"success": False, "seconds": time.perf_counter() - began, "error": f"{type(error).__name__}: {error}",
                "bounds": bounds}
    seconds = time.perf_counter() - began
    success, worst = judge(problem, result)
    evaluations = getattr(result, "n_evaluations", None)
    return {"success": success, "seconds": seconds, "converged": bool(result.converged),
            "max_abs_z": worst if math.isfinite(worst) else None, "n_steps": int(result.n_steps),
            "n_evaluations": None if evaluations is None else int(evaluations), "message": result.message,
            "params": result.params, "stderr": result.stderr, "bounds": bounds,
            "initial": centre if method == "local" else None}


def run_method(method, name, problem, boxes):
    fits = []
    for i, (bounds, centre) in enumerate(boxes):
        try:
            fits.append(one_fit(method, problem, bounds, centre, first=(i == 0)))
        except NotAvailable as why:
            print(f"  {name} / {method}: not available ({why})", flush=True)
            return {"available": False, "reason": str(why), "fits": []}
        f = fits[-1]
        detail = f.get("error") or (f"converged={f['converged']} max|z|={f['max_abs_z'] if f['max_abs_z'] is None else round(f['max_abs_z'], 2)}"
                                    f" steps={f['n_steps']} evaluations={f['n_evaluations']}")
        print(f"  {name} / {method} box {i + 1}/{len(boxes)}: {'ok  ' if f['success'] else 'FAIL'} "
              f"{f['seconds']:.1f} s {detail}", flush=True)
    evaluations = [f["n_evaluations"] for f in fits if f.get("n_evaluations") is not None]
    return {"available": True, "boxes": len(fits), "success_rate": float(np.mean([f["success"] for f in fits])),
            "median_seconds": float(np.median([f["seconds"] for f in fits])),
            "median_evaluations": float(np.median(evaluations)) if evaluations else None, "fits": fits}


def mismatch(problem):
    """Coulomb + viscous (Threlfall, v0 = 0.01 m/s) on the belt, fitted to the LuGre belt record."""
    lugre = problem.system
    system = jf.Oscillator(law=jf.Threlfall(mu=0.4, v0=0.01, viscous=0.1), surface=lugre.surface,
                           stiffness=lugre.stiffness, mass=lugre.mass, normal=lugre.normal)
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = jf.fit(system, {"law.mu": 0.4, "law.viscous": 0.1}, problem.record, optimizer="lm", dt=problem.dt)
    seconds = time.perf_counter() - began
    print("\nMismatch: Coulomb + viscous (Threlfall, v0 = 0.01 m/s) fitted to the lugre-belt record "
          f"(noise sigma {problem.noise:.3g}), {seconds:.1f} s")
    print(result.summary())
    fits_data = getattr(result, "fits_data", None)
    print(f"fits_data: {fits_data}; residual std / noise sigma = {result.residual_std / problem.noise:.2f}")
    return {"params": result.params, "stderr": result.stderr, "converged": bool(result.converged),
            "residual_std": result.residual_std, "noise": problem.noise, "fits_data": fits_data,
            "seconds": seconds, "summary": result.summary()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", default=",".join(PROBLEMS), help="comma-separated: " + ", ".join(PROBLEMS))
    parser.add_argument("--boxes", type=int, default=None, help="boxes per problem (default 20; 3 with --quick)")
    parser.add_argument("--method", choices=("local", "global", "both"), default="both")
    parser.add_argument("--quick", action="store_true", help="3 boxes, shorter records where possible")
    parser.add_argument("--box-seed", type=int, default=BOX_SEED)
    parser.add_argument("--no-mismatch", action="store_true", help="skip the Coulomb + viscous mismatch check")
    parser.add_argument("--json", default=None, help="write every fit to this JSON file")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.problems.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROBLEMS]
    if unknown:
        parser.error(f"unknown problems {unknown}; choose from {list(PROBLEMS)}")
    n_boxes = args.boxes if args.boxes is not None else (3 if args.quick else 20)
    if n_boxes < 1:
        parser.error("--boxes must be >= 1")
    methods = ["local", "global"] if args.method == "both" else [args.method]

    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "jax": jax.__version__,
                       "devices": [str(d) for d in jax.devices()]},
           "args": vars(args), "success_criterion": f"converged and |estimate - truth| <= {SUCCESS_STDERR} stderr",
           "problems": {}}
    rows = []
    for name in names:
        problem = PROBLEMS[name](quick=args.quick)
        diff, rel = agreement(problem)
        print(f"{name}: reference {problem.reference_seconds:.1f} s; jf.simulate at the truth vs reference: "
              f"max |diff| {diff:.3g} ({rel:.3g} of the signal's std; noise sigma {problem.noise:.3g})", flush=True)
        entry = {"truth": problem.truth, "limits": problem.limits, "noise": problem.noise, "dt": problem.dt,
                 "samples": len(problem.record), "reference_seconds": problem.reference_seconds,
                 "agreement_abs": diff, "agreement_rel_std": rel, "methods": {}}
        boxes = draw_boxes(name, problem, n_boxes, args.box_seed)
        for method in methods:
            summary = run_method(method, name, problem, boxes)
            entry["methods"][method] = summary
            if summary["available"]:
                ev = summary["median_evaluations"]
                rows.append((name, method, str(summary["boxes"]), f"{100 * summary['success_rate']:.0f}",
                             f"{summary['median_seconds']:.1f}", "n/a" if ev is None else f"{ev:.0f}"))
            else:
                rows.append((name, method, "-", "not available", "-", "-"))
        if name == "lugre-belt" and not args.no_mismatch:
            entry["mismatch"] = mismatch(problem)
        out["problems"][name] = entry

    header = ("problem", "method", "boxes", "success %", "median s/fit", "evaluations")
    print("\n| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1, default=float)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
