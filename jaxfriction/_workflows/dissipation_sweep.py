"""The default sweep: dissipation of Quinn's forced oscillator over a (mu N, alpha) grid."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from .._integrate.grid import fixed_grid
from .engine import run_sweep
from .system_sweep import _computed_lanes
from .metrics import resolve_gradient, window_metrics
from .registry import LAWS, make_law, oscillator_system  # noqa: F401  (LAWS, make_law: public here too)
from .sharding import lane_devices, sharded_vmap

#: Parameters of :func:`cycle_metrics` that gradients can be taken with respect to.
SWEPT = ("mu", "alpha")


@dataclass(frozen=True)
class SweepConfig:
    """Settings of the default sweep (hashable: it is a static argument of ``jit``).

    Attributes:
        law: law name (:data:`LAWS`). omega: forcing frequency (rad/time). dt: RK4 step.
        cycles: forcing cycles simulated; the last one is measured. eps: regularization
        width (Quinn: ``2 dt``). stick_tol: slip speed below which the contact counts as
        stuck. gradient: one of :data:`~jaxfriction.workflows.metrics.GRADIENT_MODES`. wrt: parameters (of
        :data:`SWEPT`) to differentiate D with respect to. Nondimensional units of Quinn
        eq. (5): ``m = k = N = 1``.

    Raises: ValueError for invalid values (named).
    """

    law: str = "quinn"
    omega: float = 0.5
    dt: float = 0.01
    cycles: int = 50
    eps: float = 0.02
    stick_tol: float = 1e-6
    gradient: str | None = "forward"
    wrt: tuple = ("mu",)

    def __post_init__(self):
        check_real("dt", self.dt, positive=True)
        check_real("omega", self.omega, positive=True)
        check_real("eps", self.eps, positive=True)
        make_law(self.law, 1.0, self.eps)
        check_real("stick_tol", self.stick_tol, positive=True)
        if not isinstance(self.cycles, int) or self.cycles < 2:
            raise ValueError(f"cycles must be an int >= 2, got {self.cycles!r}")
        resolve_gradient(self.gradient, len(self.wrt))
        if not isinstance(self.wrt, tuple) or not set(self.wrt) <= set(SWEPT) or len(set(self.wrt)) != len(self.wrt):
            raise ValueError(f"wrt must be a tuple of distinct names from {SWEPT}, got {self.wrt!r}")
        if self.gradient is not None and not self.wrt:
            raise ValueError("wrt must name at least one parameter when gradient is set")

    @property
    def period(self) -> float:
        """Forcing period ``2 pi / omega`` (time units)."""
        return 2 * math.pi / self.omega

    @property
    def steps_per_trajectory(self) -> int:
        """RK4 steps of one trajectory (transient plus measured cycle)."""
        n_pre = fixed_grid(0.0, (self.cycles - 1) * self.period, self.dt, None)[1]
        return n_pre + fixed_grid(0.0, self.period, self.dt, None)[1]

    @property
    def gradient_mode(self) -> str | None:
        """The mode actually used: ``"auto"`` resolved by the number of parameters."""
        return resolve_gradient(self.gradient, len(self.wrt))


def cycle_metrics(mu, alpha, config: SweepConfig = SweepConfig()):
    """Last-cycle observables of Quinn's oscillator ``x'' + x = f + alpha sin(omega t)``.

    Starts at rest at the origin, integrates ``cycles - 1`` forcing cycles (transient), then
    measures the last cycle (:func:`~jaxfriction.workflows.metrics.window_metrics`).
    Gradients of D follow ``config.gradient`` (forward: tangents carried along the run;
    reverse: checkpointed scan).

    Args: ``mu`` (= mu N, N = 1) and ``alpha`` scalars; ``config`` a :class:`SweepConfig`.
    Returns: dict of scalars ``dissipation`` (D of the last cycle, Quinn Sec. 3.1.2),
        ``dD_d<name>`` for each name of ``config.wrt`` (when ``config.gradient`` is set),
        ``stick_fraction`` (of the last cycle), ``status`` (0 ok, see
        :class:`~jaxfriction.Trajectory`).
    """
    def build(mu, alpha):
        return oscillator_system(muN=mu, alpha=alpha, omega=config.omega, eps=config.eps, law=config.law)

    out = window_metrics(build, {"mu": mu, "alpha": alpha}, config.wrt if config.gradient else (),
                         t_measure=(config.cycles - 1) * config.period, window=config.period, dt=config.dt,
                         gradient=config.gradient, stick_tol=config.stick_tol)
    return {k: out[k] for k in ("dissipation", *(f"dD_d{k}" for k in config.wrt if config.gradient),
                                "stick_fraction", "status")}


#: Lanes per device in one compiled call: the RK4 step's working set of a block this size
#: stays in the core's L2 cache; larger batches run as several blocks (8192 lanes in one
#: call ran 2.5x slower per lane on the 2-core CI machine, scripts/bench.py).
LANES_PER_DEVICE = 1024


@functools.lru_cache(maxsize=16)
def _batched(config, devices):
    return sharded_vmap(lambda mu, alpha: cycle_metrics(mu, alpha, config), list(devices))


def _values(name, values, nonnegative=False):
    """A non-empty 1-D float array of finite values (ValueError naming ``name`` otherwise)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    return check_real(name, arr, nonnegative=nonnegative)


def batch_dissipation(mu, alpha, config: SweepConfig = SweepConfig(), *, devices=None):
    """:func:`cycle_metrics` for a batch of lanes in one compiled call, sharded over devices.

    The library's fastest path for a batch of forced-oscillator runs (what
    ``scripts/bench.py`` calls): ``vmap`` over lanes in blocks of :data:`LANES_PER_DEVICE`
    per device (dispatched back to back), each block's lanes split evenly over ``devices``
    (all local devices by default; on CPU one per core when the host is split, see
    :func:`~jaxfriction.workflows.sharding.lane_devices`). The compiled program is cached
    per configuration, device set and batch size.

    Args:
        mu, alpha: 1-D arrays of equal length ``B`` (mu N >= 0; forcing amplitude).
        config: :class:`SweepConfig` (its ``gradient``/``wrt`` choose the derivatives).
        devices: devices to shard over; ``B`` is padded to a multiple of their number.

    Returns: dict of ``(B,)`` numpy arrays, the keys of :func:`cycle_metrics`.

    Raises: ValueError for arrays of other shapes or lengths, non-finite values, mu < 0.
    """
    mu, alpha = _values("mu", mu, nonnegative=True), _values("alpha", alpha)
    if mu.shape != alpha.shape:
        raise ValueError(f"mu and alpha must have one length, got {mu.size} and {alpha.size}")
    devices = tuple(lane_devices(devices))
    block = len(devices) * (LANES_PER_DEVICE if mu.size > LANES_PER_DEVICE * len(devices) else -(-mu.size // len(devices)))
    pad = -mu.size % block
    lanes = {k: np.concatenate([v, np.full(pad, v[-1])]) for k, v in (("mu", mu), ("alpha", alpha))}
    run = _batched(config, devices)
    parts = [run({k: jnp.asarray(v[i : i + block]) for k, v in lanes.items()}) for i in range(0, mu.size + pad, block)]
    out = jax.device_get(parts)  # blocks were dispatched asynchronously, one after another
    return {k: np.concatenate([np.asarray(p[k]) for p in out])[: mu.size] for k in out[0]}


def dissipation_sweep(mu_values, alpha_values, config: SweepConfig = SweepConfig(), *, chunk_size=1024,
                      progress=True, devices=None, out_dir=None):
    """Evaluate :func:`cycle_metrics` on the grid ``mu_values x alpha_values``.

    Runs on the general engine :func:`~jaxfriction.workflows.run_sweep`: ``vmap`` in chunks
    of ``chunk_size`` lanes sharded over ``devices`` (all local devices by default), the
    last chunk padded so one compiled program serves all, progress bar; with ``out_dir``
    every chunk is saved as it finishes and a rerun resumes.

    Args:
        mu_values: 1-D array of mu N values (>= 0). alpha_values: 1-D array of amplitudes.
        config: :class:`SweepConfig`. chunk_size: lanes per compiled call (>= 1).
        progress: show a tqdm bar. devices: devices to shard each chunk over.
        out_dir: folder for chunk files (resumable), or None (in memory).

    Returns:
        ``xarray.Dataset`` with dims ``(mu, alpha)``, variables ``dissipation``,
        ``dD_d<name>`` per ``config.wrt``, ``stick_fraction``, ``status``; attributes
        record the configuration, ``compile_seconds``, ``run_seconds``, ``devices`` and
        ``steps_per_second`` (trajectory-steps of the forward run per second of run
        time, compile excluded).

    Raises:
        ValueError: empty, non-1-D or non-finite grids, negative mu, bad chunk_size.
    """
    mu_values = _values("mu_values", mu_values, nonnegative=True)
    alpha_values = _values("alpha_values", alpha_values)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")

    steps = mu_values.size * alpha_values.size * config.steps_per_trajectory

    def finalize(ds):
        ds["status"] = ds["status"].astype(np.int8)
        labels = {"dissipation": "dissipation in the last cycle D", "stick_fraction": "stick fraction, last cycle",
                  "status": "0 ok, 1 non-finite", "mu": "friction coefficient times normal force, mu N",
                  "alpha": "forcing amplitude",
                  **{f"dD_d{k}": f"dD/d{k} ({config.gradient_mode} mode)" for k in config.wrt if config.gradient}}
        for name, label in labels.items():
            ds[name].attrs["long_name"] = label
        ds.attrs = {"system": "Quinn 2004 eq. 5: x'' + x = f + alpha sin(omega t), x(0) = x'(0) = 0",
                    "law": config.law, "omega": config.omega, "dt": config.dt, "cycles": config.cycles,
                    "eps": config.eps, "stick_tol": config.stick_tol, "gradient": str(config.gradient_mode),
                    "dtype": str(jnp.asarray(0.0).dtype), **ds.attrs, "trajectory_steps": steps,
                    "steps_per_second": _computed_lanes(ds, steps // config.steps_per_trajectory)
                    * config.steps_per_trajectory / max(ds.attrs["run_seconds"], 1e-12)}
        return ds

    return run_sweep(lambda mu, alpha: cycle_metrics(mu, alpha, config), {"mu": mu_values, "alpha": alpha_values},
                     chunk_size=chunk_size, devices=lane_devices(devices), progress=progress, out_dir=out_dir,
                     tag=repr((config, str(jnp.asarray(0.0).dtype))), finalize=finalize)
