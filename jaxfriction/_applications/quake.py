"""Sliding of a loose block on a floor shaken by a recorded earthquake (paper 003's application).

An application of the generic layers, kept out of them: the block is a
:class:`~jaxfriction.BlockOnShakingFloor`, a single run is :func:`~jaxfriction.simulate`
(Quinn's vector law with RK4, or exact Coulomb by Moreau-Jean) and the fragility sweep is
:func:`~jaxfriction.sweep` over the paths ``law.mu`` and ``ground.scale``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_real, is_concrete
from .._exact.moreau_jean import MoreauJean
from .._exact.na_eltawil import NaEltawil2D
from .._forcing.ground_motion import GroundMotion, combine_components
from .._integrate.resolution import check_step_resolution
from .._integrate.saveat import SaveAt
from .._integrate.simulate import simulate
from .._integrate.solvers import MAX_SAVED_BYTES, fixed_step_grid
from .._laws.vector import VectorCoulomb, VectorQuinn, safe_norm
from .._paths import set_parameters
from .._systems.block2d import BlockOnShakingFloor, GriffinSpringBlock

if TYPE_CHECKING:
    import xarray as xr

    from .._integrate.trajectory import Trajectory

#: Where record names are looked up, after the literal path: ``$JAXFRICTION_DATA``, then the
#: shared data folder beside or inside the working directory.
DATA_DIRS = ("../shared/data/ground_motions", "shared/data/ground_motions")

#: Budget of one run of :func:`quake_response`: at most this many RK4 / Moreau-Jean steps
#: (and the library's :data:`~jaxfriction._integrate.solvers.MAX_SAVED_BYTES` of saved
#: trajectory). A larger run is refused before it starts instead of running for hours.
MAX_STEPS = 10**9


#: The ways :func:`quake_response` can model the friction (``method=``, ``jaxfriction quake --method``).
METHODS = ("quinn", "moreau-jean", "griffin-spring", "na-eltawil")


def find_record(name: str | os.PathLike) -> Path:
    """Path of a record given a path or a bare name (``elcentro``, ``kobe.txt``).

    Raises:
        FileNotFoundError: listing the places searched.
    """
    path = Path(name)
    if path.exists():  # a directory is returned too: the loaders refuse it by name
        return path
    dirs = [os.environ["JAXFRICTION_DATA"]] if os.environ.get("JAXFRICTION_DATA") else []
    for folder in [*dirs, *DATA_DIRS]:
        for candidate in (Path(folder) / name, Path(folder) / f"{name}.txt"):
            if candidate.is_file():
                return candidate
    raise FileNotFoundError(
        f"no ground-motion record {name!r} (looked in ., {', '.join([*dirs, *DATA_DIRS])}); give a file path, or set "
        f"JAXFRICTION_DATA to a folder of records (PEER .AT2 or two-column time, acceleration text files; the "
        f"package ships none)")


def default_eps(mu: ArrayLike, dt: float, gravity: float = 9.81) -> ArrayLike:
    """Quinn's ``eps = 2 dt`` in units where ``mu N / m = 1``: ``eps = 2 mu g dt`` (m/s).

    It keeps the stick band's decay rate ``mu g / eps`` at ``1 / (2 dt)``, well inside RK4's
    stability limit.

    With ``mu = 0`` there is no friction: Quinn's force ``-(mu N / eps)(...)`` is exactly 0
    for any width, the block keeps its own velocity and slides relative to the floor by
    minus the floor's displacement. ``2 mu g dt`` would be 0, which the law refuses, so the
    width is then ``2 g dt`` (that of ``mu = 1``); it changes no number. Works with traced
    ``mu`` (a sweep lane).

    Args:
        mu: friction coefficient, >= 0.
        dt: time step (s).
        gravity: gravitational acceleration (m/s^2).

    Returns:
        eps (m/s), > 0 for ``dt > 0``.
    """
    if is_concrete(mu) and jnp.ndim(mu) == 0:
        return 2.0 * (float(mu) if float(mu) != 0 else 1.0) * gravity * dt  # type: ignore[arg-type]
    return 2.0 * jnp.where(mu == 0, 1.0, mu) * gravity * dt


def run_size(duration: float, dt: float, save_every: int = 10, state_size: int = 7, *,
             name: str = "dt") -> tuple[int, int, int]:
    """Steps and saved-trajectory memory of a fixed-step run, checked against the budget.

    Args:
        duration: length of the run (s), > 0.
        dt: largest step (s), > 0.
        save_every: steps per saved point (int >= 1).
        state_size: entries of the state (7 for :class:`~jaxfriction.BlockOnShakingFloor`).
        name: how to call ``dt`` in the error (``"--dt"`` for the CLI).

    Returns:
        ``(n_steps, n_saves, n_bytes)`` with ``n_bytes = n_saves x state_size x 8`` (the saved
            states, float64, counted as :func:`~jaxfriction.simulate` counts them).

    Raises:
        ValueError: naming ``name`` with the figures when ``n_steps > MAX_STEPS`` or
            ``n_bytes > MAX_SAVED_BYTES``.
    """
    check_real(name, dt, positive=True)
    check_real("duration", duration, positive=True)
    n_saves, every, _ = fixed_step_grid(0.0, float(duration), float(dt), SaveAt(every=save_every))
    n_saves += 1  # the initial point
    n_steps, n_bytes = (n_saves - 1) * every, n_saves * state_size * 8
    if n_steps > MAX_STEPS or n_bytes > MAX_SAVED_BYTES:
        raise ValueError(
            f"{name} {dt:g} is too small for this record: {duration:g} s of run is {n_steps:.3g} steps and "
            f"{n_saves:.3g} saved states ({n_bytes / 1024**3:.3g} GiB); the budget is {MAX_STEPS:.0e} steps and "
            f"{MAX_SAVED_BYTES / 1024**3:g} GiB of saved trajectory: use a larger {name} (at least "
            f"{max(duration / MAX_STEPS, duration * state_size * 8 / (save_every * MAX_SAVED_BYTES)):.2g} s)")
    return n_steps, n_saves, n_bytes


def as_floor_motion(motion: GroundMotion) -> GroundMotion:
    """The motion as a 2-component floor: a 1-component record (one ``.AT2``) shakes along x.

    Args:
        motion: a :class:`~jaxfriction.GroundMotion` with 1 or 2 components.

    Returns:
        It unchanged (2 components), or
            :func:`~jaxfriction._forcing.ground_motion.combine_components` of it (``a_y = 0``).

    Raises:
        ValueError: naming ``motion`` for anything else, or a non-finite ``scale`` or
            ``rotation`` (they bypass the constructor's checks when set by ``eqx.tree_at``).
    """
    if not isinstance(motion, GroundMotion):
        raise ValueError(f"motion must be a GroundMotion, got {type(motion).__name__}")
    check_real("motion.scale", motion.scale)
    check_real("motion.rotation", motion.rotation)
    components = motion.values.shape[1]
    if components == 1:
        return combine_components(motion)
    if components != 2:
        raise ValueError(f"motion must have 1 or 2 components, got {components}")
    return motion


def quake_response(motion: GroundMotion, mu: float = 0.3, *, eps=None, exact: bool = False, method=None,
                   dt: float = 1e-3, mass: float = 1.0, gravity: float = 9.81, tail: float = 5.0,
                   save_every: int = 10, k_t: float = 40000.0) -> tuple[Trajectory, dict]:
    """Simulate the block on a ground motion (``tail`` seconds of rest added after the record).

    Args:
        motion: a :class:`~jaxfriction.GroundMotion`, 2 components (x, y), or 1 (one
            ``.AT2`` file: shaking along x, ``a_y = 0``; see :func:`as_floor_motion`).
        mu: friction coefficient (>= 0). ``mu = 0`` is the frictionless block: it keeps
            its velocity (0) and slides relative to the floor by minus the floor's
            displacement (Quinn's width then defaults to ``2 g dt``, see :func:`default_eps`).
        eps: Quinn width (m/s, > 0), default :func:`default_eps`; used by ``"quinn"`` only.
        exact: shorthand for ``method="moreau-jean"``.
        method: the friction model (default ``"quinn"``): ``"quinn"`` (Quinn's vector
            law, RK4), ``"moreau-jean"`` (exact Coulomb, vector Moreau-Jean),
            ``"griffin-spring"`` (Griffin's spring model, :class:`~jaxfriction.GriffinSpringBlock`
            with stiffness ``k_t``, RK4) or ``"na-eltawil"`` (paper 003's own algorithm,
            :class:`~jaxfriction.NaEltawil2D`).
        dt: step (s).
        mass: mass of the block (kg).
        gravity: gravitational acceleration (m/s^2).
        tail: rest added after the record (s).
        save_every: steps per saved point.
        k_t: stick-spring stiffness of ``"griffin-spring"`` (N/m; paper 003: 40000).

    Returns:
        ``(trajectory, summary)``; ``summary`` has ``peak_sliding`` and
            ``residual_sliding`` (m, norms of the displacement relative to the floor),
            ``peak_sliding_velocity`` (m/s), ``dissipated_energy`` (J), ``pga`` (m/s^2),
            ``scheme`` (the method) and
            ``status`` (:data:`~jaxfriction.STATUS_MEANINGS`; the numbers mean nothing unless
            it is 0).

    Raises:
        ValueError: bad values (named), an unknown ``method``, ``exact`` with another
            method, ``eps`` with a method that does not use it, naming ``dt`` for a step
            longer than the record's sample interval, and for a run beyond
            :data:`MAX_STEPS` steps or :data:`MAX_SAVED_BYTES` of saved trajectory
            (:func:`run_size`).

    Source: paper 003 (block on a floor shaken in x and y; Griffin's model Sec. 2.2, its own
    Sec. 2.3); Quinn 2004 (the law, ``eps``).
    """
    if exact and method not in (None, "moreau-jean"):
        raise ValueError(f"exact=True means method='moreau-jean', got method={method!r}")
    method = "moreau-jean" if exact else (method or "quinn")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if eps is not None and method != "quinn":
        raise ValueError(f"eps: method {method!r} does not use it (Quinn's width is for method 'quinn' only), "
                         f"got eps={eps!r}")
    check_real("mu", mu, nonnegative=True)
    check_real("dt", dt, positive=True)
    check_real("tail", tail, nonnegative=True)
    motion = as_floor_motion(motion)
    check_step_resolution(motion, dt, run=motion.duration + tail)
    run_size(motion.duration + tail, dt, save_every, 9 if method == "griffin-spring" else 7)
    solver = {"moreau-jean": MoreauJean(), "na-eltawil": NaEltawil2D()}.get(method)
    system: GriffinSpringBlock | BlockOnShakingFloor
    if method == "griffin-spring":
        system = GriffinSpringBlock(ground=motion, mu=mu, k_t=k_t, mass=mass, gravity=gravity)
    else:
        law = (VectorQuinn(mu, default_eps(mu, dt, gravity) if eps is None else eps) if method == "quinn"  # type: ignore[arg-type]
               else VectorCoulomb(mu))
        system = BlockOnShakingFloor(law=law, ground=motion, mass=mass, gravity=gravity)
    traj = simulate(system, jnp.zeros(4), 0.0, motion.duration + tail, dt, solver=solver, save_every=save_every)
    disp = safe_norm(traj.ys[:, 0:2])
    summary = {
        "record": motion.name, "mu": float(mu), "scheme": method,
        "pga": motion.peak(), "peak_sliding": float(jnp.max(disp)), "residual_sliding": float(disp[-1]),
        "peak_sliding_velocity": float(jnp.max(safe_norm(traj.ys[:, 2:4]))),
        "dissipated_energy": float(traj.friction_dissipation[-1]), "status": int(traj.status),
    }
    return traj, summary


def residual_sliding(traj: Trajectory) -> Array:
    """Sliding distance at the end of the run, ``|u(t_end)|`` (m)."""
    return safe_norm(traj.ys[-1, 0:2])


def peak_sliding(traj: Trajectory) -> Array:
    """Largest sliding distance over the saved points, ``max |u|`` (m)."""
    return jnp.max(safe_norm(traj.ys[:, 0:2]))


def fragility_sweep(motion: GroundMotion, mus, scales, *, dt: float = 2e-3, gravity: float = 9.81,
                    tail: float = 5.0, save_every: int = 25, **options) -> xr.Dataset:
    """Residual and peak sliding over friction coefficients x record scale factors.

    :func:`~jaxfriction.sweep` of a unit-mass :class:`~jaxfriction.BlockOnShakingFloor` with
    :class:`~jaxfriction.VectorQuinn` over the paths ``law.mu`` and ``ground.scale``, each
    lane with ``eps = default_eps(mu, dt)`` (tied to the lane's ``mu``), RK4, the whole run
    (record plus ``tail`` seconds) measured at every ``save_every``-th step.

    Args:
        motion: a :class:`~jaxfriction.GroundMotion` (1 or 2 components, as in
            :func:`quake_response`).
        mus: friction coefficients (1-D).
        scales: record factors (1-D).
        dt: time step (s).
        gravity: gravitational acceleration (m/s^2).
        tail: time run after the record (s).
        **options: further options, passed to :func:`~jaxfriction.sweep` (``out_dir``,
            ``devices``, ...).

    Returns:
        ``xarray.Dataset`` over ``("law.mu", "ground.scale")`` with ``residual_sliding`` and
            ``peak_sliding`` (m), ``status``, and the coordinate ``pga`` (m/s^2) along
            ``ground.scale``.
    """
    from .._workflows.sweep.sweep import sweep

    motion = as_floor_motion(motion)
    system = BlockOnShakingFloor(law=VectorQuinn(0.3, default_eps(0.3, dt, gravity)), ground=motion, gravity=gravity)  # type: ignore[arg-type]

    def tie_eps(lane) -> Any:  # Quinn's eps = 2 mu g dt for each lane's mu
        return set_parameters(lane, {"law.eps": default_eps(lane.law.mu, dt, gravity)})

    ds = sweep(system, {"law.mu": jnp.asarray(mus, float), "ground.scale": jnp.asarray(scales, float)},
               t1=motion.duration + tail, dt=dt, saveat=SaveAt(every=save_every),
               observables={"residual_sliding": residual_sliding, "peak_sliding": peak_sliding}, derive=tie_eps,
               progress=False, **options)
    return ds.assign_coords(pga=("ground.scale", ds["ground.scale"].values * motion.peak()))

