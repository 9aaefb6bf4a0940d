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
- An equation joins the latest of the last :data:`~jaxfriction._lanes.loop_nest.LOOK_BACK`
  loops of its size that can read its operands, so the parts of consecutive equations share
  loops.
- Reductions and products (:mod:`jaxfriction._lanes.looped_reductions`): a sum over a
  whole array is added up in the element loop that computes it; other reductions run in a
  lane loop of their own with partial results.
- Values that depend on the time and the shared values only (``sin(omega t)``) are written
  once per piece, outside the lane loops; constants are folded, ``x + 0`` and ``x * 1`` are
  ``x``, and a division by a constant is a product by its reciprocal, as XLA's algebraic
  simplifier writes it on the XLA path that this program reproduces.

Measured against the XLA path and a hand-written numba loop in ``docs/performance.md``
(``scripts/benchmarks/bench_many_contacts.py``).

Where each line goes, the scratch rows of values read in later loops and the writing-out of
the loops are the :class:`~jaxfriction._lanes.loop_nest.LoopNest`'s. The physics is still
the system's own ``vector_field``, traced; an operation without a looped form here
(``cond``, loops, a gather at an index that depends on the state) raises
:class:`~jaxfriction._lanes.componentwise.Unsupported` naming it.
"""

from __future__ import annotations

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
)
from .looped_reductions import REDUCE, Binary, ReductionRules
from .looped_values import (
    Const,
    Lane,
    Pieces,
    Uniform,
    identity_operand,
    joined,
    runs_of,
    size_of,
    view,
)

#: A movement whose result would have more parts than this is copied into one buffer (an
#: interleaving scatter would otherwise run every later equation element by element).
MAX_PARTS = 16


class Piece(ReductionRules):
    """One piece of the program (start, step, saved point, rate) written as loops.

    Args:
        writer: the program's :class:`~jaxfriction._lanes.source_writer.Writer`
            (constants, scalar expressions, names).
        closed: the piece's closed jaxpr (one lane).
        inputs: one descriptor per input variable (:class:`Lane` of an input
            :class:`~jaxfriction._lanes.looped_values.Buffer`, :class:`Uniform`).

    Raises:
        Unsupported: an operation without a looped form (named).
    """

    def __init__(self, writer, closed, inputs):
        super().__init__(writer)
        self.outputs = self._lower(closed.jaxpr, closed.consts, inputs)

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
        if name in REDUCE:
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
            eqn, ins = Binary("mul", dtype), [ins[0], Const(inverse)]
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


def _own(x, size: int, parts: list, owners: list) -> None:
    """Append the parts of ``x`` (its :class:`Pieces`' parts, or ``x`` itself, of ``size``
    elements) to ``parts`` and each element's ``(part, element)`` to ``owners``."""
    for part, n in ([(p, size_of(p)) for _, p in x.parts] if isinstance(x, Pieces) else [(x, size)]):
        parts.append(part)
        owners.extend((len(parts) - 1, e) for e in range(n))
