"""The reductions and products of a looped lane program: sums, maxima and minima over a
lane's arrays, over some of their axes, over values shared by every lane, and ``dot_general``.

A sum over a whole array (and an and/or of booleans) is added up in the element loop that
computes the array, which is then never stored. A float sum adds with ``radd``
(:data:`REASSOCIATE`, LLVM's ``fadd reassoc``, on that addition alone): with an IEEE addition
the accumulator would be a chain of dependent additions that keeps LLVM from vectorizing the
whole loop; reassociable, LLVM keeps vector partial sums, as XLA's vectorized reductions
reorder the sum too. Every other reduction (max, min, of an input or a view) runs in a lane
loop of its own with :data:`ACCUMULATORS` partial results. A reduction or a product that the
trace repeats (a law's force summed for its force and for its power) is computed once.
"""

from __future__ import annotations

import dataclasses
import types

import jax
import numpy as np

from .componentwise import Unsupported, reduction_identity
from .loop_nest import LoopNest
from .looped_values import Const, Lane, Pieces, Uniform, element_index, shared_elements

#: The binary operation that folds a reduction, as an elementwise primitive name.
REDUCE = {"reduce_sum": "add", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "mul",
          "reduce_and": "and", "reduce_or": "or"}
#: The same reductions of a constant, by NumPy.
NUMPY_REDUCE = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min, "reduce_prod": np.prod,
                "reduce_and": np.all, "reduce_or": np.any}
#: Partial results of a reduction over a lane's array in a loop of its own (a power of two).
ACCUMULATORS = 4
#: The program's addition that LLVM may reassociate (``fadd reassoc``): the folded sums'
#: only, every other operation keeps IEEE order.
REASSOCIATE = "radd"


class ReductionRules(LoopNest):
    """The lowering rules of reductions and ``dot_general`` on a :class:`LoopNest`; the
    elementwise rule (:meth:`_segment`) that folds partial results is the subclass's
    (:class:`~jaxfriction._lanes.looped.Piece`)."""

    def __init__(self, writer):
        super().__init__(writer)
        self._reduced: dict = {}  # (reduction, operand) -> its result (a sum or a product the trace repeats)

    def _segment(self, eqn, ins, size, scalar):
        raise NotImplementedError  # the elementwise rule: Piece._segment

    def _reduction(self, eqn, ins):
        (x,), var = ins, eqn.invars[0]
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        every_axis = tuple(eqn.params["axes"]) == tuple(range(len(var.aval.shape)))
        if isinstance(x, Pieces) and every_axis and all(isinstance(p, (Lane, Const)) for _, p in x.parts):
            # part by part, the partial results folded by the reduction's binary operation
            binary = Binary(REDUCE[eqn.primitive.name], dtype)
            total = None
            for _, part in x.parts:
                if isinstance(part, Const):
                    value = Const(np.asarray(NUMPY_REDUCE[eqn.primitive.name](part.value), dtype))
                else:
                    value = self._reduction(eqn, [part])
                total = value if total is None else self._segment(binary, [total, value], 1, True)
            return total
        if isinstance(x, Uniform) and every_axis and x.size > 1:
            # a value shared by every lane (a table of the template, e.g. an Iwan joint's
            # stiffnesses): reduced once per program call where it is invariant, else once per
            # piece, before its lane loops
            binary = Binary(REDUCE[eqn.primitive.name], dtype)
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
        op = REDUCE[name]
        if not ((op == "add" and dtype.kind in "fiu") or (op in ("and", "or") and dtype.kind in "biu")):
            return None
        step = self._accumulate(Binary(op, dtype), "{acc}", b.local)
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
        binary = Binary(REDUCE[name], dtype)
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
        binary = Binary(REDUCE[eqn.primitive.name], dtype)
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
        binary = Binary(REDUCE[eqn.primitive.name], dtype)
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
        add = self._accumulate(Binary("add", dtype), acc, f"{factors[0]} * {factors[1]}")
        self.loops[at].lines += [f"{acc} = {self.writer.constant(0, dtype)}", f"for r in range({count}):",
                                 f"    {acc} = {add}", f"{local} = {acc}"]
        b = self.buffer(n_out, dtype, at, local)
        self._reduced[key] = out = Lane(b, 0, n_out, 1, not eqn.outvars[0].aval.shape)
        return out


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


class Binary:
    """A stand-in equation for ``Writer.expression``: the binary primitive ``op`` on ``dtype``."""

    def __init__(self, op, dtype):
        from jax import lax

        self.primitive = {"add": lax.add_p, "max": lax.max_p, "min": lax.min_p, "mul": lax.mul_p, "and": lax.and_p,
                          "or": lax.or_p}[op]
        var = types.SimpleNamespace(aval=jax.ShapeDtypeStruct((), dtype))
        self.outvars = [var]
        self.invars = [var, var]
        self.params = {}
