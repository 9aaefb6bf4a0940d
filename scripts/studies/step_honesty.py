"""Step honesty (issue 25): is every fixed-step RK4 lane either flagged or right?

For every law of the library's catalogue (static, vector and dynamic) in a simple system,
draws parameters around the catalogue's values (each positive scalar parameter times a
log-uniform factor in ``[10^-SPREAD, 10^SPREAD]``, the drive's amplitude and frequency
times ``[1/2, 2]``), runs the draws as one sweep (``samples=True``: transient and measured
window, as ``jaxfriction sweep`` runs them) at the law's step ``dt`` and at ``dt / 10``,
and sorts every lane:

- ``flagged``: status != 0 at ``dt`` (invalid parameters counted apart, as ``invalid``);
- ``agree``: status 0 and the window's dissipation within :data:`RTOL` relative plus
  :data:`ATOL` of the ``dt / 10`` run's;
- ``wrong``: status 0 and outside that tolerance (a silently wrong number);
- ``no_reference``: the ``dt / 10`` run is itself flagged (nothing to compare with).

``python scripts/studies/step_honesty.py [draws per law] [seed]`` prints the table;
``tests/test_step_honesty.py`` runs a few draws of each law under hypothesis.
"""

from __future__ import annotations

import sys

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np

import jaxfriction as jf

#: Tolerance of "agrees with the 10x finer step": relative, and an absolute floor (J): the
#: drive does 0.1 .. 1 J of work over a window, and a lane that sticks throughout dissipates
#: 1e-6 J by a first-order switch (Maxwell-slip integrated through its state rate, before RK4
#: marched it: 5.0e-6 against 3.8e-6 J at dt / 10).
RTOL, ATOL = 0.05, 1e-5
#: Decades either side of the catalogue's value a positive parameter is drawn over.
SPREAD = 1.0

_SHAKE = jf.Harmonic(jnp.array([3.0, 2.0]), 6.0)
_OSC = {"y0": jnp.array([0.2, 0.0]), "t1": 6.0, "window": 3.0}


def _oscillator(law):
    return jf.Oscillator(law=law, force=jf.Harmonic(0.8, 2.0), damping=0.05)


#: name -> (system, dt, run settings, drive paths). The static laws are those of the
#: contract tests; the dynamic ones too, plus the probe's Maxwell-slip and Iwan cases and
#: rate-and-state in the spring slider.
CASES = {
    "Coulomb": (_oscillator(jf.Coulomb(0.5)), 1e-2, _OSC),
    "StaticKineticCoulomb": (_oscillator(jf.StaticKineticCoulomb(0.6, 0.4)), 1e-2, _OSC),
    "ViscousCoulomb": (_oscillator(jf.ViscousCoulomb(0.5, 0.2)), 1e-2, _OSC),
    "Karnopp": (_oscillator(jf.Karnopp(0.6, 0.01, 0.4)), 1e-2, _OSC),
    "VelocityLimited": (_oscillator(jf.VelocityLimited(0.5, 0.02)), 1e-2, _OSC),
    "Quinn": (_oscillator(jf.Quinn(0.5, 0.02)), 1e-2, _OSC),
    "StaticKineticQuinn": (_oscillator(jf.StaticKineticQuinn(0.6, 0.4, 0.02)), 1e-2, _OSC),
    "Threlfall": (_oscillator(jf.Threlfall(0.5, 0.05, 0.1)), 1e-2, _OSC),
    "Awrejcewicz": (_oscillator(jf.Awrejcewicz(0.5, 3.0, 0.02)), 1e-2, _OSC),
    "Stribeck": (_oscillator(jf.Stribeck(0.6, 0.4, 0.1, 2.0)), 1e-2, _OSC),
    "VectorCoulomb": (jf.BlockOnShakingFloor(law=jf.VectorCoulomb(0.3, 0.1), ground=_SHAKE), 1e-3,
                      {"y0": jnp.array([0.0, 0.0, 0.5, 0.3]), "t1": 2.0, "window": 1.0}),
    "VectorQuinn": (jf.BlockOnShakingFloor(law=jf.VectorQuinn(0.3, 1e-2), ground=_SHAKE), 1e-3,
                    {"y0": jnp.array([0.0, 0.0, 0.5, 0.3]), "t1": 2.0, "window": 1.0}),
    "VectorThrelfall": (jf.BlockOnShakingFloor(law=jf.VectorThrelfall(), ground=_SHAKE), 1e-3,
                        {"y0": jnp.array([0.0, 0.0, 0.5, 0.3]), "t1": 2.0, "window": 1.0}),
    "LuGre": (_oscillator(jf.LuGre(sigma0=200.0, sigma1=5.0, mu_c=0.3, mu_s=0.5, v_s=0.1)), 1e-2, _OSC),
    "LuGre-paper": (_oscillator(jf.LuGre()), 1e-4, {"t1": 0.4, "window": 0.2}),
    "Dahl": (_oscillator(jf.Dahl(alpha=0.5)), 1e-3, {"t1": 2.0, "window": 1.0}),
    "Dahl-2": (_oscillator(jf.Dahl(alpha=2.0)), 1e-3, {"t1": 2.0, "window": 1.0}),
    "BoucWen": (_oscillator(jf.BoucWen(n=1.0)), 1e-3, {"t1": 2.0, "window": 1.0}),
    "BoucWen-2.5": (_oscillator(jf.BoucWen(n=2.5, gamma=-0.2)), 1e-3, {"t1": 2.0, "window": 1.0}),
    "Iwan": (_oscillator(jf.Iwan(jnp.array([1e5, 1e3]), jnp.array([0.3, 0.5]))), 1e-3,
             {"t1": 2.0, "window": 1.0}),
    "SegalmanIwan": (_oscillator(jf.SegalmanIwan(F_S=0.5, K_T=10.0, n_elements=8)), 1e-2, _OSC),
    "MaxwellSlip": (_oscillator(jf.MaxwellSlip(jnp.array([1e3, 3e2, 1e2]), jnp.array([0.5, 0.3, 0.2]),
                                               sigma2=0.4)), 1e-3, {"t1": 2.0, "window": 1.0}),
    "MaxwellSlip-C1e7": (_oscillator(jf.MaxwellSlip(jnp.array([100.0, 300.0]), jnp.array([0.5, 0.5]), C=1e7)),
                         1e-4, {"t1": 0.4, "window": 0.2}),
    "RateState-slider": (jf.SpringSlider(law=jf.RateState(a=0.01, b=0.015, D_c=0.01, mu_0=0.05, V_0=1.0,
                                                          evolution="slip"), load=jf.Constant(1.0), stiffness=2.0),
                         1e-2, {"y0": jnp.array([0.0, 1.0]), "t1": 10.0, "window": 5.0}),
    "RateState-aging": (jf.SpringSlider(law=jf.RateState(a=0.01, b=0.015, D_c=0.01, mu_0=0.6, V_0=1e-3),
                                        load=jf.Constant(1e-2), stiffness=2.0),
                        1e-2, {"y0": jnp.array([0.0, 1e-2]), "t1": 10.0, "window": 5.0}),
}

#: Paths drawn besides the law's (the drive's amplitude and frequency, times [1/2, 2]).
DRIVE = ("force.amplitude", "force.omega", "ground.omega", "load.value")


def parameter_paths(system):
    """The law's scalar parameters (positive ones, drawn log-uniform) and the drive's."""
    law_paths = [p for p in jf.scalar_parameter_paths(system) if p.startswith("law.")]
    law_paths = [p for p in law_paths if float(jf.get_parameter(system, p)) > 0]
    drive = [p for p in DRIVE if p in jf.scalar_parameter_paths(system)]
    return law_paths, drive


def draw_grid(system, u):
    """Lane values from uniforms ``u`` ``(lanes, n_paths)`` in [0, 1]: dict path -> (lanes,)."""
    law_paths, drive = parameter_paths(system)
    grid = {}
    for j, path in enumerate(law_paths + drive):
        value = float(jf.get_parameter(system, path))
        spread = SPREAD if j < len(law_paths) else np.log10(2.0)
        grid[path] = value * 10.0 ** (spread * (2.0 * u[:, j] - 1.0))
    return grid


def n_paths(system):
    law_paths, drive = parameter_paths(system)
    return len(law_paths) + len(drive)


def classify(name, u):
    """Run the draws ``u`` of case ``name`` at ``dt`` and ``dt / 10``.

    Returns:
        ``(labels, coarse, fine)``: a label per lane (``flagged``, ``invalid``, ``agree``,
            ``wrong``, ``no_reference``) and the two datasets.
    """
    system, dt, settings = CASES[name]
    grid = draw_grid(system, np.asarray(u, float))
    run = {"samples": True, "progress": False, "gradient": "none", "kernel": "vmap", **settings}
    coarse = jf.sweep(system, grid, dt=dt, **run)
    fine = jf.sweep(system, grid, dt=dt / 10, **run)
    s, s_ref = np.asarray(coarse["status"]), np.asarray(fine["status"])
    d, d_ref = np.asarray(coarse["dissipation"]), np.asarray(fine["dissipation"])
    close = np.abs(d - d_ref) <= RTOL * np.abs(d_ref) + ATOL
    labels = np.where(s == jf.STATUS_INVALID_PARAMETER, "invalid",
                      np.where(s != 0, "flagged", np.where(s_ref != 0, "no_reference",
                                                           np.where(close, "agree", "wrong"))))
    return labels, coarse, fine


def main(draws=64, seed=0, only=None):
    rng = np.random.default_rng(seed)
    kinds = ("flagged", "invalid", "agree", "wrong", "no_reference")
    print(f"{draws} draws per law, dt against dt/10, tolerance {RTOL:.0%} + {ATOL:g} J on the window's dissipation")
    print(f"{'case':22s} {'dt':>7s} " + " ".join(f"{k:>12s}" for k in kinds))
    worst = {}
    for name, (system, dt, _) in CASES.items():
        if only and not any(word in name for word in only):
            continue
        u = rng.uniform(size=(draws, n_paths(system)))
        labels, coarse, fine = classify(name, u)
        print(f"{name:22s} {dt:7.0e} " + " ".join(f"{np.mean(labels == k):12.2f}" for k in kinds), flush=True)
        wrong = np.flatnonzero(labels == "wrong")
        if wrong.size:
            d, d_ref = np.asarray(coarse["dissipation"]), np.asarray(fine["dissipation"])
            i = wrong[np.argmax(np.abs(d[wrong] - d_ref[wrong]) / np.abs(d_ref[wrong]))]
            worst[name] = ({p: float(coarse[p].values[i]) for p in draw_grid(system, u[:1])}, d[i], d_ref[i])
    for name, (params, d, d_ref) in worst.items():
        print(f"worst wrong lane of {name}: D = {d:.4g} against {d_ref:.4g} at dt/10; {params}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]), only=sys.argv[3:])
