"""Paper 003's four friction models on the seven recorded ground motions, side by side (issue 14).

For each record of ``../shared/data/ground_motions`` (both horizontal components, mu = 0.3,
a 1 kg block, 5 s of rest after the record, step ``--dt``): peak and residual sliding of

- ``quinn``: Quinn's vector law with RK4 (``eps = 2 mu g dt``),
- ``moreau-jean``: exact Coulomb, vector Moreau-Jean,
- ``griffin-spring``: Griffin's spring model (SMFM, k_t = 40000 N/m, paper 003 Sec. 3), RK4,
- ``na-eltawil``: paper 003's own algorithm (:class:`jaxfriction.NaEltawil2D`),

against the reference, Moreau-Jean at ``dt / 10``, and the wall time of each run (best of
``--repeats`` after a compiling run). Then the isotropy study: the same record rotated in
the plane (the exact result is rotation invariant) for Moreau-Jean and Na et al., and how
far Na et al.'s friction force leaves the slip direction.

Usage: ``python scripts/studies/compare_paper003.py [--dt 1e-3] [--records kobe elcentro] [--json PATH]``.
"""

import argparse
import json
import math
import platform
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402
from jaxfriction._exact.na_eltawil import na_eltawil_step  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ground_motions"
RECORDS = ("elcentro", "erzikan", "jiji", "kobe", "newhall", "rinaldi", "sylmar")
METHODS = ("quinn", "moreau-jean", "griffin-spring", "na-eltawil")
MU = 0.3


def run(motion, method, dt, repeats):
    jf.quake_response(motion, MU, method=method, dt=dt)  # compile
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        _, summary = jf.quake_response(motion, MU, method=method, dt=dt)
        best = min(best, time.perf_counter() - start)
    return summary, best


def slip_direction_error(motion, dt, seconds):
    """Over the first ``seconds`` of the record, Na et al.'s per-step friction force against -V.

    The force of a step is ``m (V(t+h) - V(t)) / h + m mean(w'')`` (Simpson's mean of the
    floor acceleration, exact for the algorithm's RK4 flows when there is no transition).
    """
    block = jf.BlockOnShakingFloor(law=jf.VectorCoulomb(MU), ground=motion)
    traj = jf.simulate(block, jnp.zeros(4), 0.0, seconds, dt, solver=jf.NaEltawil2D(), save_every=1)
    ts, v = np.asarray(traj.ts), np.asarray(traj.ys[:, 2:4])
    h = ts[1] - ts[0]
    a = jax.vmap(motion)
    mean_a = (np.asarray(a(ts[:-1])) + 4 * np.asarray(a(ts[:-1] + h / 2)) + np.asarray(a(ts[1:]))) / 6
    force = np.diff(v, axis=0) / h + mean_a  # per unit mass
    cases = np.asarray(jax.vmap(lambda t, y: na_eltawil_step(block, MU, MU, t, y, h)[1])(traj.ts[:-1], traj.ys[:-1]))
    sliding = (np.linalg.norm(v[:-1], axis=1) > 1e-4) & (np.linalg.norm(v[1:], axis=1) > 1e-4)
    vm = 0.5 * (v[:-1] + v[1:])
    cos = -np.sum(force * vm, axis=1) / (np.linalg.norm(force, axis=1) * np.linalg.norm(vm, axis=1) + 1e-300)
    angle = np.degrees(np.arccos(np.clip(cos, -1, 1)))[sliding]
    eq7 = np.isin(cases, (13, 22))
    return {
        "sliding_steps": int(sliding.sum()),
        "eq7_steps_fraction_of_sliding": float(np.mean(eq7[sliding])),
        "angle_over_5deg_fraction": float(np.mean(angle > 5.0)),
        "max_angle_deg": float(angle.max()),
        "max_force_over_mu_m_g": float(np.max(np.linalg.norm(force, axis=1)) / (MU * 9.81)),
        "eq7_steps_total": int(eq7.sum()),
        "steps": int(len(cases)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument("--records", nargs="*", default=list(RECORDS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rotation-records", nargs="*", default=["kobe", "elcentro"])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    out = {"dt": args.dt, "mu": MU, "machine": f"{platform.processor() or platform.machine()}, jax {jax.__version__}",
           "records": {}, "rotation": {}}
    print(f"{'record':9s} {'PGA':>5s} | " + " | ".join(f"{m:>23s}" for m in ("reference", *METHODS)))
    for name in args.records:
        motion = jf.load_ground_motion(DATA / f"{name}.txt")
        _, ref = jf.quake_response(motion, MU, method="moreau-jean", dt=args.dt / 10)
        row = {"pga": motion.peak(), "reference": {k: ref[k] for k in ("peak_sliding", "residual_sliding")}}
        for method in METHODS:
            summary, seconds = run(motion, method, args.dt, args.repeats)
            row[method] = {"peak_sliding": summary["peak_sliding"], "residual_sliding": summary["residual_sliding"],
                           "status": summary["status"], "seconds": seconds}
        out["records"][name] = row
        cells = [f"{1e3 * ref['peak_sliding']:7.1f} / {1e3 * ref['residual_sliding']:7.1f} mm    "]
        cells += [f"{1e3 * row[m]['peak_sliding']:7.1f} / {1e3 * row[m]['residual_sliding']:7.1f} ({row[m]['seconds']:5.2f}s)"
                  for m in METHODS]
        print(f"{name:9s} {row['pga']:5.2f} | " + " | ".join(cells), flush=True)
    for name in args.rotation_records:
        motion = jf.load_ground_motion(DATA / f"{name}.txt")
        study = {}
        for method in ("moreau-jean", "na-eltawil"):
            peaks, residuals = [], []
            for degrees in range(0, 91, 15):
                rotated = eqx.tree_at(lambda m: m.rotation, motion, math.radians(degrees))
                _, s = jf.quake_response(rotated, MU, method=method, dt=args.dt)
                peaks.append(s["peak_sliding"])
                residuals.append(s["residual_sliding"])
            study[method] = {"peak_sliding": peaks, "residual_sliding": residuals,
                             "peak_spread": float(np.ptp(peaks) / np.mean(peaks)),
                             "residual_spread": float(np.ptp(residuals) / np.mean(residuals))}
        study["slip_direction"] = slip_direction_error(motion, args.dt, min(20.0, motion.duration))
        out["rotation"][name] = study
        print(f"{name}: rotation 0-90 deg, peak sliding spread (max - min) / mean: Moreau-Jean "
              f"{study['moreau-jean']['peak_spread']:.2e}, Na et al. {study['na-eltawil']['peak_spread']:.2e}; "
              f"residual: {study['moreau-jean']['residual_spread']:.2e}, {study['na-eltawil']['residual_spread']:.2e}")
        print(f"  Na et al. slip direction (first 20 s): {study['slip_direction']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
