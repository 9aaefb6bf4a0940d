"""The values of the looped lane program (:mod:`jaxfriction._lanes.looped`) and the rules on them.

A value of one lane's piece is a :class:`Lane` view of a :class:`Buffer` (computed in a loop,
or an input row), a :class:`Uniform` value shared by every lane, a :class:`Const` known at
trace time, or :class:`Pieces` of those. The functions here take views of values, join parts,
and find the runs of a data movement; none writes code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np


@dataclasses.dataclass(eq=False)
class Buffer:
    """A lane array (or a lane scalar, ``size == 1``) computed in the loop ``loop`` of a piece
    (``-1``: an input, at row ``row`` of the array ``array``)."""

    size: int
    dtype: np.dtype
    loop: int
    local: str | None = None  #: its name within its loop (elementwise results)
    stored: bool = False  #: a later loop reads it: it is stored in a scratch row
    array: str | None = None
    row: int | None = None
    last: int = -1  #: the last loop that reads it (row reuse)
    first: int | None = None  #: the first loop that writes it (default ``loop``; a copy: its first run)


@dataclasses.dataclass(frozen=True)
class Lane:
    """A view of a lane array: elements ``offset + stride * e`` of ``buffer`` for ``e < size``
    (``stride = 0``: one element broadcast); ``scalar``: a shape-``()`` value."""

    buffer: Buffer
    offset: int
    size: int
    stride: int = 1
    scalar: bool = False


@dataclasses.dataclass(frozen=True)
class Uniform:
    """A value shared by every lane: ``expr(e)`` is the expression of its element ``e`` (a
    string index expression), ``size`` elements (``scalar``: shape ``()``)."""

    expr: Callable[..., str]
    size: int
    scalar: bool = False
    #: for a view of another shared value: ``(base, elements)``, element ``e`` is ``base``'s
    #: ``elements[e]`` (what a product reads through, instead of a copy: :func:`shared_elements`)
    of: tuple | None = dataclasses.field(default=None, compare=False)
    #: the same in every piece and at every step (the template's shared arrays and what is
    #: computed from them alone, not the time or the step): computed once per program call
    invariant: bool = dataclasses.field(default=False, compare=False)


@dataclasses.dataclass(frozen=True)
class Const:
    """A value known at trace time."""

    value: np.ndarray


@dataclasses.dataclass(frozen=True)
class Pieces:
    """A lane array kept as consecutive parts instead of copied into one buffer (what a
    concatenation, a pad or a scatter at constant indices makes): ``parts`` is
    ``((start, value), ...)`` in order, each value a :class:`Lane`, :class:`Uniform` or
    :class:`Const` of its own size, together covering elements ``0 .. size - 1``.

    An elementwise equation on it runs once per part, in loops over the parts' elements, and
    its result is again in parts: no copy loop, and constant parts fold (``x + 0`` is ``x``,
    the zeros that pad a chain's ends). A reduction reads it part by part; a product or a
    reduction over some axes copies it into one buffer first (:meth:`Piece.whole`)."""

    parts: tuple
    size: int


def runs_of(owners) -> list:
    """Contiguous runs of ``owners`` (``(operand, element)`` per output element):
    ``(start, length, operand, first, stride)``."""
    runs: list[tuple[int, int, Any, Any, Any]] = []
    for position, (i, e) in enumerate(owners):
        if runs:
            start, length, j, first, stride = runs[-1]
            if j == i:
                if length == 1:
                    runs[-1] = (start, 2, i, first, e - first)
                    continue
                if e == first + stride * length:
                    runs[-1] = (start, length + 1, i, first, stride)
                    continue
        runs.append((position, 1, i, e, 1))
    return runs


def size_of(x) -> int:
    """The number of elements of a value."""
    return int(np.size(x.value)) if isinstance(x, Const) else x.size


def view(x, first: int, length: int, stride: int = 1):
    """Elements ``first + stride e`` (``e < length``) of ``x`` (a :class:`Lane`, :class:`Uniform`,
    :class:`Const`, or, with ``stride = 1``, :class:`Pieces` within one of its parts)."""
    if isinstance(x, Const):
        v = np.ravel(np.asarray(x.value))
        return Const(v[first + stride * np.arange(length)] if v.size > 1 else np.repeat(v, length))
    if isinstance(x, Uniform):
        if x.scalar or x.size == 1:
            return Uniform(x.expr, length, invariant=x.invariant)
        base, elements = x.of if x.of is not None else (x, np.arange(x.size))
        return Uniform(lambda e, expr=x.expr: expr(element_index(first, stride, e)), length,
                       of=(base, elements[first + stride * np.arange(length)]), invariant=x.invariant)
    if isinstance(x, Pieces):
        start, part = next((a, p) for a, p in reversed(x.parts) if a <= first)
        if first + length > start + size_of(part):
            raise ValueError("a view across parts")  # the segments never straddle a boundary
        return view(part, first - start, length, stride)
    if x.size == 1:  # one element, broadcast (a scalar operand of clamp)
        return Lane(x.buffer, x.offset, length, 0 if length > 1 else 1)
    step = x.stride * stride
    return Lane(x.buffer, x.offset + x.stride * first, length, step if length > 1 else 1)


def element_index(first: int, stride: int, e: str) -> str:
    """The index expression of element ``first + stride e``, written alike wherever it is the
    same (a table read through a view of itself is then recognised as the table's own
    element: an Iwan joint's force ``sum k_i z_i`` was computed twice per stage)."""
    scaled = e if stride == 1 else f"{stride} * ({e})"
    return scaled if first == 0 else f"{first} + {scaled}"


def shared_elements(x):
    """``(base, elements)`` where ``x`` is :class:`Pieces` of views of one shared value
    ``base`` (a transposed table: its columns as parts), element ``e`` of ``x`` being
    ``base``'s ``elements[e]``; else None."""
    if not isinstance(x, Pieces) or not all(isinstance(p, Uniform) and p.of is not None for _, p in x.parts):
        return None
    bases = {id(p.of[0]) for _, p in x.parts}
    if len(bases) != 1:
        return None
    return x.parts[0][1].of[0], np.concatenate([p.of[1] for _, p in x.parts])


def joined(parts, size: int, scalar: bool):
    """``parts`` (``(start, value)``, in order) as one value: adjacent constants and adjacent
    runs of one buffer merged, one part returned as it is, several as :class:`Pieces`."""
    merged: list[tuple[int, Any]] = []
    for start, x in parts:
        if merged:
            a, y = merged[-1]
            if isinstance(x, Const) and isinstance(y, Const):
                merged[-1] = (a, Const(np.concatenate([np.ravel(y.value), np.ravel(x.value)])))
                continue
            both = _continued(y, x)
            if both is not None:
                merged[-1] = (a, both)
                continue
        merged.append((start, x))
    if len(merged) > 1:
        return Pieces(tuple(merged), size)
    x = merged[0][1]
    if isinstance(x, Const):
        return Const(np.ravel(x.value).reshape(()) if scalar else np.ravel(x.value))
    return dataclasses.replace(x, scalar=scalar)


def _continued(y, x) -> Lane | None:
    """The view ``y`` followed by the view ``x`` as one strided view of their buffer, or None."""
    if not (isinstance(x, Lane) and isinstance(y, Lane) and x.buffer is y.buffer):
        return None
    stride = y.stride if y.size > 1 else x.offset - y.offset
    if x.offset != y.offset + stride * y.size or (x.size > 1 and x.stride != stride):
        return None
    return Lane(y.buffer, y.offset, y.size + x.size, stride)


def identity_operand(name: str, ins):
    """The operand that ``name`` returns unchanged where a constant operand makes it so
    (``x + 0``, ``x - 0``, ``x * 1``, a select on a constant predicate), else None."""
    def all_equal(x, value):
        return isinstance(x, Const) and np.all(np.asarray(x.value) == value)

    if name in ("add", "add_any"):
        return ins[1] if all_equal(ins[0], 0) else (ins[0] if all_equal(ins[1], 0) else None)
    if name == "sub" and all_equal(ins[1], 0):
        return ins[0]
    if name == "mul":
        return ins[1] if all_equal(ins[0], 1) else (ins[0] if all_equal(ins[1], 1) else None)
    if name == "select_n" and isinstance(ins[0], Const):
        which = np.ravel(np.asarray(ins[0].value)).astype(int)
        if np.all(which == which[0]):
            return ins[1 + int(which[0])]
    return None
