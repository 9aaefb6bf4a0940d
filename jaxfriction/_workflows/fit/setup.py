"""From the arguments of :func:`~jaxfriction.fit` to its least-squares :class:`Problem`.

Parameter bounds and their transforms, the records' grids and multiple-shooting segments,
and the initial values of the free segment states (measured coordinates from the data,
everything else from a simulation at the initial guess).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ..._checks import check_real
from ..._forcing.sampled import Sampled, with_inputs
from ..._integrate.simulate import as_solver, simulate
from .measurement import Measurement
from .outputs import check_channel
from .problem import Problem, Record

if TYPE_CHECKING:
    from ..._systems.base import AbstractFrictionSystem

#: Samples per segment at least (multiple shooting), and per free variable in the data.
MIN_SEGMENT_INTERVALS = 2


def parse_bounds(name: str, spec, p0: float | None = None) -> tuple[str, float, float]:
    """``(kind, lo, hi)`` of one parameter: ``"free"``, ``"lower"``, ``"upper"`` or ``"interval"``.

    Args:
        name: the parameter path (for messages).
        spec: ``(lo, hi)`` (either None for a half-line), ``"positive"`` or None.
        p0: the initial guess, which must lie strictly inside; None skips that check.

    Raises:
        ValueError: naming ``bounds[name]`` (not a pair, not real, ``lo >= hi``) or
            ``initial[name]`` (outside its bounds).
    """
    if isinstance(spec, str):
        if spec != "positive":
            raise ValueError(f"bounds[{name!r}] must be (lo, hi), 'positive' or None, got {spec!r}")
        spec = (0.0, None)
    if spec is None:
        return "free", 0.0, 0.0
    try:
        lo, hi = spec
    except (TypeError, ValueError):
        raise ValueError(f"bounds[{name!r}] must be (lo, hi), 'positive' or None, got {spec!r}") from None
    for side, value in (("lo", lo), ("hi", hi)):
        if value is not None:
            check_real(f"bounds[{name!r}] {side}", value)
    if lo is not None and hi is not None and not float(lo) < float(hi):
        raise ValueError(f"bounds[{name!r}] must have lo < hi, got {spec!r}")
    if p0 is not None and ((lo is not None and not p0 > float(lo)) or (hi is not None and not p0 < float(hi))):
        raise ValueError(
            f"initial[{name!r}] = {p0!r} must lie strictly inside bounds[{name!r}] = {spec!r} "
            f"(default bounds are (0, None): positive; pass None for an unconstrained parameter)"
        )
    if lo is None and hi is None:
        return "free", 0.0, 0.0
    if hi is None:
        return "lower", float(lo), 0.0
    if lo is None:
        return "upper", 0.0, float(hi)
    return "interval", float(lo), float(hi)


def box_centre(lo: float, hi: float) -> float:
    """The centre of a finite interval: geometric for ``lo > 0`` (the design is log-scaled
    there), arithmetic otherwise."""
    return math.sqrt(lo * hi) if lo > 0 else 0.5 * (lo + hi)


def _local_fit(t, y, i, half=3):
    """Value and slope at sample ``i`` of a least-squares quadratic over ``2 half + 1`` samples."""
    n = t.shape[0]
    a, b = max(0, i - half), min(n, i + half + 1)
    if b - a < 2 * half + 1:
        a, b = max(0, min(a, n - 2 * half - 1)), min(n, max(b, 2 * half + 1))
    x = t[a:b] - t[i]
    coef = np.polyfit(x, y[a:b], min(2, len(x) - 1))
    return float(np.polyval(coef, 0.0)), float(np.polyval(np.polyder(coef), 0.0))


def _segment_starts(system, m, i_bounds, h, n_sub, first):
    """Initial values, scales and defect weights of the free segment start states of record ``m``.

    Each free start is ``(q, v, z)`` (``2 n_dof + n_internal``). A measured position gives
    the value and slope of a local quadratic fit at the segment's first sample, a measured
    velocity its sample; every other coordinate (unmeasured positions, and their velocities
    where unmeasured, a dynamic law's internal variables) is read from one simulation of the
    record at the initial guess, started from ``first`` (the known ``y0``, or the data's
    estimate); with none of those, nothing is simulated. Scales
    are the coordinates' standard deviations over the record (1 where that is 0). Defect
    weights put a continuity defect of one standard deviation of ``z`` on par with one of
    the positions (positions and velocities keep their natural units).
    """
    n, k = system.n_dof, system.n_internal
    width = 2 * n + k
    free = i_bounds[(m.y0 is not None) : -1]
    q_cols = dict(zip(m.q_dofs or (), range(len(m.q_dofs or ()))))
    v_cols = dict(zip(m.v_dofs or (), range(len(m.v_dofs or ()))))
    simulated = None
    # a measured position gives its velocity too (the slope): simulate only for unmeasured
    # positions and internal variables
    if free and (k or len(q_cols) < n):
        simulated = np.asarray(_simulated(system, jnp.asarray(first), float(m.t[0]), float(m.t[-1]), h, n_sub),
                               dtype=float)[:, :width]
        if not np.all(np.isfinite(simulated)):
            simulated = np.where(np.isfinite(simulated), simulated, 0.0)
    scale = np.ones(width)
    if simulated is not None:
        spread = np.std(simulated, axis=0)
        scale = np.where(spread > 0, spread, 1.0)
    for d, j in q_cols.items():
        scale[d] = float(np.std(m.q[:, j])) or 1.0
        scale[n + d] = float(np.std(np.gradient(m.q[:, j], m.t))) or 1.0
    for d, j in v_cols.items():
        scale[n + d] = float(np.std(m.v[:, j])) or 1.0
    q_scale = float(np.mean(scale[:n])) if n else 1.0  # no positions (n_dof = 0): z in its own units
    weight = np.concatenate([np.ones(2 * n), q_scale / scale[2 * n :]])
    state0, scales = [], []
    for i in free:
        state0 += list(_with_measured(simulated[i].copy() if simulated is not None else np.zeros(width), m, i, n))
        scales += list(scale)
    return state0, scales, list(weight) * len(free)


@eqx.filter_jit
def _simulated(system, y0, t0, t1, h, save_every):
    """The saved states of :func:`~jaxfriction.simulate` as one compiled program: run eagerly,
    its RK4 status alone compiled some 200 operations one by one (17.6 s of the EMPS LuGre
    fit's 65 s with XLA's loop kernels; ``docs/performance.md``)."""
    return simulate(system, y0, t0, t1, h, save_every=save_every).ys


def _with_measured(y, m, i, n):
    """``y`` ``(q, v, z)`` with the coordinates record ``m`` measures at sample ``i``: a
    measured position's value and slope from a local quadratic fit, a measured velocity's
    sample."""
    for j, d in enumerate(m.q_dofs or ()):
        y[d], y[n + d] = _local_fit(m.t, m.q[:, j], i)
    for j, d in enumerate(m.v_dofs or ()):
        y[n + d] = float(m.v[i, j])
    return y


def _first_state(system, m):
    """The record's start ``(q, v, z)``: the known ``y0`` (with the system's initial internal
    variables unless it holds them), else measured coordinates from the data and the
    initial internal variables, 0 elsewhere."""
    n = system.n_dof
    if m.y0 is not None:
        if m.y0.shape[0] == 2 * n + system.n_internal:
            return np.asarray(m.y0, dtype=float)
        return np.concatenate([m.y0, np.asarray(system.initial_internal(), dtype=float)])
    return _with_measured(np.concatenate([np.zeros(2 * n), np.asarray(system.initial_internal(), dtype=float)]), m, 0, n)


def adaptive_solver(system):
    """The system's ``default_solver()`` with forward-mode derivatives (``diffrax.ForwardMode``:
    the fit's Jacobians are forward), or None for a system without one (RK4 then).

    A :class:`~jaxfriction.QuasiStaticSlider` states its own adaptive solver (its steps end at
    the load's jumps, :meth:`~jaxfriction.AbstractFrictionSystem.jump_times`): RK4 on the sample
    grid would take the velocity step's jump into the last stage of the step before it, a
    first-order error (4e-5 in friction at a 0.01 s step on rsfmodel's velocity step, 4x
    the parameters' standard errors at a noise of 1e-4)."""
    spec = system.default_solver()
    if spec is None:
        return None
    import dataclasses

    import diffrax

    return dataclasses.replace(as_solver(spec), adjoint=diffrax.ForwardMode())


def check_data(data, n_dof: int, weights, n_internal: int = 0, system=None, outputs: tuple = (),
               what: str = "data") -> tuple[list[Measurement], list[float]]:
    """The records as a list, with one weight each (ValueError naming ``data`` / ``weights``;
    with ``system``, a channel it cannot compute nor an input path that is not one of its
    drives)."""
    if isinstance(data, Measurement):
        data = [data]
    if not isinstance(data, (list, tuple)) or not data or not all(isinstance(m, Measurement) for m in data):
        raise ValueError(f"{what} must be a Measurement or a non-empty list of them, got {type(data).__name__}")
    for j, m in enumerate(data):
        label = f"{what}[{j}] ({m.name or 'record'})"
        if system is not None:
            for name in m.channels or {}:
                try:
                    check_channel(system, outputs, name)
                except ValueError as exc:
                    raise ValueError(f"{label} channel {name!r}: {exc}") from None
            try:
                with_inputs(system, m.input_samples())
            except ValueError as exc:
                raise ValueError(f"{label}: {exc}") from None
        if m.max_dof >= n_dof:
            raise ValueError(f"{label} measures degree of freedom {m.max_dof}, but the "
                             f"system has {n_dof}")
        if m.y0 is not None and m.y0.shape[0] not in (2 * n_dof, 2 * n_dof + n_internal):
            raise ValueError(f"{what}[{j}].y0 must have shape ({2 * n_dof},) or, with the internal variables, "
                             f"({2 * n_dof + n_internal},) for this system, got {m.y0.shape}")
    weights = [1.0] * len(data) if weights is None else list(np.atleast_1d(np.asarray(weights, dtype=float)))
    if len(weights) != len(data) or not all(np.isfinite(w) and w > 0 for w in weights):
        raise ValueError(f"weights must be {len(data)} positive numbers (one per record), got {weights}")
    return list(data), weights


def record_step(m: Measurement, dt: float | None) -> tuple[float, int]:
    """``(h, n_sub)``: the RK4 step of record ``m`` and the steps per sample interval.

    ``h = interval / ceil(interval / dt)`` divides the sample interval; without ``dt`` it is
    the sample interval, or the finest interval of the record's inputs where they are sampled
    faster (a decimated record, :meth:`~jaxfriction.Measurement.decimate`)."""
    interval = m.interval
    if dt is None and m.inputs is not None:
        dt = float(np.min(np.diff(m.input_t)))  # type: ignore[arg-type, type-var]
    n_sub = 1 if dt is None else max(1, math.ceil(interval / float(dt) * (1 - 1e-9)))
    return interval / n_sub, n_sub


def record_inputs(system, m: Measurement) -> dict:
    """The record's inputs as :class:`~jaxfriction.Sampled` drives by path."""
    return {path: Sampled(m.input_t, values) for path, values in (m.inputs or {}).items()}  # type: ignore[arg-type]


def build_problem(system: AbstractFrictionSystem, names: tuple[str, ...], p0: list[float], parsed: list,
                  data: list[Measurement], weights: list[float], *, segments: list[int], dt: float | None,
                  velocity_weight: float, continuity_weight: float, outputs: tuple = (),
                  constraints: tuple = (), constraint_weight: float = 1e4) -> Problem:
    """The :class:`Problem` of a fit.

    Args:
        system: the template system with the initial guess set.
        names: the fitted paths; ``p0`` their initial values; ``parsed`` their
            :func:`parse_bounds`.
        data: list of :class:`Measurement`; ``weights`` one per record.
        segments: shooting segments per record (list of ints).
        outputs: the user's channel functions, ``(name, fn)`` pairs.
        constraints: ``(name, margin)`` pairs, ``margin(system) >= 0`` where satisfied;
            ``constraint_weight`` their penalty weight (see :func:`~jaxfriction.fit`).
        dt: largest RK4 step or None: the sample interval (the inputs' where they are
            sampled faster, :func:`record_step`), or, for a system with a
            ``default_solver()`` (:class:`~jaxfriction.QuasiStaticSlider`), that adaptive run
            with forward-mode derivatives (:func:`adaptive_solver`).
        velocity_weight, continuity_weight: the misfit's weights (see :func:`fit`).

    Raises:
        ValueError: a record too short for its segments, or fewer residuals than free
            variables (naming ``shooting_segments`` / ``data``).
    """
    records, state0, scale, defect_weight, n_data = [], [], [], [], 0
    solver = adaptive_solver(system) if dt is None else None
    for j, (m, s) in enumerate(zip(data, segments)):
        n = len(m)
        if n - 1 < MIN_SEGMENT_INTERVALS * s:
            raise ValueError(f"shooting_segments = {s} is too many for record {j} "
                             f"({m.name or 'data'}, {n} samples): each segment needs >= 2 intervals")
        interval = m.interval
        if solver is not None and s > 1:
            raise ValueError(f"shooting_segments = {s}: multiple shooting runs RK4 on a fixed step, but "
                             f"{type(system).__name__} is fitted with its adaptive default solver; give dt (the "
                             f"RK4 step) for multiple shooting, or shooting_segments=1")
        h, n_sub = (interval, 1) if solver is not None else record_step(m, dt)
        i_bounds = tuple(int(round(x)) for x in np.linspace(0, n - 1, s + 1))
        inputs = record_inputs(system, m)
        driven = with_inputs(system, inputs)
        first = _first_state(driven, m)
        s0, sc, dw = _segment_starts(driven, m, i_bounds, h, n_sub, first)
        state0 += s0
        scale += sc
        defect_weight += list(np.tile(dw[: 2 * system.n_dof + system.n_internal], s - 1)) if s > 1 else []
        records.append(Record(
            q=None if m.q is None else jnp.asarray(m.q), v=None if m.v is None else jnp.asarray(m.v),
            y0=None if m.y0 is None else jnp.asarray(first), weight=jnp.asarray(weights[j]),
            channels=None if m.channels is None else jnp.asarray(np.column_stack(list(m.channels.values()))),
            channel_names=tuple(m.channels or ()), q_dofs=m.q_dofs or (), v_dofs=m.v_dofs or (),
            t_bounds=tuple(float(m.t[0] + i * interval) for i in i_bounds), i_bounds=i_bounds,
            h=h, n_sub=n_sub, solver=solver, inputs=tuple(inputs.values()), input_paths=tuple(inputs)))
        n_data += m.n_values
    n_vars = len(names) + len(state0)
    if n_data <= n_vars:
        raise ValueError(f"data: {n_data} residuals are too few for {n_vars} free variables "
                         f"({len(names)} parameters and {len(state0)} segment states)")
    return Problem(
        system=system,
        names=tuple(names),
        kinds=tuple(k for k, _, _ in parsed),
        n_data=n_data,
        lo=jnp.asarray([b[1] for b in parsed], dtype=float),
        hi=jnp.asarray([b[2] for b in parsed], dtype=float),
        p0=jnp.asarray(p0, dtype=float),
        state0=jnp.asarray(state0, dtype=float),
        state_scale=jnp.asarray(scale, dtype=float),
        defect_weight=jnp.asarray(defect_weight, dtype=float),
        records=tuple(records),
        velocity_weight=jnp.asarray(float(velocity_weight)),
        continuity_weight=jnp.asarray(float(continuity_weight)),
        outputs=outputs,
        constraints=constraints,
        constraint_weight=float(constraint_weight),
    )
