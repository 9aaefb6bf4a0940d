"""LuGre (Canudas de Wit, Olsson, Astrom & Lischinsky 1995): Stribeck curve and presliding loop.

Two displacement-controlled experiments on the paper's parameters (Sec. 2 and Fig. 2 of the
paper: ``sigma0 = 1e5 N/m``, ``sigma1 = sqrt(1e5) N s/m``, ``sigma2 = 0.4 N s/m``, ``F_c = 1
N``, ``F_s = 1.5 N``, ``v_s = 1e-3 m/s``, Gaussian Stribeck exponent ``delta = 2``; ``N = 1``),
both run with :func:`~jaxfriction.drive_law` (classical RK4 on the bristle state):

- steady states: the contact slides at a constant velocity ``v`` for 60 relaxation lengths
  ``g(v) / sigma0``; the force is compared with the closed form ``F_ss(v) = sgn(v) (F_c +
  (F_s - F_c) exp(-|v / v_s|^delta)) + sigma2 v`` (the paper's eq. 7 with ``z' = 0``);
- presliding: a displacement ``x(t) = X sin(2 pi t / T)`` much smaller than ``F_c / sigma0``
  and much slower than ``v_s``. Along a branch of constant ``s = sgn(v)`` the bristle obeys
  ``dz/dx = 1 - s sigma0 z / g(v)``; with ``g = F_s`` (``|v| <= 2 pi X / T << v_s``, a
  relative error ``(v / v_s)^2``) the branch from a reversal at ``(x_r, z_r)`` is ``z = s
  F_s / sigma0 + (z_r - s F_s / sigma0) exp(-sigma0 |x - x_r| / F_s)``, and the force ``F =
  sigma0 z + sigma1 v dz/dx + sigma2 v`` (the closed-form loop drawn dashed). The bristle
  force's slope just after a reversal is ``sigma0 (1 + sigma0 |z_r| / F_s)``: ``sigma0`` for
  small loops (the presliding stiffness), steeper by the relative loading of the bristles.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from .._checks import check_real
from .._laws.dynamic import drive_law
from .._laws.lugre import LuGre

#: the paper's parameters (Canudas de Wit et al. 1995, Sec. 2; N = 1)
PAPER = dict(sigma0=1e5, sigma1=math.sqrt(1e5), sigma2=0.4, mu_c=1.0, mu_s=1.5, v_s=1e-3, delta=2.0)


def steady_state_closed_form(law, v, normal=1.0) -> np.ndarray:
    """``F_ss(v) = sgn(v) (F_c + (F_s - F_c) exp(-|v / v_s|^delta)) + sigma2 v`` (N), ``F_c = mu_c N``.

    Canudas de Wit et al. 1995, eq. (7) with ``z' = 0`` (steady sliding): the force the contact
    exerts against the motion, ``-law.force``.

    Args:
        law: a :class:`~jaxfriction.LuGre`.
        v: slip velocity (m/s), any shape.
        normal: normal force (N).

    Returns:
        ``F_ss`` (N), shaped like ``v``.
    """
    v = np.asarray(v, dtype=float)
    level = normal * (law.mu_c + (law.mu_s - law.mu_c) * np.exp(-np.abs(v / law.v_s) ** law.delta))
    return np.sign(v) * level + law.sigma2 * v


def _steady_states(law, velocities, lengths=60.0, steps=3000):
    def one(v) -> Array:
        g = law.steady_level(v, 1.0)
        ts = jnp.linspace(0.0, lengths * g / (law.sigma0 * jnp.abs(v)), steps + 1)
        return -drive_law(law, lambda t: v + 0.0 * t, ts)[1][-1]

    return np.asarray(jax.jit(jax.vmap(one))(jnp.asarray(velocities)))


def _closed_loop(law, x, v, amplitude):
    """The closed-form presliding force along ``x = X sin(omega t)`` sampled with velocity ``v``
    (``g = F_s``), branch by branch from the first sample (``z = 0``, ``x = 0``); every branch
    starts at the exact reversal ``x_r = +-X``."""
    fs, k = law.mu_s, law.sigma0

    def branch(xi, z_r, x_r, s) -> float:
        return s * fs / k + (z_r - s * fs / k) * np.exp(-k * abs(xi - x_r) / fs)

    z = np.empty_like(x)
    z_r, x_r, s = 0.0, x[0], np.sign(v[1])
    for i in range(len(x)):
        si = np.sign(v[i]) or s
        if si != s:  # a reversal at x = s X between samples i - 1 and i
            x_new = s * amplitude
            z_r, x_r, s = branch(x_new, z_r, x_r, s), x_new, si
        z[i] = branch(x[i], z_r, x_r, s)
    dz_dx = 1.0 - np.sign(v) * k * z / fs
    return k * z + law.sigma1 * v * dz_dx + law.sigma2 * v, z


def lugre(n_velocities=24, amplitude=2e-6, period=10.0, cycles=20, steps_per_cycle=2000) -> tuple[dict, dict]:
    """Run both experiments.

    Args:
        n_velocities: steady-state velocities per sign, log-spaced over ``1e-5 .. 0.3 m/s``
            (int >= 2).
        amplitude: presliding displacement amplitude ``X`` (m), > 0; the paper's bristles
            saturate at ``F_s / sigma0 = 1.5e-5 m``.
        period: presliding period ``T`` (s), > 0.
        cycles: presliding cycles before the loop drawn (int >= 2). The loop forgets its
            start by the factor ``exp(-2 sigma0 X / F_s)`` per cycle (0.59 at the defaults:
            the bristle's branches are exponentials in ``x``), so it closes only after many.
        steps_per_cycle: RK4 steps per presliding cycle (int >= 100, a multiple of 4).

    Returns:
        ``(numbers, data)``: ``numbers`` is JSON-ready (parameters; steady states with their
            largest relative error against the closed form; the loop's force amplitude (N),
            dissipation per cycle (simulated and closed-form loop, J), the slope of the
            bristle force after the last reversal over ``sigma0`` against ``1 + sigma0 |z_r| /
            F_s``, the loop's largest deviation from the closed form and its closure ``|F(end) - F(start)| / max |F|``); ``data`` holds the arrays the figure draws.

    Raises:
        ValueError: non-positive or too small arguments.
    """
    check_real("amplitude", amplitude, positive=True)
    check_real("period", period, positive=True)
    for name, value, least in (("n_velocities", n_velocities, 2), ("cycles", cycles, 2),
                               ("steps_per_cycle", steps_per_cycle, 100)):
        if int(value) != value or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value}")
    if steps_per_cycle % 4:
        raise ValueError(f"steps_per_cycle must be a multiple of 4, got {steps_per_cycle}")
    law = LuGre(**PAPER)
    speeds = np.logspace(-5, math.log10(0.3), int(n_velocities))
    velocities = np.concatenate([-speeds[::-1], speeds])
    simulated = _steady_states(law, velocities)
    closed = steady_state_closed_form(law, velocities)
    steady_error = float(np.max(np.abs(simulated - closed) / np.abs(closed)))

    omega = 2 * math.pi / period
    m = int(steps_per_cycle)
    n = int(cycles) * m + m // 4  # the loop drawn: from the reversal at x = +X after `cycles` cycles, one cycle
    ts = jnp.linspace(0.0, n / m * period, n + 1)
    z, f = drive_law(law, lambda t: amplitude * omega * jnp.cos(omega * t), ts)
    x = amplitude * np.sin(omega * np.asarray(ts))
    v = amplitude * omega * np.cos(omega * np.asarray(ts))
    force, z = -np.asarray(f), np.asarray(z)[:, 0]  # type: ignore[assignment]  # NumPy copies of the arrays
    closed_force, _ = _closed_loop(law, x, v, amplitude)
    last = slice(n - m, n + 1)
    loop_dissipation = float(np.trapezoid(force[last], x[last]))  # the work of the drive over the last cycle
    # the reversal (x = +X, v from + to -) that starts the loop: the bristle force's slope just after it
    i_r = n - m
    k = 5
    slope = float((law.sigma0 * (z[i_r + k] - z[i_r])) / (x[i_r + k] - x[i_r]))
    slope_closed = 1.0 + law.sigma0 * abs(float(z[i_r])) / law.mu_s
    deviation = float(np.max(np.abs(force - closed_force)) / np.max(np.abs(force)))
    numbers = {
        "parameters": {k: float(v) for k, v in PAPER.items()},
        "source": "Canudas de Wit, Olsson, Astrom & Lischinsky 1995, IEEE TAC 40(3):419, Sec. 2",
        "steady_state": {"velocities": velocities.tolist(), "simulated": simulated.tolist(),
                         "closed_form": closed.tolist(), "max_relative_error": steady_error},
        "presliding": {
            "amplitude": amplitude, "period": period, "cycles": int(cycles), "steps_per_cycle": m,
            "force_amplitude": float(np.max(np.abs(force[last]))),
            "dissipation_per_cycle": loop_dissipation,
            "dissipation_per_cycle_closed_form": float(np.trapezoid(closed_force[last], x[last])),
            "reversal_slope_over_sigma0": slope / law.sigma0,
            "reversal_slope_closed_form_over_sigma0": slope_closed,
            "max_deviation_from_closed_form": deviation,
            "loop_closure": float(abs(force[n] - force[n - m]) / np.max(np.abs(force[last]))),
        },
    }
    data = {"velocities": velocities, "simulated": simulated, "law": law, "x": x[last], "force": force[last],
            "closed_force": closed_force[last], "reversal": (x[i_r], force[i_r])}
    return numbers, data


__all__ = ["lugre", "steady_state_closed_form", "PAPER"]
