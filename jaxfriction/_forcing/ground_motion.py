"""Recorded ground motions: loaders for the shared two-column files and PEER NGA ``.AT2``.

Files of ``../shared/data/ground_motions/`` (see its README): ``%`` comment lines, then one
row per sample with two columns (fault-normal, fault-parallel) of ground acceleration in
cm/s^2, every 0.005 s; separators are tabs or runs of spaces, line endings may be CRLF, and
some rows read ``0	0``. PEER NGA ``.AT2``: four header lines, the fourth holding ``NPTS`` and
``DT``, then the acceleration in g, several values a row (one component per file).
"""

import re
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._checks import positive, real
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
    Raises: ValueError for non-finite values, bad shapes or ``dt <= 0``.
    """

    values: jnp.ndarray
    dt: float
    scale: float = 1.0
    rotation: float = 0.0
    name: str = eqx.field(static=True, default="")

    def __check_init__(self):
        if jnp.ndim(self.values) != 2 or jnp.shape(self.values)[0] < 2:
            raise ValueError(f"values must have shape (n >= 2, components), got {jnp.shape(self.values)}")

    def constraints(self):
        return (real("values", self.values), positive("dt", self.dt), real("scale", self.scale),
                real("rotation", self.rotation))

    @property
    def duration(self):
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

    def peak(self):
        """Peak ground acceleration of the (scaled) vector record, max ``|a_g|`` (m/s^2)."""
        return float(np.max(np.linalg.norm(np.asarray(self.values), axis=-1)) * abs(self.scale))




def _fail(path, line, message):
    raise ValueError(f"{path}:{line}: {message}")


def load_two_column(path, dt=0.005):
    """Load a shared two-column record (cm/s^2 -> m/s^2). Returns a :class:`GroundMotion`.

    Raises: ValueError naming the file and line for non-numeric or ragged rows, NaN or
    infinite values, a header ``dt=`` that disagrees with ``dt``, or an empty file.
    """
    path = Path(path)
    rows = []
    with open(path, "r", newline=None) as fh:
        for number, raw in enumerate(fh, start=1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("%"):
                m = re.search(r"dt\s*=\s*([0-9.eE+-]+)", line)
                if m and abs(float(m.group(1).rstrip(".")) - dt) > 1e-9:
                    _fail(path, number, f"header says dt={m.group(1)}, expected {dt}")
                continue
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


def load_at2(path):
    """Load a PEER NGA ``.AT2`` file (g -> m/s^2, one component, shape ``(n, 1)``).

    Raises: ValueError naming the file and line for a header without ``NPTS``/``DT``, bad
    values, or a sample count that disagrees with ``NPTS``.
    """
    path = Path(path)
    lines = path.read_text().splitlines()
    if len(lines) < 5:
        raise ValueError(f"{path}: too short for an AT2 file (4 header lines, then data)")
    m = re.search(r"NPTS\s*=\s*(\d+)\s*,?\s*DT\s*=\s*([0-9.eE+-]+)", lines[3], re.IGNORECASE)
    if not m:
        _fail(path, 4, f"expected 'NPTS= n, DT= dt' in the header, got {lines[3]!r}")
    npts, dt = int(m.group(1)), float(m.group(2))
    values = []
    for number, line in enumerate(lines[4:], start=5):
        for field in line.split():
            try:
                x = float(field)
            except ValueError:
                _fail(path, number, f"non-numeric value {field!r}")
            if not np.isfinite(x):
                _fail(path, number, f"non-finite value {field!r}")
            values.append(x)
    if len(values) != npts:
        raise ValueError(f"{path}: header says NPTS={npts}, found {len(values)} values")
    return GroundMotion(values=jnp.asarray(np.array(values)[:, None] * G), dt=dt, name=path.stem)


def load_ground_motion(path):
    """Load a record by path: ``.AT2`` files by :func:`load_at2`, others by :func:`load_two_column`.

    Raises: FileNotFoundError if missing; ValueError (file and line) if malformed.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no ground-motion file at {path}")
    return load_at2(path) if path.suffix.lower() == ".at2" else load_two_column(path)
