"""A frequency-response curve of a friction oscillator: harmonic balance against shooting.

Quinn's regularized Coulomb friction on a forced spring-mass (``x'' + x = sin(omega t) + f``,
``mu N = 0.3``, ``eps = 0.05``) at ``--points`` forcing frequencies in ``[0.3, 0.9]`` (below
resonance, where the friction-limited response is bounded), side by side in one run:

- ``jf.harmonic_balance_batch`` (all frequencies in one vectorized program) at ``--harmonics``;
- ``jf.periodic_orbit`` (Newton shooting on the RK4 flow at ``dt = 2e-3``), one frequency at
  a time, as a user would loop it;
- the reference: ``jf.harmonic_balance`` with ``accuracy=1e-5`` at three frequencies, and
  shooting at ``dt = 5e-4`` at the same three.

Reports the wall time of each (first call, compilation included, and repeated) and the
largest amplitude difference to the reference. Speed is measured here, never in tests.

``--backbones B`` instead times ``jf.nonlinear_mode_batch`` on ``B`` parameter sets (``K_T``
and ``chi`` drawn around Segalman's joint of ``--elements`` elements) of the jointed
oscillator, 20 amplitudes each (issue 37's target: 1,000 sets of a 100-slider joint in 60 s).

``--structure C`` instead times ``jf.continue_balance`` along a 200-point frequency-response
curve of the reduced-order jointed bar (``jf.jointed_bar``: 4 modes, ``C`` Jenkins contacts,
8 harmonics; issue 37's target: 40 contacts in 60 s), first call and repeated.

Run from the repository root: ``python scripts/benchmarks/bench_harmonic.py [--points 64]
[--harmonics 16 32] [--backbones 1000 --elements 100] [--structure 40]``.
"""

from __future__ import annotations

import argparse
import os
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=64)
    parser.add_argument("--harmonics", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--backbones", type=int, default=0)
    parser.add_argument("--elements", type=int, default=100)
    parser.add_argument("--structure", type=int, default=0)
    args = parser.parse_args()
    if args.structure:
        structure(args.structure)
        return
    if args.backbones:
        backbones(args.backbones, args.elements)
        return
    system = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.05), force=jf.Harmonic(1.0, 0.5))
    omegas = np.linspace(0.3, 0.9, args.points)
    check = [0, args.points // 2, args.points - 1]
    print(f"jax {jax.__version__}, cores {os.cpu_count()}, load average {os.getloadavg()}")

    reference = {}
    for i in check:
        s = jf.set_parameters(system, {"force.omega": omegas[i]})
        hb = jf.harmonic_balance(s, harmonics=32, accuracy=1e-5, warn=False)
        orbit = jf.periodic_orbit(s, dt=5e-4, warn=False)
        reference[i] = orbit.amplitude
        print(f"reference omega = {omegas[i]:.3f}: harmonic balance ({hb.harmonics} harmonics, estimate "
              f"{hb.relative_error:.1e}) {hb.amplitude[0]:.7f}, shooting dt 5e-4 {orbit.amplitude:.7f}")

    rows = []
    for h in args.harmonics:
        times = []
        for _ in range(2):
            began = time.perf_counter()
            out = jf.harmonic_balance_batch(system, {"force.omega": omegas}, harmonics=h)
            times.append(time.perf_counter() - began)
        err = max(abs(out["amplitude"][i, 0] - reference[i]) / reference[i] for i in check)
        rows.append((f"harmonic_balance_batch, H = {h}", times, err, int(out["converged"].sum())))

    times = []
    for _ in range(2):
        began = time.perf_counter()
        amps = [jf.periodic_orbit(jf.set_parameters(system, {"force.omega": w}), dt=2e-3, warn=False) for w in omegas]
        times.append(time.perf_counter() - began)
    err = max(abs(amps[i].amplitude - reference[i]) / reference[i] for i in check)
    rows.append(("periodic_orbit loop, dt = 2e-3", times, err, sum(o.converged for o in amps)))

    print(f"\n| {args.points} frequencies | first call (s) | repeated (s) | largest relative amplitude error | converged |")
    print("|---|---|---|---|---|")
    for name, (first, again), err, ok in rows:
        print(f"| {name} | {first:.2f} | {again:.2f} | {err:.1e} | {ok} |")


def backbones(n_sets, n_elements):
    law = jf.SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=n_elements)
    system = jf.jointed_oscillator(law)
    amplitudes = np.geomspace(1e-3, 1.0, 20) * float(law.density()[0])
    rng = np.random.default_rng(0)
    values = {"law.K_T": 3.0 * np.exp(0.1 * rng.normal(size=n_sets)), "law.chi": -0.5 + 0.05 * rng.normal(size=n_sets)}
    print(f"jax {jax.__version__}, cores {os.cpu_count()}, load average {os.getloadavg()}")
    began = time.perf_counter()
    out = jf.nonlinear_mode_batch(system, values, amplitudes, harmonics=8)
    seconds = time.perf_counter() - began
    print(f"{n_sets} parameter sets x {len(amplitudes)} amplitudes, Segalman joint of {n_elements} elements, "
          f"8 harmonics: {seconds:.1f} s (compilation included), {out['converged'].mean():.3%} converged")


def structure(n_contacts, points=200):
    system = jf.jointed_bar(n_contacts, 4, force_amplitude=0.05, omega=1.2)
    print(f"jax {jax.__version__}, cores {os.cpu_count()}, load average {os.getloadavg()}")
    for run in ("first call", "repeated"):
        began = time.perf_counter()
        start = jf.harmonic_balance(system, harmonics=8, estimate=False)
        branch = jf.continue_balance(start, "force.omega", bounds=(1.2, 3.2), max_points=points, ds=0.01, ds_max=0.01)
        seconds = time.perf_counter() - began
        amplitude = branch["amplitude"].values[:, 0]
        peak = int(np.argmax(amplitude))
        omega = branch["force.omega"].values
        print(f"{run}: {branch.sizes['point']} points ({branch.attrs['status']}, omega {omega[0]:.3f}..{omega[-1]:.3f}) "
              f"of a {n_contacts}-contact, 4-mode bar, 8 harmonics: {seconds:.1f} s; peak q_1 = {amplitude[peak]:.5f} "
              f"at omega = {omega[peak]:.4f}; {int(branch['stable'].sum())} stable, {int(branch['fold'].sum())} folds")
    # the truncation error at the peak, where the most contacts slide: 8 against 16 harmonics
    check = jf.harmonic_balance(jf.set_parameters(system, {"force.omega": omega[peak]}), harmonics=8)
    print(f"at the peak, 8 harmonics against 16: estimated relative error {check.relative_error:.1e}, "
          f"q_1 {check.amplitude[0]:.5f} (16 harmonics), stick fraction of the time-domain check "
          f"{branch['stick_fraction'].values[peak]:.2f}")

if __name__ == "__main__":
    main()
