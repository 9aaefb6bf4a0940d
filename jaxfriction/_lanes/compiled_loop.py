"""The lane program's pieces emitted as Python source and compiled by numba, for CPUs.

On a CPU, XLA runs a small-state loop op by op (``vmap`` of ``lax.scan``), far below a
hand-written compiled loop, and Pallas has no CPU backend. But the compiled executors'
component-wise evaluation (:mod:`jaxfriction._lanes.componentwise`) already reduces a
lane's RK4 step, its forward-mode tangents and its saved-point reductions to scalar
operations on cells. Here those pieces of a :class:`~jaxfriction._lanes.pieces.LanePieces`
are traced once more, on a block of ``L`` lanes, into flat jaxprs whose every equation is an
elementwise operation on a shared scalar (shape ``()``: the time, the template's fixed
parameters, a forcing shared by every lane) or on the block's lanes (shape ``(L,)``), and
each jaxpr is written out as Python source: the shared operations once per step, the lane
operations in a loop over the block's lanes (which LLVM vectorizes). Within a piece an
expression is written once (an RK4 step's jaxpr evaluates e.g. ``1 / (mu N)`` at every
stage), and what depends on the lane's parameters and the shared values only is written
once per block for all pieces; the reduction rules of :mod:`jaxfriction._lanes.pieces` are
traced and written the same way. The whole time loop (transient, window, reductions at the
saved points, on :class:`~jaxfriction._lanes.pieces.WindowPlan`'s grids) is one loop over the steps around the pieces, each piece written once, in
one function ``run`` (numba's compile time grows with the functions and the branches of a
program: conditional values are LLVM ``select`` s, not branches), and numba compiles it
(IEEE arithmetic except the contraction of ``a * b + c`` to a fused multiply-add, as
XLA:CPU compiles it); Python threads run its blocks of lanes in parallel (see
:class:`~jaxfriction._lanes.numba_program.Program`).

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

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jex_core

from .componentwise import Unsupported, is_concrete, live_equations, traced_cells
from .numba_program import load
from .pieces import final_measures, first_measures, merge_measures, running_max

#: Lanes per block: the inner loop LLVM vectorizes (16 doubles: two AVX-512 or four AVX2 registers).
LANES = 16

#: Expressions of elementwise primitives on names ``a``, ``b``, ``c`` (their operands). NaN
#: rules are XLA's: ``max``/``min`` propagate NaN; ``sign`` keeps signed zeros and NaN.
#: ``sel(c, a, b)`` is LLVM's ``select`` (:data:`_SELECT`): a Python conditional expression
#: would be branches, and numba's compile time grows with the blocks of a function.
_EXPRESSIONS = {
    "add": "{a} + {b}", "add_any": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "neg": "-{a}",
    "max": "sel(({a} > {b}) | ({a} != {a}), {a}, {b})",
    "min": "sel(({a} < {b}) | ({a} != {a}), {a}, {b})",
    "abs": "abs({a})", "sqrt": "math.sqrt({a})", "rsqrt": "{one} / math.sqrt({a})", "square": "{a} * {a}",
    "exp": "math.exp({a})", "exp2": "math.pow({two}, {a})", "expm1": "math.expm1({a})", "log": "math.log({a})",
    "log1p": "math.log1p({a})", "sin": "math.sin({a})", "cos": "math.cos({a})", "tan": "math.tan({a})",
    "asin": "math.asin({a})", "acos": "math.acos({a})", "atan": "math.atan({a})", "atan2": "math.atan2({a}, {b})",
    "sinh": "math.sinh({a})", "cosh": "math.cosh({a})", "tanh": "math.tanh({a})", "asinh": "math.asinh({a})",
    "acosh": "math.acosh({a})", "atanh": "math.atanh({a})", "erf": "math.erf({a})", "erfc": "math.erfc({a})",
    "lgamma": "math.lgamma({a})", "pow": "{a} ** {b}", "logistic": "{one} / ({one} + math.exp(-{a}))",
    "floor": "np.floor({a})", "ceil": "np.ceil({a})", "is_finite": "math.isfinite({a})",
    "sign": "sel(({a} == {zero}) | ({a} != {a}), {a}, sel({a} > {zero}, {one}, -{one}))",
    "lt": "{a} < {b}", "le": "{a} <= {b}", "gt": "{a} > {b}", "ge": "{a} >= {b}", "eq": "{a} == {b}",
    "ne": "{a} != {b}",
    "clamp": "sel({b} < {a}, {a}, sel({b} > {c}, {c}, {b}))",
    "copy": "{a}", "copy_p": "{a}", "stop_gradient": "{a}", "optimization_barrier": "{a}", "reshard": "{a}",
}
#: ``sel(c, a, b)``: ``a`` where ``c`` else ``b``, one LLVM ``select`` (no branches).
_SELECT = '''from numba.extending import intrinsic


@intrinsic
def sel(typingctx, c, a, b):
    ty = typingctx.unify_types(a, b)

    def codegen(context, builder, signature, args):
        return builder.select(args[0], context.cast(builder, args[1], a, ty), context.cast(builder, args[2], b, ty))

    return ty(c, a, b), codegen

'''
#: ``radd(a, b)``: ``a + b`` that LLVM may reassociate (the looped programs' folded sums).
_REASSOCIATE = '''

@intrinsic
def radd(typingctx, a, b):
    def codegen(context, builder, signature, args):
        return builder.fadd(args[0], args[1], flags=("reassoc",))

    return a(a, b), codegen

'''
#: Boolean operators (on bools: without short-circuit, which would branch) and their integer
#: (bitwise) forms.
_LOGICAL = {"and": ("({a} & {b})", "({a} & {b})"), "or": ("({a} | {b})", "({a} | {b})"),
            "xor": ("({a} != {b})", "({a} ^ {b})"), "not": ("(not {a})", "(~{a})")}


def _ctor(dtype) -> str:
    """The numba constructor of a scalar of ``dtype`` (``np.float64``, ``np.bool_``, ...)."""
    return f"np.{np.dtype(dtype).name}"


class _Writer:
    """Python source of scalar operations from flat jaxprs (one per piece of the program)."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)  # the program's float type
        self.constants = {}  # (dtype, bits) -> name
        self.arrays = {}  # name -> a constant array (the looped programs' tables)
        self.types = {}  # name -> dtype, of every value written (constants, inputs, results)
        self.n = 0
        # values that depend on the lane's parameters and the shared values only (not on the
        # time or the state), written once per block (lane values, kept in rows of ``Q``
        # arrays) or once per call (shared scalars), for every piece: their names, lines
        # and expressions (the looped programs' shared values and tables by ``(what,
        # expression)``: :meth:`~jaxfriction._lanes.looped.Piece._shared`)
        self.invariant, self.hoisted_shared, self.hoisted_lane, self.hoisted = set(), [], [], {}

    def constant(self, value, dtype) -> str:
        value = np.asarray(value, dtype=dtype)
        if value.size != 1:
            flat = np.ravel(value)
            if not np.all(flat == flat[0]) and not np.all(np.isnan(flat)):
                raise Unsupported(f"a constant array of shape {value.shape} in the lane program")
            value = flat[0]
        value = np.asarray(value, dtype=dtype).reshape(())
        key = (str(value.dtype), value.tobytes())
        if key not in self.constants:
            self.constants[key] = (f"K{len(self.constants)}", value)
            self.types[self.constants[key][0]] = value.dtype
            self.invariant.add(self.constants[key][0])
        return self.constants[key][0]

    def globals_source(self) -> list[str]:
        lines = []
        for name, value in self.constants.values():
            kind = value.dtype.kind
            if kind == "f":
                text = f"float.fromhex({float(value).hex()!r})" if np.isfinite(value) else repr(str(float(value)))
                lines.append(f"{name} = {_ctor(value.dtype)}({text})")
            elif kind == "b":
                lines.append(f"{name} = {bool(value)}")
            elif kind in "iu":
                lines.append(f"{name} = {_ctor(value.dtype)}({int(value)})")
            else:
                raise Unsupported(f"a constant of dtype {value.dtype} in the lane program")
        return lines

    def name(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def write(self, closed, in_names, hoist=True) -> tuple[list[str], list[str], list[str], list[str]]:
        """``(shared_lines, lane_lines, out_names)`` for the flat jaxpr ``closed`` whose inputs
        are the names ``in_names``: shape-``()`` equations go to the shared lines, the others
        (one lane's cell of a ``(L,)`` value) to the lane lines. An expression already
        written in this piece is not written again (the jaxpr of an RK4 step evaluates the
        parameters' functions, e.g. ``1 / (mu N)``, once per stage). With ``hoist``, an
        expression of invariant names only goes to the hoisted lines (once for all pieces);
        the fourth list names the hoisted lane values that this piece's lane lines read."""
        jaxpr = closed.jaxpr
        env: dict[Any, str] = {}
        seen: dict[Any, Any] = {}
        for var, const in zip(jaxpr.constvars, closed.consts):
            env[var] = self.constant(np.asarray(const), var.aval.dtype)
        for var, name in zip(jaxpr.invars, in_names):
            env[var] = name
            self.types.setdefault(name, np.dtype(var.aval.dtype))

        def read(var) -> str:
            if isinstance(var, jex_core.Literal):
                return self.constant(var.val, var.aval.dtype)  # type: ignore[attr-defined]  # a jaxpr variable's aval is a ShapedArray
            return env[var]

        shared: list[str] = []
        lane: list[str] = []
        for eqn in live_equations(jaxpr):
            outs = [v for v in eqn.outvars if not isinstance(v, jex_core.DropVar)]
            if not outs:
                continue
            args = [read(v) for v in eqn.invars]
            name = eqn.primitive.name
            if name == "broadcast_in_dim" or (name in ("reshape", "squeeze", "expand_dims")
                                              and np.prod(eqn.outvars[0].aval.shape, dtype=int) ==
                                              np.prod(eqn.invars[0].aval.shape, dtype=int)):
                env[outs[0]] = args[0]  # a shared scalar (or a block value) seen as a block value
                continue
            if len(outs) != 1:
                raise Unsupported(f"the primitive {name!r} in the compiled loop")
            out = outs[0]
            expr = self.expression(eqn, args)
            if hoist and all(a in self.invariant for a in args):
                if expr not in self.hoisted:
                    if expr in self.types:
                        self.hoisted[expr] = expr
                    else:
                        self.hoisted[expr] = self.name()
                        self.types[self.hoisted[expr]] = np.dtype(out.aval.dtype)
                        self.invariant.add(self.hoisted[expr])
                        target = self.hoisted_shared if out.aval.shape == () else self.hoisted_lane
                        target.append(f"{self.hoisted[expr]} = {expr}")
                env[out] = self.hoisted[expr]
                continue
            if expr in seen:
                env[out] = seen[expr]
                continue
            if expr in self.types:  # the expression is a bare name (an identity, a conversion to its own type)
                env[out] = seen[expr] = expr
                continue
            env[out] = seen[expr] = self.name()
            self.types[env[out]] = np.dtype(out.aval.dtype)
            (shared if out.aval.shape == () else lane).append(f"{env[out]} = {expr}")
        outs = [read(v) for v in jaxpr.outvars]
        lane_hoisted = {line.split(" = ", 1)[0] for line in self.hoisted_lane}
        used = set(re.findall(r"\bv\d+\b", "\n".join(lane + outs)))
        return shared, lane, outs, sorted(used & lane_hoisted, key=lambda v: int(v[1:]))

    def is_number(self, name) -> bool:
        """Whether ``name`` is a constant other than NaN."""
        value = next((v for n, v in self.constants.values() if n == name), None)
        return value is not None and not np.isnan(value)

    def cast(self, name, dtype) -> str:
        """``name`` as a value of ``dtype`` (a conversion only where its type differs)."""
        return name if self.types.get(name) == np.dtype(dtype) else f"{_ctor(dtype)}({name})"

    def expression(self, eqn, args) -> str:
        name, params = eqn.primitive.name, eqn.params
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        in_dtype = np.dtype(eqn.invars[0].aval.dtype) if eqn.invars else dtype
        ctor = _ctor(dtype)
        wrap = (lambda e: e) if dtype == np.float64 else (lambda e: f"{ctor}({e})")  # float64 stays float64
        named = dict(zip("abc", args))
        if name == "convert_element_type":
            if dtype.kind == "b":
                return f"({args[0]} != {self.constant(0, in_dtype)})"
            return self.cast(args[0], dtype)
        if name == "select_n":
            which, cases = args[0], args[1:]
            if np.dtype(eqn.invars[0].aval.dtype).kind == "b":
                return f"sel({which}, {cases[1]}, {cases[0]})"
            expr = cases[-1]
            for k in range(len(cases) - 2, -1, -1):
                expr = f"({cases[k]} if {which} == {k} else {expr})"
            return expr
        if name == "integer_pow":  # as JAX lowers it: binary powering by multiplications
            y, x, acc = int(params["y"]), args[0], None
            if y == 0:
                return self.constant(1, dtype)
            reciprocal, y = y < 0, abs(y)
            while y > 0:
                if y & 1:
                    acc = x if acc is None else f"({acc} * {x})"
                y >>= 1
                if y > 0:
                    x = f"({x} * {x})"
            return wrap(f"{self.constant(1, dtype)} / {acc}") if reciprocal else wrap(acc)
        if name in _LOGICAL:
            template = _LOGICAL[name][0 if dtype.kind == "b" else 1]
            return template.format(**named)
        if name in ("div", "rem") and dtype.kind in "iu":
            a, b = args
            quotient = f"(abs({a}) // abs({b})) * (1 if ({a} < 0) == ({b} < 0) else -1)"  # C: toward zero
            return f"{ctor}({quotient})" if name == "div" else f"{ctor}({a} - {b} * {quotient})"
        if name == "div":
            return wrap(f"{args[0]} / {args[1]}")
        if name == "rem":
            return wrap(f"math.fmod({args[0]}, {args[1]})")
        if name == "round":
            a = args[0]
            if int(params.get("rounding_method", 0)) == 0:  # half away from zero
                return wrap(f"math.copysign(np.floor(abs({a}) + {self.constant(0.5, dtype)}), {a})")
            return wrap(f"np.rint({a})")
        if name not in _EXPRESSIONS:
            raise Unsupported(f"the primitive {name!r} in the compiled loop (no scalar form)")
        if dtype.kind not in "fb" and name not in ("add", "sub", "mul", "neg", "max", "min", "abs", "clamp", "lt",
                                                     "le", "gt", "ge", "eq", "ne", "copy", "copy_p"):
            raise Unsupported(f"the primitive {name!r} on {dtype} in the compiled loop")
        if name in ("max", "min") and self.is_number(args[0]):  # a constant, not NaN: no NaN test on it
            return f"sel({args[0]} {'>' if name == 'max' else '<'} {args[1]}, {args[0]}, {args[1]})"
        consts = {}
        if dtype.kind == "f" or in_dtype.kind == "f":
            real = dtype if dtype.kind == "f" else in_dtype
            consts = {"one": self.constant(1, real), "two": self.constant(2, real), "zero": self.constant(0, real)}
        expr = _EXPRESSIONS[name].format(**named, **consts)
        # float64 arithmetic stays float64 in numba; other types are pinned (float32 math
        # functions may widen, integers would follow Python's rules)
        return expr if dtype.kind == "b" or dtype == np.float64 else f"{ctor}({expr})"


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
            self.source = _one_lane(self.source)
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
        writer = _Writer(dtype)
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
        return self._program(writer, pieces, point_names, n_c)

    def _looped_source(self, stages: bool) -> str:
        """The program with every piece written as loops over the lane's arrays (``stages``:
        the later RK4 stages written once, in a loop over them)."""
        from .looped import Piece
        from .looped_values import Buffer, Lane, Uniform

        f, dtype = self.fused, self.dtype
        n_y, n_w, n_p = f.n_y, f.n_w, f.n_p
        n_c = n_y * (1 + n_w)
        writer = _Writer(dtype)
        shared, at, self._shared_scalars = [], 0, []
        for x in f.shared:
            size = int(np.prod(x.shape, dtype=int))
            if not x.shape:
                self._shared_scalars.append((f"s{at}", at, np.dtype(x.dtype)))
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
        return self._program(writer, pieces, point_names, n_c)

    def _rule(self, writer, rule, args, targets) -> list[str]:
        """The lines of one lane that evaluate ``rule(*args)`` (a reduction rule of
        :mod:`jaxfriction._lanes.pieces`) and store its outputs in ``targets``; ``args`` and
        ``targets`` are pytrees of the names of one lane's values (strings)."""
        leaves, tree = jax.tree.flatten(args)
        out_leaves, out_tree = jax.tree.flatten(targets)
        spec = _block_arg(self.dtype, self.lanes)

        def flat(*values):
            out = rule(*jax.tree.unflatten(tree, list(values)))
            return jax.tree.leaves(jax.tree.map(lambda _, v: v, jax.tree.unflatten(out_tree, out_leaves), out))

        with jax.disable_jit():  # inlined: jnp.where and isnan are jitted functions
            closed = jax.make_jaxpr(flat)(*[spec] * len(leaves))
        shared, lane, outs, _ = writer.write(closed, leaves, hoist=False)
        assert not shared, shared  # every input is a lane's value
        return lane + [f"{target} = {writer.cast(name, self.dtype)}" for target, name in zip(out_leaves, outs)
                       if target != name]

    # -- the program ----------------------------------------------------------------------
    def _program(self, writer, pieces, point_names, n_c) -> str:
        """The module: one function ``run`` (numba compiles one function: each function of
        its own costs a compilation, and a callee's code is optimized again in each caller).
        A thread's blocks of lanes in turn; per block, one loop over the ``N`` steps of the
        transient and the window, each piece written once: at state ``m`` (after ``m``
        steps) the transient's rate where due, the window's saved points where due
        (the first at ``m = n_pre``, the last at ``m = N``), then step ``m``. A piece is its
        shared lines (scalars, once per step) and its loop over the block's lanes. A block's
        arrays are flat, rows at constant offsets ``row * L``: LLVM then sees that the lane
        loop's loads and stores never overlap and vectorizes it without runtime checks (it
        gives up past eight checked arrays, e.g. rows of a 2-D array with tangents)."""
        f, plan, dtype, L = self.fused, self.fused.plan, self.dtype, self.lanes
        F = _ctor(dtype)
        n_p, n_y, n_w = f.n_p, f.n_y, f.n_w
        rows = f.outputs
        offsets, at = {}, 0
        for name, size in point_names:
            offsets[name] = (at, size)
            at += size
        n_m = max(at, 1)
        n_pre, every, n_steps = plan.n_pre, plan.every, plan.n_pre + plan.n_saves * plan.every
        n_stage = f.n_k * (1 + n_w) if self.stages else 0  # a stage's K and its tangents (the stage loop)

        def cast(name):
            return writer.cast(name, dtype)

        def m(name, k=0):
            return f"M[{(offsets[name][0] + k) * L} + j]"

        def out_row(name, k=0):
            return rows[name][0] + k

        def loop(lines, indent):
            return [" " * indent + "for j in range(L):", *(" " * (indent + 4) + x for x in lines or ["pass"])]

        # the hoisted lane values that some piece reads: rows of one array per dtype
        kept = [] if self.looped else sorted({v for piece in pieces.values() for v in piece[3]},
                                             key=lambda v: int(v[1:]))
        q_arrays: dict[Any, list[Any]] = {}
        q_rows: dict[str, str] = {}
        for v in kept:
            array = q_arrays.setdefault(writer.types[v], [f"Q{len(q_arrays)}", 0])
            q_rows[v] = f"{array[0]}[{array[1] * L} + j]"
            array[1] += 1

        scratch: dict[Any, Any] = {}

        def looped(name, target, indent):
            """A looped piece (:mod:`jaxfriction._lanes.looped`), its outputs in ``target``."""
            return pieces[name].render(indent, L, scratch)

        def lanes_of(piece, n_carry, stores, indent):
            """A piece's shared lines and its lane loop (loads, its lines, ``stores(outs)``)."""
            used = set(re.findall(r"\b[pc]\d+\b", "\n".join(piece[1] + piece[2])))
            loads = [f"p{i} = PB[{i * L} + j]" for i in range(n_p) if f"p{i}" in used]
            loads += [f"c{i} = C[{i * L} + j]" for i in range(n_carry) if f"c{i}" in used]
            loads += [f"{v} = {q_rows[v]}" for v in piece[3]]
            return [" " * indent + x for x in piece[0]] + loop(loads + piece[1] + stores(piece[2]), indent)

        I = 12  # the step loop's body
        T0, HPRE = writer.constant(0.0, dtype), writer.constant(plan.h_pre, dtype)
        TM, H = writer.constant(plan.t_measure, dtype), writer.constant(plan.h, dtype)
        TEND = writer.constant(plan.t_measure + plan.n_saves * plan.every * plan.h, dtype)
        NEG_INF = writer.constant(-np.inf, dtype)
        # the reduction rules of the pieces (first, merged, final saved point; the transient's
        # running maximum), traced and written for the block's lanes
        measured = {k: m(k) for k in offsets if k != "peak_dot"}
        if "peak_dot" in offsets:
            measured["peak_dot"] = tuple(m("peak_dot", w) for w in range(n_w))
        acc = {"finite": "AF[j]", "stuck": "AS[j]", "stuck_first": "FS[j]", "peak": "AP[j]", "rate": "AR[j]",
               "peak_dot": tuple(f"AD[{w * L} + j]" for w in range(n_w))}
        acc = {k: acc[k] for k in first_measures(measured)}
        first = self._rule(writer, first_measures, (measured,), acc)
        merge = self._rule(writer, merge_measures, (acc, measured), acc)
        last = self._rule(writer, lambda acc, m: final_measures(acc, m, plan.n_saves), (acc, measured),
                          {k: v for k, v in acc.items() if k != "stuck_first"})

        def rate_max(new, due=None):  # the transient's rate: its running maximum in AQ
            lines = self._rule(writer, running_max, (new, "AQ[j]"), "q")
            return lines + [f"AQ[j] = {'q' if due is None else f'sel({due}, q, AQ[j])'}"]

        def rows_of(name, first, count):  # rows ``first...`` of C into the output rows of ``name``
            return [f"for i in range({count}):", f"    OUT[{out_row(name)} + i, lo + j] = C[({first} + i) * L + j]"]

        outs = rows_of("y_b", 0, n_y) + (rows_of("yb_dot", n_y, n_y * n_w) if n_w else [])
        outs += [f"OUT[{out_row('finite')}, lo + j] = AF[j]"]
        for name, accumulator in (("stuck", "AS"), ("peak", "AP"), ("rate", "AR"), ("rate_pre", "AQ")):
            if name in rows:
                outs += [f"OUT[{out_row(name)}, lo + j] = {accumulator}[j]"]
        if "peak_dot" in rows:
            outs += [f"OUT[{out_row('peak_dot', w)}, lo + j] = AD[{w * L} + j]" for w in range(n_w)]
        y_a = rows_of("y_a", 0, n_y) + (rows_of("ya_dot", n_y, n_y * n_w) if n_w else [])

        def store(array):
            return lambda names: [f"{array}[{i * L} + j] = {cast(o)}" for i, o in enumerate(names)]

        def step_stores(names):
            lines = store("C")(names[:n_c])
            if self.dense_rate:  # the transient's rate at the step's start (t = F(n) h_pre: T0 is 0)
                lines += [f"r = {cast(names[n_c])}", *rate_max("r", "due")]
            return lines

        def stage_loop(indent):
            """RK4's stages in the order and arithmetic of
            :func:`~jaxfriction._integrate.stages.staged_rk4_step`: the first stage's ``K``
            (``CK``, also ``CA``), then the later three as one loop over them (at ``ts``, from
            the step's start along the previous ``K`` over ``ha``: ``CZ``, summed into ``CA``
            with weights 2, 2, 1 and copied to ``CK``), then the ``finish`` piece from ``C``
            and ``CA``; the tangents ride along. The first stage is written apart: read from
            ``C`` itself, its rate is not a copy away, and each later stage's state is
            computed in the loops that read it (as loops of their own, the Iwan joint of 100
            sliders ran 335 M slider-steps/s instead of 455 M). The new state is copied over the
            old after it, as for a step written out."""
            half, two = writer.constant(0.5, dtype), writer.constant(2.0, dtype)

            def rows(at, *lines):
                return loop([f"for i in range({n_stage}):", *("    " + x for x in lines)], at)

            inner = " " * (indent + 4)
            return [*looped("field", "CK", indent), *rows(indent, "CA[i * L + j] = CK[i * L + j]"),
                    " " * indent + "for st in range(1, 4):",
                    inner + f"ts = sel(st == 3, t + h, t + {half} * h)",
                    inner + f"ha = sel(st == 3, h, {half} * h)",
                    inner + f"wt = sel(st == 3, {writer.constant(1.0, dtype)}, {two})",  # 1.0 x is x, to the bit
                    *looped("next_stage", "CZ", indent + 4),
                    *rows(indent + 4, "x = CZ[i * L + j]", "CA[i * L + j] = CA[i * L + j] + wt * x", "CK[i * L + j] = x"),
                    *looped("finish", "CN", indent)]

        if self.looped:  # rendered first: the scratch arrays' sizes come from the pieces
            rendered = {"start": looped("start", "C", 8), "point": looped("point", "M", I + 4),
                        # the new state copied over the old (swapping the two arrays would make
                        # ``C`` a variable of many definitions, whose every use numba's SSA pass
                        # traces back through the blocks between: recursion past Python's limit)
                        "step": (stage_loop(I + 4) if self.stages else looped("step", "CN", I + 4)) + loop(
                            [f"for i in range({n_c + self.dense_rate}):", "    C[i * L + j] = CN[i * L + j]"], I + 4)}
            if "rate" in pieces:
                rendered["rate"] = looped("rate", "W", I + 4) + loop(["r = W[j]", *rate_max("r")], I + 4)
            if self.dense_rate:
                rendered["step"] += loop([f"r = C[{n_c * L} + j]", *rate_max("r", "due")], I + 4)
            scalars = self._shared_scalars
        else:
            rendered = {"start": lanes_of(pieces["start"], 0, store("C"), 8),
                        "point": lanes_of(pieces["point"], n_c, store("M"), I + 4),
                        "step": lanes_of(pieces["step"], n_c, step_stores, I + 4)}
            if "rate" in pieces:
                rendered["rate"] = lanes_of(pieces["rate"], n_y, lambda outs: [f"r = {cast(outs[0])}", *rate_max("r")],
                                            I + 4)
            scalars = [(f"s{i}", i, np.dtype(spec.dtype)) for i, spec in enumerate(self._specs()[0])]
        body = ["def run(S, P, OUT, first, stride):",
                *(f"    {name} = {writer.cast(f'S[{i}]', dt) if dt != dtype else f'S[{i}]'}"
                  for name, i, dt in scalars),
                f"    PB = np.empty({max(n_p, 1) * L}, {F})",
                f"    C = np.empty({(n_c + self.dense_rate) * L}, {F})",
                *([f"    CN = np.empty({(n_c + self.dense_rate) * L}, {F})",
                   *(f"    {a} = np.empty({n_stage * L}, {F})" for a in (("CZ", "CK", "CA") if self.stages else ())),
                   f"    W = np.empty(L, {F})"] if self.looped else []),
                *(f"    X_{np.dtype(dt).name} = np.empty({max(n, 1) * L}, {_ctor(dt)})"
                  for dt, n in (scratch.items() if self.looped else [])),
                f"    M = np.empty({n_m * L}, {F})",
                *(f"    {a} = np.empty(L, {F})" for a in ("AF", "AS", "FS", "AP", "AR", "AQ")),
                f"    AD = np.empty({max(n_w, 1) * L}, {F})",
                *(f"    {name} = np.empty({max(rows, 1) * L}, {_ctor(dt)})" for dt, (name, rows) in q_arrays.items()),
                *("    " + x for x in writer.hoisted_shared),
                "    b = first", "    while b < P.shape[1] // L:", "        lo = b * L",
                *loop([f"PB[{i * L} + j] = P[{i}, lo + j]" for i in range(n_p)] + ["AQ[j] = " + NEG_INF], 8),
                *loop([f"p{i} = PB[{i * L} + j]" for i in range(n_p)] + writer.hoisted_lane
                      + [f"{q_rows[v]} = {v}" for v in kept], 8),
                *rendered["start"],
                f"        for n in range({n_steps + 1}):"]
        if "rate" in pieces:  # the transient judged at the window's cadence, as the Pallas kernel judges it
            due = f"n == {n_pre}" if self.dense_rate else f"n >= 1 and n <= {n_pre} and (n % {every} == 0 or n == {n_pre})"
            body += [" " * I + f"if {due}:",
                     " " * (I + 4) + f"tq = {F}(n) * {HPRE}",
                     *rendered["rate"]]
        body += [" " * I + f"if n == {n_pre}:", *loop(y_a, I + 4),
                 " " * I + "for e in range(2):",  # the saved points at state n: first or merged, then last
                 # the times are one definition each (a conditional value, not branches): numba's
                 # SSA pass traces a variable of several definitions back through every block
                 # between a use and them, and a looped piece reads the time deep inside its loops
                 " " * (I + 4) + f"kind = (1 if n == {n_pre} else (2 if n > {n_pre} and (n - {n_pre}) % {every} == 0 "
                 f"else 0)) if e == 0 else (3 if n == {n_steps} else 0)",
                 " " * (I + 4) + f"tp = sel(e == 0, sel(n == {n_pre}, {TM}, {TM} + {F}(n - {n_pre}) * {H}), {TEND})",
                 " " * (I + 4) + "if kind == 0:", " " * (I + 8) + "continue",
                 *rendered["point"],
                 " " * (I + 4) + "if kind == 1:", *loop(first, I + 8),
                 " " * (I + 4) + "elif kind == 2:", *loop(merge, I + 8),
                 " " * (I + 4) + "else:", *loop(last + outs, I + 8),
                 " " * I + f"if n < {n_steps}:",
                 " " * (I + 4) + f"t = sel(n < {n_pre}, {T0} + {F}(n) * {HPRE}, {TM} + {F}(n - {n_pre}) * {H})",
                 " " * (I + 4) + f"h = sel(n < {n_pre}, {HPRE}, {H})",
                 " " * (I + 4) + f"due = (n >= 1) & (n < {n_pre})",
                 *rendered["step"],
                 "        b += stride"]
        arrays = [f"{name} = np.frombuffer(bytes.fromhex({value.tobytes().hex()!r}), np.{value.dtype.name}).copy()"
                  for name, value in writer.arrays.items()]
        head = ['"""The fused lane program of a jaxfriction sweep, emitted for numba (generated)."""', "",
                "import math", "", "import numpy as np", _SELECT, *([_REASSOCIATE] if self.looped else []),
                f"L = {self.lanes}", *writer.globals_source(), *arrays]
        return "\n".join(head) + "\n\n\n" + "\n".join(body) + "\n"



#: A block of one lane (``L = 1``, ``j = 0``): an index ``(row) * L + j`` is ``row``, ``row + j``
#: is ``row`` (patterns, replacements; the first two fold rows ``int`` and ``int + k``).
_ONE_LANE = tuple((re.compile(pattern), replacement) for pattern, replacement in (
    (r"\((\d+)\) \* L \+ j\b", r"\1"), (r"\((\d+) \+ ([ik])\) \* L \+ j\b", r"\1 + \2"),
    (r"\(([^()\[\]]+)\) \* L \+ j\b", r"(\1)"), (r"\b([ik]) \* L \+ j\b", r"\1"),
    (r"\[(\d+) \+ j\]", r"[\1]"), (r"\[j\]", "[0]")))


def _one_lane(source: str) -> str:
    """``source`` with the lane index folded away for blocks of one lane (the looped program's
    default). numba types every integer operation of an index before LLVM folds it: on a
    100-block chain's program with a tangent (1,835 lines), the folded indices cut numba's
    compile from 11.6 s to 8.2 s (``docs/performance.md``); the machine code is the same."""
    for pattern, replacement in _ONE_LANE:
        source = pattern.sub(replacement, source)
    return source


#: A looped program longer than this (lines), written out stage by stage, is written with
#: RK4's later three stages once, in a loop over them, where the system's step allows it
#: (:meth:`CompiledLoop._looped_source`). numba's compile time follows the lines, at 5 to 14
#: ms a line (the 32-block chain with a tangent: 1,656 lines, 7.9 s, with the loop 687 lines,
#: 4.2 s; a LuGre chain with a tangent: 3,216 lines, 13.9 s, with the loop 943, 5.4 s; the
#: block on a shaking floor with a tangent, eight lanes a block: 975 lines, 14.1 s, with the
#: loop 552, 6.2 s), but the loop costs run time where a stage's loops are short (its weighted
#: sum and its carried rates are passes of their own: that chain ran 76-78 M block-steps/s
#: against 82-86 M written out, a chain of 256 blocks without a tangent 257-283 M against
#: 353-402 M), so shorter programs are written out.
STAGED_LINES = 900

#: The longest emitted program the compiled loop runs (lines). numba's compile time grows
#: faster than the program: the default sweep's 778 lines take about 1.5 s, the jointed
#: template's (64 Segalman elements, 22,497 lines) took 630 s in a 3-lane sweep (busy 2-core
#: machine); LuGre's and Iwan's
#: 1,250-1,275 lines compile in seconds. Longer programs fall back to the XLA path.
MAX_SOURCE_LINES = 4000
