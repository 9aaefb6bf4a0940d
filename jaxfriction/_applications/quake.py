"""Sliding of a loose block on a floor shaken by a recorded earthquake (paper 003's application).

An application of the generic layers, kept out of them: the block is a
:class:`~jaxfriction.BlockOnShakingFloor`, a single run is :func:`~jaxfriction.simulate`
(Quinn's vector law with RK4, or exact Coulomb by Moreau-Jean) and the fragility sweep is
:func:`~jaxfriction.sweep` over the paths ``law.mu`` and ``ground.scale``.
"""

import os
from pathlib import Path

import jax.numpy as jnp

from .._checks import check_real
from .._exact.moreau_jean import MoreauJean
from .._integrate.saveat import SaveAt
from .._integrate.simulate import simulate
from .._laws.vector import VectorCoulomb, VectorQuinn, safe_norm
from .._paths import set_parameters
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
        mu: friction coefficient (>= 0). eps: Quinn width (m/s), default :func:`default_eps`.
        exact: use vector Moreau-Jean (exact Coulomb) instead of Quinn's law with RK4.
        dt: step (s). mass (kg), gravity (m/s^2), tail (s), save_every (steps).

    Returns: ``(trajectory, summary)``; ``summary`` has ``peak_sliding`` and
        ``residual_sliding`` (m, norms of the displacement relative to the floor),
        ``peak_sliding_velocity`` (m/s), ``dissipated_energy`` (J), ``pga`` (m/s^2) and
        ``status``.
    Raises: ValueError for bad values (named).
    """
    check_real("mu", mu, nonnegative=True)
    check_real("dt", dt, positive=True)
    law = VectorCoulomb(mu) if exact else VectorQuinn(mu, default_eps(mu, dt, gravity) if eps is None else eps)
    system = BlockOnShakingFloor(law=law, ground=motion, mass=mass, gravity=gravity)
    traj = simulate(system, jnp.zeros(4), 0.0, motion.duration + tail, dt, solver=MoreauJean() if exact else None,
                    save_every=save_every)
    disp = safe_norm(traj.ys[:, 0:2])
    summary = {
        "record": motion.name, "mu": float(mu), "scheme": "moreau-jean" if exact else "quinn-rk4",
        "pga": motion.peak(), "peak_sliding": float(jnp.max(disp)), "residual_sliding": float(disp[-1]),
        "peak_sliding_velocity": float(jnp.max(safe_norm(traj.ys[:, 2:4]))),
        "dissipated_energy": float(traj.friction_dissipation[-1]), "status": int(traj.status),
    }
    return traj, summary


def residual_sliding(traj):
    """Sliding distance at the end of the run, ``|u(t_end)|`` (m)."""
    return safe_norm(traj.ys[-1, 0:2])


def peak_sliding(traj):
    """Largest sliding distance over the saved points, ``max |u|`` (m)."""
    return jnp.max(safe_norm(traj.ys[:, 0:2]))


def fragility_sweep(motion, mus, scales, *, dt=2e-3, gravity=9.81, tail=5.0, save_every=25, **options):
    """Residual and peak sliding over friction coefficients x record scale factors.

    :func:`~jaxfriction.sweep` of a unit-mass :class:`~jaxfriction.BlockOnShakingFloor` with
    :class:`~jaxfriction.VectorQuinn` over the paths ``law.mu`` and ``ground.scale``, each
    lane with ``eps = default_eps(mu, dt)`` (tied to the lane's ``mu``), RK4, the whole run
    (record plus ``tail`` seconds) measured at every ``save_every``-th step.

    Args: ``motion`` a :class:`~jaxfriction.GroundMotion`; ``mus`` friction coefficients
        and ``scales`` record factors (1-D); ``dt`` (s), ``gravity`` (m/s^2), ``tail`` (s);
        further ``options`` go to :func:`~jaxfriction.sweep` (``out_dir``, ``devices``, ...).
    Returns: ``xarray.Dataset`` over ``("law.mu", "ground.scale")`` with
        ``residual_sliding`` and ``peak_sliding`` (m), ``status``, and the coordinate
        ``pga`` (m/s^2) along ``ground.scale``.
    """
    from .._workflows.sweep.sweep import sweep

    system = BlockOnShakingFloor(law=VectorQuinn(0.3, default_eps(0.3, dt, gravity)), ground=motion, gravity=gravity)

    def tie_eps(lane):  # Quinn's eps = 2 mu g dt for each lane's mu
        return set_parameters(lane, {"law.eps": default_eps(lane.law.mu, dt, gravity)})

    ds = sweep(system, {"law.mu": jnp.asarray(mus, float), "ground.scale": jnp.asarray(scales, float)},
               t1=motion.duration + tail, dt=dt, saveat=SaveAt(every=save_every),
               observables={"residual_sliding": residual_sliding, "peak_sliding": peak_sliding}, derive=tie_eps,
               progress=False, **options)
    return ds.assign_coords(pga=("ground.scale", ds["ground.scale"].values * motion.peak()))

