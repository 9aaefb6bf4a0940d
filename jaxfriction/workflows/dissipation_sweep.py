"""The default sweep: dissipation of Quinn's forced oscillator over a (mu N, alpha) grid."""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from ..integrate.grid import fixed_grid
from ..integrate.simulate import simulate
from ..laws import Awrejcewicz, Coulomb, Karnopp, Quinn, Threlfall, VelocityLimited
from ..observables.stick import stick_fraction
from ..systems.oscillators import ForcedOscillator
from .engine import run_sweep

#: Laws selectable by name; ``eps`` is the law's regularization width (Karnopp's ``eta``,
#: Threlfall's ``v0``), ignored by Coulomb.
LAWS = {
    "quinn": lambda mu, eps: Quinn(mu=mu, eps=eps),
    "coulomb": lambda mu, eps: Coulomb(mu=mu),
    "velocity-limited": lambda mu, eps: VelocityLimited(mu=mu, eps=eps),
    "karnopp": lambda mu, eps: Karnopp(mu_s=mu, eta=eps),
    "threlfall": lambda mu, eps: Threlfall(mu=mu, v0=eps),
    "awrejcewicz": lambda mu, eps: Awrejcewicz(mu_s=mu, delta=0.0, eps=eps),
}


def make_law(name: str, mu, eps):
    """Build the law called ``name`` (a key of :data:`LAWS`) with coefficient ``mu`` and width ``eps``.

    Raises: ValueError for an unknown name (the message lists the known ones).
    """
    if name not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)}, got {name!r}")
    return LAWS[name](mu, eps)


@dataclass(frozen=True)
class SweepConfig:
    """Settings of the default sweep (hashable: it is a static argument of ``jit``).

    Attributes:
        law: law name (:data:`LAWS`). omega: forcing frequency (rad/time). dt: RK4 step.
        cycles: forcing cycles simulated; the last one is measured. eps: regularization
        width (Quinn: ``2 dt``). stick_tol: slip speed below which the contact counts as
        stuck. Nondimensional units of Quinn eq. (5): ``m = k = N = 1``.

    Raises: ValueError for invalid values (named).
    """

    law: str = "quinn"
    omega: float = 0.5
    dt: float = 0.01
    cycles: int = 50
    eps: float = 0.02
    stick_tol: float = 1e-6

    def __post_init__(self):
        check_real("dt", self.dt, positive=True)
        check_real("omega", self.omega, positive=True)
        check_real("eps", self.eps, positive=True)
        make_law(self.law, 1.0, self.eps)
        check_real("stick_tol", self.stick_tol, positive=True)
        if not isinstance(self.cycles, int) or self.cycles < 2:
            raise ValueError(f"cycles must be an int >= 2, got {self.cycles!r}")

    @property
    def period(self) -> float:
        return 2 * math.pi / self.omega

    @property
    def steps_per_trajectory(self) -> int:
        """RK4 steps of one trajectory (transient plus measured cycle)."""
        n_pre = fixed_grid(0.0, (self.cycles - 1) * self.period, self.dt, None)[1]
        return n_pre + fixed_grid(0.0, self.period, self.dt, None)[1]


def cycle_metrics(mu, alpha, config: SweepConfig):
    """Last-cycle observables of Quinn's oscillator ``x'' + x = f + alpha sin(omega t)``.

    Starts at rest at the origin, integrates ``cycles - 1`` forcing cycles (transient), then
    measures the last cycle. ``dD/dmu`` is forward-mode (``jax.jvp``): it carries the
    tangent along the run and needs no stored trajectory.

    Args: ``mu`` (= mu N, N = 1) and ``alpha`` scalars; ``config`` a :class:`SweepConfig`.
    Returns: dict of scalars ``dissipation`` (D of the last cycle, Quinn Sec. 3.1.2),
        ``dD_dmu``, ``stick_fraction`` (of the last cycle), ``status`` (0 ok, see
        :class:`~jaxfriction.Trajectory`).
    """
    t_last = (config.cycles - 1) * config.period

    def run(mu):
        system = ForcedOscillator(law=make_law(config.law, mu, config.eps), alpha=alpha, omega=config.omega)
        pre = simulate(system, jnp.zeros(2), 0.0, t_last, config.dt, save_every=None)
        last = simulate(system, pre.ys[-1], t_last, t_last + config.period, config.dt)
        d = last.friction_dissipation[-1] - last.friction_dissipation[0]
        return d, (stick_fraction(last, config.stick_tol), jnp.maximum(pre.status, last.status))

    d, dd, (sf, status) = jax.jvp(run, (mu,), (jnp.ones_like(mu),), has_aux=True)
    return {"dissipation": d, "dD_dmu": dd, "stick_fraction": sf, "status": status}


def dissipation_sweep(mu_values, alpha_values, config: SweepConfig = SweepConfig(), *, chunk_size=1024, progress=True):
    """Evaluate :func:`cycle_metrics` on the grid ``mu_values x alpha_values``.

    Runs on the general engine :func:`~jaxfriction.workflows.run_sweep` (``vmap`` in chunks of
    ``chunk_size``, the last chunk padded so one compiled program serves all, progress bar),
    on one device, in memory.

    Args:
        mu_values: 1-D array of mu N values (>= 0). alpha_values: 1-D array of amplitudes.
        config: :class:`SweepConfig`. chunk_size: lanes per compiled call (>= 1).
        progress: show a tqdm bar.

    Returns:
        ``xarray.Dataset`` with dims ``(mu, alpha)``, variables ``dissipation``,
        ``dD_dmu``, ``stick_fraction``, ``status``; attributes record the configuration,
        ``compile_seconds``, ``run_seconds`` and ``steps_per_second`` (trajectory-steps of
        the forward run per second of run time, compile excluded).

    Raises:
        ValueError: empty, non-1-D or non-finite grids, negative mu, bad chunk_size.
    """
    mu_values = np.asarray(mu_values, dtype=float)
    alpha_values = np.asarray(alpha_values, dtype=float)
    for name, arr in (("mu_values", mu_values), ("alpha_values", alpha_values)):
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
        check_real(name, arr)
    check_real("mu_values", mu_values, nonnegative=True)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")

    ds = run_sweep(lambda mu, alpha: cycle_metrics(mu, alpha, config), {"mu": mu_values, "alpha": alpha_values},
                   chunk_size=chunk_size, devices=jax.local_devices()[:1], progress=progress)
    ds["status"] = ds["status"].astype(np.int8)
    labels = {"dissipation": "dissipation in the last cycle D", "dD_dmu": "dD/dmu (forward mode)",
              "stick_fraction": "stick fraction, last cycle", "status": "0 ok, 1 non-finite",
              "mu": "friction coefficient times normal force, mu N", "alpha": "forcing amplitude"}
    for name, label in labels.items():
        ds[name].attrs["long_name"] = label
    steps = mu_values.size * alpha_values.size * config.steps_per_trajectory
    ds.attrs = {
        "system": "Quinn 2004 eq. 5: x'' + x = f + alpha sin(omega t), x(0) = x'(0) = 0",
        "law": config.law,
        "omega": config.omega,
        "dt": config.dt,
        "cycles": config.cycles,
        "eps": config.eps,
        "stick_tol": config.stick_tol,
        "dtype": str(jnp.asarray(0.0).dtype),
        "compile_seconds": ds.attrs["compile_seconds"],
        "run_seconds": ds.attrs["run_seconds"],
        "trajectory_steps": steps,
        "steps_per_second": steps / ds.attrs["run_seconds"],
    }
    return ds
