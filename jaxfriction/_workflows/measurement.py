"""Measured trajectories for :func:`~jaxfriction.workflows.fit.fit`: validation and CSV files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .._checks import check_real

#: Relative tolerance on the spacing of measurement times (text files round them).
UNIFORM_RTOL = 1e-4


@dataclasses.dataclass(frozen=True, eq=False)
class Measurement:
    """One measured trajectory of a one-degree-of-freedom system.

    Args:
        t: ``(n,)`` sample times (time units of the system), ``n >= 3``, strictly increasing
            and uniformly spaced (to a relative ``1e-4`` of the interval, for rounded files).
        q: ``(n,)`` measured positions (length or angle units of the system).
        v: optional ``(n,)`` measured velocities; when given they enter the misfit.
        y0: optional known initial state ``(q(t0), v(t0))``, shape ``(2,)``; when None the
            initial state is estimated with the parameters (from a local quadratic fit of the
            first samples).
        name: a label (file name) used in messages.

    Raises:
        ValueError: naming the argument (``t``, ``q``, ``v``, ``y0``) for wrong shapes,
            non-finite values, too few samples, or times not strictly increasing or not
            uniform.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray | None = None
    y0: np.ndarray | None = None
    name: str = ""

    def __post_init__(self):
        t = _as_vector("t", self.t)
        if t.shape[0] < 3:
            raise ValueError(f"t must have at least 3 samples, got {t.shape[0]}")
        steps = np.diff(t)
        if not np.all(steps > 0):
            i = int(np.argmin(steps > 0))
            raise ValueError(
                f"t must be strictly increasing, but t[{i + 1}] = {float(t[i + 1])} <= t[{i}] = {float(t[i])}"
            )
        interval = (t[-1] - t[0]) / (t.shape[0] - 1)
        bad = np.abs(steps - interval) > UNIFORM_RTOL * interval
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ValueError(
                f"t must be uniformly spaced (interval {interval:.6g}), but t[{i + 1}] - t[{i}] = "
                f"{steps[i]:.6g}"
            )
        object.__setattr__(self, "t", t)
        for name in ("q", "v"):
            value = getattr(self, name)
            if value is None:
                continue
            value = _as_vector(name, value)
            if value.shape != t.shape:
                raise ValueError(f"{name} must have the shape of t {t.shape}, got {value.shape}")
            object.__setattr__(self, name, value)
        if self.y0 is not None:
            y0 = np.asarray(self.y0, dtype=float)
            if y0.shape != (2,):
                raise ValueError(f"y0 must have shape (2,) (position, velocity), got {y0.shape}")
            check_real("y0", y0)
            object.__setattr__(self, "y0", y0)

    @property
    def interval(self) -> float:
        """Sample interval (time units): ``(t[-1] - t[0]) / (n - 1)``."""
        return float((self.t[-1] - self.t[0]) / (self.t.shape[0] - 1))

    def __len__(self):
        return int(self.t.shape[0])

    @classmethod
    def from_trajectory(
        cls,
        trajectory,
        noise=0.0,
        velocity_noise=None,
        seed=0,
        with_velocity=False,
        known_y0=False,
        name="synthetic",
    ):
        """Synthetic measurement from a simulated :class:`~jaxfriction.Trajectory`.

        Args:
            trajectory: a one-dof trajectory (its ``ts`` must be uniform: save with
                ``save_every``).
            noise: standard deviation of the Gaussian noise added to positions (units of q).
            velocity_noise: the same for velocities (default ``noise``).
            seed: seed of ``numpy.random.default_rng``.
            with_velocity: also record (noisy) velocities.
            known_y0: record the exact initial state as ``y0``.

        Returns: a :class:`Measurement`.
        """
        rng = np.random.default_rng(seed)
        t = np.asarray(trajectory.ts, dtype=float)
        q = np.asarray(trajectory.position, dtype=float)
        v = np.asarray(trajectory.velocity, dtype=float)
        if q.ndim != 1:
            raise ValueError(f"trajectory must be of a one-degree-of-freedom system, got positions {q.shape}")
        y0 = np.array([q[0], v[0]]) if known_y0 else None
        q_meas = q + noise * rng.standard_normal(q.shape)
        sigma_v = noise if velocity_noise is None else velocity_noise
        v_meas = v + sigma_v * rng.standard_normal(v.shape) if with_velocity else None
        return cls(t=t, q=q_meas, v=v_meas, y0=y0, name=name)

    def to_csv(self, path):
        """Write ``t,q[,v]`` with a header line (17 significant digits, lossless)."""
        cols = [self.t, self.q] + ([self.v] if self.v is not None else [])
        header = "t,q" + (",v" if self.v is not None else "")
        np.savetxt(path, np.column_stack(cols), delimiter=",", header=header, comments="", fmt="%.17g")


def _as_vector(name, value):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(value).__name__}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be finite, got {float(arr[i])} at index {i}")
    return arr


def load_measurement(path, y0=None):
    """Read a measured trajectory from a CSV file with a header line.

    Format: optional ``#`` comment lines and blank lines, then a header naming the columns
    ``t`` and ``q`` and optionally ``v`` (any order, comma separated), then one row of numbers
    per sample. Times must be uniform (see :class:`Measurement`).

    Args:
        path: file path.
        y0: optional known initial state ``(q0, v0)``.

    Returns: a :class:`Measurement` named after the file.

    Raises:
        FileNotFoundError: no such file.
        ValueError: ``path:line: ...`` for a malformed header or row (unknown or missing
            column, wrong number of values, a value that is not a number), ``path: ...`` for
            invalid data (non-uniform times, NaN...).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    columns, rows = None, []
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            fields = [f.strip() for f in text.split(",")]
            if columns is None:
                columns = [f.lower() for f in fields]
                unknown = [c for c in columns if c not in ("t", "q", "v")]
                if unknown or "t" not in columns or "q" not in columns or len(set(columns)) != len(columns):
                    raise ValueError(
                        f"{path}:{lineno}: the header must name the columns t,q and optionally v "
                        f"(once each), got {text!r}"
                    )
                continue
            if len(fields) != len(columns):
                raise ValueError(
                    f"{path}:{lineno}: expected {len(columns)} values ({','.join(columns)}), "
                    f"got {len(fields)}"
                )
            try:
                rows.append([float(f) for f in fields])
            except ValueError:
                bad = next(f for f in fields if not _is_float(f))
                raise ValueError(f"{path}:{lineno}: {bad!r} is not a number") from None
    if columns is None:
        raise ValueError(f"{path}: empty file (expected a header t,q[,v] and data rows)")
    if not rows:
        raise ValueError(f"{path}: no data rows after the header")
    data = np.asarray(rows, dtype=float)
    col = {c: data[:, i] for i, c in enumerate(columns)}
    try:
        return Measurement(t=col["t"], q=col["q"], v=col.get("v"), y0=y0, name=path.name)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _is_float(text):
    try:
        float(text)
        return True
    except ValueError:
        return False
