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


def iwan(n_amplitudes=25, steps=2000, cycles=3, n_elements=256) -> tuple[dict, dict]:
    """Run the amplitude sweep.

    Args:
        n_amplitudes: force amplitudes, log-spaced over ``[2e-3, 3] F_S`` (int >= 5).
        steps: RK4 steps per forcing period (int >= 100).
        cycles: forcing periods simulated; the last is measured (int >= 2).
        n_elements: elements of the joint's quadrature (int >= 8).

    Returns:
        ``(numbers, curves)``: ``numbers`` is JSON-ready (the parameters, the fitted slope
            and ``3 + chi``, the prefactor ratio ``D / small_amplitude_dissipation(F_j)`` at
            the smallest amplitude, the macroslip threshold measured and quasi-static);
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
    law = SegalmanIwan(**JOINT, n_elements=int(n_elements))
    period = 2 * math.pi / OMEGA
    forces = np.geomspace(2e-3, 3.0, int(n_amplitudes)) * JOINT["F_S"]
    per_save = 10 if steps % 10 == 0 else 1
    last = int(steps) // per_save

    def lane(force) -> tuple[Array, Array]:
        system = jointed_oscillator(law, force_amplitude=force, omega=OMEGA, mass=MASS, stiffness=STIFFNESS,
                                    damping=DAMPING)
        v0 = force * OMEGA / (STIFFNESS + JOINT["K_T"] - MASS * OMEGA**2)
        traj = simulate(system, jnp.array([0.0, v0]), 0.0, cycles * period, dt=period / steps, save_every=per_save)
        x = traj.position[-last:]
        return (dissipation_per_cycle(traj, period, n_cycles=int(cycles))[-1],
                jnp.max(jnp.abs(traj.friction_force[-last:])), (jnp.max(x) - jnp.min(x)) / 2)

    d, f_joint, u = (np.asarray(a) for a in jax.jit(jax.vmap(lane))(jnp.asarray(forces)))
    closed = np.asarray(law.small_amplitude_dissipation(jnp.asarray(f_joint)))
    micro = f_joint < MICROSLIP * JOINT["F_S"]
    slope, intercept = np.polyfit(np.log(f_joint[micro]), np.log(d[micro]), 1)
    phi_max = float(law.density()[0])
    crossed = np.flatnonzero(u >= phi_max)
    measured = None
    if crossed.size and crossed[0] > 0:  # log-interpolate the force where u crosses phi_max
        i = crossed[0]
        s = (np.log(phi_max) - np.log(u[i - 1])) / (np.log(u[i]) - np.log(u[i - 1]))
        measured = float(np.exp(np.log(forces[i - 1]) + s * (np.log(forces[i]) - np.log(forces[i - 1]))))
    numbers = {
        "mass": MASS, "stiffness": STIFFNESS, "damping": DAMPING, "omega": OMEGA, **JOINT,
        "n_elements": int(n_elements), "steps_per_period": int(steps), "cycles": int(cycles),
        "phi_max": phi_max,
        "fitted_slope": float(slope), "segalman_slope": 3.0 + JOINT["chi"],
        "fitted_prefactor": float(math.exp(intercept)), "microslip_points": int(micro.sum()),
        "prefactor_ratio_smallest": float(d[0] / closed[0]),
        "macroslip_force_measured": measured,
        "macroslip_force_quasistatic": JOINT["F_S"] + (STIFFNESS - MASS * OMEGA**2) * phi_max,
        "stuck_frequency": math.sqrt((STIFFNESS + JOINT["K_T"]) / MASS),
        "slipped_frequency": math.sqrt(STIFFNESS / MASS),
    }
    curves = {"force": forces, "joint_force": f_joint, "displacement": u, "dissipation": d, "closed_form": closed}
    return numbers, curves
