"""Segalman 2005: dissipation per cycle of a jointed oscillator versus force amplitude.

The jointed oscillator (:func:`~jaxfriction.jointed_oscillator`: ``m = 1 kg``, ``k = 1
N/m``, Segalman's joint ``F_S = 1 N``, ``K_T = 3 N/m``, ``chi = -0.5``, ``beta = 0.1``, 256
elements, light viscous damping ``c = 0.01 N s/m``) is forced at ``omega = 0.3 rad/s``
(quasi-static: the stuck natural frequency is 2 rad/s) over a log range of force amplitudes,
each lane started in the stuck joint's linear steady state. From the last cycle: the
friction dissipation ``D``, the joint's force amplitude ``F_j`` and displacement amplitude
``u``. At small amplitude ``D ~ F_j^(3 + chi)`` (microslip; Segalman 2005, the power law
measured on lap joints) with the prefactor of
:meth:`~jaxfriction.SegalmanIwan.small_amplitude_dissipation`; past ``u = phi_max`` every
element slides (macroslip), ``F_j = F_S`` and ``D`` grows like ``4 F_S u`` (slope 1 in the
applied force). The quasi-static macroslip threshold is ``F = F_S + (k - m omega^2) phi_max``.

The fitted microslip slope is compared with ``exact_slope``, the same least-squares fit on the
discrete model's exact quasi-static dissipation at the same joint force amplitudes
(:func:`masing_dissipation`, Masing's rules on the ``n_elements + 1`` elements): over the fitted range
(joint forces below ``0.03 F_S``) the discrete model's slope is not ``3 + chi = 2.5``, the
small-force limit, but 2.5305 (25 amplitudes, 128 elements; fitted 2.5300).

``macroslip_force_measured`` is the force amplitude where the last cycle's displacement
amplitude ``u`` reaches ``phi_max``, located by refining the bracket of the crossing
(``REFINE_ROUNDS`` rounds of ``REFINE_POINTS`` forces) and interpolating linearly. At
``omega = 0.3`` it is 1.650 against the quasi-static 1.770 (converged in the amplitude grid:
1.6504 from 12 amplitudes, 1.6495 from 25): the deficit is dynamic, not a measurement error.
Past the first slip the joint softens, the slipped natural frequency 1 rad/s sits next to the
third harmonic (0.9 rad/s) of the hysteretic joint force, and the light damping (``c = 0.01``)
barely damps the free vibration, so ``u`` is larger than the quasi-static one at the same force
(measured: 1.720 with ``c = 0.3``). With slower loading it converges to the quasi-static value:
1.832 against 1.838 at ``omega = 0.1`` (``tests/test_jointed.py``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from .._checks import check_real
from .._integrate.simulate import simulate
from .._laws.iwan import SegalmanIwan
from .._observables.dissipation import dissipation_per_cycle
from .._systems.jointed import jointed_oscillator

MASS, STIFFNESS, DAMPING, OMEGA = 1.0, 1.0, 0.01, 0.3
JOINT = dict(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1)
#: the microslip range of the power-law fit: joint force amplitudes below this fraction of F_S
MICROSLIP = 0.03
#: the macroslip threshold: rounds of refinement of the bracket of ``u = phi_max``, forces per round
REFINE_ROUNDS, REFINE_POINTS = 2, 9


def masing_dissipation(stiffness, slip_force, joint_force) -> tuple[np.ndarray, np.ndarray]:
    """The exact quasi-static dissipation per cycle of a discrete Iwan model at joint force amplitudes.

    For Jenkins elements ``(k_i, phi_i)`` under a cyclic displacement of amplitude ``u`` (Masing's
    rules), the joint force amplitude is the virgin curve ``F(u) = sum_i min(k_i u, phi_i)`` and
    each element that slips (``k_i u > phi_i``) dissipates its loop area ``4 phi_i (u - phi_i /
    k_i)``. ``F(u)`` is piecewise linear and increasing, so ``u`` follows from ``F`` exactly
    (breakpoints at the elements' slip displacements ``phi_i / k_i``).

    Args:
        stiffness: ``k_i`` ``(n,)`` > 0 (N/m).
        slip_force: ``phi_i`` ``(n,)`` >= 0 (N).
        joint_force: force amplitudes ``(m,)`` below ``sum_i phi_i`` (N).

    Returns:
        ``(u (m,), D (m,))``: displacement amplitudes (m) and dissipation per cycle (J).
    """
    k, phi = np.asarray(stiffness, float), np.asarray(slip_force, float)
    order = np.argsort(phi / k)
    k, phi = k[order], phi[order]
    x = phi / k  # breakpoints, increasing
    # F at each breakpoint: the elements before it slide at phi_j, the rest are elastic
    f_break = np.cumsum(phi) + x * (np.sum(k) - np.cumsum(k))
    u = np.interp(np.asarray(joint_force, float), np.concatenate([[0.0], f_break]), np.concatenate([[0.0], x]))
    d = np.sum(4 * phi[None] * np.maximum(u[:, None] - x[None], 0.0), axis=1)
    return u, d


def iwan(n_amplitudes=25, steps=2000, cycles=3, n_elements=256, omega=OMEGA) -> tuple[dict, dict]:
    """Run the amplitude sweep.

    Args:
        n_amplitudes: force amplitudes, log-spaced over ``[2e-3, 3] F_S`` (int >= 5).
        steps: RK4 steps per forcing period (int >= 100).
        cycles: forcing periods simulated; the last is measured (int >= 2).
        n_elements: elements of the joint's quadrature (int >= 8).
        omega: forcing frequency > 0 (rad/s; default 0.3).

    Returns:
        ``(numbers, curves)``: ``numbers`` is JSON-ready (the parameters, the fitted slope
            and ``3 + chi``, the prefactor ratio ``D / small_amplitude_dissipation(F_j)`` at
            the smallest amplitude, the macroslip threshold measured (with its last bracket) and
            quasi-static);
            ``curves`` holds the arrays per amplitude (``force``, ``joint_force``,
            ``displacement``, ``dissipation``, ``closed_form``).

    Raises:
        ValueError: arguments out of range.
    """
    for name, value, low in (("n_amplitudes", n_amplitudes, 5), ("steps", steps, 100), ("cycles", cycles, 2),
                             ("n_elements", n_elements, 8)):
        check_real(name, value)
        if int(value) != value or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value}")
    check_real("omega", omega)
    if not 0 < omega < math.inf:
        raise ValueError(f"omega must be > 0 and finite, got {omega}")
    law = SegalmanIwan(**JOINT, n_elements=int(n_elements))
    period = 2 * math.pi / omega
    forces = np.geomspace(2e-3, 3.0, int(n_amplitudes)) * JOINT["F_S"]
    per_save = 10 if steps % 10 == 0 else 1
    last = int(steps) // per_save

    def lane(force) -> tuple[Array, Array, Array]:
        system = jointed_oscillator(law, force_amplitude=force, omega=omega, mass=MASS, stiffness=STIFFNESS,
                                    damping=DAMPING)
        v0 = force * omega / (STIFFNESS + JOINT["K_T"] - MASS * omega**2)
        traj = simulate(system, jnp.array([0.0, v0]), 0.0, cycles * period, dt=period / steps, save_every=per_save)
        x = traj.position[-last:]
        return (dissipation_per_cycle(traj, period, n_cycles=int(cycles))[-1],
                jnp.max(jnp.abs(traj.friction_force[-last:])), (jnp.max(x) - jnp.min(x)) / 2)

    run = jax.jit(jax.vmap(lane))
    d, f_joint, u = (np.asarray(a) for a in run(jnp.asarray(forces)))
    closed = np.asarray(law.small_amplitude_dissipation(jnp.asarray(f_joint)))
    micro = f_joint < MICROSLIP * JOINT["F_S"]
    slope, intercept = np.polyfit(np.log(f_joint[micro]), np.log(d[micro]), 1)
    # the same fit on the discrete model's exact quasi-static D(F_j) at the same joint forces
    k_el, phi_el = law.elements()
    _, d_exact = masing_dissipation(k_el, phi_el, f_joint[micro])
    exact_slope = np.polyfit(np.log(f_joint[micro]), np.log(d_exact), 1)[0]
    phi_max = float(law.density()[0])
    crossed = np.flatnonzero(u >= phi_max)
    measured = bracket = None
    if crossed.size and crossed[0] > 0:  # refine the bracket of the crossing u = phi_max, then interpolate
        lo, hi = float(forces[crossed[0] - 1]), float(forces[crossed[0]])
        for _ in range(REFINE_ROUNDS):
            fine = np.linspace(lo, hi, REFINE_POINTS)
            u_fine = np.asarray(run(jnp.asarray(fine))[2])
            i = int(np.argmax(u_fine >= phi_max)) if np.any(u_fine >= phi_max) else REFINE_POINTS - 1
            lo, hi = float(fine[max(i - 1, 0)]), float(fine[i])
        s = (phi_max - u_fine[max(i - 1, 0)]) / max(u_fine[i] - u_fine[max(i - 1, 0)], 1e-300)
        measured, bracket = lo + min(max(s, 0.0), 1.0) * (hi - lo), [lo, hi]
    numbers = {
        "mass": MASS, "stiffness": STIFFNESS, "damping": DAMPING, "omega": float(omega), **JOINT,
        "n_elements": int(n_elements), "steps_per_period": int(steps), "cycles": int(cycles),
        "phi_max": phi_max,
        "fitted_slope": float(slope), "segalman_slope": 3.0 + JOINT["chi"],
        "exact_slope": float(exact_slope),
        "dissipation_ratio_exact": [float(np.min(d[micro] / d_exact)), float(np.max(d[micro] / d_exact))],
        "fitted_prefactor": float(math.exp(intercept)), "microslip_points": int(micro.sum()),
        "prefactor_ratio_smallest": float(d[0] / closed[0]),
        "macroslip_force_measured": measured, "macroslip_bracket": bracket,
        "macroslip_force_quasistatic": JOINT["F_S"] + (STIFFNESS - MASS * omega**2) * phi_max,
        "stuck_frequency": math.sqrt((STIFFNESS + JOINT["K_T"]) / MASS),
        "slipped_frequency": math.sqrt(STIFFNESS / MASS),
    }
    curves = {"force": forces, "joint_force": f_joint, "displacement": u, "dissipation": d, "closed_form": closed}
    return numbers, curves
