"""What identifies a sweep: its system and settings for resume, its user functions by code.

A resumed sweep must be the same sweep (:func:`sweep_digest` goes into the engine's tag), and
a user function written again (a fresh ``lambda`` in a later call) must find the lane
program compiled for it (:class:`ByCode`). Both look at code and values, never at memory
addresses, which differ from one process to the next.
"""

from __future__ import annotations

import hashlib
import re
import types

import jax
import numpy as np


def sweep_digest(system, settings) -> str:
    """Identifies a sweep's system (structure and every leaf's bytes) and settings for resume."""
    leaves, treedef = jax.tree_util.tree_flatten(system)
    h = hashlib.sha256(re.sub(r"0x[0-9a-f]+", "", repr(treedef)).encode())  # no memory addresses
    for leaf in leaves:
        try:
            h.update(np.ascontiguousarray(np.asarray(leaf, dtype=float)).tobytes())
        except (TypeError, ValueError):
            h.update(repr(leaf).encode())
    h.update(repr(sorted(settings.items())).encode())
    return h.hexdigest()


def code_parts(code) -> list:
    """Bytecode, names and constants of a code object; nested code (lambdas, generator
    expressions) by their own parts, never by ``repr``, which holds a memory address that
    differs from one process to the next."""
    parts = [code.co_code.hex(), repr(code.co_names)]
    for const in code.co_consts:
        parts.extend(code_parts(const) if isinstance(const, types.CodeType) else [repr(const)])
    return parts


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def function_digest(fn, _seen=frozenset()) -> str:
    """What identifies a user function in a resume tag: its name, bytecode, constants and
    closure values (a changed body or captured value is another sweep), the same in every
    process. Closure values are digested alike (functions by their code, other values by
    ``repr`` without memory addresses); a function met again inside its own closure (a
    recursive closure) by its name. Globals it reads are not seen: pass such values through
    the system or a closure."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return _ADDRESS.sub("", repr(fn))
    if id(fn) in _seen:
        return f"<recursive {getattr(fn, '__qualname__', '')}>"
    parts = [getattr(fn, "__qualname__", ""), *code_parts(code)]
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            parts.append(function_digest(cell.cell_contents, _seen | {id(fn)}))
        except ValueError:  # an empty cell
            parts.append("<empty>")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


class ByCode:
    """A user function that compares and hashes by :func:`function_digest` (code and closure
    values), so the same observable written again (a fresh ``lambda`` in a later call) finds
    the lane program compiled for it instead of compiling another."""

    __slots__ = ("fn", "digest")

    def __init__(self, fn):
        self.fn, self.digest = fn, function_digest(fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __eq__(self, other):
        return isinstance(other, ByCode) and other.digest == self.digest

    def __hash__(self):
        return hash(self.digest)
