"""Component-wise evaluation of a traced per-lane function: the physics of the compiled executors.

A fused GPU kernel (:mod:`jaxfriction._lanes.fused`, running :mod:`jaxfriction._lanes.pieces`) holds a block of lanes and
steps them through the whole time loop. Its arrays must be flat, one value per lane: GPU
kernel languages (Triton) keep such arrays in registers, but have little room for the
stacking, slicing and concatenating of small per-lane vectors that a system's
``vector_field`` does (``jnp.stack([v, a, f * v])``, ``y[2:4]``). So the per-lane function
(an RK4 step, with its tangents) is traced once to a jaxpr, and the jaxpr is evaluated here
*component by component*: every per-lane array of shape ``S`` becomes a NumPy object array
of shape ``S`` whose entries ("cells") are the values of one component for the whole block,
each a ``(block,)`` array, a shared scalar, or a concrete number.

- Arithmetic and comparisons act cell by cell.
- Data movement (slices, reshapes, concatenation, gathers with constant indices, ...)
  only rearranges cells: it costs nothing in the kernel.
- Whatever depends on constants only (literals, a module's static fields) is folded to
  numbers at trace time, and what depends on shared values only (the time, the template's
  fixed parameters such as ``1 / eps``, a forcing shared by every lane) stays a scalar
  computed once per block, not once per lane.

The physics is the system's own code, traced; nothing is written twice. A primitive this
evaluation cannot express (a loop inside the vector field, a gather at a state-dependent
index, a sort) raises :class:`Unsupported` naming it, and the sweep falls back to the XLA
path with that reason.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jex_core


class Unsupported(Exception):
    """The traced function uses something component-wise evaluation cannot express."""


#: Primitives that act element by element (by name, stable across JAX versions).
ELEMENTWISE = frozenset("""
    abs acos acosh add and asin asinh atan atan2 atanh cbrt ceil clamp convert_element_type cos cosh
    div eq erf erf_inv erfc exp exp2 expm1 floor ge gt imag integer_pow is_finite le lgamma digamma log
    log1p logistic lt max min mul ne neg nextafter not or population_count pow real reduce_precision rem
    round rsqrt select_n shift_left shift_right_arithmetic shift_right_logical sign sin sinh sqrt square
    sub tan tanh xor add_any
""".split())

#: Primitives that only move data: ``(data operand positions or None for all)``; their other
#: operands are indices, which must be constants.
MOVEMENT = {
    "broadcast_in_dim": (0,), "reshape": (0,), "squeeze": (0,), "expand_dims": (0,), "transpose": (0,),
    "rev": (0,), "slice": (0,), "concatenate": None, "split": (0,), "pad": (0, 1), "dynamic_slice": (0,),
    "dynamic_update_slice": (0, 1), "gather": (0,), "scatter": (0, 2), "stack": None,
}

#: Primitives that pass their operand through unchanged once derivatives are taken.
IDENTITY = frozenset({"copy", "copy_p", "stop_gradient", "optimization_barrier", "reshard"})

#: Reductions and the binary primitive that folds them.
REDUCTIONS = {"reduce_sum": lax.add_p, "reduce_max": lax.max_p, "reduce_min": lax.min_p, "reduce_prod": lax.mul_p,
              "reduce_and": lax.and_p, "reduce_or": lax.or_p}
#: What a reduction over nothing gives.
IDENTITIES = {"reduce_sum": 0, "reduce_max": -np.inf, "reduce_min": np.inf, "reduce_prod": 1, "reduce_and": True,
              "reduce_or": False}


def reduction_identity(name: str, dtype) -> np.ndarray:
    """What the reduction ``name`` of nothing gives, as ``dtype`` (an integer max or min
    starts from the type's smallest or largest value instead of an infinity)."""
    identity = IDENTITIES[name]
    if np.isinf(identity) and np.dtype(dtype).kind in "iu":
        identity = np.iinfo(dtype).min if identity < 0 else np.iinfo(dtype).max
    return np.asarray(identity, dtype)


CUMULATIVE = {"cumsum": lax.add_p, "cummax": lax.max_p, "cummin": lax.min_p, "cumprod": lax.mul_p}

#: Call-like primitives: their inner jaxpr is evaluated in place (``custom_jvp_call`` by its
#: primal; take derivatives before evaluating component-wise).
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
         "remat": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
         "custom_vjp_call_jaxpr": "fun_jaxpr"}


def is_concrete(cell) -> bool:
    """True for a number known at trace time (NumPy), False for a traced per-block value."""
    return isinstance(cell, (np.ndarray, np.generic, bool, int, float))


def cells_of(value, dtype=None) -> np.ndarray:
    """A concrete array as an object array of NumPy scalars (its cells)."""
    value = np.asarray(value, dtype=dtype)
    out = np.empty(value.shape, dtype=object)
    for index in np.ndindex(value.shape):
        out[index] = value[index]
    return out


def traced_cells(components, shape) -> np.ndarray:
    """A list of per-block values (row-major) as an object array of ``shape``."""
    out = np.empty(int(np.prod(shape, dtype=int)), dtype=object)
    for i, component in enumerate(components):
        out[i] = component
    return out.reshape(shape)


def _block_shape(cells):
    shapes = {jnp.shape(c) for c in cells if not is_concrete(c)}
    shapes.discard(())
    if len(shapes) > 1:
        raise Unsupported(f"cells of different block shapes {sorted(shapes)}")
    return shapes.pop() if shapes else ()


#: When a dict, :func:`bind` counts the per-lane operations it traces, by primitive name.
_COUNTS: list[dict[str, int]] = []
#: Per evaluation (:class:`Componentwise`), the operations traced so far: the same primitive on
#: the same cells with the same parameters is traced once (common subexpressions, e.g. a
#: forcing that the vector field evaluates for the force balance and again for the motion).
_TRACED: list[dict[Any, Any]] = []


#: NumPy twins of common elementwise primitives, to fold constants without compiling an XLA
#: program per operation (``jax.ensure_compile_time_eval`` compiles each one it meets). Only
#: correctly rounded operations, which NumPy and XLA round alike; integers wrap alike too,
#: except in division (XLA truncates, NumPy floors). Transcendental functions, powers and
#: integer division are folded by XLA.
_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "neg": np.negative,
          "max": np.maximum, "min": np.minimum, "abs": np.abs, "sign": np.sign, "sqrt": np.sqrt,
          "square": np.square, "floor": np.floor, "ceil": np.ceil, "is_finite": np.isfinite, "lt": np.less,
          "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
          "and": np.logical_and, "or": np.logical_or, "not": np.logical_not, "add_any": np.add,
          "clamp": lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), "convert_element_type": None}


def _broadcast_in_dim(x, shape, broadcast_dimensions, **_):
    expanded = [1] * len(shape)
    for axis, size in zip(broadcast_dimensions, x.shape):
        expanded[axis] = size
    return np.broadcast_to(x.reshape(expanded), shape)


#: Data movement folded by NumPy (exact: no arithmetic), so that folding the constants of a
#: system (tables of sliders, elements, a chain's masses) compiles no XLA program per shape.
_MOVE = {
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": lambda x, new_sizes, dimensions=None, **_: None if dimensions is not None else x.reshape(new_sizes),
    "squeeze": lambda x, dimensions, **_: np.squeeze(x, axis=tuple(dimensions)),
    "slice": lambda x, start_indices, limit_indices, strides=None, **_: x[tuple(
        slice(a, b, c) for a, b, c in zip(start_indices, limit_indices, strides or [1] * x.ndim))],
    "select_n": lambda which, *cases, **_: np.choose(which.astype(np.int64), cases) if which.ndim else cases[int(which)],
    "concatenate": lambda *xs, dimension, **_: np.concatenate(xs, axis=dimension),
    "transpose": lambda x, permutation, **_: np.transpose(x, permutation),
    "rev": lambda x, dimensions, **_: np.flip(x, tuple(dimensions)),
}


def _fold_numpy(primitive, cells, params):
    """The constant ``primitive(*cells)`` by NumPy, or None where NumPy is not its twin."""
    name = primitive.name
    kinds = {np.asarray(c).dtype.kind for c in cells}
    if name in _MOVE and kinds <= set("fbiu"):
        out = _MOVE[name](*[np.asarray(c) for c in cells], **params)
        return None if out is None else np.array(out)  # a copy: a broadcast is a read-only view
    if name not in _NUMPY or not kinds <= set("fbiu") or (name == "div" and not kinds <= {"f"}):
        return None
    with np.errstate(all="ignore"):
        if name == "convert_element_type":
            target = np.dtype(params["new_dtype"])
            source = np.asarray(cells[0])
            if target.kind not in "fbiu" or (source.dtype.kind == "f" and target.kind in "iu"):
                return None  # float -> int: NaN and overflow are XLA's to define
            return np.asarray(source.astype(target))
        if name in ("and", "or", "not") and kinds != {"b"}:
            name = {"and": "bitwise_and", "or": "bitwise_or", "not": "invert"}[name]
            return np.asarray(getattr(np, name)(*[np.asarray(c) for c in cells]))
        return np.asarray(_NUMPY[name](*[np.asarray(c) for c in cells]))


def bind(primitive, cells, params) -> Any:
    """``primitive`` applied to one cell of each operand: folded when all are concrete,
    otherwise traced on ``(block,)`` values (shared scalars broadcast to the block)."""
    if all(is_concrete(c) for c in cells):
        folded = None if primitive.multiple_results else _fold_numpy(primitive, cells, params)
        if folded is not None:
            return folded
        with jax.ensure_compile_time_eval():
            out = primitive.bind(*[jnp.asarray(c) for c in cells], **params)
        return [np.asarray(o) for o in out] if primitive.multiple_results else np.asarray(out)
    key = None
    if _TRACED:
        try:
            key = (primitive, tuple(("v", np.asarray(c).tobytes(), str(np.asarray(c).dtype)) if is_concrete(c)
                                   else id(c) for c in cells),
                   tuple(sorted(params.items())))
            hash(key)
        except (TypeError, ValueError):
            key = None
        if key is not None and key in _TRACED[-1]:
            return _TRACED[-1][key][0]
    shape = _block_shape(cells)
    if _COUNTS and shape:
        _COUNTS[-1][primitive.name] = _COUNTS[-1].get(primitive.name, 0) + 1
    args = []
    for c in cells:
        c = jnp.asarray(c, dtype=c.dtype) if is_concrete(c) else c
        args.append(lax.broadcast_in_dim(c, shape, ()) if jnp.shape(c) != shape else c)
    out = primitive.bind(*args, **params)
    if key is not None:
        _TRACED[-1][key] = (out, cells)  # the cells are kept alive: their ids stay theirs
    return out


def _fold(primitive, cells, params=None):
    return functools.reduce(lambda a, b: bind(primitive, [a, b], params or {}), cells)


def select(which, cases) -> Any:
    """``cases[which]`` for one cell of an index or boolean ``which``, as two-way selects on a
    boolean (Triton's ``select`` takes a boolean and two cases, nothing else)."""
    if is_concrete(which):
        return cases[int(which)]
    if len(cases) == 2 and jnp.dtype(which.dtype) == jnp.dtype(bool):
        return bind(lax.select_n_p, [which, *cases], {})
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        is_k = bind(lax.eq_p, [which, np.asarray(k, which.dtype)], {})
        out = bind(lax.select_n_p, [is_k, out, cases[k]], {})
    return out


def _elementwise(eqn, ins):
    shape = eqn.outvars[0].aval.shape
    if eqn.primitive.name == "select_n":
        which = np.broadcast_to(ins[0], shape)
        cases = [np.broadcast_to(x, shape) for x in ins[1:]]
        out = np.empty(shape, dtype=object)
        for index in np.ndindex(shape):
            out[index] = select(which[index], [c[index] for c in cases])
        return [out]
    ins = [np.broadcast_to(x, shape) for x in ins]
    outs = [np.empty(shape, dtype=object) for _ in eqn.outvars]
    for index in np.ndindex(shape):
        result = bind(eqn.primitive, [x[index] for x in ins], eqn.params)
        for out, r in zip(outs, result if eqn.primitive.multiple_results else [result]):
            out[index] = r
    return outs


def _movement_numpy(eqn, ins):
    """The common data movements done directly on the object arrays (no XLA program), or None."""
    name, params, x = eqn.primitive.name, eqn.params, ins[0]
    if name == "reshape" and params.get("dimensions") is None:
        return [x.reshape(params["new_sizes"])]
    if name == "squeeze":
        return [x.reshape(eqn.outvars[0].aval.shape)]
    if name == "broadcast_in_dim":
        shape, dims = tuple(params["shape"]), tuple(params["broadcast_dimensions"])
        expanded = [1] * len(shape)
        for i, d in enumerate(dims):
            expanded[d] = x.shape[i]
        return [np.broadcast_to(x.reshape(expanded), shape)]
    if name == "concatenate":
        return [np.concatenate(ins, axis=params["dimension"])]
    if name == "stack":
        return [np.stack(ins, axis=params["axis"])]
    if name == "transpose":
        return [np.transpose(x, params["permutation"])]
    if name == "rev":
        return [np.flip(x, axis=tuple(params["dimensions"]))]
    if name == "slice":
        strides = params["strides"] or (1,) * x.ndim
        return [x[tuple(slice(a, b, c) for a, b, c in zip(params["start_indices"], params["limit_indices"], strides))]]
    return None


def _movement(eqn, ins):
    """Data movement: the primitive is applied to integer labels of the data operands' cells,
    and the cells are picked up by label (one rule for slices, gathers, pads and the rest)."""
    fast = _movement_numpy(eqn, ins)
    if fast is not None:
        return fast
    data = MOVEMENT[eqn.primitive.name]
    data = range(len(ins)) if data is None else data
    pool, labelled, offset = [], [], 0
    for i, x in enumerate(ins):
        if i in data:
            pool.extend(np.ravel(x))
            labelled.append(np.arange(offset, offset + x.size, dtype=np.int32).reshape(x.shape))
            offset += x.size
        else:
            if not all(is_concrete(c) for c in np.ravel(x)):
                raise Unsupported(f"{eqn.primitive.name} at an index that depends on the lane's state or parameters")
            labelled.append(np.asarray(list(np.ravel(x)), dtype=eqn.invars[i].aval.dtype).reshape(x.shape)
                            if x.size else np.zeros(x.shape, eqn.invars[i].aval.dtype))
    params = dict(eqn.params)
    if eqn.primitive.name == "gather" and params.get("fill_value") is not None:
        params["fill_value"] = -1
    with jax.ensure_compile_time_eval():
        out = eqn.primitive.bind(*[jnp.asarray(x) for x in labelled], **params)
    outs = out if eqn.primitive.multiple_results else [out]
    result = []
    for o in outs:
        labels = np.asarray(o)
        if labels.size and (labels.min() < 0 or labels.max() >= len(pool)):
            raise Unsupported(f"{eqn.primitive.name} outside its operand")
        cells = np.empty(labels.shape, dtype=object)
        for index in np.ndindex(labels.shape):
            cells[index] = pool[labels[index]]
        result.append(cells)
    return result


def _reduction(eqn, ins):
    (x,), axes = ins, tuple(eqn.params["axes"])
    keep = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, keep + list(axes)).reshape([x.shape[a] for a in keep] + [-1])
    out = np.empty(moved.shape[:-1], dtype=object)
    name, dtype = eqn.primitive.name, eqn.outvars[0].aval.dtype
    for index in np.ndindex(out.shape):
        cells = list(moved[index])
        if not cells:
            out[index] = reduction_identity(name, dtype)
        else:
            out[index] = _fold(REDUCTIONS[name], cells)
    return [out]


def _cumulative(eqn, ins):
    (x,), axis, reverse = ins, eqn.params["axis"], eqn.params["reverse"]
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape, dtype=object)
    for index in np.ndindex(moved.shape[:-1]):
        row = list(moved[index])[::-1] if reverse else list(moved[index])
        acc = []
        for c in row:
            acc.append(c if not acc else bind(CUMULATIVE[eqn.primitive.name], [acc[-1], c], {}))
        out[index] = np.array((acc[::-1] if reverse else acc) + [None], dtype=object)[:-1]
    return [np.moveaxis(out, -1, axis)]


def _dot_general(eqn, ins):
    lhs, rhs = ins
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lf = [a for a in range(lhs.ndim) if a not in lc and a not in lb]
    rf = [a for a in range(rhs.ndim) if a not in rc and a not in rb]
    lhs = np.transpose(lhs, list(lb) + lf + list(lc))
    rhs = np.transpose(rhs, list(rb) + rf + list(rc))
    n_b, n_c = len(lb), len(lc)
    out_shape = lhs.shape[: n_b + len(lf)] + rhs.shape[n_b : n_b + len(rf)]
    contracted = int(np.prod(lhs.shape[lhs.ndim - n_c :], dtype=int))
    dtype = eqn.outvars[0].aval.dtype
    out = np.empty(out_shape, dtype=object)
    for index in np.ndindex(out_shape):
        b, i, j = index[:n_b], index[n_b : n_b + len(lf)], index[n_b + len(lf) :]
        left = np.reshape(lhs[b + i], contracted)
        right = np.reshape(rhs[b + j], contracted)
        terms = [bind(lax.mul_p, [_cast(a, dtype), _cast(c, dtype)], {}) for a, c in zip(left, right)]
        out[index] = _fold(lax.add_p, terms) if terms else np.zeros((), dtype)
    return [out]


def _cast(cell, dtype):
    if jnp.dtype(cell.dtype) == jnp.dtype(dtype):
        return cell
    return bind(lax.convert_element_type_p, [cell], {"new_dtype": jnp.dtype(dtype), "weak_type": False,
                                                    "sharding": None})


def _cond(eqn, ins):
    index, operands = ins[0], ins[1:]
    branches = eqn.params["branches"]
    cell = index[()]
    if is_concrete(cell):
        branch = branches[int(np.clip(int(cell), 0, len(branches) - 1))]
        return evaluate(branch.jaxpr, branch.consts, operands)
    results = [evaluate(b.jaxpr, b.consts, operands) for b in branches]  # every branch, then select per lane
    cell = bind(lax.clamp_p, [np.asarray(0, cell.dtype), cell, np.asarray(len(branches) - 1, cell.dtype)], {})
    outs = []
    for k, var in enumerate(eqn.outvars):
        out = np.empty(var.aval.shape, dtype=object)
        for idx in np.ndindex(var.aval.shape):
            out[idx] = select(cell, [r[k][idx] for r in results])
        outs.append(out)
    return outs


def _iota(eqn, ins):
    with jax.ensure_compile_time_eval():
        return [cells_of(eqn.primitive.bind(**eqn.params))]


def _call(eqn, ins):
    inner = eqn.params[CALLS[eqn.primitive.name]]
    if isinstance(inner, jex_core.ClosedJaxpr):
        return evaluate(inner.jaxpr, inner.consts, ins)
    return evaluate(inner, (), ins)


def _rule(name):
    if name in ELEMENTWISE:
        return _elementwise
    if name in MOVEMENT:
        return _movement
    if name in REDUCTIONS:
        return _reduction
    if name in CUMULATIVE:
        return _cumulative
    if name in CALLS:
        return _call
    if name in IDENTITY:
        return lambda eqn, ins: list(ins)
    return {"dot_general": _dot_general, "cond": _cond, "iota": _iota}.get(name)


def evaluate(jaxpr, consts, args) -> list:
    """Evaluate ``jaxpr`` component-wise.

    Args:
        jaxpr: a ``jax.extend.core.Jaxpr`` of one lane's function.
        consts: its constants (arrays, folded to numbers).
        args: one object array of cells per input variable, of the variable's shape.

    Returns:
        A list of object arrays of cells, one per output variable.

    Raises:
        Unsupported: a primitive (named) that cannot be evaluated component-wise.
    """
    env: dict[Any, Any] = {}

    def read(var) -> Any:
        if isinstance(var, jex_core.Literal):
            return cells_of(var.val, var.aval.dtype)  # type: ignore[attr-defined]  # a jaxpr variable's aval is a ShapedArray
        return env[var]

    for var, const in zip(jaxpr.constvars, consts):
        env[var] = cells_of(const, var.aval.dtype)
    for var, arg in zip(jaxpr.invars, args):
        if np.shape(arg) != var.aval.shape:
            raise ValueError(f"component-wise argument of shape {np.shape(arg)} for a variable of shape "
                             f"{var.aval.shape}")
        env[var] = arg
    for eqn in jaxpr.eqns:
        rule = _rule(eqn.primitive.name)
        if rule is None:
            raise Unsupported(f"the primitive {eqn.primitive.name!r}")
        outs = rule(eqn, [read(v) for v in eqn.invars])
        for var, out in zip(eqn.outvars, outs):
            if not isinstance(var, jex_core.DropVar):
                env[var] = out
    return [read(v) for v in jaxpr.outvars]


def live_equations(jaxpr) -> list:
    """The equations of the flat ``jaxpr`` that its outputs read, in order. A traced piece
    computes values nobody reads (the potential energy beside its gradient; a marched law's
    state rate, which the march replaces), which a program written from it need not hold."""
    read = {v for v in jaxpr.outvars if not isinstance(v, jex_core.Literal)}
    live = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(v in read for v in eqn.outvars if not isinstance(v, jex_core.DropVar)):
            live.append(eqn)
            read.update(v for v in eqn.invars if not isinstance(v, jex_core.Literal))
    return live[::-1]


class Componentwise:
    """A per-lane function traced once and evaluated component-wise on blocks of lanes.

    Args:
        fn: ``fn(*args) -> output`` for one lane, arrays (or pytrees of arrays) in and out.
        *example_args: arguments of one lane (shapes and dtypes; values unused).

    Raises:
        Unsupported: at the first primitive that cannot be evaluated component-wise.
    """

    def __init__(self, fn, *example_args):
        self.closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*example_args)
        self.out_tree = jax.tree.structure(out_shape)
        self.primitives = sorted(_names(self.closed.jaxpr))
        missing = [n for n in self.primitives if _rule(n) is None]
        if missing:
            raise Unsupported(f"the primitive(s) {missing}")

    def __call__(self, *args):
        """``args``: like the example arguments, with every array replaced by an object array
        of cells. Returns the output pytree with object arrays of cells."""
        leaves = jax.tree.leaves(args, is_leaf=lambda x: isinstance(x, np.ndarray))
        _TRACED.append({})
        try:
            out = evaluate(self.closed.jaxpr, self.closed.consts, leaves)
        finally:
            _TRACED.pop()
        return jax.tree.unflatten(self.out_tree, out)


def count_operations(fn, *args) -> tuple[Any, dict]:
    """``fn(*args)`` run while counting the per-lane operations :func:`bind` traces.

    Returns:
        ``(result, counts)``: ``counts`` maps primitive names (``"add"``, ``"mul"``,
            ``"div"``, ``"sin"``, ...) to the number of per-lane operations, the arithmetic a
            kernel does per lane (shared scalars and folded constants excluded).
    """
    _COUNTS.append({})
    try:
        return fn(*args), _COUNTS[-1]
    finally:
        _COUNTS.pop()


def _names(jaxpr):
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            for inner in value if isinstance(value, tuple) else (value,):
                if isinstance(inner, jex_core.ClosedJaxpr):
                    names |= _names(inner.jaxpr)
                elif isinstance(inner, jex_core.Jaxpr):
                    names |= _names(inner)
    return names
