"""Harmonic balance for a batch of parameter sets (:func:`harmonic_balance_batch`), and the
sweep engine's run of any such batch (:func:`run_batch`, which the nonlinear modes' batch
uses too): vectorized over the sets, chunked, sharded, saved and resumable."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._paths import traced_parameters
from .balance import _checked, _omega, observables, solve_balance, steps_between_samples, transient_guess
from .march import marched


def batch_values(system, values) -> dict:
    """``values`` (dict path -> ``(B,)``) as float arrays of one length, checked.

    Raises:
        ValueError: naming ``values``: not a non-empty dict, unknown paths, lengths that differ.
    """
    from ..._paths import check_paths

    if not isinstance(values, dict) or not values:
        raise ValueError("values must be a non-empty dict path -> (B,) values")
    check_paths(system, list(values), "values")
    arrays = {p: np.asarray(v, dtype=float).reshape(-1) for p, v in values.items()}
    lengths = {p: len(v) for p, v in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"values must all have one length, got {lengths}")
    return arrays


def harmonic_balance_batch(system, values: dict, y0=None, *, harmonics: int = 16, samples: int | None = None,
                           frequency: str | None = None, t0: float = 0.0, tol: float = 1e-10, max_steps: int = 50,
                           cycles: int = 20, dt: float | None = None, chunk_size: int = 1024, out_dir=None,
                           devices=None, progress: bool = False) -> dict:
    """Harmonic balance for a batch of parameter sets, vectorized (``jax.vmap`` over the sets:
    the transient guesses, the residuals, their Jacobians and Newton) in chunks of
    ``chunk_size`` sets sharded over ``devices``, and with ``out_dir`` saved chunk by chunk and
    resumable: the sweep engine of :func:`~jaxfriction.sweep`.

    Args:
        system: as :func:`harmonic_balance`.
        values: dict path -> ``(B,)`` values (e.g. ``{"law.mu": mus, "force.omega": omegas}``),
            all of one length ``B``.
        y0, harmonics, samples, frequency, t0, tol, max_steps, cycles, dt: as
            :func:`harmonic_balance` (one ``H`` and ``N`` for the batch; no error estimate:
            check a few sets with :func:`harmonic_balance`).
        chunk_size: sets per vectorized call (>= 1).
        out_dir: folder for the chunk files (None: in memory, not resumable); a folder
            holding a batch of other arguments is refused.
        devices: devices to shard each chunk over (default ``jax.local_devices()``).
        progress: a progress bar over the chunks.

    Returns:
        Dict of NumPy arrays: ``coefficients`` ``(B, 2 H + 1, w)`` (``w`` as in
            :attr:`HarmonicBalance.coefficients`), ``residual`` ``(B,)``,
            ``converged`` ``(B,)``, ``status`` ``(B,)`` (0, or ``STATUS_NOT_PERIODIC`` where
            Newton did not converge), ``amplitude`` ``(B, n_dof)``, ``dissipation`` ``(B,)``
            (as :attr:`HarmonicBalance.dissipation`), and the ints ``chunks_computed`` and
            ``chunks_loaded`` (from ``out_dir``).

    Raises:
        ValueError: as :func:`harmonic_balance`, or naming ``values`` (unknown paths,
            lengths that differ, none given), ``chunk_size`` or ``out_dir`` (a file, a batch
            of other arguments).
    """
    arrays = batch_values(system, values)
    samples, frequency = _checked(system, harmonics, samples, tol, max_steps, cycles, t0, dt, frequency)
    omegas = np.abs(np.asarray(arrays[frequency] if frequency in arrays else _omega(system, frequency)))
    per_sample = steps_between_samples(float(2 * np.pi / np.min(omegas)), int(samples), dt)
    y = system.as_state(jnp.zeros(2 * system.n_dof) if y0 is None else y0)
    # the system's floats as arrays: a batch at other fixed values reuses the compiled chunk program
    lane = _BalanceLane(traced_parameters(system, keep_zeros=True), y, frequency, float(t0), int(harmonics),
                        int(samples), float(tol), int(max_steps), int(cycles), per_sample, marched(system))
    return run_batch(lane, arrays, "harmonic_balance_batch", ("coefficients", "residual", "amplitude", "dissipation"),
                     chunk_size=chunk_size, out_dir=out_dir, devices=devices, progress=progress)


def run_batch(lane, arrays: dict, name: str, keys: tuple, *, chunk_size: int, out_dir, devices, progress) -> dict:
    """The sets ``arrays`` (path -> ``(B,)``) of a batch through ``lane`` (an equinox module,
    ``lane(**point) -> dict`` with ``converged`` and ``status``) on the sweep engine: chunked,
    sharded, saved and resumable with ``out_dir``, whose manifest is tagged with ``name`` and a
    digest of the lane (its static settings and its arrays, the system's parameters among
    them). Returns the outputs ``keys``, ``status``, ``converged`` (bool) and the ints
    ``chunks_computed``, ``chunks_loaded``, as NumPy."""
    import hashlib

    from ..sweep.engine import run_sweep

    dynamic, static = eqx.partition(lane, eqx.is_array)
    digest = hashlib.sha256(repr((jax.tree.structure(static), jax.tree.leaves(static))).encode())
    for leaf in jax.tree.leaves(dynamic):
        digest.update(np.ascontiguousarray(np.asarray(leaf)).tobytes())
    ds = run_sweep(lane, arrays, samples=True, out_dir=out_dir, chunk_size=chunk_size, devices=devices,
                   progress=progress, tag=f"{name} {digest.hexdigest()}")
    result: dict[str, Any] = {k: np.asarray(ds[k].values) for k in (*keys, "status")}
    result["converged"] = np.asarray(ds["converged"].values) > 0
    result["chunks_computed"], result["chunks_loaded"] = int(ds.attrs["chunks_computed"]), int(ds.attrs["chunks_loaded"])
    return result


class _BalanceLane(eqx.Module):
    """One parameter set of :func:`harmonic_balance_batch`'s sweep: the transient guess, Newton
    (values only) and the observables."""

    system: Any
    y: jax.Array
    frequency: str = eqx.field(static=True)
    t0: float = eqx.field(static=True)
    harmonics: int = eqx.field(static=True)
    samples: int = eqx.field(static=True)
    tol: float = eqx.field(static=True)
    max_steps: int = eqx.field(static=True)
    cycles: int = eqx.field(static=True)
    per_sample: int = eqx.field(static=True)
    march: bool = eqx.field(static=True)

    def __call__(self, **point):
        from ..._integrate.status import STATUS_NOT_PERIODIC, STATUS_OK
        from ..._paths import set_parameters

        s = set_parameters(self.system, point)
        c = transient_guess(s, self.y, frequency=self.frequency, t0=self.t0, harmonics=self.harmonics,
                            samples=self.samples, cycles=self.cycles, per_sample=self.per_sample)
        c = c[:, :2 * s.n_dof] if self.march else c
        out = solve_balance(s, c, frequency=self.frequency, t0=self.t0, samples=self.samples, tol=self.tol,
                            max_steps=self.max_steps, march=self.march, refine=False)  # values only
        measured = observables(s, out["coefficients"], self.frequency, self.t0, 4 * self.samples, self.march)
        return {"coefficients": out["coefficients"], "residual": out["residual"],
                "converged": out["converged"].astype(jnp.int32),
                "status": jnp.where(out["converged"], STATUS_OK, STATUS_NOT_PERIODIC),
                "amplitude": measured["amplitude"], "dissipation": measured["dissipation"]}
