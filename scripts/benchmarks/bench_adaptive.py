"""Adaptive Dopri5 on a friction-oscillator batch: jaxfriction against plain diffrax (issue 24).

The workload is pybasin's friction-oscillator case (the bSTAB friction case of Stender et
al.: ``case_studies/friction`` of pyBasin): a unit mass on a spring (``k = 1``) and damper
(``c = 2 xi = 0.1``) on a belt moving at ``v_d = 1.5``, with a Stribeck-type law
``mu(v_rel) = mu_d (1 + (mu_sd - 1) exp(-|v_rel| / v0))``, ``mu_d = 0.5``, ``mu_sd = 2``,
``v0 = 0.5``, smoothed by ``tanh(50 v_rel)`` in slip, and pybasin's switched stick model
below ``|v_rel| = 1e-4`` (the slip velocity relaxes, ``v_rel' = -v_rel``, while
``|x + 2 xi x'| <= mu_d mu_sd``; above it a transition force ``+mu_d mu_sd tanh(50 mu)``).
In jaxfriction it is an :class:`~jaxfriction.Oscillator` with that law written as a user
law (:class:`BstabFriction` below, ``surface=Constant(1.5)``, ``damping=0.1``); the one
difference from pybasin's right-hand side is ``x' = x'`` in stick where pybasin writes
``x' = v_d`` (they differ by less than ``1e-4`` there): jaxfriction's positions always move
with the velocity. The plain contender integrates jaxfriction's equations.

Batch: a 100 x 50 grid (``--lanes``) of initial states over pybasin's sampling box ``x in
[0.5, 2.5]``, ``x' in [-2, 0]``; ``t in [0, 500]``, saved at pybasin's 500 times
``linspace(0, 500, 500)``; diffrax ``Dopri5``, ``rtol = 1e-8``, ``atol = 1e-6``, float64,
first step chosen by diffrax, ``jit`` of ``vmap`` over the lanes on the default device.

Contenders, side by side in one process:

- ``plain diffrax``: what pybasin's ``JaxSolver`` runs, written here: the 2-state right-hand
  side as a flat array, ``diffrax.PIDController(rtol, atol)`` with its default norm, no
  energy integrals.
- ``jaxfriction before``: ``jf.simulate`` with ``jf.Diffrax(Dopri5(),
  stepsize_controller=PIDController(rtol, atol))`` (the energy books in diffrax's default
  norm) and the flat ``(5,)`` state handed to diffrax (``ROW_STATE_LIMIT`` of
  ``jaxfriction._integrate.diffrax_solvers`` patched to 0 for it): the previous revision.
- ``books out of the norm``: the default controller (``norm=jf.dynamics_rms_norm``), still
  the flat state: the norm's effect alone.
- ``jaxfriction now``: ``jf.simulate`` with ``jf.Diffrax(Dopri5(), rtol, atol)``, the
  default: books out of the norm, the state handed to diffrax as a tuple of components.

Reported per contender: seconds per call (every contender is compiled first, then they are
timed in turn for ``--repeats`` rounds; the best call is reported: the machine is shared,
and the minimum is the least disturbed run; the median and the ratio of medians are
printed too), accepted
and rejected steps per lane (mean and max, from ``sol.stats``; a ``vmap``-ed while loop runs
until its slowest lane is done), the ratio to plain diffrax, the largest deviation of ``x``
from plain diffrax over all saves and lanes, and the energy balance residual
(``jf.energy_balance_residual`` at ``t = 500``, J, and ``jf.relative_energy_residual``).
``--implicit`` adds the implicit solver: one lane each of Quinn's oscillator (``Quinn(1,
0.05)``, ``Harmonic(1.5, 0.5)``, from ``(0.5, 0)`` to ``t = 20``), a LuGre oscillator
(``sigma0 = 100``, ``sigma1 = 10``, ``v_s = 0.1``, ``Harmonic(2, 1)``, same span) and the
stiff default LuGre (``sigma0 = 1e5``, ``Harmonic(2, 1)``, from rest to ``t = 5``), with
``Kvaerno5``, ``rtol = 1e-8``, ``atol = 1e-10``: the plain equations without the books,
jaxfriction's default (the books out of the step control, in the Newton iterations' norm),
the books out of both (a root finder with ``norm=jf.dynamics_rms_norm``) and in both (a
controller of one's own with diffrax's default norm, which diffrax also gives the root
finder); steps and the relative energy residual (``jf.relative_energy_residual``, 401
saves).

Measured on 2026-11-25 on the 2-core CI machine (AMD EPYC, shared with other jobs, load
average about 4), ``--lanes 5000 --repeats 5 --implicit``: best call / median, seconds:
plain diffrax 5.19 / 5.67; jaxfriction before 12.93 / 13.42 (2.49x / 2.37x); books out of
the norm on the flat state 12.58 / 12.96 (2.42x / 2.29x); jaxfriction now 5.19 / 7.55
(1.00x / 1.33x). Two other runs: best-call ratios 2.44 and 2.00 before, 1.53 and 1.09 now.
Steps per lane, accepted mean (max) / rejected mean (max): plain and now 2290 (3148) / 312
(526); before 2170 (2997) / 343 (574). Largest relative energy residual 9.3e-7 before,
7.5e-7 now (3.4e-4 J for up to 450 J of input work). At 1,000 lanes: 2.82x before, 1.18x
now; at 64 lanes 5.7x and 3.7x; at 16 lanes 1.9x and 3.5x (0.02 s plain, 0.05 s before,
0.09 s now); one lane 0.01 s plain, 0.01 s before, 0.03 s now. Kvaerno5, accepted +
rejected steps (relative residual), plain / default / books out of both norms / books in
both: Quinn 295 + 160 / 1008 + 1108 (7.4e-8) / 298 + 170 (1.9e-7) / 1035 + 1170 (9.1e-8);
LuGre 2742 + 2832 / 3371 + 3673 (2.3e-8) / 2745 + 2838 (1.8e-7) / 3281 + 3638 (2.0e-8);
stiff LuGre 1570 + 1736 / 1717 + 1913 (2.6e-8) / 1571 + 1736 (1.6e-6) / 1682 + 1892
(2.6e-8).

Speed is measured here, never in tests. Usage: ``python scripts/benchmarks/bench_adaptive.py
[--lanes 5000] [--repeats 3] [--t1 500] [--implicit] [--json PATH]``; ``--lanes 500``
takes about a minute on a 2-core machine, 5,000 lanes about 6 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import jax

jax.config.update("jax_enable_x64", True)

import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402
import jaxfriction._integrate.diffrax_solvers as diffrax_solvers  # noqa: E402

V_D, XI, MU_D, MU_SD, V0, ETA, K_SMOOTH = 1.5, 0.05, 0.5, 2.0, 0.5, 1e-4, 50.0
RTOL, ATOL = 1e-8, 1e-6


class BstabFriction(jf.AbstractFrictionLaw):
    """pybasin's friction-oscillator law in jaxfriction's convention (``v``: slip velocity
    ``x' - v_d``; ``f_eq = k x + c x'``; returns the friction force on the body, N).

    Slip (``|v| > eta``): ``-tanh(k_smooth v) N mu(v)`` with ``mu(v) = mu_d (1 + (ratio - 1)
    exp(-|v| / v0))``; transition (``|f_eq| > mu_d ratio N``): ``+mu_d ratio N tanh(k_smooth
    N mu(v))``; stick: ``f_eq - v``, the force that makes the slip velocity relax
    (``v' = -v``), pybasin's stick model. Not a law of the library: the benchmark's user law.
    """

    mu_d: float = MU_D
    ratio: float = MU_SD
    v0: float = V0
    eta: float = ETA
    k_smooth: float = K_SMOOTH

    def __call__(self, v, f_eq, normal):
        mu = normal * self.mu_d * (1.0 + (self.ratio - 1.0) * jnp.exp(-jnp.abs(v) / self.v0))
        slip = -jnp.tanh(self.k_smooth * v) * mu
        transition = self.mu_d * self.ratio * normal * jnp.tanh(self.k_smooth * mu)
        stick = f_eq - v
        return jnp.where(jnp.abs(v) > self.eta, slip,
                         jnp.where(jnp.abs(f_eq) > self.mu_d * self.ratio * normal, transition, stick))

    def static_limit(self, normal):
        return self.mu_d * self.ratio * normal


SYSTEM = jf.Oscillator(law=BstabFriction(), surface=jf.Constant(V_D), damping=2 * XI)


def plain_rhs(t, y, args):
    """The same equations as ``SYSTEM`` without energy integrals, as a pybasin user writes them."""
    x, v = y[0], y[1]
    vrel = v - V_D
    mu = MU_D * (1.0 + (MU_SD - 1.0) * jnp.exp(-jnp.abs(vrel) / V0))
    f_eq = x + 2 * XI * v
    f = jnp.where(jnp.abs(vrel) > ETA, -jnp.tanh(K_SMOOTH * vrel) * mu,
                  jnp.where(jnp.abs(f_eq) > MU_D * MU_SD, MU_D * MU_SD * jnp.tanh(K_SMOOTH * mu), f_eq - vrel))
    return jnp.array([v, -f_eq + f])


def initial_states(lanes):
    """A ``rows x cols`` grid (``rows = 2 cols`` as far as ``lanes`` allows) over pybasin's box."""
    cols = max(1, round(np.sqrt(lanes / 2)))
    rows = lanes // cols
    x, v = np.meshgrid(np.linspace(0.5, 2.5, rows), np.linspace(-2.0, 0.0, cols), indexing="ij")
    return jnp.asarray(np.stack([x.ravel(), v.ravel()], axis=1))


def plain_contender(ts):
    t0, t1 = float(ts[0]), float(ts[-1])

    def one(y0):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(plain_rhs), diffrax.Dopri5(), t0, t1, None, y0,
                                  saveat=diffrax.SaveAt(ts=ts), stepsize_controller=diffrax.PIDController(rtol=RTOL,
                                                                                                          atol=ATOL),
                                  max_steps=16**5, throw=False)
        return sol.ys, sol.stats["num_accepted_steps"], sol.stats["num_rejected_steps"]

    return jax.jit(jax.vmap(one))


def jaxfriction_contender(solver, ts):
    t0, t1 = float(ts[0]), float(ts[-1])

    def run(y0):
        traj = jf.simulate(SYSTEM, y0, t0, t1, solver=solver, saveat=jf.SaveAt(ts=ts))
        return traj.ys, traj.status, jf.energy_balance_residual(traj)[-1], jf.relative_energy_residual(traj)

    def stats(y0):
        _, sol = solver.solution(SYSTEM, SYSTEM.as_state(y0), t0, t1, saveat=jf.SaveAt(ts=ts))
        return sol.stats["num_accepted_steps"], sol.stats["num_rejected_steps"]

    return jax.jit(jax.vmap(run)), jax.jit(jax.vmap(stats))


def timed_alternating(fns, y0s, repeats, flat):
    """Compile every function of ``fns`` (a dict), then time them in turn, ``repeats``
    rounds, so that a disturbance of the shared machine falls on all of them alike.
    ``flat[name]``: trace that one with ``ROW_STATE_LIMIT = 0`` (the flat state).

    Returns:
        ``{name: (last output, best seconds, compile seconds, all seconds)}``.
    """
    limit = diffrax_solvers.ROW_STATE_LIMIT
    outs, compiled, times = {}, {}, {name: [] for name in fns}
    for name, fn in fns.items():
        diffrax_solvers.ROW_STATE_LIMIT = 0 if flat.get(name) else limit
        try:
            start = time.perf_counter()
            outs[name] = jax.block_until_ready(fn(y0s))
            compiled[name] = time.perf_counter() - start
        finally:
            diffrax_solvers.ROW_STATE_LIMIT = limit
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            outs[name] = jax.block_until_ready(fn(y0s))
            times[name].append(time.perf_counter() - start)
    return {name: (outs[name], min(times[name]), compiled[name] - min(times[name]), times[name]) for name in fns}


def implicit_rows():
    """The ``--implicit`` comparison (module docstring): one row per system and variant."""
    rtol, atol = 1e-8, 1e-10
    systems = {"quinn": (jf.Oscillator(law=jf.Quinn(1.0, 0.05), force=jf.Harmonic(1.5, 0.5)), 20.0),
               "lugre": (jf.Oscillator(law=jf.LuGre(sigma0=100.0, sigma1=10.0, sigma2=0.4, v_s=0.1),
                                       force=jf.Harmonic(2.0, 1.0)), 20.0),
               "stiff lugre": (jf.Oscillator(law=jf.LuGre(), force=jf.Harmonic(2.0, 1.0)), 5.0)}
    newton_without_books = diffrax.Kvaerno5(root_finder=diffrax.VeryChord(rtol=rtol, atol=atol,
                                                                          norm=jf.dynamics_rms_norm))
    variants = {"jaxfriction default (books in the Newton norm only)": jf.Diffrax(diffrax.Kvaerno5(), rtol=rtol,
                                                                                  atol=atol),
                "books out of both norms": jf.Diffrax(newton_without_books, rtol=rtol, atol=atol),
                "books in both norms": jf.Diffrax(diffrax.Kvaerno5(),
                                                  stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol))}
    rows = []
    for name, (system, t1) in systems.items():
        n = system.dynamical_size
        y0 = system.as_state(jnp.array([0.5, 0.0]) if name != "stiff lugre" else jnp.zeros(2))

        def plain(t, y, args, system=system, n=n):
            return system.vector_field(t, jnp.concatenate([y, jnp.zeros(3)]), args)[:n]

        sol = diffrax.diffeqsolve(diffrax.ODETerm(plain), diffrax.Kvaerno5(), 0.0, t1, None, y0[:n],
                                  stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol), max_steps=100_000)
        rows.append({"system": name, "variant": "plain diffrax, no books",
                     "accepted": int(sol.stats["num_accepted_steps"]), "rejected": int(sol.stats["num_rejected_steps"])})
        print(rows[-1], flush=True)
        for variant, solver in variants.items():
            _, sol = solver.solution(system, y0, 0.0, t1, saveat=jf.SaveAt(n=400))
            traj = jf.simulate(system, y0, 0.0, t1, solver=solver, saveat=jf.SaveAt(n=400))
            rows.append({"system": name, "variant": variant, "accepted": int(sol.stats["num_accepted_steps"]),
                         "rejected": int(sol.stats["num_rejected_steps"]),
                         "relative_energy_residual": float(jf.relative_energy_residual(traj))})
            print(rows[-1], flush=True)
    print()
    print("| system | Kvaerno5 | accepted | rejected | relative energy residual |")
    print("|---|---|---|---|---|")
    for r in rows:
        residual = r.get("relative_energy_residual")
        print(f"| {r['system']} | {r['variant']} | {r['accepted']} | {r['rejected']} | "
              f"{'-' if residual is None else f'{residual:.1e}'} |")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lanes", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--t1", type=float, default=500.0)
    parser.add_argument("--json", default=None)
    parser.add_argument("--implicit", action="store_true", help="add the Kvaerno5 comparison")
    args = parser.parse_args()

    ts = jnp.linspace(0.0, args.t1, 500)
    y0s = initial_states(args.lanes)
    print(f"{y0s.shape[0]} lanes, t in [0, {args.t1:g}], 500 saves, Dopri5 rtol={RTOL:g} atol={ATOL:g}, float64, "
          f"{jax.devices()[0].device_kind} ({os.cpu_count()} cores), {platform.machine()}", flush=True)

    pid = diffrax.PIDController(rtol=RTOL, atol=ATOL)
    variants = {
        "jaxfriction before: books in the norm, flat state": (
            jf.Diffrax(diffrax.Dopri5(), stepsize_controller=pid, max_steps=16**5), True),
        "books out of the norm, flat state": (
            jf.Diffrax(diffrax.Dopri5(), rtol=RTOL, atol=ATOL, max_steps=16**5), True),
        "jaxfriction now: books out of the norm, state by components": (
            jf.Diffrax(diffrax.Dopri5(), rtol=RTOL, atol=ATOL, max_steps=16**5), False),
    }
    plain = "plain diffrax (pybasin-like, no energy books)"
    fns, stats, flat = {plain: plain_contender(ts)}, {}, {}
    for name, (solver, is_flat) in variants.items():
        fns[name], stats[name] = jaxfriction_contender(solver, ts)
        flat[name] = is_flat
    results = timed_alternating(fns, y0s, args.repeats, flat)

    (ys_plain, acc, rej), t_plain, compile_plain, times = results[plain]
    median_plain = float(np.median(times))
    rows = [{"contender": plain, "seconds": t_plain, "median_s": median_plain, "compile_s": compile_plain,
             "times": times,
             "accepted_mean": float(acc.mean()), "accepted_max": int(acc.max()), "rejected_mean": float(rej.mean()),
             "rejected_max": int(rej.max()), "steps_max": int((acc + rej).max())}]
    print(rows[-1], flush=True)
    limit = diffrax_solvers.ROW_STATE_LIMIT
    for name in variants:
        (ys, status, residual, relative), seconds, compile_s, times = results[name]
        diffrax_solvers.ROW_STATE_LIMIT = 0 if flat[name] else limit
        try:
            acc, rej = jax.block_until_ready(stats[name](y0s))
        finally:
            diffrax_solvers.ROW_STATE_LIMIT = limit
        rows.append({"contender": name, "seconds": seconds, "median_s": float(np.median(times)),
                     "compile_s": compile_s, "times": times, "ratio_to_plain": seconds / t_plain,
                     "median_ratio_to_plain": float(np.median(times)) / median_plain,
                     "accepted_mean": float(acc.mean()),
                     "accepted_max": int(acc.max()), "rejected_mean": float(rej.mean()),
                     "rejected_max": int(rej.max()), "steps_max": int((acc + rej).max()),
                     "lanes_ok": int(jnp.sum(status == jf.STATUS_OK)),
                     "max_dx_to_plain": float(jnp.max(jnp.abs(ys[..., 0] - ys_plain[..., 0]))),
                     "energy_residual_max_J": float(jnp.max(jnp.abs(residual))),
                     "relative_energy_residual_max": float(jnp.max(relative)),
                     "relative_energy_residual_median": float(jnp.median(relative)),
                     "input_work_max_J": float(jnp.max(jnp.abs(ys[:, -1, -1])))})
        print(rows[-1], flush=True)

    print()
    print("| contender | s (best) | ratio to plain | s (median) | ratio of medians | accepted/lane mean (max) | "
          "rejected/lane mean (max) | max energy residual (J) | max relative residual |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['contender']} | {r['seconds']:.2f} | {r.get('ratio_to_plain', 1.0):.2f} | "
              f"{r['median_s']:.2f} | {r.get('median_ratio_to_plain', 1.0):.2f} | "
              f"{r['accepted_mean']:.0f} ({r['accepted_max']}) | {r['rejected_mean']:.0f} ({r['rejected_max']}) | "
              f"{r.get('energy_residual_max_J', float('nan')):.1e} | "
              f"{r.get('relative_energy_residual_max', float('nan')):.1e} |")
    implicit = implicit_rows() if args.implicit else None
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"lanes": int(y0s.shape[0]), "t1": args.t1, "date": time.strftime("%Y-%m-%d"),
                       "rows": rows, "implicit": implicit}, fh, indent=1)


if __name__ == "__main__":
    main()
