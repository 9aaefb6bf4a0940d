"""Quinn 2004 Fig. 9: dissipation per cycle of the n = 32 chain against the RK4 step.

``n = 32``, ``alpha = 0.25``, ``omega = 0.5``, zero initial conditions, three transient
cycles, ``D`` from the fourth, for the classical, velocity-limited and Quinn laws
(``eps = 10 omega dt``, as printed). The reference ``D0`` is the exact Moreau-Jean scheme
at ``dt = 1e-4`` (first order: its error there is ~4e-8 relative, from runs at 2e-3 and
5e-4). The paper reports that all laws converge to ``D0 = 0.0105`` and that only Quinn's
stays accurate up to ``dt = 0.01``. Steps are step-aligned to the forcing period.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from .._checks import check_real
from .._exact.moreau_jean import MoreauJean
from .._integrate.grid import fixed_grid
from .._integrate.simulate import simulate
from .._laws import Coulomb, Quinn, VelocityLimited
from .._observables.dissipation import dissipation_per_cycle
from .._systems.chain import BurridgeKnopoffChain

N, ALPHA, OMEGA, CYCLES = 32, 0.25, 0.5, 4
PAPER_D0 = 0.0105
DTS = (0.01, 0.005, 0.002, 0.001, 5e-4, 2e-4, 1e-4)
LAWS = {
    "classical": lambda h: Coulomb(1.0),
    "velocity_limited": lambda h: VelocityLimited(1.0, 10 * OMEGA * h),
    "quinn": lambda h: Quinn(1.0, 10 * OMEGA * h),
}


def chain_dissipation(law, dt, n=N, alpha=ALPHA, exact=False) -> tuple[float, float]:
    """``(D of cycle 4, h)`` of the chain with ``law`` (RK4) or Moreau-Jean (``exact=True``)."""
    period = 2 * math.pi / OMEGA
    _, per_cycle, h = fixed_grid(0.0, period, dt, None)
    system = BurridgeKnopoffChain(law=law, n=n, alpha=alpha, omega=OMEGA)  # type: ignore[call-arg]
    traj = simulate(system, jnp.zeros(2 * n), 0.0, CYCLES * period, h, solver=MoreauJean() if exact else None,
                    save_every=per_cycle)
    return float(dissipation_per_cycle(traj, period, CYCLES)[-1]), h


def quinn_fig9(dts=DTS, reference_dt=1e-4) -> dict:
    """Run the Fig. 9 study.

    Args:
        dts: RK4 steps (> 0).
        reference_dt: Moreau-Jean step of the reference.

    Returns:
        JSON-ready dict with ``D0`` (Moreau-Jean), the paper's value, and per law the
            steps ``h``, ``D`` and relative errors.

    Raises:
        ValueError: non-positive steps.
    """
    for dt in (*dts, reference_dt):
        check_real("dt", dt, positive=True)
    d0, _ = chain_dissipation(Coulomb(1.0), reference_dt, exact=True)
    laws = {}
    for name, law in LAWS.items():
        runs = [chain_dissipation(law(dt), dt) for dt in dts]
        laws[name] = {"h": [h for _, h in runs], "D": [d for d, _ in runs],
                      "relative_error": [(d - d0) / d0 for d, _ in runs]}
    return {"n": N, "alpha": ALPHA, "omega": OMEGA, "D0_moreau_jean": d0, "reference_dt": reference_dt,
            "paper_D0": PAPER_D0, "laws": laws}
