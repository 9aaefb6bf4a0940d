"""Measured inputs: a drive that plays back a sampled signal, and the sum of drives.

Every laboratory rig is driven by a recorded signal: the motor force of a servo axis (the
EMPS benchmark's ``gtau * vir``), a load-cell force, the load-point velocity of a
rate-and-state experiment, the prescribed displacement of a tribometer. :class:`Sampled`
plays such a record back wherever a system takes a drive (a force, a belt or load-point
velocity, a normal force). Its samples are parameter leaves (``"force.values"``), so a
validation record's input is swapped in with :func:`~jaxfriction.set_parameters` or, by a
:class:`~jaxfriction.Measurement`'s ``inputs``, by :func:`~jaxfriction.fit` and
:func:`~jaxfriction.predict` themselves. Drives add: ``Sampled(gain=35.15) + Constant(-3.2)``
is a measured force plus a constant offset (:class:`DriveSum`).
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import Constraint, as_float_array, check_choice, is_concrete, is_static_zero, real
from .drives import AbstractDrive

#: Hold rules of :class:`Sampled`.
HOLDS = ("linear", "zero")


def _sample_arrays(times, values):
    """``(times (n,), values (n,) or (n, c))`` as float arrays, checked (ValueError naming them)."""
    t = as_float_array("times", times) if is_concrete(times) else times
    v = as_float_array("values", values) if is_concrete(values) else values
    if np.ndim(t) != 1 or np.shape(t)[0] < 2:
        raise ValueError(f"times must have shape (n,) with n >= 2, got {np.shape(times)}")
    if np.ndim(v) not in (1, 2) or np.shape(v)[0] != np.shape(t)[0]:
        raise ValueError(f"values must have shape (n,) or (n, channels) with n = len(times) = {np.shape(t)[0]}, "
                         f"got {np.shape(values)}")
    if is_concrete(times):
        bad = ~np.isfinite(t)
        if np.any(bad):
            raise ValueError(f"times must be finite, got {t[bad][0]} at sample {int(np.argmax(bad))}")
        steps = np.diff(t)
        if not np.all(steps > 0):
            i = int(np.argmin(steps > 0))
            raise ValueError(f"times must increase strictly, but times[{i + 1}] = {t[i + 1]} <= times[{i}] = {t[i]}")
    if is_concrete(values):
        bad = ~np.isfinite(v)
        if np.any(bad):
            row = int(np.argwhere(bad)[0][0])
            raise ValueError(f"values must be finite, got {v[bad][0]} at sample {row} (t = {float(t[row])})"
                             if is_concrete(times) else f"values must be finite, got {v[bad][0]} at sample {row}")
    return t, v


def near_regular(times) -> bool:
    """True when concrete ``times`` ``(n,)`` each lie within half a mean interval of their
    place on the regular grid ``linspace(times[0], times[-1], n)`` (a regular or jittered
    logger's stamps), where :class:`Sampled` finds the interval in O(1); False for
    irregular or traced times (binary search)."""
    if not is_concrete(times):
        return False
    t = np.asarray(times, dtype=float)
    step = (t[-1] - t[0]) / (len(t) - 1)
    return bool(np.max(np.abs(t - np.linspace(t[0], t[-1], len(t)))) < 0.5 * step)


class Sampled(AbstractDrive):
    """A sampled signal played back as a drive: ``gain * values(t) + offset``.

    Between samples the signal is interpolated linearly (``hold="linear"``) or held at the
    last sample (``hold="zero"``, a zero-order hold: what a digital controller applies);
    before the first sample and after the last it stays at the end values. Time stamps may
    be regular, jittered (a logger's) or irregular: the interval is found in O(1) on a
    regular or jittered grid (:func:`near_regular`), by binary search otherwise.

    ``Sampled()`` with no samples is a placeholder (zero) for a record's input: a
    :class:`~jaxfriction.Measurement` with ``inputs={"force": ...}`` fills it in
    (:func:`~jaxfriction.fit`, :func:`~jaxfriction.predict`), keeping ``gain``, ``offset``
    and ``hold``. The samples are parameter leaves (``"force.values"``); a record's input is
    swapped in with ``jf.set_parameters(system, {"force.values": new})`` (same length) or
    :func:`with_inputs` (any length).

    Args:
        times: ``(n,)`` sample times (s), ``n >= 2``, finite and strictly increasing.
        values: ``(n,)`` samples (units of the driven quantity, before ``gain``), or ``(n, c)``
            for ``c`` channels (then the drive returns a ``(c,)`` array, as a
            :class:`~jaxfriction.GroundMotion` does).
        gain: factor on the samples (e.g. the EMPS actuation gain ``gtau = 35.15`` N/V turns
            the controller output in V into a force in N).
        offset: added after the gain (units of the driven quantity).
        hold: ``"linear"`` (default) or ``"zero"``.

    Raises:
        ValueError: naming ``times``, ``values`` (shapes, non-finite samples such as a NaN
            in a record, times that do not increase), ``gain``, ``offset`` (non-finite) or
            ``hold``.

    A zero-order hold jumps at every sample: :meth:`jump_times` declares them to adaptive
    solvers (each a breakpoint); a fixed-step RK4 run should then step on the samples.
    """

    times: jax.Array | np.ndarray = eqx.field(default_factory=lambda: np.array([0.0, 1.0]))
    values: jax.Array | np.ndarray = eqx.field(default_factory=lambda: np.zeros(2))
    gain: float = 1.0
    offset: float = 0.0
    hold: str = eqx.field(default="linear", static=True)
    #: Whether every stamp lies within half a mean interval of its place on the regular grid
    #: from ``times[0]`` to ``times[-1]`` (set on construction: :func:`near_regular`).
    near_regular: bool = eqx.field(default=False, static=True, init=False)

    def __post_init__(self):
        check_choice("hold", self.hold, HOLDS)
        times, values = _sample_arrays(self.times, self.values)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "near_regular", near_regular(times))

    def constraints(self) -> tuple[Constraint, ...]:
        return (real("gain", self.gain), real("offset", self.offset))

    @property
    def n_channels(self) -> int:
        """Channels of the signal: 0 for ``(n,)`` samples (a scalar drive), else ``c``."""
        return 0 if np.ndim(self.values) == 1 else int(np.shape(self.values)[1])

    def jump_times(self) -> tuple:
        """The sample times after the first for a zero-order hold, ``()`` for linear."""
        if self.hold != "zero":
            return ()
        return tuple(float(t) for t in np.asarray(self.times)[1:]) if is_concrete(self.times) else ()

    def _interval(self, t):
        """``(i, brackets)``: the index ``i`` of the interval ``times[i] <= t < times[i + 1]``
        (clipped to ``[0, n - 2]``) and whether it brackets ``t``.

        On a regular or jittered grid (:attr:`near_regular`) the index a regular grid would
        have, ``floor((t - times[0]) (n - 1) / (times[-1] - times[0]))``, moved by one where
        ``t`` lies in a neighbouring interval: O(1), and the binary search's index
        (``scripts/benchmarks/bench_loop_kernels.py`` measures the gain). ``brackets`` is False only where
        ``times`` were replaced after construction by an irregular grid (``tree_at``; use
        :func:`with_inputs`), and the signal is then NaN, which a run flags as non-finite.
        Otherwise a binary search (``brackets`` always True)."""
        times, t = jax.lax.stop_gradient(jnp.asarray(self.times)), jax.lax.stop_gradient(t)
        n = times.shape[0]
        if not self.near_regular:
            return jnp.clip(jnp.searchsorted(times, t, side="right") - 1, 0, n - 2), True
        guess = jnp.floor((t - times[0]) * ((n - 1) / (times[-1] - times[0])))
        g = jnp.clip(jnp.nan_to_num(guess), 0, n - 2).astype(jnp.int32)
        i = jnp.clip(jnp.where(t < times[g], g - 1, jnp.where(t >= times[g + 1], g + 1, g)), 0, n - 2)
        brackets = ((t >= times[i]) | (i == 0)) & ((t < times[i + 1]) | (i == n - 2))
        return i, brackets | jnp.isnan(t)

    def signal(self, t):
        """The interpolated samples at ``t``, before ``gain`` and ``offset``."""
        times, values = jnp.asarray(self.times), jnp.asarray(self.values)
        i, brackets = self._interval(t)
        t0, t1 = times[i], times[i + 1]
        if self.hold == "zero":
            out = jnp.where(t >= t1, values[i + 1], values[i])
        else:
            w = jnp.clip((t - t0) / (t1 - t0), 0.0, 1.0)
            if values.ndim == 2:
                w = w[..., None]
            out = (1.0 - w) * values[i] + w * values[i + 1]
        if brackets is True:
            return out
        return jnp.where(brackets[..., None] if values.ndim == 2 else brackets, out, jnp.nan)

    def __call__(self, t):
        out = self.signal(t)
        if not (isinstance(self.gain, (int, float)) and self.gain == 1):
            out = self.gain * out
        return out if is_static_zero(self.offset) else out + self.offset


class DriveSum(AbstractDrive):
    """The sum of drives, ``terms[0](t) + terms[1](t) + ...`` (``drive_a + drive_b``).

    A measured force plus a constant offset (the EMPS benchmark's ``gtau vir(t) - offset``:
    ``Sampled(gain=35.15) + Constant(-3.16)``), a sampled load-point velocity plus a
    harmonic perturbation. Paths: ``"force.terms[0].gain"``, ``"force.terms[1].value"``.

    Args:
        terms: a tuple of drives (at least one); nested sums are flattened by ``+``.

    Raises:
        ValueError: ``terms`` empty or holding something that is not a drive.
    """

    terms: tuple

    def __check_init__(self):
        if not isinstance(self.terms, tuple) or not self.terms or not all(
                isinstance(d, AbstractDrive) for d in self.terms):
            raise ValueError(f"terms must be a non-empty tuple of drives, got {self.terms!r}")
        super().__check_init__()

    def jump_times(self) -> tuple:
        """The jump times of every term, sorted."""
        times = [t for d in self.terms for t in d.jump_times()]
        return tuple(sorted(times, key=float)) if is_concrete(times) else tuple(times)

    def __call__(self, t):
        out = self.terms[0](t)
        for drive in self.terms[1:]:
            out = out + drive(t)
        return out


def with_inputs(system, inputs: dict):
    """A copy of ``system`` with sampled inputs put at the paths of its drives.

    Each entry ``path -> (times, values)`` (or ``path -> Sampled``, whose samples are taken)
    names a drive of the system by its path (``"force"``, ``"surface"``, ``"force.terms[0]"`` in a
    :class:`DriveSum`): a :class:`Sampled` there keeps its ``gain``, ``offset`` and ``hold`` and
    takes the new samples; any other drive (a placeholder ``Constant(0.0)``) is replaced by
    ``Sampled(times, values)``.

    Args:
        system: any system (or other equinox module holding drives).
        inputs: dict path -> ``(times (n,), values (n,) or (n, c))`` or a :class:`Sampled`.

    Returns:
        The system with the inputs in place.

    Raises:
        ValueError: naming ``inputs[path]`` for a path that does not lead to a drive (the
            message lists the system's drive paths), or bad samples.
    """
    from .._paths import module_paths, parse_path

    if not inputs:
        return system
    nodes, drives = [], []
    for path, spec in inputs.items():
        try:
            steps = parse_path(path)
            node = _at(system, steps)
        except (ValueError, AttributeError, IndexError, KeyError, TypeError):
            node = None
        if not _is_plain_drive(node):
            raise ValueError(f"inputs[{path!r}] must name a drive of {type(system).__name__} (one of "
                             f"{module_paths(system, _is_plain_drive)}), got {type(node).__name__ if node is not None else 'no field'}")
        try:
            times, values = (spec.times, spec.values) if isinstance(spec, Sampled) else spec
            keep: dict[str, Any] = {"gain": node.gain, "offset": node.offset, "hold": node.hold} if isinstance(node, Sampled) else (
                {"gain": spec.gain, "offset": spec.offset, "hold": spec.hold} if isinstance(spec, Sampled) else {})
            new = Sampled(times, values, **keep)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"inputs[{path!r}]: {exc}") from None
        nodes.append(steps)
        drives.append(new)

    return eqx.tree_at(lambda tree: [_at(tree, steps) for steps in nodes], system, drives)


def _is_plain_drive(node) -> bool:
    return isinstance(node, AbstractDrive) and not isinstance(node, DriveSum)


def _at(tree, path):
    """The node of ``tree`` at ``path`` (a path string or its parsed steps)."""
    from .._paths import parse_path

    for kind, key in parse_path(path) if isinstance(path, str) else path:
        tree = getattr(tree, key) if kind == "attr" else tree[key]
    return tree
