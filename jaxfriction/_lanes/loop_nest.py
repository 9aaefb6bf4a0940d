"""Where a looped piece's code goes: its loops, its buffers and their scratch rows.

A looped lane program (:mod:`jaxfriction._lanes.looped`) lowers each equation of a piece's
jaxpr onto a :class:`LoopNest`: the nest decides the loop an equation's line joins
(:meth:`LoopNest.place`), how a value is read there (a local of the loop, a row of the scratch
array, a constant, a value shared by every lane), copies values in parts into one buffer, and
writes the loops out as source once the piece is lowered (:meth:`LoopNest.render`), with the
scratch rows allocated first-fit and reused once nothing reads them.

A value read in a later loop than the one that computes it is stored in a row of a scratch
array (``X`` per dtype, row ``r`` of lane ``j`` at ``X[r L + j]``); until the rows are
allocated, its reads are placeholders (:meth:`LoopNest._token`).
"""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np

from .looped_values import Buffer, Const, Lane, Pieces, Uniform, size_of

#: How many loops back an equation looks for a loop of its size that can read its operands.
LOOK_BACK = 12



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


class LoopNest:
    """The loops of one piece of a looped lane program, the buffers its values live in, and
    the lines shared by every lane.

    Args:
        writer: the program's :class:`~jaxfriction._lanes.source_writer.Writer`
            (constants, scalar expressions, names).
    """

    def __init__(self, writer):
        self.writer = writer
        self.uniform_lines: list[str] = []
        self.loops: list[_Loop] = []
        self.buffers: list[Buffer] = []
        self._ids: dict = {}  # id(buffer) -> its index in ``buffers``
        self._seen_uniform: dict = {}  # (what, expression) -> name: the shared values of this piece

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

    # -- output ---------------------------------------------------------------------------
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


def _index(row: str) -> str:
    """Row ``row`` (an expression, ``k`` in element loops) of lane ``j``."""
    return f"({row}) * L + j"


def _scratch(dtype) -> str:
    return f"X_{np.dtype(dtype).name}"
