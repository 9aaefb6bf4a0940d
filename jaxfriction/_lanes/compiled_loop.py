"""The lane program's pieces emitted as Python source and compiled by numba, for CPUs.

On a CPU, XLA runs a small-state loop op by op (``vmap`` of ``lax.scan``), far below a
hand-written compiled loop, and Pallas has no CPU backend. But the compiled executors'
component-wise evaluation (:mod:`jaxfriction._lanes.componentwise`) already reduces a
lane's RK4 step, its forward-mode tangents and its saved-point reductions to scalar
operations on cells. Here those pieces of a :class:`~jaxfriction._lanes.pieces.LanePieces`
are traced once more, on a block of ``L`` lanes, into flat jaxprs whose every equation is an
elementwise operation on a shared scalar (shape ``()``: the time, the template's fixed
parameters, a forcing shared by every lane) or on the block's lanes (shape ``(L,)``), and
each jaxpr is written out as Python source by :class:`~jaxfriction._lanes.source_writer.Writer`:
the shared operations once per step, the lane operations in a loop over the block's lanes
(which LLVM vectorizes). Within a piece an expression is written once (an RK4 step's jaxpr
evaluates e.g. ``1 / (mu N)`` at every stage), and what depends on the lane's parameters and
the shared values only is written once per block for all pieces. A system of many contacts is
traced at the level of its arrays instead and written as loops over them
(:mod:`jaxfriction._lanes.looped`). The whole time loop (transient, window, reductions at the
saved points, on :class:`~jaxfriction._lanes.pieces.WindowPlan`'s grids) is one loop over the
steps around the pieces, each piece written once, in one function ``run``
(:mod:`jaxfriction._lanes.time_loop`), and numba compiles it (IEEE arithmetic except the
contraction of ``a * b + c`` to a fused multiply-add, as XLA:CPU compiles it); Python threads
run its blocks of lanes in parallel (see :class:`~jaxfriction._lanes.numba_program.Program`).

This module traces the pieces and chooses the program's form (one expression per component,
loops, RK4's later stages in a loop past :data:`STAGED_LINES`).

The physics is still the system's own ``vector_field``, traced: nothing is written twice.
An operation with no scalar form here (e.g. ``erf_inv``) raises
:class:`~jaxfriction._lanes.componentwise.Unsupported` naming it.

The source is written to a file named by its hash in the cache folder
(``$JAXFRICTION_CACHE_DIR/compiled_loop``, else ``$XDG_CACHE_HOME/jaxfriction/compiled_loop``, else
``~/.cache/jaxfriction/compiled_loop``) and compiled with ``cache=True``: a second sweep of the same
structure, in this process or a later one, compiles nothing (:mod:`jaxfriction._lanes.numba_program`:
the compile, the cache and the threads, apart from the writing of the program here).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .componentwise import is_concrete, traced_cells
from .numba_program import load
from .source_writer import Writer
from .time_loop import one_lane, program_source

#: Lanes per block: the inner loop LLVM vectorizes (16 doubles: two AVX-512 or four AVX2 registers).
LANES = 16


def _block_arg(dtype, lanes):
    return jax.ShapeDtypeStruct((lanes,), dtype)


def _trace(fn, scalar_specs, lane_specs):
    """The flat jaxpr of ``fn(scalars, lanes)`` (lists of traced scalars and ``(L,)`` values)."""
    n = len(scalar_specs)

    def flat(*args):
        out = fn(list(args[:n]), list(args[n:]))
        return [jnp.asarray(c) if is_concrete(c) else c for c in out]

    return jax.make_jaxpr(flat)(*scalar_specs, *lane_specs)


def _flatten_cells(tree) -> list:
    return [c for leaf in jax.tree.leaves(tree, is_leaf=lambda x: isinstance(x, np.ndarray)) for c in np.ravel(leaf)]


class CompiledLoop:
    """A :class:`~jaxfriction._lanes.pieces.LanePieces` emitted as a numba program.

    Args:
        fused: the traced pieces (start, step, saved-point reductions, output layout).
        lanes: lanes per block (the vectorized inner loop).
        compile: compile the program (False: only trace and write its source).
        looped: write the pieces as loops over each lane's arrays
            (:mod:`jaxfriction._lanes.looped`: a program whose size does not grow with the
            state, for many contacts) instead of one expression per component.

    Attributes:
        source: the Python source of the program (``run(shared, p, out)``).
        run: the compiled program: ``shared`` ``(S,)``, ``p`` ``(P, B)`` lane values, ``out``
            ``(rows, B)``, written (rows as ``fused.outputs``); ``B`` a multiple of ``lanes``.
        compile_seconds: the time spent tracing, writing and compiling (or loading) it (waits
            for the compilation, which runs in a thread of its own: see :class:`~jaxfriction._lanes.numba_program.Program`).

    Raises:
        Unsupported: an operation with no scalar form in the emitted program (named).
    """

    def __init__(self, fused, lanes: int = LANES, compile: bool = True, looped: bool = False):
        import time

        began = time.perf_counter()
        self.fused, self.lanes, self.looped = fused, int(lanes), bool(looped)
        self.dtype = np.dtype(fused.dtype)
        #: the later RK4 stages written once and looped over (a looped program of more than
        #: :data:`STAGED_LINES` lines written out, where the system's step allows it)
        self.stages = False
        if self.looped:
            self.source = self._looped_source(stages=False)
            if self.source.count("\n") > STAGED_LINES and "field" in fused.functions:
                self.source = self._looped_source(stages=True)
        else:
            self.source = self._source()
        if self.lanes == 1:
            self.source = one_lane(self.source)
        self.run = load(self.source, self.dtype) if compile else None
        self._trace_seconds = time.perf_counter() - began

    @property
    def compile_seconds(self) -> float:
        return self._trace_seconds + (self.run.compiled()[1] if self.run is not None else 0.0)

    # -- tracing --------------------------------------------------------------------------
    def _specs(self):
        f, dtype, lanes = self.fused, self.dtype, self.lanes
        shared = [jax.ShapeDtypeStruct((), x.dtype) for x in f.shared for _ in range(int(np.prod(x.shape, dtype=int)))]
        return shared, [_block_arg(dtype, lanes)] * f.n_p

    def _shared_cells(self, scalars):
        out, offset = [], 0
        for x in self.fused.shared:
            size = int(np.prod(x.shape, dtype=int))
            out.append(traced_cells(scalars[offset: offset + size], x.shape))
            offset += size
        return out

    def _source(self) -> str:
        f, dtype = self.fused, self.dtype
        n_y, n_w, n_p = f.n_y, f.n_w, f.n_p
        writer = Writer(dtype)
        shared_specs, p_specs = self._specs()
        n_s = len(shared_specs)
        t_spec = jax.ShapeDtypeStruct((), dtype)
        lane = _block_arg(dtype, self.lanes)
        n_c = n_y * (1 + n_w)

        def cells_in(scalars, lanes_in, with_t):
            t = traced_cells([scalars[0]], ()) if with_t else None
            shared = self._shared_cells(scalars[1:] if with_t else scalars)
            p = traced_cells(lanes_in[:n_p], (n_p,))
            rest = lanes_in[n_p:]
            y = traced_cells(rest[:n_y], (n_y,)) if rest else None
            ydot = traced_cells(rest[n_y:n_c], (n_w, n_y)) if rest else None
            return t, shared, p, y, ydot

        def start(scalars, lanes_in) -> list:
            _, shared, p, _, _ = cells_in(scalars, lanes_in, False)
            return _flatten_cells(f.start(shared, p))

        def step(scalars, lanes_in) -> list:  # h traced: one step function for the transient and the window
            t, shared, p, y, ydot = cells_in(scalars[:1] + scalars[2:], lanes_in, True)
            return _flatten_cells(f.step(t, traced_cells([scalars[1]], ()), y, shared, p, ydot))

        point_names: list[tuple[str, int]] = []

        def point(scalars, lanes_in) -> list:
            t, shared, p, y, ydot = cells_in(scalars, lanes_in, True)
            out = f.point(t, y, shared, p, ydot)
            point_names[:] = [(k, int(np.size(v))) for k, v in out.items()]
            return [c for v in out.values() for c in np.ravel(v)]

        def rate(scalars, lanes_in) -> list:
            t, shared, p, y, _ = cells_in(scalars, lanes_in, True)
            return _flatten_cells(f.rate_at(t, y, shared, p))

        def step_and_rate(scalars, lanes_in) -> list:  # the rate at (t, y), then the step from there
            t, shared, p, y, _ = cells_in(scalars[:1] + scalars[2:], lanes_in, True)
            return step(scalars, lanes_in) + _flatten_cells(f.rate_at(t, y, shared, p))

        s_names = [f"s{i}" for i in range(n_s)]
        p_names = [f"p{i}" for i in range(n_p)]
        c_names = [f"c{i}" for i in range(n_c)]
        pieces = {}
        pieces["start"] = writer.write(_trace(start, shared_specs, p_specs), s_names + p_names, hoist=False)
        writer.invariant.update(s_names + p_names)
        # a transient judged at every step: its rate and the step in one lane loop, where the
        # rate's evaluation of the vector field is the step's first stage (written once)
        self.dense_rate = bool(f.plan.n_pre and "rate_pre" in f.outputs and f.plan.every == 1)
        pieces["step"] = writer.write(_trace(step_and_rate if self.dense_rate else step,
                                             [t_spec, t_spec] + shared_specs, p_specs + [lane] * n_c),
                                      ["t", "h"] + s_names + p_names + c_names)
        pieces["point"] = writer.write(_trace(point, [t_spec] + shared_specs, p_specs + [lane] * n_c),
                                       ["tp"] + s_names + p_names + c_names)
        if f.plan.n_pre and "rate_pre" in f.outputs:
            pieces["rate"] = writer.write(_trace(rate, [t_spec] + shared_specs, p_specs + [lane] * n_y),
                                          ["tq"] + s_names + p_names + c_names[:n_y])
        scalars = [(f"s{i}", i, np.dtype(spec.dtype)) for i, spec in enumerate(shared_specs)]
        return program_source(f, writer, pieces, point_names, n_c, scalars, lanes=self.lanes, looped=False,
                              dense_rate=self.dense_rate)

    def _looped_source(self, stages: bool) -> str:
        """The program with every piece written as loops over the lane's arrays (``stages``:
        the later RK4 stages written once, in a loop over them)."""
        from .looped import Piece
        from .looped_values import Buffer, Lane, Uniform

        f, dtype = self.fused, self.dtype
        n_y, n_w, n_p = f.n_y, f.n_w, f.n_p
        n_c = n_y * (1 + n_w)
        writer = Writer(dtype)
        shared, at, shared_scalars = [], 0, []
        for x in f.shared:
            size = int(np.prod(x.shape, dtype=int))
            if not x.shape:
                shared_scalars.append((f"s{at}", at, np.dtype(x.dtype)))
                shared.append(Uniform(lambda e, name=f"s{at}": name, 1, True, invariant=True))
                writer.types[f"s{at}"] = np.dtype(x.dtype)
            else:
                shared.append(Uniform(lambda e, at=at, dt=x.dtype: writer.cast(f"S[{at} + {e}]", dt), size,
                                      invariant=True))
            at += size

        def lane(array, row, size):
            return Lane(Buffer(size, dtype, -1, array=array, row=row), 0, size)

        p, y, ydot = lane("PB", 0, n_p), lane("C", 0, n_y), lane("C", n_y, n_y * n_w)
        for name in ("t", "h", "tp", "tq"):
            writer.types[name] = dtype

        def scalar(name):
            return Uniform(lambda e: name, 1, True)

        def piece(fn, args, inputs):
            closed = jax.make_jaxpr(fn)(*args)
            flat = []
            for x, arg in zip(inputs, args):
                flat.extend(x if isinstance(arg, list) else [x])
            return Piece(writer, closed, flat)

        fns = f.functions
        # the later RK4 stages written once (``stage_loop`` in ``_program``); the transient's
        # rate is then its own piece at every step of the transient (written out, it shares
        # the first stage's evaluation)
        self.stages = stages
        self.dense_rate = bool(f.plan.n_pre and "rate_pre" in f.outputs and f.plan.every == 1 and not self.stages)
        start_fn, start_args = fns["start"]
        step_fn, step_args = fns["step"]
        point_fn, point_args = fns["point"]
        rate_fn, rate_args = fns["rate_at"]
        pieces = {"start": piece(start_fn, start_args, [shared, p])}
        if self.stages:
            n_k = f.n_k
            for name in ("ts", "ha"):
                writer.types[name] = dtype
            for name, inputs in (
                    ("field", [scalar("t"), y, shared, p, ydot]),
                    ("next_stage", [scalar("ts"), scalar("ha"), y, lane("CK", 0, n_k), shared, p, ydot,
                                    lane("CK", n_k, n_k * n_w)]),
                    ("finish", [scalar("h"), y, lane("CA", 0, n_k), shared, p, ydot, lane("CA", n_k, n_k * n_w)])):
                fn, args = fns[name]
                pieces[name] = piece(fn, args, inputs)
        elif self.dense_rate:
            def step_and_rate(t, h, y, shared, p, ydot):
                return step_fn(t, h, y, shared, p, ydot), rate_fn(t, y, shared, p)
            pieces["step"] = piece(step_and_rate, step_args, [scalar("t"), scalar("h"), y, shared, p, ydot])
        else:
            pieces["step"] = piece(step_fn, step_args, [scalar("t"), scalar("h"), y, shared, p, ydot])
        point_shapes = jax.eval_shape(point_fn, *point_args)  # flattened in sorted key order
        point_names = [(k, int(np.prod(point_shapes[k].shape, dtype=int))) for k in sorted(point_shapes)]
        pieces["point"] = piece(point_fn, point_args, [scalar("tp"), y, shared, p, ydot])
        if f.plan.n_pre and "rate_pre" in f.outputs:
            pieces["rate"] = piece(rate_fn, rate_args, [scalar("tq"), y, shared, p])
        for name, target in (("start", "C"), ("step", "CN"), ("field", "CK"), ("next_stage", "CZ"), ("finish", "CN"),
                             ("point", "M"), ("rate", "W")):
            if name in pieces:
                pieces[name].store(target, dtype)
        return program_source(f, writer, pieces, point_names, n_c, shared_scalars, lanes=self.lanes, looped=True,
                              stages=self.stages, dense_rate=self.dense_rate)


#: A looped program longer than this (lines), written out stage by stage, is written with
#: RK4's later three stages once, in a loop over them, where the system's step allows it
#: (:meth:`CompiledLoop._looped_source`). numba's compile time follows the lines, but the
#: loop costs run time where a stage's loops are short (its weighted sum and its carried rates
#: are passes of their own), so shorter programs are written out (the trade-off measured:
#: ``docs/performance.md``, "the stages written once").
STAGED_LINES = 900

#: The longest emitted program the compiled loop runs (lines). numba's compile time grows
#: faster than the program (from about a second for the default sweep's program to minutes
#: past ten thousand lines: ``docs/performance.md``); longer programs fall back to the XLA
#: path.
MAX_SOURCE_LINES = 4000
