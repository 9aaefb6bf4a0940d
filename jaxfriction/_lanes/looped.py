"""A lane program that loops over a lane's arrays: its size does not grow with the contacts.

The component-wise evaluation (:mod:`jaxfriction._lanes.componentwise`) writes one scalar
expression per state component, so the program of a chain of ``n`` blocks grows with ``n``
(5,018 lines at ``n = 32``, 179,408 for an Iwan joint of 1,000 sliders) and the compiler's
time with it. Here the jaxpr of one lane's piece (its RK4 step, its saved-point reductions) is
written out as loops over the lane's arrays instead, for the compiled loop's numba program:

- An elementwise equation on arrays of ``m`` elements is one line in a loop
  ``for k in range(m)``; consecutive equations on arrays of the same size share one loop
  (their intermediate values stay local to an iteration), and the inner loop runs over the
  block's ``L`` lanes as in the component-wise program (``L = 1`` drops it, and LLVM then
  vectorizes the loop over the elements).
- Data movement (slices, reshapes, concatenation, padding, scatters and gathers at constant
  indices, broadcasts) is worked out at trace time on integer labels, as the component-wise
  evaluation does, and becomes index arithmetic: a slice is a view of its operand at an
  offset (no copy); a concatenation or a pad of up to :data:`MAX_PARTS` runs stays in parts
  (:class:`Pieces`), and the elementwise equations on it run once per part, so the zeros
  that pad a chain's end blocks fold away and its rates are never gathered into one array
  (more runs than that: one copy loop per run).
- An equation joins the latest of the last :data:`LOOK_BACK` loops of its size that can read
  its operands, so the parts of consecutive equations share loops.
- A sum over a whole array (and an and/or of booleans) is added up in the element loop that
  computes the array, which is then never stored. A float sum adds with ``radd``
  (:data:`REASSOCIATE`, LLVM's ``fadd reassoc``, on that addition alone): with an IEEE
  addition the accumulator would be a chain of dependent additions that keeps LLVM from
  vectorizing the whole loop; reassociable, LLVM keeps vector partial sums, as XLA's
  vectorized reductions reorder the sum too. Every other reduction (max, min, of an input or
  a view) runs in a lane loop of its own with :data:`ACCUMULATORS` partial results.
- Values that depend on the time and the shared values only (``sin(omega t)``) are written
  once per piece, outside the lane loops; constants are folded, ``x + 0`` and ``x * 1`` are
  ``x``, and a division by a constant is a product by its reciprocal, as XLA's algebraic
  simplifier writes it on the XLA path that this program reproduces.

Measured against the XLA path and a hand-written numba loop in ``docs/performance.md``
(``scripts/benchmarks/bench_many_contacts.py``).

A value read in a later loop than the one that computes it is stored in a row of a scratch
array (``X`` per dtype, row ``r`` of lane ``j`` at ``X[r L + j]``); its rows are reused once
nothing reads it any more. The physics is still the system's own ``vector_field``, traced;
an operation without a looped form here (``cond``, loops, a gather at an index that depends
on the state) raises :class:`~jaxfriction._lanes.componentwise.Unsupported` naming it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jex_core

from .componentwise import (
    CALLS,
    ELEMENTWISE,
    IDENTITY,
    MOVEMENT,
    Unsupported,
    _fold_numpy,
    live_equations,
    reduction_identity,
)
from .looped_values import (
    Buffer,
    Const,
    Lane,
    Pieces,
    Uniform,
    element_index,
    identity_operand,
    joined,
    runs_of,
    shared_elements,
    size_of,
    view,
)

#: The binary operation that folds a reduction, as an elementwise primitive name.
_REDUCE = {"reduce_sum": "add", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "mul",
           "reduce_and": "and", "reduce_or": "or"}
#: The same reductions of a constant, by NumPy.
_NUMPY_REDUCE = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min, "reduce_prod": np.prod,
                 "reduce_and": np.all, "reduce_or": np.any}


#: Partial results of a reduction over a lane's array in a loop of its own (a power of two).
ACCUMULATORS = 4
#: The program's addition that LLVM may reassociate (``fadd reassoc``): the folded sums'
#: only, every other operation keeps IEEE order.
REASSOCIATE = "radd"
#: How many loops back an equation looks for a loop of its size that can read its operands.
LOOK_BACK = 12
#: A movement whose result would have more parts than this is copied into one buffer (an
#: interleaving scatter would otherwise run every later equation element by element).
MAX_PARTS = 16


@dataclasses.dataclass
class _Loop:
    kind: str  # "lane" or "elem"
    size: int
    lines: list
    seen: dict = dataclasses.field(default_factory=dict)  # expression -> its buffer
    #: joined by nothing else: a loop with an inner loop (a reduction over some axes, a
    #: product), which LLVM does not vectorize, so equations that could be are kept out of it
    alone: bool = False
    #: reductions folded in this loop as it computes their operands: ``(result, binary
    #: expression of the accumulator "{acc}" and the element, identity)``
    folds: list = dataclasses.field(default_factory=list)


_TOKEN = re.compile(r"\u27e6(\d+)\|(-?\d+)\|([^\u27e7]*)\u27e7")


class Piece:
    """One piece of the program (start, step, saved point, rate) written as loops.

    Args:
        writer: the program's :class:`~jaxfriction._lanes.source_writer.Writer`
            (constants, scalar expressions, names).
        closed: the piece's closed jaxpr (one lane).
        inputs: one descriptor per input variable (:class:`Lane` of an input
            :class:`Buffer`, :class:`Uniform`).

    Raises:
        Unsupported: an operation without a looped form (named).
    """

    def __init__(self, writer, closed, inputs):
        self.writer = writer
        self.uniform_lines: list[str] = []
        self.loops: list[_Loop] = []
        self.buffers: list[Buffer] = []
        self._ids: dict = {}  # id(buffer) -> its index in ``buffers``
        self._seen_uniform: dict = {}  # (what, expression) -> name: the shared values of this piece
        self._reduced: dict = {}  # (reduction, operand) -> its result (a sum or a product the trace repeats)
        self.outputs = self._lower(closed.jaxpr, closed.consts, inputs)

    # -- values ---------------------------------------------------------------------------
    def buffer(self, size, dtype, loop, local=None) -> Buffer:
        b = Buffer(int(size), np.dtype(dtype), loop, local)
        self._ids[id(b)] = len(self.buffers)
        self.buffers.append(b)
        return b

    def _token(self, b: Buffer, offset: int, stride) -> str:
        """A placeholder for element ``offset + stride k`` of ``b`` (``stride``: an int, or an
        index expression added to ``offset``), replaced by its array read once rows are
        allocated (:meth:`render`)."""
        if id(b) not in self._ids:  # an input
            self._ids[id(b)] = len(self.buffers)
            self.buffers.append(b)
        if not isinstance(stride, str):
            stride = "0" if stride == 0 else ("k" if stride == 1 else f"{stride} * k")
        return f"\u27e6{self._ids[id(b)]}|{offset}|{stride}\u27e7"

    def _const_array(self, value, table_ok=False) -> str | None:
        """The name of a constant array of the program holding ``value`` (flattened), or None
        where all its elements are equal (read as one constant; ``table_ok``: named anyway)."""
        value = np.ravel(np.asarray(value))
        flat = value
        if not table_ok and (np.all(flat == flat[0]) or np.all(np.isnan(flat))):
            return None
        for name, known in self.writer.arrays.items():
            if known.dtype == value.dtype and known.shape == value.shape and np.array_equal(known, value,
                                                                                               equal_nan=True):
                return name
        arrays = self.writer.arrays
        name = f"KA{len(arrays)}"
        arrays[name] = value
        return name

    def readable(self, value, at: int) -> bool:
        """Whether ``value`` can be read in loop ``at`` (placed there)."""
        if not isinstance(value, Lane):
            return True
        b, loop = value.buffer, self.loops[at]
        if b.loop < at:
            return True
        if b.loop > at or b.local is None:
            return False
        if loop.kind == "elem":
            return value.stride == 1 and value.offset == 0 and value.size == b.size == loop.size
        return b.size == 1 and value.offset == 0

    def read(self, value, at: int, elem: str | None = None) -> str:
        """The expression of ``value`` in loop ``at``: element ``elem`` (an index
        expression: ``"k"`` in an element loop) or the scalar."""
        if isinstance(value, Const):
            v = np.asarray(value.value)
            if v.size == 1 or elem is None:
                return self.writer.constant(np.ravel(v)[0] if v.size else v, v.dtype)
            name = self._const_array(v)
            return self.writer.constant(np.ravel(v)[0], v.dtype) if name is None else f"{name}[{elem}]"
        if isinstance(value, Uniform):
            return value.expr("0" if (value.scalar or elem is None or value.size == 1) else elem)
        b = value.buffer
        b.last = max(b.last, at)
        if b.loop == at and b.local is not None:
            return b.local
        b.stored = True
        stride = 0 if (elem is None or value.stride == 0 or value.size == 1) else value.stride
        return self._token(b, value.offset, stride)

    # -- loops ----------------------------------------------------------------------------
    def _open(self, kind, size) -> int:
        if kind == "elem":
            self.loops.append(_Loop("lane", 1, []))  # its prologue (reductions' starting values)
        self.loops.append(_Loop(kind, size, []))
        return len(self.loops) - 1

    def place(self, kind, size, operands) -> int:
        """The loop where an equation of ``kind`` (``"lane"``: lane scalars, ``"elem"``: arrays
        of ``size``) reading ``operands`` goes: the latest of the last :data:`LOOK_BACK` loops
        of its kind and size where its operands can be read (a loop of one part of a
        :class:`Pieces` value is thus joined by the next equation's same part), else the open
        element loop's prologue (lane scalars computed from earlier loops), else a new loop."""
        last = len(self.loops) - 1
        for at in range(last, max(last - LOOK_BACK, -1), -1):
            loop = self.loops[at]
            if loop.kind == kind and (kind == "lane" or loop.size == size) and not loop.alone \
                    and all(self.readable(v, at) for v in operands):
                return at
            if any(isinstance(v, Lane) and v.buffer.loop >= at for v in operands):
                break  # an operand is computed here or later: no earlier loop can read it
        if last >= 0 and kind == "lane" and self.loops[last].kind == "elem" \
                and all(self.readable(v, last - 1) for v in operands):
            return last - 1
        return self._open(kind, size)

    def _shared(self, key, invariant: bool, dtype, write) -> str:
        """The name of a value shared by every lane, written once (``key``: what it is):
        ``write(name)`` gives its lines, placed once per call of the program where the value
        is ``invariant`` (before the time loop), else once per piece (before its lane loops)."""
        seen = self.writer.hoisted if invariant else self._seen_uniform
        name = seen.get(key)
        if name is None:
            name = seen[key] = self.writer.name()
            self.writer.types[name] = dtype
            (self.writer.hoisted_shared if invariant else self.uniform_lines).extend(write(name))
        return name

    # -- lowering -------------------------------------------------------------------------
    def _lower(self, jaxpr, consts, args) -> list:
        env: dict[Any, Any] = {}

        def read(var):
            if isinstance(var, jex_core.Literal):
                return Const(np.asarray(var.val, dtype=var.aval.dtype))
            return env[var]

        for var, c in zip(jaxpr.constvars, consts):
            env[var] = Const(np.asarray(c))
        for var, a in zip(jaxpr.invars, args):
            env[var] = a
        for eqn in live_equations(jaxpr):
            outs = self._equation(eqn, [read(v) for v in eqn.invars])
            for var, out in zip(eqn.outvars, outs):
                if not isinstance(var, jex_core.DropVar):
                    env[var] = out
        return [read(v) for v in jaxpr.outvars]

    def _equation(self, eqn, ins) -> list:
        name = eqn.primitive.name
        if name in CALLS:
            inner = eqn.params[CALLS[name]]
            if isinstance(inner, jex_core.ClosedJaxpr):
                return self._lower(inner.jaxpr, inner.consts, ins)
            return self._lower(inner, (), ins)
        if name in IDENTITY:
            return list(ins)
        if all(isinstance(x, Const) for x in ins) and name != "iota":
            # a constant made of parts (or of a movement) is kept flat: its operand's shape back
            return self._fold(eqn, [Const(np.reshape(x.value, v.aval.shape)) for x, v in zip(ins, eqn.invars)])
        if name == "iota":
            with jax.ensure_compile_time_eval():
                return [Const(np.asarray(eqn.primitive.bind(**eqn.params)))]
        if name in ELEMENTWISE:
            return [self._elementwise(eqn, ins)]
        if name in MOVEMENT:
            return [self._movement(eqn, ins)]
        if name in _REDUCE:
            return [self._reduction(eqn, ins)]
        if name == "dot_general":
            return [self._dot_general(eqn, ins)]
        raise Unsupported(f"the primitive {name!r} in a looped lane program")

    def _fold(self, eqn, ins) -> list:
        values = [x.value for x in ins]
        folded = None if eqn.primitive.multiple_results else _fold_numpy(eqn.primitive, values, eqn.params)
        if folded is not None:
            return [Const(np.asarray(folded))]
        with jax.ensure_compile_time_eval():
            out = eqn.primitive.bind(*[jnp.asarray(v) for v in values], **eqn.params)
        return [Const(np.asarray(o)) for o in (out if eqn.primitive.multiple_results else [out])]

    def _elementwise(self, eqn, ins):
        if eqn.primitive.multiple_results:
            raise Unsupported(f"the primitive {eqn.primitive.name!r} in a looped lane program")
        out = eqn.outvars[0].aval
        size = int(np.prod(out.shape, dtype=int))
        ins = [self._broadcast(x, v.aval.shape, out.shape, v.aval.dtype)
               if 1 < int(np.prod(v.aval.shape, dtype=int)) < size else x for x, v in zip(ins, eqn.invars)]
        if not any(isinstance(x, Pieces) for x in ins):
            return self._segment(eqn, ins, size, not out.shape)
        # once per part: the segments between the parts' boundaries of every operand
        bounds = sorted({0, size} | {start for x in ins if isinstance(x, Pieces) for start, _ in x.parts})
        parts = [(a, self._segment(eqn, [view(x, a, b - a) for x in ins], b - a, False))
                 for a, b in zip(bounds, bounds[1:])]
        return joined(parts, size, False)

    def _broadcast(self, x, shape, out_shape, dtype):
        """``x`` of ``shape`` broadcast along its size-1 axes to ``out_shape``: an elementwise
        primitive of equal rank broadcasts them itself (``(c, 1) * (c, n)``, a contact's slip
        times its elements' states), where the loops read operands element for element. Runs
        of the repeated elements, as a ``broadcast_in_dim`` is lowered (views, parts)."""
        n = int(np.prod(shape, dtype=int))
        parts, owners = [], []
        _own(x, n, parts, owners)
        flat = np.ravel(np.broadcast_to(np.arange(n).reshape(shape), out_shape))
        return self._assemble(runs_of([owners[int(v)] for v in flat]), parts, int(flat.size), dtype, not out_shape)

    def _segment(self, eqn, ins, size, scalar):
        """The elementwise ``eqn`` on ``size`` elements of ``ins`` (none in parts)."""
        if all(isinstance(x, Const) for x in ins):
            return self._fold(eqn, ins)[0]
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        if eqn.primitive.name == "div" and isinstance(ins[1], Const) and dtype.kind == "f":
            # by a constant: a product by its reciprocal, as XLA's algebraic simplifier
            # rewrites it (``A / Const => A * (1 / Const)``) on the path this program matches
            with np.errstate(all="ignore"):
                inverse = np.asarray(1, dtype) / np.asarray(ins[1].value, dtype)
            eqn, ins = _Binary("mul", dtype), [ins[0], Const(inverse)]
        kept = identity_operand(eqn.primitive.name, ins)
        if kept is not None:
            return kept
        lane = [x for x in ins if isinstance(x, Lane)]
        invariant = not lane and all(isinstance(x, Const) or x.invariant for x in ins)
        if size > 1 and invariant:
            return self._shared_table(eqn, ins, size, dtype)
        if size == 1:  # one element: a lane value, no loop over elements
            if not lane and scalar:  # shared by every lane
                expr = self.writer.expression(eqn, [self.read(x, -1) for x in ins])
                local = self._shared(("scalar", expr), invariant, dtype, lambda name: [f"{name} = {expr}"])
                return Uniform(lambda e, local=local: local, 1, True, invariant=invariant)
            at = self.place("lane", 1, lane)
            args = [self.read(x, at) for x in ins]
        else:
            at = self.place("elem", size, lane)
            args = [self.read(x, at, "k") for x in ins]
        expr = self.writer.expression(eqn, args)
        loop = self.loops[at]
        if expr in loop.seen:  # written in this loop already (the stages of an RK4 step repeat them)
            return Lane(loop.seen[expr], 0, size, 1, scalar)
        local = self.writer.name()
        self.writer.types[local] = dtype
        loop.lines.append(f"{local} = {expr}")
        b = loop.seen[expr] = self.buffer(size, dtype, at, local)
        return Lane(b, 0, size, 1, scalar)

    def _shared_table(self, eqn, ins, size: int, dtype) -> Uniform:
        """An elementwise equation on invariant values shared by every lane (an Iwan joint's
        slip displacements ``phi / k`` from its tables): computed into a table once per call of
        the program, instead of in the lanes' element loops, per lane, per RK4 stage and per
        step."""
        expr = self.writer.expression(eqn, [self.read(x, -1, "k") for x in ins])
        table = self._shared(("table", expr), True, dtype, lambda name: [
            f"{name} = np.empty({size}, np.{np.dtype(dtype).name})", f"for k in range({size}):", f"    {name}[k] = {expr}"])
        return Uniform(lambda e, table=table: f"{table}[{e}]", size, invariant=True)

    def _movement(self, eqn, ins):
        """Data movement worked out on integer labels of the operands' elements: the output as
        runs ``(start, length, source, first, stride)`` of the operands (of their parts where
        an operand is in :class:`Pieces`), then a view, parts, or copy loops."""
        name = eqn.primitive.name
        data = MOVEMENT[name]
        data = range(len(ins)) if data is None else data
        labelled, owners, sources, at = [], [], [], 0
        for i, (x, var) in enumerate(zip(ins, eqn.invars)):
            shape = var.aval.shape
            if i in data:
                size = int(np.prod(shape, dtype=int))
                labelled.append(np.arange(at, at + size, dtype=np.int32).reshape(shape))
                _own(x, size, sources, owners)
                at += size
            elif isinstance(x, Const):
                labelled.append(np.asarray(x.value))
            else:
                raise Unsupported(f"{name} at an index that depends on the lane's state or parameters")
        params = dict(eqn.params)
        if name == "gather" and params.get("fill_value") is not None:
            params["fill_value"] = -1
        if name == "scatter" or name == "pad":
            with jax.ensure_compile_time_eval():
                labels = np.asarray(eqn.primitive.bind(*[jnp.asarray(x) for x in labelled], **params))
        else:
            labels = None if eqn.primitive.multiple_results else _fold_numpy(eqn.primitive, labelled, params)
            if labels is None:
                with jax.ensure_compile_time_eval():
                    out = eqn.primitive.bind(*[jnp.asarray(x) for x in labelled], **params)
                labels = np.asarray(out[0] if eqn.primitive.multiple_results else out)
        if eqn.primitive.multiple_results and len(eqn.outvars) > 1:
            raise Unsupported(f"the primitive {name!r} (several results) in a looped lane program")
        flat = np.ravel(labels)
        if flat.size and (flat.min() < 0 or flat.max() >= len(owners)):
            raise Unsupported(f"{name} outside its operand")
        runs = runs_of([owners[int(v)] for v in flat])
        scalar = not eqn.outvars[0].aval.shape
        return self._assemble(runs, sources, int(flat.size), eqn.outvars[0].aval.dtype, scalar)

    def _assemble(self, runs, ins, size, dtype, scalar):
        """The value made of ``runs`` of the operands ``ins``: a constant, a view where it is
        one run of one operand, :class:`Pieces` of views where it is a few, else a new stored
        buffer filled by one copy loop per run."""
        if all(isinstance(ins[r[2]], Const) for r in runs):
            values = np.concatenate([np.ravel(ins[i].value)[first + stride * np.arange(length)]
                                     for _, length, i, first, stride in runs]) if runs else np.zeros(0, dtype)
            return Const(values.reshape(()) if scalar else values.astype(dtype))
        if len(runs) <= MAX_PARTS:
            parts = [(start, view(ins[i], first, length, stride)) for start, length, i, first, stride in runs]
            return joined(parts, size, scalar)
        return self._copy(runs, ins, size, dtype, scalar)

    def _copy(self, runs, ins, size, dtype, scalar):
        """A new stored buffer filled from ``runs`` of ``ins`` by one copy loop per run."""
        b = self.buffer(size, dtype, -2)
        b.stored, b.local = True, None
        for start, length, i, first, stride in runs:
            x = ins[i]
            if length == 1:
                at = self.place("lane", 1, [x] if isinstance(x, Lane) else [])
                src = self._element(x, at, first)
                self.loops[at].lines.append(f"{self._token(b, start, 0)} = {self.writer.cast(src, dtype)}")
            else:
                at = self._open("elem", length)
                src = self._element(x, at, f"{first} + {stride} * k" if stride != 1 else f"{first} + k", first,
                                    stride)
                self.loops[at].lines.append(f"{self._token(b, start, 1)} = {self.writer.cast(src, dtype)}")
            b.first = at if b.first is None else b.first
        b.loop = len(self.loops) - 1
        return Lane(b, 0, size, 1, scalar)

    def whole(self, x, dtype):
        """``x`` as one value: :class:`Pieces` copied into a buffer, anything else as it is."""
        if not isinstance(x, Pieces):
            return x
        return self._copy([(start, size_of(p), i, 0, 1) for i, (start, p) in enumerate(x.parts)],
                          [p for _, p in x.parts], x.size, dtype, False)

    def _element(self, x, at, e, first=None, stride=None):
        """Element ``e`` of operand ``x`` read in loop ``at`` (``first``, ``stride``: ``e`` as
        ``first + stride k`` in an element loop)."""
        if isinstance(x, Const):
            v = np.ravel(np.asarray(x.value))
            if first is None:
                return self.writer.constant(v[int(e)], v.dtype)
            name = self._const_array(v)
            return self.writer.constant(v[first], v.dtype) if name is None else f"{name}[{e}]"
        if isinstance(x, Uniform):
            return x.expr("0" if (x.scalar or x.size == 1) else e)
        b = x.buffer
        b.last = max(b.last, at)
        b.stored = True
        if first is None:
            return self._token(b, x.offset + x.stride * int(e), 0)
        return self._token(b, x.offset + x.stride * first, x.stride * stride)

    def _reduction(self, eqn, ins):
        (x,), var = ins, eqn.invars[0]
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        every_axis = tuple(eqn.params["axes"]) == tuple(range(len(var.aval.shape)))
        if isinstance(x, Pieces) and every_axis and all(isinstance(p, (Lane, Const)) for _, p in x.parts):
            # part by part, the partial results folded by the reduction's binary operation
            binary = _Binary(_REDUCE[eqn.primitive.name], dtype)
            total = None
            for _, part in x.parts:
                if isinstance(part, Const):
                    value = Const(np.asarray(_NUMPY_REDUCE[eqn.primitive.name](part.value), dtype))
                else:
                    value = self._reduction(eqn, [part])
                total = value if total is None else self._segment(binary, [total, value], 1, True)
            return total
        if isinstance(x, Uniform) and every_axis and x.size > 1:
            # a value shared by every lane (a table of the template, e.g. an Iwan joint's
            # stiffnesses): reduced once per program call where it is invariant, else once per
            # piece, before its lane loops
            binary = _Binary(_REDUCE[eqn.primitive.name], dtype)
            identity = self.writer.constant(reduction_identity(eqn.primitive.name, dtype), dtype)
            local = self._shared((eqn.primitive.name, x.expr("k")), x.invariant, dtype, lambda name: [
                f"{name} = {identity}", f"for k in range({x.size}):",
                f"    {name} = {self._accumulate(binary, name, x.expr('k'))}"])
            return Uniform(lambda e, local=local: local, 1, True, invariant=x.invariant)
        x = self.whole(x, var.aval.dtype)
        if not every_axis and isinstance(x, (Lane, Uniform)):
            return self._partial_reduction(eqn, x, dtype)
        if not isinstance(x, Lane):
            raise Unsupported(f"{eqn.primitive.name} of a value shared by every lane in a looped lane program")
        if x.size == 1:
            return dataclasses.replace(x, scalar=True)
        return self._fold_elements(eqn.primitive.name, x, dtype)

    def _fold_elements(self, name: str, x: Lane, dtype):
        """The reduction ``name`` of the lane array ``x`` into a lane scalar, in a lane loop of
        its own: :data:`ACCUMULATORS` partial results over interleaved elements, combined in a
        tree at the end. One accumulator would be a chain of dependent additions (four cycles
        each) that no compiler may reorder; XLA's vectorized reductions reorder the sum too.
        A reduction of an operand already reduced in this piece is the earlier result (the
        trace of a law may sum the same forces twice: its force and its power)."""
        key = (name, id(x.buffer), x.offset, x.stride, x.size, np.dtype(dtype))
        if key in self._reduced:
            return self._reduced[key]
        self._reduced[key] = out = self._fold_new(name, x, dtype)
        return out

    def _accumulate(self, binary, acc: str, element: str) -> str:
        """The expression that folds ``element`` into the accumulator ``acc`` by ``binary``: a
        float sum as ``radd`` (:data:`REASSOCIATE`), any other as the primitive's expression."""
        if binary.primitive.name == "add" and np.dtype(binary.outvars[0].aval.dtype).kind == "f":
            return f"{REASSOCIATE}({acc}, {element})"
        return self.writer.expression(binary, [acc, element])

    def _fold_in_loop(self, name: str, x: Lane, dtype):
        """The reduction ``name`` of ``x`` accumulated in the element loop that computes ``x``
        (one addition per element, no stored array and no loop of its own), or None where
        ``x`` is not one of that loop's results or the reduction is not a sum of numbers or
        an and/or of booleans. A float sum adds with :data:`REASSOCIATE` so that LLVM may
        keep vector partial sums and vectorize the loop (the order of the additions is the
        compiler's, as on the XLA path)."""
        b = x.buffer
        if b.local is None or b.loop < 0 or x.offset or x.stride != 1 or x.size != b.size:
            return None
        loop = self.loops[b.loop]
        if loop.kind != "elem" or loop.size != x.size or loop.alone:
            return None
        op = _REDUCE[name]
        if not ((op == "add" and dtype.kind in "fiu") or (op in ("and", "or") and dtype.kind in "biu")):
            return None
        step = self._accumulate(_Binary(op, dtype), "{acc}", b.local)
        identity = self.writer.constant(reduction_identity(name, dtype), dtype)
        out = self.buffer(1, dtype, b.loop, self.writer.name())
        self.writer.types[out.local] = dtype
        out.stored = True  # read after the loop
        loop.folds.append((out, step, identity))
        return Lane(out, 0, 1, 1, True)

    def _fold_new(self, name: str, x: Lane, dtype):
        folded = self._fold_in_loop(name, x, np.dtype(dtype))
        if folded is not None:
            return folded
        at = self.place("lane", 1, [x])
        b = x.buffer
        b.stored, b.last = True, max(b.last, at)
        binary = _Binary(_REDUCE[name], dtype)
        identity = self.writer.constant(reduction_identity(name, dtype), dtype)
        accs = [self.writer.name() for _ in range(ACCUMULATORS)]
        for a in accs:
            self.writer.types[a] = dtype
        bulk = x.size - x.size % ACCUMULATORS
        step = x.stride if x.size > 1 else 0

        def element(d):
            return self._token(b, x.offset + step * d, step)

        lines = [f"{a} = {identity}" for a in accs]
        lines += [f"for k in range(0, {bulk}, {ACCUMULATORS}):",
                  *(f"    {a} = {self.writer.expression(binary, [element(d), a])}" for d, a in enumerate(accs))]
        if bulk < x.size:
            lines += [f"for k in range({bulk}, {x.size}):",
                      f"    {accs[0]} = {self.writer.expression(binary, [element(0), accs[0]])}"]
        while len(accs) > 1:  # pairwise: (a0 + a1) + (a2 + a3)
            pairs = []
            for i in range(0, len(accs), 2):
                pair = self.writer.name()
                self.writer.types[pair] = dtype
                lines.append(f"{pair} = {self.writer.expression(binary, accs[i:i + 2])}")
                pairs.append(pair)
            accs = pairs
        self.loops[at].lines += lines
        out = self.buffer(1, dtype, at, accs[0])
        return Lane(out, 0, 1, 1, True)

    def _partial_reduction(self, eqn, x, dtype):
        """A reduction over some axes: output element ``k`` folds the operand's elements
        ``first + step k + stride r`` (``r < count``), one loop over the output with an inner
        loop over ``r``."""
        shape, axes = eqn.invars[0].aval.shape, tuple(eqn.params["axes"])
        keep = [a for a in range(len(shape)) if a not in axes]
        labels = np.transpose(np.arange(int(np.prod(shape, dtype=int))).reshape(shape), keep + list(axes))
        rows = labels.reshape(int(np.prod([shape[a] for a in keep], dtype=int)), -1)
        n_out, count = rows.shape
        first, step = int(rows[0, 0]), int(rows[1, 0] - rows[0, 0]) if n_out > 1 else 0
        stride = int(rows[0, 1] - rows[0, 0]) if count > 1 else 0
        if not np.array_equal(rows, first + step * np.arange(n_out)[:, None] + stride * np.arange(count)[None, :]):
            raise Unsupported(f"{eqn.primitive.name} over axes {axes} of {shape} in a looped lane program")
        if isinstance(x, Uniform):
            return self._uniform_partial_reduction(eqn, x, dtype, (first, step, stride, n_out, count))
        if count == 1:
            return Lane(x.buffer, x.offset + x.stride * first, n_out, x.stride * step, not eqn.outvars[0].aval.shape)
        if n_out == 1:  # every element into one (of shape (1,)): a whole reduction of a view
            out = self._fold_elements(eqn.primitive.name, Lane(x.buffer, x.offset + x.stride * first, count,
                                                                x.stride * stride), dtype)
            return dataclasses.replace(out, scalar=not eqn.outvars[0].aval.shape)
        at = self._open("elem", n_out)
        self.loops[at].alone = True  # an inner loop: nothing else would vectorize here
        x.buffer.stored, x.buffer.last = True, max(x.buffer.last, at)
        element = self._token(x.buffer, x.offset + x.stride * first, f"{x.stride * step} * k + {x.stride * stride} * r")
        acc, local = self.writer.name(), self.writer.name()
        identity = reduction_identity(eqn.primitive.name, dtype)
        self.writer.types[acc] = self.writer.types[local] = dtype
        binary = _Binary(_REDUCE[eqn.primitive.name], dtype)
        self.loops[at].lines += [f"{acc} = {self.writer.constant(identity, dtype)}", f"for r in range({count}):",
                                 f"    {acc} = {self.writer.expression(binary, [element, acc])}", f"{local} = {acc}"]
        b = self.buffer(n_out, dtype, at, local)
        return Lane(b, 0, n_out, 1, not eqn.outvars[0].aval.shape)

    def _uniform_partial_reduction(self, eqn, x: Uniform, dtype, rows: tuple) -> Uniform:
        """A reduction over some axes of a value shared by every lane (a joint's tables of
        ``(contacts, elements)``, summed per contact by the step rule): output element ``k``
        folds elements ``first + step k + stride r`` (``r < count``) of ``x``, written once per
        piece before its lane loops into an array of the piece; one element per output (one
        Jenkins element per contact) is a view of ``x``."""
        first, step, stride, n_out, count = rows
        scalar = not eqn.outvars[0].aval.shape
        if count == 1:
            return Uniform(lambda e, x=x: x.expr(element_index(first, step, e)), n_out, scalar, invariant=x.invariant)
        binary = _Binary(_REDUCE[eqn.primitive.name], dtype)
        element = x.expr(f"{first} + {step} * k + {stride} * r")
        identity = self.writer.constant(reduction_identity(eqn.primitive.name, dtype), dtype)

        def write(table) -> list[str]:
            acc = self.writer.name()
            self.writer.types[acc] = dtype
            return [f"{table} = np.empty({n_out}, np.{np.dtype(dtype).name})", f"for k in range({n_out}):",
                    f"    {acc} = {identity}", f"    for r in range({count}):",
                    f"        {acc} = {self._accumulate(binary, acc, element)}", f"    {table}[k] = {acc}"]

        table = self._shared((eqn.primitive.name, element, n_out, count), x.invariant, dtype, write)
        return Uniform(lambda e, table=table: f"{table}[{e}]", n_out, scalar, invariant=x.invariant)

    def _dot_general(self, eqn, ins):
        """``dot_general``: output element ``k`` sums ``lhs[IL[k, r]] * rhs[IR[k, r]]`` over
        the contracted elements ``r``, with the index tables ``IL``, ``IR`` worked out at
        trace time (constant arrays of the program): one loop over the output."""
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        shapes = [v.aval.shape for v in eqn.invars]
        tables = []
        for shape, contract, batch in ((shapes[0], lc, lb), (shapes[1], rc, rb)):
            free = [a for a in range(len(shape)) if a not in contract and a not in batch]
            labels = np.transpose(np.arange(int(np.prod(shape, dtype=int))).reshape(shape),
                                  list(batch) + free + list(contract))
            n_b = int(np.prod([shape[a] for a in batch], dtype=int))
            tables.append(labels.reshape(n_b, -1, int(np.prod([shape[a] for a in contract], dtype=int))))
        left, right = tables
        count = left.shape[2]
        # out[b, i, j] = sum_r lhs[left[b, i, r]] rhs[right[b, j, r]], flattened
        il = np.broadcast_to(left[:, :, None, :], (left.shape[0], left.shape[1], right.shape[1], count))
        ir = np.broadcast_to(right[:, None, :, :], (left.shape[0], left.shape[1], right.shape[1], count))
        n_out = int(np.prod(eqn.outvars[0].aval.shape, dtype=int))
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        # a shared value in parts (a transposed table: the contact modes in a modal
        # structure's generalized force) is read through its base where that is affine,
        # instead of copied into a lane buffer at every stage
        direct = [None, None]
        for i, (x, table) in enumerate(zip(ins, (il, ir))):
            shared = shared_elements(x)
            position = None if shared is None else _affine(shared[1][table].reshape(n_out, count))
            if position is not None:
                direct[i] = shared[0].expr(position)
        ins = [x if d is not None else self.whole(x, v.aval.dtype) for x, d, v in zip(ins, direct, eqn.invars)]
        factors, read = [], []
        for x, table, d in zip(ins, (il, ir), direct):
            if d is not None:
                factors.append(d)
                continue
            position = _affine(table.reshape(n_out, count))
            if position is None:  # not affine in (k, r): an index table of the program
                index = self._const_array(np.ascontiguousarray(table.reshape(-1)).astype(np.int64), table_ok=True)
                position = f"{index}[k * {count} + r]"
            if isinstance(x, Const):
                values = np.ravel(np.asarray(x.value))
                name = self._const_array(values, table_ok=True)
                factors.append(f"{name}[{position}]")
            elif isinstance(x, Uniform):
                factors.append(x.expr(position) if not (x.scalar or x.size == 1) else x.expr("0"))
            else:
                read.append(x.buffer)
                factors.append(self._token(x.buffer, x.offset, f"{x.stride} * {position}"))
        factors = [self.writer.cast(f, dtype) for f in factors]
        # the same product again (the bar's contact slips ``Phi q'``, once for the law and
        # once for the dissipation): the earlier result (its rows are kept while it is read)
        key = ("dot_general", tuple(factors), n_out, count, dtype, not eqn.outvars[0].aval.shape)
        if key in self._reduced:
            return self._reduced[key]
        at = self._open("elem", n_out)
        self.loops[at].alone = True  # an inner loop: nothing else would vectorize here
        for b in read:
            b.stored, b.last = True, max(b.last, at)
        acc, local = self.writer.name(), self.writer.name()
        self.writer.types[acc] = self.writer.types[local] = dtype
        add = self._accumulate(_Binary("add", dtype), acc, f"{factors[0]} * {factors[1]}")
        self.loops[at].lines += [f"{acc} = {self.writer.constant(0, dtype)}", f"for r in range({count}):",
                                 f"    {acc} = {add}", f"{local} = {acc}"]
        b = self.buffer(n_out, dtype, at, local)
        self._reduced[key] = out = Lane(b, 0, n_out, 1, not eqn.outvars[0].aval.shape)
        return out

    # -- output ---------------------------------------------------------------------------
    def store(self, target: str, dtype) -> int:
        """Write the outputs, flattened and concatenated, to rows ``0, 1, ...`` of ``target``;
        returns the number of rows."""
        row = 0
        for value in self.outputs:
            for start, part in (value.parts if isinstance(value, Pieces) else [(0, value)]):
                self._store(part, row + start, target, dtype)
            row += size_of(value)
        return row

    def _store(self, value, row: int, target: str, dtype):
        size = size_of(value)
        if size == 0:
            return
        if isinstance(value, Lane) and value.buffer.local is not None \
                and value.offset == 0 and value.stride == 1 and value.size == value.buffer.size \
                and self.loops[value.buffer.loop].kind == ("lane" if size == 1 else "elem"):
            at = value.buffer.loop  # written where it is computed
            index = f"{row}" if size == 1 else f"{row} + k"
            self.loops[at].lines.append(f"{target}[{_index(index)}] = "
                                        f"{self.writer.cast(value.buffer.local, dtype)}")
        elif size == 1:
            at = self.place("lane", 1, [value] if isinstance(value, Lane) else [])
            src = self._element(value, at, 0)
            self.loops[at].lines.append(f"{target}[{_index(str(row))}] = {self.writer.cast(src, dtype)}")
        else:
            at = self._open("elem", size)
            src = self._element(value, at, "k", 0, 1) if not isinstance(value, Lane) else \
                self._token(value.buffer, value.offset, value.stride)
            if isinstance(value, Lane):
                value.buffer.stored, value.buffer.last = True, max(value.buffer.last, at)
            self.loops[at].lines.append(f"{target}[{_index(f'{row} + k')}] = {self.writer.cast(src, dtype)}")

    def render(self, indent: int, lanes: int, rows: dict) -> list[str]:
        """The piece's lines at ``indent``: its shared lines, then its loops. Scratch rows are
        allocated here (``rows``: dtype -> rows used so far by the program, updated to the
        largest any piece needs) and tokens replaced by array reads."""
        free: dict[str, list[tuple[int, int]]] = {}
        used: dict[str, int] = {}
        order = [b for b in self.buffers if b.stored and b.array is None]
        by_loop: dict[int, list[Buffer]] = {}
        for b in order:
            by_loop.setdefault(b.loop if b.first is None else b.first, []).append(b)
        # rows: first fit among rows freed by buffers whose last reader precedes this one's loop
        live = []
        for g in range(len(self.loops) + 1):
            for b in by_loop.get(g, []):
                key = str(b.dtype)
                pool = free.setdefault(key, [])
                b.array = _scratch(b.dtype)
                spot = next((i for i, (start, n) in enumerate(pool) if n >= b.size), None)
                if spot is None:
                    b.row = used.get(key, 0)
                    used[key] = b.row + b.size
                else:
                    start, n = pool.pop(spot)
                    b.row = start
                    if n > b.size:
                        pool.append((start + b.size, n - b.size))
                live.append(b)
            for b in [b for b in live if max(b.last, b.loop) == g]:
                # rows are released after the loop that reads them last (never within it)
                free.setdefault(str(b.dtype), []).append((b.row, b.size))  # type: ignore[arg-type]  # rows are set for stored buffers
                live.remove(b)
        for key, n in used.items():
            rows[key] = max(rows.get(key, 0), n)
        stores = {b.local: b for b in self.buffers if b.stored and b.local is not None}

        def token(match):
            b = self.buffers[int(match.group(1))]
            base, index = b.row + int(match.group(2)), match.group(3)
            return f"{b.array}[{_index(str(base) if index == '0' else f'{base} + {index}')}]"

        def hoisted(match, held: dict):
            """A lane value read in a loop over one lane's elements, read once before it
            (``held``: read -> local): the loop writes no lane value (a folded sum is stored
            after it), but LLVM cannot prove that a read of the scratch array at a fixed row
            is not one of the loop's stores to it, and leaves the whole loop scalar (measured in
            ``docs/performance.md``)."""
            read = token(match)
            if match.group(3) != "0":
                return read
            if read not in held:
                held[read] = self.writer.name()
                self.writer.types[held[read]] = self.buffers[int(match.group(1))].dtype
            return held[read]

        pad = " " * indent
        out = [pad + line for line in self.uniform_lines]
        blocks = []
        for loop in self.loops:
            if not loop.lines:
                continue
            body: list[str] = []
            held: dict[str, str] = {}
            substitute = functools.partial(hoisted, held=held) if lanes == 1 and loop.kind == "elem" \
                and loop.size > 1 else token
            for line in loop.lines:
                body.append(_TOKEN.sub(substitute, line))
                b = stores.get(line.split(" = ", 1)[0])  # type: ignore[assignment]  # None for lines that store no buffer
                if b is not None:  # read by a later loop: kept in its rows
                    index = "0" if b.size == 1 else "k"
                    body.append(f"{b.array}[{_index(f'{b.row} + {index}')}] = {b.local}")
            if loop.kind == "elem" and loop.size == 1:  # one element: no loop over them
                body = ["k = 0", *body]
            # a folded reduction: in a local with one lane (a scalar LLVM may split into vector
            # partial sums; stored after the loop), in its scratch row with several (the loop
            # over the lanes vectorizes)
            before, after = [], []
            for b, step, identity in loop.folds:
                row = f"{b.array}[{_index(str(b.row))}]"
                acc = b.local if lanes == 1 else row
                body.append(f"{acc} = {step.format(acc=acc)}")
                before.append(f"{acc} = {identity}")
                after.append(f"{row} = {acc}")
            if lanes > 1 and before:
                before, after = ["for j in range(L):", *("    " + x for x in before)], []
            elif before:
                after = ["j = 0", *after]
            if held:
                before = [*(f"{local} = {value}" for value, local in held.items()), *before]
            if lanes == 1 and before:
                before = ["j = 0", *before]
            if loop.size == 1 and lanes == 1:  # one lane: straight code
                blocks.append(["j = 0", *body])
            elif loop.size == 1:
                blocks.append(["for j in range(L):", *("    " + x for x in body)])
            elif lanes == 1:
                blocks.append([*before, f"for k in range({loop.size}):", "    j = 0", *("    " + x for x in body),
                               *after])
            else:
                blocks.append([*before, f"for k in range({loop.size}):", "    for j in range(L):",
                               *("        " + x for x in body)])
        return out + [pad + x for block in blocks for x in block]


def _own(x, size: int, parts: list, owners: list) -> None:
    """Append the parts of ``x`` (its :class:`Pieces`' parts, or ``x`` itself, of ``size``
    elements) to ``parts`` and each element's ``(part, element)`` to ``owners``."""
    for part, n in ([(p, size_of(p)) for _, p in x.parts] if isinstance(x, Pieces) else [(x, size)]):
        parts.append(part)
        owners.extend((len(parts) - 1, e) for e in range(n))


def _affine(table: np.ndarray) -> str | None:
    """``table`` ``(n, count)`` of element indices as the expression ``a + b k + c r`` where it
    is one (a product's operand read row by row or column by column: a modal structure's
    contact modes), else None. Direct indices let LLVM vectorize the product's inner loop,
    which reads an index table element by element otherwise."""
    n, count = table.shape
    a = int(table[0, 0])
    b = int(table[1, 0] - a) if n > 1 else 0
    c = int(table[0, 1] - a) if count > 1 else 0
    if not np.array_equal(table, a + b * np.arange(n)[:, None] + c * np.arange(count)[None, :]):
        return None
    return f"{a} + {b} * k + {c} * r"


def _index(row: str) -> str:
    """Row ``row`` (an expression, ``k`` in element loops) of lane ``j``."""
    return f"({row}) * L + j"


def _scratch(dtype) -> str:
    return f"X_{np.dtype(dtype).name}"


class _Binary:
    """A stand-in equation for ``Writer.expression``: the binary primitive ``op`` on ``dtype``."""

    def __init__(self, op, dtype):
        from jax import lax

        self.primitive = {"add": lax.add_p, "max": lax.max_p, "min": lax.min_p, "mul": lax.mul_p, "and": lax.and_p,
                          "or": lax.or_p}[op]
        var = types.SimpleNamespace(aval=jax.ShapeDtypeStruct((), dtype))
        self.outvars = [var]
        self.invars = [var, var]
        self.params = {}
