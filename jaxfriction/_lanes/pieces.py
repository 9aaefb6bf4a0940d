"""A lane's traced pieces: what every compiled executor of the lane program runs.

:class:`LanePieces` holds one lane's fixed-step RK4 step with its forward-mode tangents, the
measures at a saved point (stick indicator, peak slip, step-rule rate, finiteness), the
transient's rate, the start state and the layout of the outputs; :class:`WindowPlan` the
grids of the transient and the window; :func:`first_measures`, :func:`merge_measures`,
:func:`final_measures` and :func:`running_max` the rules that reduce the saved points to the
window's outputs. The Pallas kernel (:mod:`jaxfriction._lanes.fused`) calls them in its time
loop; the numba program (:mod:`jaxfriction._lanes.compiled_loop`) is written from their
traces; only the window's first and last states, their tangents and the reductions leave an
executor.

The physics is the system's own ``vector_field``: the RK4 step of one lane (and its
``jax.jvp``) is traced and evaluated component by component
(:mod:`jaxfriction._lanes.componentwise`), so a user's own law or system runs in every
executor as it is written.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.extend import core as jex_core

from .._integrate.marched import rk4_stages
from .._integrate.rk4 import rk4_step
from .._integrate.stability import saved_state_rate
from .._laws.vector import safe_norm
from .._observables.stick import STICK_TOL
from .componentwise import Componentwise, Unsupported, cells_of, is_concrete, traced_cells


@dataclasses.dataclass(frozen=True)
class WindowPlan:
    """The fixed-step grids of one lane: a transient of ``n_pre`` steps of ``h_pre`` from
    ``t = 0`` (none when ``n_pre == 0``), then ``n_saves * every`` steps of ``h`` from
    ``t_measure``, reduced at every ``every``-th step (the saved points)."""

    n_pre: int
    h_pre: float
    t_measure: float
    n_saves: int
    every: int
    h: float


@dataclasses.dataclass(frozen=True)
class Reductions:
    """Which reductions over the window's saved points the kernel accumulates."""

    stuck: bool = False  #: trapezoidal fraction of saved points with every |slip| <= STICK_TOL
    peak: bool = False  #: largest slip speed (norm for a vector law) over saved points and contacts
    peak_tangent: bool = False  #: the tangents of ``peak`` (where the maximum is reached)
    rate: bool = False  #: largest step-rule rate (dynamic laws, exact Coulomb), window and transient


def takes_over(new, acc):
    """Where a saved point's value replaces the running maximum: ``jnp.max``'s rule (the
    larger value, and NaN once met; not Triton's ``maxnum``)."""
    return (new > acc) | jnp.isnan(new)


def running_max(new, acc):
    """The running maximum after ``new`` (:func:`takes_over`)."""
    return jnp.where(takes_over(new, acc), new, acc)


def first_measures(m: dict) -> dict:
    """The window's accumulators at its first saved point, from that point's measures ``m``
    (:attr:`LanePieces.point`'s outputs, one value per lane; ``peak_dot`` a tuple of them).
    With :func:`merge_measures` and :func:`final_measures`, the reduction rules that every
    executor runs (the Pallas kernel calls them, the numba program is written from their
    trace): written once."""
    acc = {k: m[k] for k in ("finite", "stuck", "peak", "peak_dot", "rate") if k in m}
    if "stuck" in m:
        acc["stuck_first"] = m["stuck"]
    return acc


def merge_measures(acc: dict, m: dict) -> dict:
    """The accumulators after one more saved point: every point finite, the stick indicator
    summed, the peak slip (with its tangents where it is reached) and the step-rule rate
    as running maxima."""
    out = dict(acc, finite=acc["finite"] * m["finite"])
    if "stuck" in acc:
        out["stuck"] = acc["stuck"] + m["stuck"]
    if "peak" in acc:
        higher = takes_over(m["peak"], acc["peak"])
        out["peak"] = jnp.where(higher, m["peak"], acc["peak"])  # running_max, its condition shared
        if "peak_dot" in acc:
            out["peak_dot"] = tuple(jnp.where(higher, n, a) for n, a in zip(m["peak_dot"], acc["peak_dot"]))
    if "rate" in acc:
        out["rate"] = running_max(m["rate"], acc["rate"])
    return out


def final_measures(acc: dict, m: dict, n_saves: int) -> dict:
    """The window's reductions from the accumulators after the last saved point (whose
    measures are ``m``): the stick fraction as a trapezoid over the ``n_saves`` equal
    segments (the end points count half), as :func:`~jaxfriction.stick_fraction` forms it."""
    out = {k: v for k, v in acc.items() if k != "stuck_first"}
    if "stuck" in acc:
        out["stuck"] = (acc["stuck"] - 0.5 * (acc["stuck_first"] + m["stuck"])) / n_saves
    return out


def _slip_measures(system, t, y):
    """``(stuck, peak)`` at one saved point, as :func:`~jaxfriction.stick_mask` and
    :func:`~jaxfriction.peak_slip` compute them."""
    slip = system.slip_velocity(t, y)
    law = getattr(system, "law", None)
    stuck = jnp.all(jnp.abs(jnp.ravel(slip)) <= STICK_TOL)
    peak = jnp.max(safe_norm(slip) if law is not None and law.vector else jnp.abs(slip))
    return stuck, peak


class LanePieces:
    """The traced pieces of one lane program (built once per compilation).

    Args:
        make_system: ``make_system(shared, p) -> system`` of one lane from the values shared
            by every lane (``shared``: a list of arrays, e.g. the template system's leaves)
            and the lane's own values ``p`` ``(P,)``.
        initial_state: ``initial_state(shared, p) -> (state_size,)``, where every lane starts.
        shared_example: the shared arrays (only shapes and dtypes are used).
        n_p: the number of lane values ``P``.
        plan: the :class:`WindowPlan`.
        wrt: indices into ``p`` of the parameters to carry tangents for (forward mode).
        reductions: the :class:`Reductions` to accumulate.
        observed: ``observed(y_a, y_b, shared, p) -> outputs``, what is computed from the
            window's first and last states outside the kernel (observables, statuses), or
            None. Given, only the state components those outputs read are integrated, with
            those that the reductions read and that the step needs to advance them; the others
            (an energy book that no output reads: the input work when ``energy_residual`` is
            not asked for) keep their start value (:attr:`live`).

    Raises:
        Unsupported: the system's step cannot be evaluated component-wise (named).
    """

    def __init__(self, make_system, initial_state, shared_example, n_p, plan, wrt, reductions, observed=None,
                 analyse_live=True):
        self.plan, self.wrt, self.reductions = plan, tuple(wrt), reductions
        self.dtype = jnp.result_type(float)
        self.shared = [jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)) for x in shared_example]
        self.n_shared = sum(int(np.prod(x.shape, dtype=int)) for x in self.shared)
        self.n_p, self.n_w = int(n_p), len(self.wrt)
        basis = np.zeros((self.n_w, self.n_p), self.dtype)
        basis[np.arange(self.n_w), list(self.wrt)] = 1.0

        def with_tangents(f, primals, tangent_rows) -> tuple:
            """``f(*primals)`` (once) and its derivatives along each of the W rows (none: an
            empty ``(0, ...)`` array)."""
            if not self.n_w:
                out = f(*primals)
                return out, jnp.zeros((0,) + jnp.shape(out), jnp.result_type(out))
            return jax.vmap(lambda *d: jax.jvp(f, primals, d), out_axes=(None, 0))(*tangent_rows)

        def start(shared, p) -> tuple:
            return with_tangents(lambda p: initial_state(shared, p), (p,), (basis,))

        def step(t, h, y, shared, p, ydot) -> tuple:
            def advance(y, p) -> Any:
                y_next = rk4_step(make_system(shared, p).vector_field, t, y, h)
                return y_next if self.live is None else jnp.where(self.live, y_next, y)

            return with_tangents(advance, (y, p), (ydot, basis))

        # RK4's stage written once (rk4_stages): its rate, the next stage's state, the step's end
        def field(t, y, shared, p, ydot) -> tuple:
            return with_tangents(lambda y, p: rk4_stages(make_system(shared, p)).rate(t, y), (y, p), (ydot, basis))

        def next_stage(t, a, y, k, shared, p, ydot, kdot) -> tuple:  # the rate at the state along k over a
            def rate(y, k, p) -> Any:
                stages = rk4_stages(make_system(shared, p))
                return stages.rate(t, stages.state(y, a, k))

            return with_tangents(rate, (y, k, p), (ydot, kdot, basis))

        def finish(h, y, weighted, shared, p, ydot, weighted_dot) -> tuple:
            return with_tangents(lambda y, w, p: rk4_stages(make_system(shared, p)).finish(y, h, w), (y, weighted, p),
                                 (ydot, weighted_dot, basis))

        def point(t, y, shared, p, ydot) -> dict:
            system = make_system(shared, p)
            out: dict[str, Any] = {}
            if reductions.stuck or reductions.peak:
                stuck, peak = _slip_measures(system, t, y)
                out.update(stuck=stuck, peak=peak)
                if reductions.peak_tangent and self.n_w:
                    out["peak_dot"] = with_tangents(lambda y, p: _slip_measures(make_system(shared, p), t, y)[1],
                                                    (y, p), (ydot, basis))[1]
            if reductions.rate:
                out["rate"] = rate_at(t, y, shared, p)
            out["finite"] = jnp.all(jnp.isfinite(y if self.live is None else
                                                 jnp.stack([y[i] for i in np.flatnonzero(self.live)])))
            return out

        def rate_at(t, y, shared, p) -> Array:
            rate = saved_state_rate(make_system(shared, p), jnp.reshape(t, (1,)), y[None])
            return jnp.zeros((), y.dtype) if rate is None else rate

        t, h = jax.ShapeDtypeStruct((), self.dtype), jax.ShapeDtypeStruct((), self.dtype)
        p = jax.ShapeDtypeStruct((self.n_p,), self.dtype)
        y_shape = jax.eval_shape(initial_state, self.shared, p).shape
        self.n_y = int(np.prod(y_shape, dtype=int))
        y, ydot = jax.ShapeDtypeStruct((self.n_y,), self.dtype), jax.ShapeDtypeStruct((self.n_w, self.n_y), self.dtype)
        #: which state components are integrated (bools, ``(n_y,)``), or None: all
        self.live = None
        if observed is not None and analyse_live:
            self.live = self._live(observed, lambda *a: step(*a)[0], point, rate_at, (t, h, y, self.shared, p, ydot))
        #: the pieces as functions of one lane's arrays (for the looped program,
        #: :mod:`jaxfriction._lanes.looped`), and their example arguments; where every
        #: component is integrated, also RK4's stages (:class:`~jaxfriction._integrate.stages.Stages`):
        #: ``"field"``, the first stage's ``K`` (:attr:`n_k` numbers) with its tangents,
        #: ``"next_stage"``, a later stage's from the step's start and the previous ``K``, and
        #: ``"finish"``, the step's end, so that a program may loop over the later three
        #: stages instead of writing each
        self.functions = {"start": (start, (self.shared, p)), "step": (step, (t, h, y, self.shared, p, ydot)),
                          "point": (point, (t, y, self.shared, p, ydot)), "rate_at": (rate_at, (t, y, self.shared, p))}
        #: the size of a stage's ``K`` (the state's, or more where the law's states are marched)
        self.n_k = int(jax.eval_shape(lambda t, y, shared, p: rk4_stages(make_system(shared, p)).rate(t, y),
                                      t, y, self.shared, p).shape[0])
        if self.live is None:
            k, kdot = jax.ShapeDtypeStruct((self.n_k,), self.dtype), jax.ShapeDtypeStruct((self.n_w, self.n_k), self.dtype)
            self.functions.update(field=(field, (t, y, self.shared, p, ydot)),
                                  next_stage=(next_stage, (t, h, y, k, self.shared, p, ydot, kdot)),
                                  finish=(finish, (h, y, k, self.shared, p, ydot, kdot)))
        self.start = Componentwise(start, self.shared, p)
        self.step = Componentwise(step, t, h, y, self.shared, p, ydot)
        self.point = Componentwise(point, t, y, self.shared, p, ydot)
        self.rate_at = Componentwise(rate_at, t, y, self.shared, p)
        self.outputs = self._layout()

    def _live(self, observed, step, point, rate_at, specs):
        """The state components that the outputs need (see ``observed``), as a bool array, or
        None when all are (or when a piece cannot be traced component-wise). A component is
        needed when ``observed``, the saved-point reductions or the transient's rate read
        it, or when the step of a needed component reads it."""
        t, h, y, shared, p, ydot = specs
        n = self.n_y
        ends = jax.ShapeDtypeStruct((2 * n,), self.dtype)
        needed = components_read(lambda yy, shared, p: observed(yy[:n], yy[n:], shared, p), (ends, shared, p))
        if needed is None or len({i % n for i in needed}) == n:  # e.g. energy_residual: every book
            return None

        def reduced(y, t, shared, p, ydot) -> dict:  # the finiteness check follows the live components
            return {k: v for k, v in point(t, y, shared, p, ydot).items() if k != "finite"}

        pieces = [components_read(reduced, (y, t, shared, p, ydot))]
        if self.reductions.rate:
            pieces.append(components_read(lambda y, t, shared, p: rate_at(t, y, shared, p), (y, t, shared, p)))
        if any(r is None for r in pieces):
            return None
        live = {i % n for i in needed}.union(*pieces)
        while len(live) < n:  # close under the step: what advancing the live components reads
            order = sorted(live)

            def advanced(y, t, h, shared, p, ydot, order=order) -> list:
                y_next = step(t, h, y, shared, p, ydot)
                return [y_next[i] for i in order]

            reads = components_read(advanced, (y, t, h, shared, p, ydot))
            if reads is None:
                return None
            if reads <= live:
                break
            live |= reads
        return None if len(live) == n else np.isin(np.arange(n), sorted(live))

    @functools.cached_property
    def lane_operations(self) -> int:
        """Per-lane scalar operations of one step, counted on its array-level trace (each
        operation on a lane's values counts its output's size; a dot product its output's
        size times twice the contracted size; a reduction its operand's size; operations
        on the shared values and constants alone count nothing): what the program written
        as one expression per component would write before it folds and merges equal
        expressions, and costs a cheap trace where writing it costs seconds."""
        varying = [True, True, True] + [False] * len(self.shared) + [True, True]  # t, h, y, shared..., p, ydot
        return _lane_operations(self.step.closed.jaxpr, varying)

    def operations_per_step(self, block: int = 2) -> dict:
        """Per-lane operations of one RK4 step (with tangents), by primitive name: the
        arithmetic the kernel does per lane and step (shared and constant values excluded),
        for the throughput-to-peak ratio of ``scripts/benchmarks/bench_gpu.py``."""
        from .componentwise import count_operations

        counts = {}

        def trace(shared_flat, p_rows) -> Any:
            shared, p = self.shared_cells(shared_flat), self.lane_cells(p_rows)
            y, ydot = self.start(shared, p)
            y, ydot = (traced_cells([lane_block(c, self.dtype, block) for c in np.ravel(x)], x.shape) for x in (y, ydot))
            t = traced_cells([jnp.zeros((), self.dtype)], ())
            counts.update(count_operations(self.step, t, cells_of(1e-2, self.dtype), y, shared, p, ydot)[1])
            return jnp.zeros(())

        jax.make_jaxpr(trace)(jnp.zeros(max(self.n_shared, 1), self.dtype), jnp.zeros((self.n_p, block), self.dtype))
        return counts

    def shared_cells(self, flat):
        """The shared arrays as cells, from their flat concatenation (a ref or an array)."""
        shared, offset = [], 0
        for x in self.shared:
            size = int(np.prod(x.shape, dtype=int))
            shared.append(traced_cells([flat[offset + k].astype(x.dtype) for k in range(size)], x.shape))
            offset += size
        return shared

    def lane_cells(self, rows):
        """The lane values ``p`` as cells, one ``(block,)`` row each (a ref or an array)."""
        return traced_cells([rows[i, :] for i in range(self.n_p)], (self.n_p,))

    def _layout(self):
        """Output rows: name -> (first row, shape per lane)."""
        shapes = {"y_a": (self.n_y,), "y_b": (self.n_y,), "finite": ()}
        if self.n_w:
            shapes.update(ya_dot=(self.n_w, self.n_y), yb_dot=(self.n_w, self.n_y))
        if self.reductions.stuck:
            shapes["stuck"] = ()
        if self.reductions.peak:
            shapes["peak"] = ()
            if self.reductions.peak_tangent and self.n_w:
                shapes["peak_dot"] = (self.n_w,)
        if self.reductions.rate:
            shapes["rate"] = ()
            if self.plan.n_pre:
                shapes["rate_pre"] = ()
        rows, start = {}, 0
        for name, shape in shapes.items():
            rows[name] = (start, shape)
            start += int(np.prod(shape, dtype=int))
        return rows

    @property
    def n_out(self) -> int:
        return sum(int(np.prod(s, dtype=int)) for _, s in self.outputs.values())


def _lane_operations(jaxpr, varying: list[bool]) -> int:
    """:attr:`LanePieces.lane_operations` of ``jaxpr`` whose inputs vary by lane where ``varying``."""
    lane_vars = {v for v, x in zip(jaxpr.invars, varying) if x}
    count = 0
    for eqn in jaxpr.eqns:
        reads = [not isinstance(v, jex_core.Literal) and v in lane_vars for v in eqn.invars]
        if not any(reads):
            continue
        lane_vars.update(eqn.outvars)
        inner = [x for value in eqn.params.values() for x in (value if isinstance(value, tuple) else (value,))
                 if isinstance(x, (jex_core.ClosedJaxpr, jex_core.Jaxpr))]
        if inner:
            count += sum(_lane_operations(getattr(x, "jaxpr", x), reads) for x in inner)
            continue
        size = sum(int(np.prod(v.aval.shape, dtype=int)) for v in eqn.outvars)
        if eqn.primitive.name == "dot_general":
            (contracted, _), _ = eqn.params["dimension_numbers"]
            size *= 2 * int(np.prod([eqn.invars[0].aval.shape[i] for i in contracted], dtype=int))
        elif eqn.primitive.name.startswith("reduce_"):
            size = int(np.prod(eqn.invars[0].aval.shape, dtype=int))
        count += size
    return count


def components_read(fn, example_args) -> set[int] | None:
    """The indices of the components of ``fn``'s first argument (a vector) that its outputs
    read, or None when ``fn`` has an operation without a component-wise rule.

    ``fn`` is evaluated component-wise (:class:`~jaxfriction._lanes.componentwise.Componentwise`)
    on one traced scalar per component of every argument, so each operation of the trace
    acts on scalars; the trace is then walked back from its outputs.

    Args:
        fn: ``fn(*args)`` -> a pytree of arrays.
        example_args: shapes and dtypes of the arguments (``jax.ShapeDtypeStruct`` pytrees).

    Returns:
        A set of indices into the first argument's flattened components, or None. An
        operation whose result is unused counts for nothing; ``x * 0`` still reads ``x``.
    """
    try:
        piece = Componentwise(fn, *example_args)
    except Unsupported:
        return None
    leaves, tree = jax.tree.flatten(example_args)
    sizes = [int(np.prod(leaf.shape, dtype=int)) for leaf in leaves]

    def flat(*scalars) -> list:
        cells, at = [], 0
        for leaf, size in zip(leaves, sizes):
            cells.append(traced_cells(list(scalars[at: at + size]), leaf.shape))
            at += size
        out = piece(*jax.tree.unflatten(tree, cells))
        leaves_out = jax.tree.leaves(out, is_leaf=lambda x: isinstance(x, np.ndarray))
        return [c for leaf in leaves_out for c in np.ravel(leaf) if not is_concrete(c)]

    specs = [jax.ShapeDtypeStruct((), leaf.dtype) for leaf, size in zip(leaves, sizes) for _ in range(size)]
    jaxpr = jax.make_jaxpr(flat)(*specs).jaxpr
    read = {v for v in jaxpr.outvars if not isinstance(v, jex_core.Literal)}
    for eqn in reversed(jaxpr.eqns):
        if any(v in read for v in eqn.outvars):
            read.update(v for v in eqn.invars if not isinstance(v, jex_core.Literal))
    return {i for i, v in enumerate(jaxpr.invars[: sizes[0]]) if v in read}


def lane_block(cell, dtype, block):
    """A cell as a ``(block,)`` array of ``dtype`` (loop carries need one type and shape)."""
    cell = jnp.asarray(cell, dtype) if is_concrete(cell) else cell.astype(dtype)
    return jnp.broadcast_to(cell, (block,))
