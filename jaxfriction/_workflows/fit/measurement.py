"""Measured trajectories for :func:`~jaxfriction.fit`: validation and CSV files.

A record measures any subset of the positions and velocities of a system's degrees of
freedom on a uniform time grid: ``q`` holds the measured positions (one column per measured
degree of freedom, listed in ``q_dofs``), ``v`` the measured velocities (``v_dofs``); and
any named channels the system reads from its state (``channels``: ``{"mu": ...}``, the
friction coefficient of a :class:`~jaxfriction.QuasiStaticSlider`, or an internal variable
such as ``"psi"``; :meth:`~jaxfriction.AbstractFrictionSystem.internal`).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..._checks import check_real

if TYPE_CHECKING:
    from jax.typing import ArrayLike

    from ..._integrate.trajectory import Trajectory

#: Relative tolerance on the spacing of measurement times (text files round them).
UNIFORM_RTOL = 1e-4

_COLUMN = re.compile(r"^(q|v)(?:\[?(\d+)\]?)?$")
_CHANNEL = re.compile(r"^[a-z_][a-z0-9_]*$")


def _as_columns(name, value, n):
    """``value`` as an ``(n, k)`` float array of finite values (ValueError naming ``name``)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(value).__name__}") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or (n is not None and arr.shape[0] != n):
        raise ValueError(f"{name} must have shape (n,) or (n, k) with n = len(t) = {n}, got {np.shape(value)}")
    bad = ~np.isfinite(arr)
    if np.any(bad):
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} must be finite, got {float(arr[i, j])} at row {i}" + (f", column {j}" if arr.shape[1] > 1 else ""))
    return arr


def _dofs(name, dofs, k):
    dofs = tuple(range(k)) if dofs is None else tuple(int(d) for d in np.atleast_1d(dofs))
    if len(dofs) != k or len(set(dofs)) != k or any(d < 0 for d in dofs):
        raise ValueError(f"{name} must list {k} distinct degrees of freedom (ints >= 0), got {dofs}")
    return dofs


@dataclasses.dataclass(frozen=True, eq=False)
class Measurement:
    """One measured trajectory: positions, velocities and/or named channels.

    Args:
        t: ``(n,)`` sample times (time units of the system), ``n >= 3``, strictly increasing
            and uniformly spaced (to a relative ``1e-4`` of the interval, for rounded files).
        q: optional ``(n,)`` or ``(n, k)`` measured positions (length or angle units).
        v: optional ``(n,)`` or ``(n, k)`` measured velocities.
        channels: optional dict name -> ``(n,)`` measured values of a quantity the system
            computes from its state, ``system.internal(ys, name)`` (units of that quantity):
            ``{"mu": mu}``, the friction coefficient record of a velocity-step test
            (:class:`~jaxfriction.QuasiStaticSlider`), or an internal variable (``"psi"``,
            ``"theta"``, ``"ln_v"``). At least one of ``q``, ``v``, ``channels``.
        q_dofs: the degrees of freedom of ``q``'s columns (default ``0, 1, ..., k-1``; one
            column: degree of freedom 0).
        v_dofs: the same for ``v``.
        y0: optional known initial state ``(2 n_dof,)``: positions, then velocities (the
            internal variables start at the system's ``initial_internal()``), or ``(2 n_dof +
            n_internal,)`` with the internal variables (a
            :class:`~jaxfriction.QuasiStaticSlider`, ``n_dof = 0``: its
            ``steady_sliding()``). When None the initial state is estimated with the
            parameters (from a local quadratic fit of the first samples where positions are
            measured, from a simulation at the initial guess elsewhere).
        name: a label (file name) used in messages.

    Raises:
        ValueError: naming the argument (``t``, ``q``, ``v``, ``q_dofs``, ``v_dofs``,
            ``channels``, ``y0``) for wrong shapes, non-finite values, too few samples,
            nothing measured, a channel name that is not a lower-case identifier, or times
            not strictly increasing or not uniform.
    """

    t: np.ndarray
    q: np.ndarray | None = None
    v: np.ndarray | None = None
    q_dofs: tuple | None = None
    v_dofs: tuple | None = None
    channels: dict | None = None
    y0: np.ndarray | None = None
    name: str = ""

    def __post_init__(self):
        t = _as_columns("t", self.t, None)
        if t.shape[1] != 1:
            raise ValueError(f"t must be 1-D, got shape {np.shape(self.t)}")
        t = t[:, 0]
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
                f"t must be uniformly spaced (interval {interval:.6g}), but t[{i + 1}] - t[{i}] = {steps[i]:.6g}"
            )
        object.__setattr__(self, "t", t)
        if self.q is None and self.v is None and not self.channels:
            raise ValueError("a Measurement needs measured positions q or velocities v (or named channels)")
        if self.channels is not None:
            if not isinstance(self.channels, dict):
                raise ValueError(f"channels must be a dict name -> (n,) values, got {type(self.channels).__name__}")
            channels = {}
            for key, values in self.channels.items():
                if not isinstance(key, str) or not _CHANNEL.match(key) or _COLUMN.match(key) or key == "t":
                    raise ValueError(f"channels: names must be lower-case identifiers other than t, q, v, q0, "
                                     f"v1, ..., got {key!r}")
                col = _as_columns(f"channels[{key!r}]", values, t.shape[0])
                if col.shape[1] != 1:
                    raise ValueError(f"channels[{key!r}] must have shape (n,), got {np.shape(values)}")
                channels[key] = col[:, 0]
            object.__setattr__(self, "channels", channels or None)
        for name in ("q", "v"):
            value = getattr(self, name)
            if value is None:
                if getattr(self, f"{name}_dofs") is not None:
                    raise ValueError(f"{name}_dofs given without {name}")
                continue
            cols = _as_columns(name, value, t.shape[0])
            object.__setattr__(self, name, cols)
            object.__setattr__(self, f"{name}_dofs", _dofs(f"{name}_dofs", getattr(self, f"{name}_dofs"), cols.shape[1]))
        if self.y0 is not None:
            y0 = np.asarray(self.y0, dtype=float)
            if y0.ndim != 1 or y0.shape[0] < 2 * (self.max_dof + 1):
                raise ValueError(f"y0 must have shape (2 n_dof,) (positions, then velocities) or (2 n_dof + "
                                 f"n_internal,) with n_dof > {self.max_dof}, got {y0.shape}")
            check_real("y0", y0)
            object.__setattr__(self, "y0", y0)

    @property
    def interval(self) -> float:
        """Sample interval (time units): ``(t[-1] - t[0]) / (n - 1)``."""
        return float((self.t[-1] - self.t[0]) / (self.t.shape[0] - 1))

    @property
    def max_dof(self) -> int:
        """The largest degree of freedom measured (-1 when only channels are measured)."""
        return max((*(self.q_dofs or ()), *(self.v_dofs or ())), default=-1)

    @property
    def n_values(self) -> int:
        """Number of measured values (residuals)."""
        return sum(0 if x is None else x.size for x in (self.q, self.v)) + sum(
            x.size for x in (self.channels or {}).values())

    def __len__(self):
        return int(self.t.shape[0])

    @classmethod
    def from_trajectory(cls, trajectory: Trajectory, noise: float = 0.0, velocity_noise: float | None = None,
                        seed: int = 0, with_velocity: bool = False, known_y0=False, dofs=None,
                        name="synthetic") -> Measurement:
        """Synthetic measurement from a simulated :class:`~jaxfriction.Trajectory`.

        Args:
            trajectory: a trajectory saved on a uniform grid (``save_every``).
            noise: standard deviation of the Gaussian noise added to positions (units of q).
            velocity_noise: the same for velocities (default ``noise``).
            seed: seed of ``numpy.random.default_rng``.
            with_velocity: also record (noisy) velocities of the same degrees of freedom.
            known_y0: record the exact initial state as ``y0``.
            dofs: the degrees of freedom measured (default all).

        Returns:
            The measurement, a :class:`Measurement`.
        """
        rng = np.random.default_rng(seed)
        t = np.asarray(trajectory.ts, dtype=float)
        n_dof = trajectory.system.n_dof
        ys = np.asarray(trajectory.ys, dtype=float)
        dofs = tuple(range(n_dof)) if dofs is None else tuple(np.atleast_1d(dofs).tolist())
        q = ys[:, list(dofs)]
        v = ys[:, [n_dof + d for d in dofs]]
        y0 = ys[0, : 2 * n_dof].copy() if known_y0 else None
        q_meas = q + noise * rng.standard_normal(q.shape)
        sigma_v = noise if velocity_noise is None else velocity_noise
        v_meas = v + sigma_v * rng.standard_normal(v.shape) if with_velocity else None
        return cls(t=t, q=q_meas, v=v_meas, q_dofs=dofs, v_dofs=dofs if with_velocity else None, y0=y0, name=name)

    def columns(self) -> dict:
        """Column name -> values: ``q``/``v`` when only degree of freedom 0 is measured, else
        ``q0``, ``q2``, ``v1``, ...; then the channels by name (the CSV header)."""
        single = set((*(self.q_dofs or ()), *(self.v_dofs or ()))) == {0}
        out = {}
        for kind in ("q", "v"):
            values = getattr(self, kind)
            if values is not None:
                for j, d in enumerate(getattr(self, f"{kind}_dofs")):
                    out[kind if single else f"{kind}{d}"] = values[:, j]
        out.update(self.channels or {})
        return out

    def to_csv(self, path: str | Path) -> None:
        """Write ``t`` and the measured columns (:meth:`columns`) with a header line (17
        significant digits, lossless)."""
        cols = self.columns()
        np.savetxt(path, np.column_stack([self.t, *cols.values()]), delimiter=",",
                   header=",".join(["t", *cols]), comments="", fmt="%.17g")


def load_measurement(path: str | Path, y0: ArrayLike | None = None) -> Measurement:
    """Read a measured trajectory from a CSV file with a header line.

    Format: optional ``#`` comment lines and blank lines, then a header naming the columns:
    ``t`` and any of ``q``, ``v`` (degree of freedom 0), ``q<i>`` / ``q[i]`` and ``v<i>`` /
    ``v[i]`` (degree of freedom ``i``), and named channels (any other lower-case identifier,
    e.g. ``mu``; see :class:`Measurement`), comma separated, any order; then one row of numbers
    per sample. Times must be uniform (see :class:`Measurement`).

    Args:
        path: file path.
        y0: optional known initial state ``(2 n_dof,)``.

    Returns:
        The measurement, a :class:`Measurement` named after the file.

    Raises:
        FileNotFoundError: no such file.
        ValueError: ``path:line: ...`` for a malformed header or row (unknown or repeated
            column, wrong number of values, a value that is not a number), ``path: ...`` for
            invalid data (non-uniform times, NaN...) or a file that is not text.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    columns, rows = None, []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text (UTF-8) CSV file") from None
    for lineno, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = [f.strip() for f in text.split(",")]
        if columns is None:
            columns = [f.lower() for f in fields]
            parsed = [_COLUMN.match(c) or _CHANNEL.match(c) for c in columns[1:]] if columns[:1] == ["t"] else None
            keys = None if parsed is None or not all(parsed) else [
                (m.group(1), int(m.group(2) or 0)) if m.re is _COLUMN else ("channel", m.group(0)) for m in parsed]
            if "t" in columns[1:] or keys is None or not keys or len(set(keys)) != len(keys):
                raise ValueError(f"{path}:{lineno}: the header must be t followed by measured columns q, v, q0, "
                                 f"v1, q[2], ... or channel names such as mu (once each), got {text!r}")
            continue
        if len(fields) != len(columns):
            raise ValueError(f"{path}:{lineno}: expected {len(columns)} values ({','.join(columns)}), got {len(fields)}")
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
    measured = {"q": [], "v": [], "channel": []}
    for j, (kind, dof) in enumerate(keys, start=1):
        measured[kind].append((dof, data[:, j]))
    args = {"channels": dict(measured.pop("channel")) or None}
    for kind, cols in measured.items():
        if cols:
            args[kind] = np.column_stack([c for _, c in cols])
            args[f"{kind}_dofs"] = tuple(d for d, _ in cols)
    try:
        return Measurement(t=data[:, 0], y0=y0, name=path.name, **args)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _is_float(text):
    try:
        float(text)
        return True
    except ValueError:
        return False
