"""Paper 003 Fig. 2: four friction models of the 2-D block on one stick-slip transition.

Paper 003's validation case (Sec. 3): ``m = 1 kg``, ``mu = 0.3``, ``N = 9.81 N``, ``dt =
0.2 ms``, Griffin's spring ``k_t = 40000 N/m``. The paper prints no floor motion; the one
used here (as in the tests) shakes at 1 Hz in x and 1.5 Hz in y, 3 and 2.25 m/s^2, which
gives frequent transitions. The block is run with Quinn's vector law (RK4, ``eps = 2 mu g
dt``), Griffin's spring model (RK4), Na et al.'s algorithm
(:class:`~jaxfriction.NaEltawil2D`) and exact Coulomb (Moreau-Jean) at the same step, and
compared with the reference, Moreau-Jean at ``dt / 200``: velocity errors, the number of
extrema of the block's acceleration (spurious oscillation: exact Coulomb's acceleration is
piecewise smooth) and the stick fraction (``V = 0`` exactly, or ``|V| < 1e-4 m/s`` for the
regularized and spring models).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._applications.quake import default_eps
from .._checks import check_real
from .._exact.moreau_jean import MoreauJean
from .._exact.na_eltawil import CASES, NaEltawil2D, na_eltawil_step
from .._forcing.drives import Harmonic
from .._integrate.simulate import simulate
from .._laws.vector import VectorCoulomb, VectorQuinn
from .._systems.block2d import BlockOnShakingFloor, GriffinSpringBlock

MU, GRAVITY, K_T = 0.3, 9.81, 40000.0
FLOOR = dict(amplitude=(3.0, 2.25), omega=(2 * math.pi, 3 * math.pi), phase=(0.0, 0.5))
#: the transition drawn: the first slip of the block and its stop
WINDOW = (0.08, 0.40)


def _floor():
    return Harmonic(**{k: jnp.asarray(v) for k, v in FLOOR.items()})


def _acceleration(traj, floor):
    """The block's absolute acceleration per step, ``dV/dt + mean w''`` (m/s^2), at step midpoints."""
    ts, v = np.asarray(traj.ts), np.asarray(traj.ys[:, 2:4])
    mid = 0.5 * (ts[:-1] + ts[1:])
    return mid, np.diff(v, axis=0) / np.diff(ts)[:, None] + np.asarray(jax.vmap(floor)(mid))


def _extrema(acc):
    return [int(np.sum(np.abs(np.diff(np.sign(np.diff(acc[:, i])))) > 0)) for i in (0, 1)]


def na2d(dt=2e-4, t1=3.0, reference_factor=200) -> tuple[dict, dict]:
    """Run the comparison.

    Args:
        dt: step of the four methods (s), > 0 (paper: 2e-4).
        t1: length of the run (s), > 0.
        reference_factor: the reference's step is ``dt / reference_factor`` (int >= 1).

    Returns:
        ``(numbers, trajectories)``: ``numbers`` is JSON-ready, per method the largest
            velocity error against the reference (m/s, x and y), the acceleration extrema
            (x and y), the stick fraction, and for Na et al. the fraction of steps in each
            case; ``trajectories`` maps method names (and ``"reference"``) to their runs.

    Raises:
        ValueError: non-positive ``dt`` or ``t1``, ``reference_factor < 1``.
    """
    check_real("dt", dt, positive=True)
    check_real("t1", t1, positive=True)
    if int(reference_factor) != reference_factor or reference_factor < 1:
        raise ValueError(f"reference_factor must be an integer >= 1, got {reference_factor}")
    floor = _floor()
    exact = BlockOnShakingFloor(law=VectorCoulomb(MU), ground=floor)
    runs = {
        "quinn": (BlockOnShakingFloor(law=VectorQuinn(MU, default_eps(MU, dt, GRAVITY)), ground=floor), None),  # type: ignore[arg-type]
        "griffin-spring": (GriffinSpringBlock(ground=floor, mu=MU, k_t=K_T), None),
        "na-eltawil": (exact, NaEltawil2D()),
        "moreau-jean": (exact, MoreauJean()),
    }
    y0 = jnp.zeros(4)
    reference = simulate(exact, y0, 0.0, t1, dt / reference_factor, solver=MoreauJean(),
                         save_every=int(reference_factor))
    trajectories = {"reference": reference}
    numbers = {"dt": dt, "t1": t1, "reference_dt": dt / reference_factor, "floor": FLOOR, "mu": MU, "k_t": K_T,
               "methods": {}}
    _, ref_acc = _acceleration(reference, floor)
    numbers["reference_acceleration_extrema"] = _extrema(ref_acc)
    numbers["reference_stick_fraction"] = float(np.mean(np.all(np.asarray(reference.ys[1:, 2:4]) == 0, axis=1)))
    for name, (system, solver) in runs.items():
        traj = simulate(system, y0, 0.0, t1, dt, solver=solver, save_every=1)
        trajectories[name] = traj
        v = np.asarray(traj.ys[:, 2:4])
        _, acc = _acceleration(traj, floor)
        stuck = np.linalg.norm(v[1:], axis=1) < (1e-4 if name in ("quinn", "griffin-spring") else 1e-300)
        numbers["methods"][name] = {
            "max_velocity_error": np.max(np.abs(v - np.asarray(reference.ys[:, 2:4])), axis=0).tolist(),
            "acceleration_extrema": _extrema(acc),
            "stick_fraction": float(np.mean(stuck)),
            "status": int(traj.status),
        }
    na = trajectories["na-eltawil"]
    h = float(na.ts[1] - na.ts[0])
    cases = np.asarray(jax.vmap(lambda t, y: na_eltawil_step(exact, MU, MU, t, y, h)[1])(na.ts[:-1], na.ys[:-1]))
    numbers["methods"]["na-eltawil"]["case_fractions"] = {
        label: float(np.mean(cases == code)) for code, label in CASES.items()}
    return numbers, trajectories


__all__ = ["na2d", "WINDOW"]
