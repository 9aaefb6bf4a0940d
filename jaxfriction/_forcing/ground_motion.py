"""Recorded ground motions: loaders for the shared two-column files and PEER NGA ``.AT2``.

Files of ``../shared/data/ground_motions/`` (see its README): ``%`` comment lines, then one
row per sample with two columns (fault-normal, fault-parallel) of ground acceleration in
cm/s^2, every 0.005 s; separators are tabs or runs of spaces, line endings may be CRLF, and
some rows read ``0	0``. PEER NGA ``.AT2``: four header lines, the fourth holding ``NPTS`` and
``DT``, then the acceleration in g, several values a row (one component per file; two
files, x and y, are joined by :func:`combine_components` or ``load_ground_motion(x, y)``).
Every loader refuses, naming the file (and the line where there is one), a directory, binary
data and malformed headers or values.
"""

from __future__ import annotations

import re
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._checks import Constraint, numeric_array, positive, real
from .drives import AbstractDrive

G = 9.80665  # m/s^2, standard gravity (AT2 files are in g)
CM = 0.01  # cm/s^2 -> m/s^2


class GroundMotion(AbstractDrive):
    """Tabulated floor acceleration ``a_g(t)`` (m/s^2), linearly interpolated, zero outside the record.

    Attributes:
        values: ``(n, c)`` samples (m/s^2), ``c`` components (2 for the shared records).
        dt: sample spacing (s), > 0.
        scale: factor applied to the record (e.g. to scale its PGA).
        rotation: angle (rad) rotating 2-component records in the plane.
        name: label (file name).

    Call ``motion(t)`` for the ``(c,)`` acceleration at time ``t``; it is an ordinary drive.

    Raises:
        ValueError: non-finite values, bad shapes or ``dt <= 0``.
    """

    # converted: a NumPy array could not be indexed by a traced time
    values: jnp.ndarray = eqx.field(converter=numeric_array("values"))
    dt: float
    scale: float = 1.0
    rotation: float = 0.0
    name: str = eqx.field(static=True, default="")

    def __check_init__(self):
        if jnp.ndim(self.values) != 2 or jnp.shape(self.values)[0] < 2:
            raise ValueError(f"values must have shape (n >= 2, components), got {jnp.shape(self.values)}")

    def constraints(self) -> tuple[Constraint, ...]:
        return (real("values", self.values), positive("dt", self.dt), real("scale", self.scale),
                real("rotation", self.rotation))

    @property
    def duration(self) -> float:
        """Length of the record (s)."""
        return (self.values.shape[0] - 1) * self.dt

    def __call__(self, t):
        n = self.values.shape[0]
        x = t / self.dt
        i = jnp.clip(jnp.floor(x).astype(int), 0, n - 2)
        w = x - i
        a = (1 - w) * self.values[i] + w * self.values[i + 1]
        a = jnp.where((x >= 0) & (x <= n - 1), self.scale * a, 0.0)
        if a.shape[-1] != 2:
            return a
        c, s = jnp.cos(self.rotation), jnp.sin(self.rotation)
        return jnp.stack([c * a[0] - s * a[1], s * a[0] + c * a[1]])

    def peak(self) -> float:
        """Peak ground acceleration of the (scaled) vector record, max ``|a_g|`` (m/s^2)."""
        return float(np.max(np.linalg.norm(np.asarray(self.values), axis=-1)) * abs(self.scale))




def _fail(path, line, message):
    raise ValueError(f"{path}:{line}: {message}")


def _read_lines(path):
    """The lines of a text record, numbered from 1 (CRLF, CR and LF line endings).

    Raises:
        ValueError: naming the file for a directory, an unreadable file or binary data (NUL
            bytes); undecodable bytes are kept as U+FFFD, so a data line holding them fails
            with its line number (see :func:`_binary_line`).
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a ground-motion record")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the record ({exc.strerror or exc})") from None
    if b"\x00" in data:
        raise ValueError(f"{path}: binary data (NUL bytes), not a text ground-motion record")
    text = data.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _binary_line(path, number, line):
    """Fail on a data line holding undecodable bytes or control characters (not a text record)."""
    if "\ufffd" in line or any(ord(c) < 32 and c not in "\t\f\v" for c in line):
        _fail(path, number, "undecodable bytes or control characters: not a text ground-motion record")


def load_two_column(path: str | Path, dt: float = 0.005) -> GroundMotion:
    """Load a shared two-column record (cm/s^2 -> m/s^2). Returns a :class:`GroundMotion`.

    Args:
        path: path of the file.
        dt: its sample spacing (s, the shared files' 0.005).

    Returns:
        The record, a :class:`GroundMotion` with ``values`` of shape ``(n, 2)`` (m/s^2).

    Raises:
        FileNotFoundError: if missing.
        ValueError: naming the file (and the line where there is one) for non-numeric or
            ragged rows, NaN or infinite values, a header ``dt=`` that disagrees with ``dt``,
            fewer than 2 samples, a directory or binary data.
    """
    path = Path(path)
    rows = []
    for number, raw in enumerate(_read_lines(path), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("%"):
            m = re.search(r"dt\s*=\s*([0-9.eE+-]+)", line)
            if m:
                try:
                    header_dt = float(m.group(1).rstrip("."))
                except ValueError:
                    _fail(path, number, f"unreadable header dt={m.group(1)!r}")
                if abs(header_dt - dt) > 1e-9:
                    _fail(path, number, f"header says dt={m.group(1)}, expected {dt}")
            continue
        _binary_line(path, number, line)
        fields = line.split()
        if len(fields) != 2:
            _fail(path, number, f"expected 2 columns, got {len(fields)}: {line!r}")
        try:
            values = [float(f) for f in fields]
        except ValueError:
            _fail(path, number, f"non-numeric value in {line!r}")
        if not all(np.isfinite(values)):
            _fail(path, number, f"non-finite value in {line!r}")
        rows.append(values)
    if len(rows) < 2:
        raise ValueError(f"{path}: fewer than 2 samples")
    return GroundMotion(values=jnp.asarray(np.array(rows) * CM), dt=dt, name=path.stem)


_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
#: NGA-West2 header ``NPTS=  5000, DT=   .0050 SEC``, and the older PEER ``5000  .0050  NPTS, DT``.
_AT2_HEADERS = (re.compile(rf"NPTS\s*=\s*{_NUMBER}\s*,?\s*DT\s*=\s*{_NUMBER}", re.IGNORECASE),
                re.compile(rf"^\s*{_NUMBER}\s*,?\s+{_NUMBER}\s*,?\s*NPTS\s*,?\s*DT", re.IGNORECASE))


def load_at2(path: str | Path) -> GroundMotion:
    """Load a PEER NGA ``.AT2`` file: one horizontal component, in g.

    Format: four header lines, the fourth holding ``NPTS= n, DT= dt SEC`` (or the older
    ``n dt NPTS, DT``), then the ``n`` accelerations (g), several a row.

    Args:
        path: path of the file.

    Returns:
        The record, a :class:`GroundMotion` with ``values`` of shape ``(n, 1)`` (m/s^2,
            g = 9.80665); combine two with :func:`combine_components` (or give
            :func:`load_ground_motion` two paths) for the 2-component floor of the sliding
            block.

    Raises:
        FileNotFoundError: if missing.
        ValueError: naming the file and line for a header without ``NPTS``/``DT``, ``NPTS``
            not a positive integer, ``DT`` not finite and > 0, bad or non-finite values, a
            sample count that disagrees with ``NPTS``, fewer than 2 samples, a directory or
            binary data.
    """
    path = Path(path)
    lines = _read_lines(path)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 5:
        raise ValueError(f"{path}: too short for an AT2 file (4 header lines, then data)")
    _binary_line(path, 4, lines[3])
    m = next((found for pattern in _AT2_HEADERS if (found := pattern.search(lines[3]))), None)
    if not m:
        _fail(path, 4, f"expected 'NPTS= n, DT= dt' in the header, got {lines[3]!r}")
    npts_text, dt_text = m.group(1), m.group(2)  # type: ignore[union-attr]
    if not re.fullmatch(r"\+?\d+\.?0*", npts_text) or int(float(npts_text)) < 1:
        _fail(path, 4, f"NPTS must be a positive integer, got {npts_text!r}")
    npts, dt = int(float(npts_text)), float(dt_text)
    if not (np.isfinite(dt) and dt > 0):
        _fail(path, 4, f"DT must be > 0 (s), got {dt_text!r}")
    values = []
    for number, line in enumerate(lines[4:], start=5):
        _binary_line(path, number, line)
        for field in line.split():
            try:
                x = float(field)
            except ValueError:
                _fail(path, number, f"non-numeric value {field!r}")
            if not np.isfinite(x):
                _fail(path, number, f"non-finite value {field!r}")
            values.append(x)
    if len(values) != npts:
        _fail(path, 4, f"header says NPTS={npts}, found {len(values)} values")
    if npts < 2:
        _fail(path, 4, f"NPTS={npts}: a record needs at least 2 samples")
    return GroundMotion(values=jnp.asarray(np.array(values)[:, None] * G), dt=dt, name=path.stem)


def combine_components(x: GroundMotion, y: GroundMotion | None = None) -> GroundMotion:
    """A 2-component floor motion from one or two 1-component records (e.g. two ``.AT2``).

    Args:
        x: :class:`GroundMotion` with values ``(n_x, 1)``, the acceleration along x.
        y: :class:`GroundMotion` with values ``(n_y, 1)`` along y, or None for shaking along
            x only (``a_y = 0``).

    Returns:
        The floor motion, a :class:`GroundMotion` with values ``(max(n_x, n_y), 2)`` (m/s^2),
            the components' own ``scale`` applied (the result has ``scale = 1``,
            ``rotation = 0``), ``dt`` of the inputs and the name ``x.name+y.name``. The
            shorter record is padded with zeros at its end (the floor is still in that
            direction once its record ends, as a :class:`GroundMotion` is zero after its
            record), so the result lasts as long as the longer one.

    Raises:
        ValueError: naming the record for a motion with other than one component, and
            naming both for different ``dt`` (relative difference above 1e-9).
    """
    parts = [("x", x)] + ([("y", y)] if y is not None else [])
    for axis, motion in parts:
        if not isinstance(motion, GroundMotion):
            raise ValueError(f"{axis} must be a GroundMotion, got {type(motion).__name__}")
        if motion.values.shape[1] != 1:
            raise ValueError(f"{axis} ({motion.name or 'record'}) must have one component to be combined, "
                             f"got {motion.values.shape[1]}")
    columns = [np.asarray(m.values[:, 0]) * float(m.scale) for _, m in parts]
    if y is None:
        columns.append(np.zeros_like(columns[0]))
    elif abs(float(x.dt) - float(y.dt)) > 1e-9 * max(abs(float(x.dt)), abs(float(y.dt))):
        raise ValueError(f"the two components have different DT: {x.name or 'x'} has {float(x.dt)} s, "
                         f"{y.name or 'y'} has {float(y.dt)} s")
    n = max(len(c) for c in columns)
    values = np.zeros((n, 2))
    for j, c in enumerate(columns):
        values[: len(c), j] = c
    name = x.name if y is None else f"{x.name}+{y.name}"
    return GroundMotion(values=jnp.asarray(values), dt=float(x.dt), name=name)


def _load_one(path):
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a ground-motion record")
    if not path.exists():
        raise FileNotFoundError(f"no ground-motion file at {path}")
    return load_at2(path) if path.suffix.lower() == ".at2" else load_two_column(path)


def load_ground_motion(path: str | Path, y: str | Path | None = None) -> GroundMotion:
    """Load a record by path: ``.AT2`` files by :func:`load_at2`, others by :func:`load_two_column`.

    Args:
        path: a shared two-column file (-> values ``(n, 2)``) or one ``.AT2`` component
            (-> ``(n, 1)``, as :func:`load_at2`).
        y: optional second ``.AT2`` path, the y component: then ``path`` is the x component
            and the two are joined by :func:`combine_components` (same ``DT`` required, the
            shorter padded with zeros) into values ``(n, 2)``.

    Returns:
        The record, a :class:`GroundMotion` (m/s^2).

    Raises:
        FileNotFoundError: if a file is missing.
        ValueError: naming the file (and line) if malformed, a directory or binary, if ``y``
            is given and either record is not one-component, or if the two ``DT`` differ.
    """
    first = _load_one(path)
    if y is None:
        return first
    second = _load_one(y)
    for p, motion in ((path, first), (y, second)):
        if motion.values.shape[1] != 1:
            raise ValueError(f"{p}: has {motion.values.shape[1]} components; two records must be one-component "
                             f"(.AT2) files, x then y")
    if abs(first.dt - second.dt) > 1e-9 * max(first.dt, second.dt):
        raise ValueError(f"{path} has DT={first.dt} s but {y} has DT={second.dt} s: the two components must "
                         f"share their time step")
    return combine_components(first, second)
