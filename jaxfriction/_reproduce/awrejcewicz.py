"""Awrejcewicz, Grzelczyk, Pyryev 2007 (paper 002), Figs. 3-5: the disc on a driving disc.

- Fig. 3: ``M0 = 0``, phase portraits of the continuous model and Leine's switch model, with
  the stick-slip period (from rest, ``phi = phi' = 0``; t in [20, 60] drawn).
- Fig. 4: ``M0 = 0.5``, ``omega_dr = 0.11`` and ``0.3``, phase portraits over t in [200, 500]
  (from rest).
- Fig. 5: bifurcation diagram of ``phi`` sampled once per excitation period ``2 pi / Omega``
  after a transient, over ``omega_dr``, with the largest Lyapunov exponent of the
  (non-autonomous) 2-D flow beside it. The time direction of the paper's autonomous 3-D
  form adds only the exponent 0, which is left out. The paper does not print the
  ``omega_dr`` range; we use [0.02, 0.40], which contains its two cases.

Parameters are the paper's (``I = 2, k = 10, F_s = 20, r = 0.1, delta = 3, Omega = 2,
M0 = 0.5, h = 1e-3, eps = 1e-3``), RK4 as in the paper.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from .._checks import check_real
from .._dynamics.lyapunov import lyapunov_spectrum, system_dynamics
from .._dynamics.poincare import stick_slip_period, stroboscopic_samples
from .._integrate.simulate import simulate
from .._systems.disc import LeineSwitchDisc
from .._systems.oscillator import disc_on_driving_disc


def _is_periodic(samples, tol):
    """True when the stroboscopic samples take at most 16 distinct values (within ``tol``)."""
    s = np.sort(samples)
    return 1 + int(np.sum(np.diff(s) > tol)) <= 16


def disc_lyapunov(omega_dr, *, dt=1e-3, transient=200.0, duration=300.0, M0=0.5) -> tuple[Array, Array]:
    """Largest Lyapunov exponent and its uncertainty of the disc at each ``omega_dr`` (vmapped)."""

    def one(w) -> tuple[Array, Array]:
        f, _ = system_dynamics(disc_on_driving_disc(omega_dr=w, M0=M0))
        res = lyapunov_spectrum(f, jnp.zeros(2), dt=dt, duration=duration, transient=transient, n_exponents=1)
        return res.exponents[0], res.uncertainty[0]

    return jax.jit(jax.vmap(one))(jnp.asarray(omega_dr))


def bifurcation_samples(omega_dr, *, dt=1e-3, transient=200.0, n_samples=100, M0=0.5, Omega=2.0) -> Array:
    """Stroboscopic ``phi`` samples ``(len(omega_dr), n_samples)`` after ``transient`` (vmapped)."""
    period = 2 * math.pi / Omega
    n_tr = int(math.ceil(transient / period))

    def one(w) -> Array:
        return stroboscopic_samples(disc_on_driving_disc(omega_dr=w, M0=M0, Omega=Omega), jnp.zeros(2), period, dt=dt,
                                    transient_periods=n_tr, n_samples=n_samples)

    return jax.jit(jax.vmap(one))(jnp.asarray(omega_dr))


def awrejcewicz(n_params=100, omega_range=(0.02, 0.40), dt=1e-3, transient=200.0, duration=300.0,
                n_samples=100) -> tuple[dict, dict]:
    """Run Figs. 3-5 of paper 002.

    Args:
        n_params: number of values of ``omega_dr`` in ``omega_range`` for Fig. 5.
        omega_range: the ``omega_dr`` range of Fig. 5.
        dt: RK4 step.
        transient: transient time (s).
        duration: Lyapunov averaging duration (s).
        n_samples: stroboscopic samples per value.

    Returns:
        ``(numbers, figure_data)``; ``numbers`` is JSON-ready: stick-slip periods of both
            models (M0 = 0), ``lambda_1`` at 0.11 and 0.3 with uncertainties, the fraction of
            the range with ``lambda_1 > 0`` (and ``> 2 sigma``), and the check that periodic
            windows have ``lambda_1 <= 0`` within ``3 sigma``.

    Raises:
        ValueError: invalid arguments.
    """
    check_real("dt", dt, positive=True)
    if not (isinstance(n_params, int) and n_params >= 2):
        raise ValueError(f"n_params must be an int >= 2, got {n_params!r}")
    lo, hi = omega_range
    check_real("omega_range", np.array([lo, hi]), positive=True)
    if not hi > lo:
        raise ValueError(f"omega_range must be increasing, got {omega_range!r}")
    fig3 = {name: simulate(system, jnp.zeros(2), 0.0, 60.0, dt, save_every=1)
            for name, system in (("continuous", disc_on_driving_disc(M0=0.0)), ("switch", LeineSwitchDisc(M0=0.0)))}
    periods = {name: stick_slip_period(traj, 1e-3) for name, traj in fig3.items()}
    fig4 = {w: simulate(disc_on_driving_disc(omega_dr=w), jnp.zeros(2), 0.0, 500.0, dt, save_every=20)
            for w in (0.11, 0.3)}
    cases, case_sigma = disc_lyapunov(jnp.array([0.11, 0.3]), dt=dt, transient=transient, duration=duration)
    ws = np.linspace(lo, hi, n_params)
    lam, sigma = (np.asarray(a) for a in disc_lyapunov(ws, dt=dt, transient=transient, duration=duration))
    samples = np.asarray(bifurcation_samples(ws, dt=dt, transient=transient, n_samples=n_samples))
    periodic = np.array([_is_periodic(s, 1e-4) for s in samples])
    violations = periodic & (lam > 3 * sigma)
    numbers = {
        "stick_slip_period": {k: {"period": p, "spread": s} for k, (p, s) in periods.items()},
        "lambda_1": {"0.11": float(cases[0]), "0.3": float(cases[1])},
        "lambda_1_uncertainty": {"0.11": float(case_sigma[0]), "0.3": float(case_sigma[1])},
        "omega_dr_range": [lo, hi],
        "n_params": n_params,
        "fraction_lambda_positive": float(np.mean(lam > 0)),
        "fraction_lambda_above_2_sigma": float(np.mean(lam > 2 * sigma)),
        "periodic_windows": int(periodic.sum()),
        "periodic_with_positive_lambda_beyond_3_sigma": int(violations.sum()),
        "dt": dt, "transient": transient, "duration": duration,
    }
    return numbers, {"fig3": fig3, "fig4": fig4, "omega_dr": ws, "samples": samples, "lambda": lam, "sigma": sigma}
