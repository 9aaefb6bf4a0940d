"""Sliding of a loose block on a floor shaken by a recorded earthquake (paper 003's application)."""

import os
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from .._exact.moreau_jean import simulate_moreau_jean
from .._integrate.simulate import simulate
from .._laws.vector import VectorCoulomb, VectorQuinn, safe_norm
from .._systems.block2d import BlockOnShakingFloor

#: Where record names are looked up, after the literal path: ``$JAXFRICTION_DATA``, then the
#: shared data folder beside or inside the working directory.
DATA_DIRS = ("../shared/data/ground_motions", "shared/data/ground_motions")


def find_record(name):
    """Path of a record given a path or a bare name (``elcentro``, ``kobe.txt``).

    Raises: FileNotFoundError listing the places searched.
    """
    path = Path(name)
    if path.exists():
        return path
    dirs = [os.environ["JAXFRICTION_DATA"]] if os.environ.get("JAXFRICTION_DATA") else []
    for folder in [*dirs, *DATA_DIRS]:
        for candidate in (Path(folder) / name, Path(folder) / f"{name}.txt"):
            if candidate.exists():
                return candidate
    raise FileNotFoundError(f"no ground-motion record {name!r} (looked in ., {', '.join([*dirs, *DATA_DIRS])})")


def default_eps(mu, dt, gravity=9.81):
    """Quinn's ``eps = 2 dt`` in units where ``mu N / m = 1``: ``eps = 2 mu g dt`` (m/s).

    It keeps the stick band's decay rate ``mu g / eps`` at ``1 / (2 dt)``, well inside RK4's
    stability limit.
    """
    return 2.0 * mu * gravity * dt


def quake_response(motion, mu=0.3, *, eps=None, exact=False, dt=1e-3, mass=1.0, gravity=9.81, tail=5.0,
                   save_every=10):
    """Simulate the block on a ground motion (``tail`` seconds of rest added after the record).

    Args:
        motion: a :class:`~jaxfriction.GroundMotion` (2 components).
        mu: friction coefficient. eps: Quinn width (m/s), default :func:`default_eps`.
        exact: use vector Moreau-Jean (exact Coulomb) instead of Quinn's law with RK4.
        dt: step (s). mass (kg), gravity (m/s^2), tail (s), save_every (steps).

    Returns: ``(trajectory, summary)``; ``summary`` has ``peak_sliding`` and
        ``residual_sliding`` (m, norms of the displacement relative to the floor),
        ``peak_sliding_velocity`` (m/s), ``dissipated_energy`` (J), ``pga`` (m/s^2).
    Raises: ValueError for bad values.
    """
    check_real("mu", mu, nonnegative=True)
    check_real("dt", dt, positive=True)
    law = VectorCoulomb(mu) if exact else VectorQuinn(mu, default_eps(mu, dt, gravity) if eps is None else eps)
    system = BlockOnShakingFloor(law=law, ground=motion, mass=mass, gravity=gravity)
    run = simulate_moreau_jean if exact else simulate
    traj = run(system, jnp.zeros(4), 0.0, motion.duration + tail, dt, save_every=save_every)
    disp = safe_norm(traj.ys[:, 0:2])
    summary = {
        "record": motion.name, "mu": float(mu), "scheme": "moreau-jean" if exact else "quinn-rk4",
        "pga": motion.peak(), "peak_sliding": float(jnp.max(disp)), "residual_sliding": float(disp[-1]),
        "peak_sliding_velocity": float(jnp.max(safe_norm(traj.ys[:, 2:4]))),
        "dissipated_energy": float(traj.friction_dissipation[-1]), "status": int(traj.status),
    }
    return traj, summary


def fragility_sweep(motion, mus, scales, *, dt=2e-3, gravity=9.81):
    """Residual and peak sliding over friction coefficients x record scale factors, one vmapped call.

    Quinn's law with ``eps = default_eps(mu, dt)``, RK4, unit mass, 5 s tail.

    Returns: dict of ``(len(mus), len(scales))`` arrays ``residual_sliding``, ``peak_sliding``
        (m) and ``pga`` ``(len(scales),)`` (m/s^2).
    """
    mus, scales = jnp.asarray(mus, float), jnp.asarray(scales, float)
    n_steps_end = motion.duration + 5.0

    def one(mu, scale):
        scaled = eqx.tree_at(lambda m: m.scale, motion, scale)
        system = BlockOnShakingFloor(law=VectorQuinn(mu, default_eps(mu, dt, gravity)), ground=scaled, gravity=gravity)
        traj = simulate(system, jnp.zeros(4), 0.0, n_steps_end, dt, save_every=25)
        disp = safe_norm(traj.ys[:, 0:2])
        return disp[-1], jnp.max(disp)

    grid = jax.jit(jax.vmap(jax.vmap(one, in_axes=(None, 0)), in_axes=(0, None)))
    residual, peak = grid(mus, scales)
    return {"residual_sliding": np.asarray(residual), "peak_sliding": np.asarray(peak),
            "pga": np.asarray(scales) * motion.peak()}
