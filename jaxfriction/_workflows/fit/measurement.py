"""Measured trajectories for :func:`~jaxfriction.fit`: validation and CSV files.

A record measures any subset of the positions and velocities of a system's degrees of
freedom on a uniform time grid: ``q`` holds the measured positions (one column per measured
degree of freedom, listed in ``q_dofs``), ``v`` the measured velocities (``v_dofs``); and
any named channels the system reads from its state (``channels``: ``{"mu": ...}``, the
friction coefficient of a :class:`~jaxfriction.QuasiStaticSlider`, or an internal variable
such as ``"psi"``, or any quantity the system computes from ``(t, y)``: ``"friction_force"``,
``"f_eq"``, ...; :meth:`~jaxfriction.AbstractFrictionSystem.output`), and the measured inputs
that drove the rig (``inputs``: a sampled force, belt or load-point velocity, each played back
by a :class:`~jaxfriction.Sampled` drive at its path in the system).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._checks import as_float_array, check_real

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


def increasing_times(name, value, minimum: int = 2) -> np.ndarray:
    """``value`` as a strictly increasing ``(n,)`` float array with ``n >= minimum``
    (ValueError naming ``name``: shape, non-finite stamps, a stamp that does not increase)."""
    times = _as_columns(name, value, None)
    if times.shape[1] != 1 or times.shape[0] < minimum:
        raise ValueError(f"{name} must have shape (n,) with n >= {minimum}, got {np.shape(value)}")
    times = times[:, 0]
    steps = np.diff(times)
    if not np.all(steps > 0):
        i = int(np.argmin(steps > 0))
        raise ValueError(f"{name} must be strictly increasing, but {name}[{i + 1}] = {float(times[i + 1])} <= "
                         f"{name}[{i}] = {float(times[i])}")
    return times


def _dofs(name, dofs, k):
    if dofs is None:
        return tuple(range(k))
    items = np.atleast_1d(np.asarray(dofs, dtype=object))
    if items.ndim != 1 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in items):
        raise ValueError(f"{name} must list {k} distinct degrees of freedom (ints >= 0), got {dofs!r}")
    dofs = tuple(int(d) for d in items)
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
        inputs: optional dict drive path -> ``(n_in,)`` or ``(n_in, c)`` measured input
            samples: what drove the rig during the record (units of the driven quantity
            before the drive's ``gain``). The path names a drive of the system
            (``"force"``, ``"surface"``, ``"force.terms[0]"`` in a sum of drives): during a
            fit or a prediction of this record the samples are played back there by a
            :class:`~jaxfriction.Sampled` drive (one that is already there keeps its
            ``gain``, ``offset`` and ``hold``; see :func:`~jaxfriction.with_inputs`). Each
            record carries its own input, so a validation record is predicted with its own.
        input_t: optional ``(n_in,)`` time stamps of the inputs, strictly increasing, regular
            or not (default ``t``); :meth:`decimate` keeps the inputs at their full rate.
        preprocessing: the pre-processing steps applied to the record, one human-readable
            string each, oldest first (:func:`~jaxfriction.resample_record`,
            :func:`~jaxfriction.detrend`, :func:`~jaxfriction.remove_offset` append theirs),
            so that the choice travels with the record into the fit and its report.

    Raises:
        ValueError: naming the argument (``t``, ``q``, ``v``, ``q_dofs``, ``v_dofs``,
            ``channels``, ``y0``, ``inputs``, ``input_t``) for wrong shapes, non-finite values
            (a NaN in an input column), too few samples, nothing measured, a channel name
            that is not a lower-case identifier, times not strictly increasing or not
            uniform, or input times that do not cover the record.
    """

    t: np.ndarray
    q: np.ndarray | None = None
    v: np.ndarray | None = None
    q_dofs: tuple | None = None
    v_dofs: tuple | None = None
    channels: dict | None = None
    y0: np.ndarray | None = None
    name: str = ""
    inputs: dict | None = None
    input_t: np.ndarray | None = None
    preprocessing: tuple = ()

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
                f"t must be uniformly spaced (interval {interval:.6g}), but t[{i + 1}] - t[{i}] = {steps[i]:.6g}; "
                f"put a record with irregular stamps on a uniform grid with jf.resample_record"
            )
        object.__setattr__(self, "t", t)
        steps_done = self.preprocessing
        if isinstance(steps_done, str) or not isinstance(steps_done, (tuple, list)) or not all(
                isinstance(x, str) for x in steps_done):
            raise ValueError(f"preprocessing must be a tuple of strings, got {steps_done!r}")
        object.__setattr__(self, "preprocessing", tuple(steps_done))
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
            y0 = as_float_array("y0", self.y0)
            if y0.ndim != 1 or y0.shape[0] < 2 * (self.max_dof + 1):
                raise ValueError(f"y0 must have shape (2 n_dof,) (positions, then velocities) or (2 n_dof + "
                                 f"n_internal,) with n_dof > {self.max_dof}, got {y0.shape}")
            check_real("y0", y0)
            object.__setattr__(self, "y0", y0)
        self._check_inputs(t)

    def _check_inputs(self, t):
        if self.inputs is None:
            if self.input_t is not None:
                raise ValueError("input_t given without inputs")
            return
        if not isinstance(self.inputs, dict) or not self.inputs:
            raise ValueError(f"inputs must be a non-empty dict drive path -> samples, got {self.inputs!r}")
        if self.input_t is None:
            times = t
        else:
            times = increasing_times("input_t", self.input_t)
            slack = 1e-6 * (t[-1] - t[0])
            if times[0] > t[0] + slack or times[-1] < t[-1] - slack:
                raise ValueError(f"input_t must cover the record's times [{t[0]}, {t[-1]}], got [{times[0]}, "
                                 f"{times[-1]}]")
        inputs = {}
        for key, values in self.inputs.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"inputs: keys must be drive paths such as 'force', got {key!r}")
            col = _as_columns(f"inputs[{key!r}]", values, times.shape[0])
            inputs[key] = col[:, 0] if np.ndim(values) == 1 else col
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "input_t", times)

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

    def input_samples(self) -> dict:
        """The inputs as ``{path: (times, values)}``, what :func:`~jaxfriction.with_inputs` takes."""
        return {k: (self.input_t, v) for k, v in (self.inputs or {}).items()}

    def _replace(self, rows, **changes):
        """A copy with the measured columns taken at ``rows`` (inputs unchanged unless given)."""
        keep = {"t": self.t[rows], "q": None if self.q is None else self.q[rows],
                "v": None if self.v is None else self.v[rows], "q_dofs": self.q_dofs, "v_dofs": self.v_dofs,
                "channels": None if not self.channels else {k: x[rows] for k, x in self.channels.items()},
                "y0": self.y0, "name": self.name, "inputs": self.inputs, "input_t": self.input_t,
                "preprocessing": self.preprocessing}
        keep.update(changes)
        return Measurement(**keep)

    def decimate(self, factor: int) -> Measurement:
        """Every ``factor``-th sample of the measured columns; the inputs stay at their full rate.

        Residual thinning for long records: the fit compares fewer samples (its cost and
        the correlation of neighbouring residuals drop) while the model is still driven by
        the whole input and integrated on the input's step (:func:`~jaxfriction.fit`'s
        default ``dt`` is the finer of the two intervals).

        Args:
            factor: an integer >= 1.

        Returns:
            A :class:`Measurement` with ``ceil(n / factor)`` samples (at least 3).

        Raises:
            ValueError: naming ``factor`` (not an integer >= 1, or too large for 3 samples).
        """
        from ..._checks import check_int

        factor = check_int("factor", factor, minimum=1)
        rows = np.arange(0, len(self), factor)
        if rows.shape[0] < 3:
            raise ValueError(f"factor = {factor} leaves {rows.shape[0]} of {len(self)} samples; at least 3 are needed")
        return self._replace(rows)

    def window(self, t0: float, t1: float) -> Measurement:
        """The part of the record with ``t0 <= t <= t1`` (inputs cut to what covers it).

        Args:
            t0, t1: the window (time units), ``t0 < t1``.

        Returns:
            A :class:`Measurement` (``y0`` dropped unless the window starts at the record's
            start).

        Raises:
            ValueError: a window with fewer than 3 samples, or ``t1 <= t0``.
        """
        check_real("t0", t0)
        check_real("t1", t1)
        if not float(t1) > float(t0):
            raise ValueError(f"t1 must be > t0, got t0 = {t0}, t1 = {t1}")
        rows = np.flatnonzero((self.t >= t0) & (self.t <= t1))
        if rows.shape[0] < 3:
            raise ValueError(f"the window [{t0}, {t1}] holds {rows.shape[0]} samples of {self.name or 'the record'}; "
                             f"at least 3 are needed")
        changes = {} if rows[0] == 0 else {"y0": None}
        if self.inputs is not None:
            lo = max(int(np.searchsorted(self.input_t, self.t[rows[0]], side="right")) - 1, 0)  # type: ignore[call-overload]
            hi = min(int(np.searchsorted(self.input_t, self.t[rows[-1]], side="left")) + 1, len(self.input_t))  # type: ignore[arg-type, call-overload]
            hi = max(hi, lo + 2)
            changes.update(inputs={k: x[lo:hi] for k, x in self.inputs.items()}, input_t=self.input_t[lo:hi])  # type: ignore[call-overload, index]
        return self._replace(rows, **changes)

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
        significant digits, lossless); inputs sampled on the record's own times and named by a
        plain field (``"force"``) are written too, under that name (read them back with
        ``load_measurement(path, inputs={"force": "force"})``).

        Raises:
            ValueError: inputs that cannot be written as columns (another time grid, or a
                path such as ``"force.terms[0]"``).
        """
        cols = self.columns()
        for key, values in (self.inputs or {}).items():
            if (not _CHANNEL.match(key) or key in cols or values.ndim != 1 or len(self.input_t) != len(self)  # type: ignore[arg-type]
                    or not np.array_equal(self.input_t, self.t)):  # type: ignore[arg-type]
                raise ValueError(f"inputs[{key!r}] cannot be written as a CSV column (only inputs on the record's "
                                 f"own times, named by a plain field such as 'force')")
            cols[key] = values
        np.savetxt(path, np.column_stack([self.t, *cols.values()]), delimiter=",",
                   header=",".join(["t", *cols]), comments="", fmt="%.17g")


def load_measurement(path: str | Path, y0: ArrayLike | None = None, inputs: dict | None = None) -> Measurement:
    """Read a measured trajectory from a CSV file with a header line.

    Format: optional ``#`` comment lines and blank lines, then a header naming the columns:
    ``t`` and any of ``q``, ``v`` (degree of freedom 0), ``q<i>`` / ``q[i]`` and ``v<i>`` /
    ``v[i]`` (degree of freedom ``i``), named channels (any other lower-case identifier,
    e.g. ``mu`` or ``friction_force``; see :class:`Measurement`) and the input columns named in
    ``inputs``, comma separated, any order; then one row of numbers per sample. Times must be
    uniform (see :class:`Measurement`).

    Args:
        path: file path.
        y0: optional known initial state ``(2 n_dof,)``.
        inputs: optional dict column name -> drive path: the columns that drove the rig
            (``{"vir": "force"}``: the column ``vir`` is played back by the system's drive at
            ``"force"``; see :class:`Measurement`'s ``inputs``).

    Returns:
        The measurement, a :class:`Measurement` named after the file.

    Raises:
        FileNotFoundError: no such file.
        ValueError: ``path:line: ...`` for a malformed header or row (unknown or repeated
            column, wrong number of values, a value that is not a number), ``path: ...`` for
            invalid data (non-uniform times, NaN...), an ``inputs`` column the file lacks, or
            a file that is not text.
    """
    path = Path(path)
    if inputs is not None and (not isinstance(inputs, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in inputs.items())):
        raise ValueError(f"inputs must be a dict column name -> drive path, got {inputs!r}")
    inputs = {k.lower(): v for k, v in (inputs or {}).items()}
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
                (m.group(1), int(m.group(2) or 0)) if m.re is _COLUMN else ("channel", m.group(0)) for m in parsed]  # type: ignore[union-attr]
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
    missing = sorted(set(inputs) - set(columns[1:]))
    if missing:
        raise ValueError(f"{path}: inputs name columns {missing} that the header {columns} lacks")
    measured: dict[str, list[tuple[Any, np.ndarray]]] = {"q": [], "v": [], "channel": []}
    driven = {}
    for j, (kind, dof) in enumerate(keys, start=1):  # type: ignore[arg-type]
        if kind == "channel" and dof in inputs:
            driven[inputs[dof]] = data[:, j]
        else:
            measured[kind].append((dof, data[:, j]))
    args: dict[str, Any] = {"channels": dict(measured.pop("channel")) or None, "inputs": driven or None}
    for kind, cols in measured.items():
        if cols:
            args[kind] = np.column_stack([c for _, c in cols])
            args[f"{kind}_dofs"] = tuple(d for d, _ in cols)
    try:
        return Measurement(t=data[:, 0], y0=y0, name=path.name, **args)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _is_float(text):
    try:
        float(text)
        return True
    except ValueError:
        return False
