"""Leaf paths: the one vocabulary that names a parameter of a system.

A system is an equinox module, a pytree whose leaves are its parameters. A parameter is
named by its path from the system: fields joined by dots, elements of tuples, lists and
arrays in brackets, dictionary entries as quoted keys, as ``jax.tree_util.keystr`` writes
them without the leading dot:

- ``"law.mu"``, ``"law.eps"``: fields of the system's friction law;
- ``"force.amplitude"``, ``"surface.value"``: fields of its drives;
- ``"stiffness"``, ``"masses"`` (a whole array), ``"masses[3]"`` (one element of it),
  ``"law.mu[0]"`` (the first contact's coefficient), ``"laws[1].mu"`` (a field of a module
  in a tuple field).

The same names are used by :func:`~jaxfriction.sweep` (grid axes and dataset
dimensions), :func:`~jaxfriction.fit`, :func:`~jaxfriction.sensitivity` and the command line
(``--param law.mu=0.1:1:16``, ``--set force.omega=0.5``). Values are set with
``equinox.tree_at``, so a path works under ``jit``, ``vmap`` and ``grad``: the leaf becomes
whatever is put there (a tracer inside a sweep lane).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

_STEP = re.compile(r"(?:^|\.)([A-Za-z_][A-Za-z_0-9]*)|\[(-?\d+)\]|\[(['\"])(.*?)\3\]")


def parse_path(path: str) -> tuple:
    """Steps of a path: ``("attr", name)``, ``("index", i)`` or ``("key", k)``.

    Raises:
        ValueError: naming the path if it is not of the form described in the module
            docstring.
    """
    if not isinstance(path, str) or not path:
        raise ValueError(f"a parameter path must be a non-empty string such as 'law.mu', got {path!r}")
    steps, pos = [], 0
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"{path!r} is not a parameter path (fields joined by '.', indices in [], "
                             f"e.g. 'law.mu' or 'masses[3]')")
        name, index, _, key = match.groups()
        steps.append(("attr", name) if name else ("index", int(index)) if index is not None else ("key", key))
        pos = match.end()
    if steps[0][0] != "attr":
        raise ValueError(f"{path!r} must start with a field name, e.g. 'law.mu'")
    return tuple(steps)


def _is_param_leaf(leaf) -> bool:
    if isinstance(leaf, bool):
        return False
    if isinstance(leaf, (int, float)):  # an int literal (``Quinn(mu=1)``) is a parameter too
        return True
    return (eqx.is_array(leaf) or isinstance(leaf, np.ndarray)) and jnp.issubdtype(leaf.dtype, jnp.floating)


def traced_parameters(tree, dtype=None, keep_zeros: bool = False) -> Any:
    """``tree`` with its Python float leaves as 0-d arrays of ``dtype`` (default: JAX's
    default float type).

    ``eqx.filter_jit`` compiles once per value of a Python float leaf (it is static there)
    and once per structure for an array leaf: a workflow passes its system through this
    before its compiled inner functions, so that the same system at another forcing
    frequency or friction coefficient reuses the compiled program. Integers, booleans and
    static fields are left alone.

    Args:
        tree: a system, law or any pytree.
        dtype: the arrays' dtype.
        keep_zeros: literal zeros stay floats (a zero damping or drive amplitude is left out
            of the RK4 arithmetic by its type, as in a run without the workflow).

    Returns:
        The converted copy.
    """
    dtype = jnp.result_type(float) if dtype is None else dtype

    def traced(x):
        if isinstance(x, float) and not (keep_zeros and x == 0.0):
            return jnp.asarray(x, dtype)
        return x

    return jax.tree.map(traced, tree)


def parameter_paths(tree) -> list[str]:
    """Paths of the floating-point leaves of ``tree`` (``["law.mu", "law.eps", "force.amplitude", ...]``).

    Array leaves are listed whole (``"masses"``); their elements are ``"masses[i]"``
    (:func:`scalar_parameter_paths`). Structural fields (static fields such as a chain's
    ``n``, strings, booleans) are not parameters.

    Examples:
        >>> import jaxfriction as jf
        >>> system = jf.Oscillator(law=jf.Quinn(mu=0.5, eps=0.02), force=jf.Harmonic(0.8, 0.5))
        >>> jf.parameter_paths(system)[:4]
        ['law.mu', 'law.eps', 'force.amplitude', 'force.omega']
    """
    return list(parameter_leaves(tree))


def parameter_leaves(tree) -> dict:
    """The floating-point leaves of ``tree`` by their paths (as :func:`parameter_paths`
    names them), in one walk of the tree."""
    return {jax.tree_util.keystr(path).lstrip("."): leaf
            for path, leaf in jax.tree_util.tree_leaves_with_path(tree) if _is_param_leaf(leaf)}


def scalar_parameter_paths(tree) -> list[str]:
    """Like :func:`parameter_paths`, with array leaves expanded into their elements
    (``"law.mu[0]"``, ``"law.mu[1]"``): every scalar that can be differentiated alone."""
    out = []
    for path in parameter_paths(tree):
        shape = np.shape(get_parameter(tree, path))
        out += [path] if not shape else [path + "".join(f"[{i}]" for i in index) for index in np.ndindex(shape)]
    return out


def module_paths(tree, accept) -> list[str]:
    """Paths of the sub-modules of ``tree`` for which ``accept(node)`` is true (``["force",
    "surface"]`` for the drives of an :class:`~jaxfriction.Oscillator`), outermost first."""
    out = []
    for path, node in jax.tree_util.tree_flatten_with_path(tree, is_leaf=accept)[0]:
        if accept(node):
            out.append(jax.tree_util.keystr(path).lstrip("."))
    return out


def _unknown(tree, path, why):
    known = parameter_paths(tree)
    close = difflib.get_close_matches(path, known, n=3)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ValueError(f"{path!r} {why}{hint} (parameters of {type(tree).__name__}: {', '.join(known)})")


def _split(tree, path):
    """``(node_steps, element_index)``: the steps to the pytree leaf, then an index into it."""
    steps, node = parse_path(path), tree
    for i, (kind, key) in enumerate(steps):
        if kind == "attr":
            if not (eqx.is_array(node) or isinstance(node, np.ndarray)) and isinstance(node, eqx.Module):
                names = {f.name: f for f in dataclasses.fields(node)}
                if key not in names:
                    why = "is a derived property, not a field" if hasattr(node, key) else "is not a field"
                    _unknown(tree, path, why)
                if names[key].metadata.get("static", False):
                    _unknown(tree, path, "is a static field, not a parameter")
                node = getattr(node, key)
                continue
            _unknown(tree, path, "does not name a field")
        elif eqx.is_array(node) or isinstance(node, (np.ndarray, float)):
            index = tuple(k for _, k in steps[i:])
            if any(kind != "index" for kind, _ in steps[i:]) or len(index) > np.ndim(node):
                _unknown(tree, path, f"indexes an array of shape {np.shape(node)} out of range")
            shape = np.shape(node)
            if any(not -n <= k < n for k, n in zip(index, shape)):
                _unknown(tree, path, f"indexes an array of shape {shape} out of range")
            return steps[:i], tuple(k % n for k, n in zip(index, shape))  # law.mu[-1] is law.mu[1]
        elif kind == "index" and isinstance(node, (list, tuple)):
            if not -len(node) <= key < len(node):
                _unknown(tree, path, f"indexes a sequence of length {len(node)} out of range")
            node = node[key]
        elif kind == "key" and isinstance(node, dict) and key in node:
            node = node[key]
        else:
            _unknown(tree, path, "does not name a parameter")
    if isinstance(node, eqx.Module) or not _is_param_leaf(node):
        _unknown(tree, path, f"is a {type(node).__name__}, not a floating-point parameter")
    return steps, ()


def _node(tree, steps):
    for kind, key in steps:
        tree = getattr(tree, key) if kind == "attr" else tree[key]
    return tree


def check_paths(tree, paths, what: str = "parameter") -> None:
    """Raise ValueError naming every path of ``paths`` that is not a parameter of ``tree``.

    ``what`` names the argument in the message (e.g. ``"grid"``, ``"wrt"``).
    """
    if isinstance(paths, str) or not isinstance(paths, (dict, list, tuple, set, frozenset)):
        raise ValueError(f"{what} must be a collection of parameter paths, got {paths!r}")
    for path in paths:
        try:
            _split(tree, path)
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None


def get_parameter(tree, path: str) -> Any:
    """The value at ``path`` (a leaf, or an element of an array leaf).

    Raises:
        ValueError: naming the path (with close matches and the known paths).
    """
    steps, index = _split(tree, path)
    value = _node(tree, steps)
    return jnp.asarray(value)[index] if index else value


def _check_value(tree, path, steps, index, value):
    """Refuse a value that is not a number (a string, None, a bool) and a concrete array for
    a scalar parameter, naming the path (JAX would fail later with an internal message, or
    not at all)."""
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{path!r} must be a number, got {value!r}")
    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(value)):
        return
    try:
        shape = np.shape(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{path!r} must be a number, got {value!r}") from None
    leaf = _node(tree, steps)
    expected = np.shape(leaf)[len(index):]
    if shape and not expected:
        raise ValueError(f"{path!r} is a scalar parameter, got an array of shape {shape}")
    if shape and shape != expected:
        raise ValueError(f"{path!r} has shape {expected}, got an array of shape {shape}: set_parameters keeps a "
                         f"parameter's shape (build the module anew to change its number of elements)")


def set_parameters(tree, values: dict) -> Any:
    """A copy of ``tree`` with the parameters ``{path: value}`` replaced (``equinox.tree_at``).

    Values may be numbers, arrays or tracers. Several elements of one array leaf
    (``"masses[0]"``, ``"masses[2]"``) are set together; a whole leaf and its elements
    cannot both be given.

    Raises:
        ValueError: naming an unknown path, a leaf named twice, a value that is not a
            number, an array for a scalar parameter, or an array of another shape than the
            parameter's (an Iwan law's ``law.stiffness`` with another number of elements).

    Examples:
        >>> import jaxfriction as jf
        >>> system = jf.Oscillator(law=jf.Quinn(mu=0.5, eps=0.02))
        >>> jf.set_parameters(system, {"law.mu": 0.7}).law.mu
        0.7
        >>> jf.set_parameters(system, {"law.muu": 0.7})
        Traceback (most recent call last):
        ...
        ValueError: 'law.muu' is not a field; did you mean 'law.mu'? ...
    """
    if not values:
        return tree
    nodes: dict[tuple, list[tuple[Any, Any]]] = {}
    for path, value in values.items():
        steps, index = _split(tree, path)
        _check_value(tree, path, steps, index, value)
        entry = nodes.setdefault(steps, [])
        if (not index and entry) or (entry and entry[0][0] == ()) or index in [e[0] for e in entry]:
            raise ValueError(f"{path!r}: the leaf is named twice (whole and by element, or one element twice)")
        entry.append((index, value))
    replacements = []
    for steps, entries in nodes.items():
        if entries[0][0] == ():
            replacements.append(entries[0][1])
            continue
        leaf = jnp.asarray(_node(tree, steps))
        for index, value in entries:
            leaf = leaf.at[index].set(value)
        replacements.append(leaf)
    keys = list(nodes)
    return eqx.tree_at(lambda t: [_node(t, s) for s in keys], tree, replacements)
