"""Python source of scalar operations from flat jaxprs: the writer of the compiled loop.

Each piece of the compiled loop's program (:mod:`jaxfriction._lanes.compiled_loop`) is a flat
jaxpr whose every equation is an elementwise operation on a shared scalar or on one lane's
value; :class:`Writer` writes each equation as one line of Python that numba compiles, with
XLA's NaN rules, without branches (conditional values are LLVM ``select`` s: :data:`SELECT`),
an expression written once per piece, and what depends only on the lane's parameters and the
shared values written once per block (hoisted). The looped program
(:mod:`jaxfriction._lanes.looped`) writes its loops' bodies through the same writer.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from jax.extend import core as jex_core

from .componentwise import Unsupported, live_equations

#: Expressions of elementwise primitives on names ``a``, ``b``, ``c`` (their operands). NaN
#: rules are XLA's: ``max``/``min`` propagate NaN; ``sign`` keeps signed zeros and NaN.
#: ``sel(c, a, b)`` is LLVM's ``select`` (:data:`SELECT`): a Python conditional expression
#: would be branches, and numba's compile time grows with the blocks of a function.
EXPRESSIONS = {
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
SELECT = '''from numba.extending import intrinsic


@intrinsic
def sel(typingctx, c, a, b):
    ty = typingctx.unify_types(a, b)

    def codegen(context, builder, signature, args):
        return builder.select(args[0], context.cast(builder, args[1], a, ty), context.cast(builder, args[2], b, ty))

    return ty(c, a, b), codegen

'''
#: ``radd(a, b)``: ``a + b`` that LLVM may reassociate (the looped programs' folded sums).
REASSOCIATE = '''

@intrinsic
def radd(typingctx, a, b):
    def codegen(context, builder, signature, args):
        return builder.fadd(args[0], args[1], flags=("reassoc",))

    return a(a, b), codegen

'''
#: Boolean operators (on bools: without short-circuit, which would branch) and their integer
#: (bitwise) forms.
LOGICAL = {"and": ("({a} & {b})", "({a} & {b})"), "or": ("({a} | {b})", "({a} | {b})"),
            "xor": ("({a} != {b})", "({a} ^ {b})"), "not": ("(not {a})", "(~{a})")}


def ctor(dtype) -> str:
    """The numba constructor of a scalar of ``dtype`` (``np.float64``, ``np.bool_``, ...)."""
    return f"np.{np.dtype(dtype).name}"


class Writer:
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
                lines.append(f"{name} = {ctor(value.dtype)}({text})")
            elif kind == "b":
                lines.append(f"{name} = {bool(value)}")
            elif kind in "iu":
                lines.append(f"{name} = {ctor(value.dtype)}({int(value)})")
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

    def value_of(self, name):
        """The value of the constant ``name`` (a NumPy scalar), or None where it is no constant."""
        return next((v for n, v in self.constants.values() if n == name), None)

    def is_number(self, name) -> bool:
        """Whether ``name`` is a constant other than NaN."""
        value = self.value_of(name)
        return value is not None and not np.isnan(value)

    def cast(self, name, dtype) -> str:
        """``name`` as a value of ``dtype`` (a conversion only where its type differs)."""
        return name if self.types.get(name) == np.dtype(dtype) else f"{ctor(dtype)}({name})"

    def product(self, name, args, dtype) -> str:
        """``a / b`` or ``a * b`` on floats as XLA's algebraic simplifier leaves them (the path
        this program matches): a division by a constant is a product by its reciprocal
        (``A / Const => A * (1 / Const)``), and a product by one is its other operand. So
        ``force / m`` of a body of constant mass costs a product per lane-step, not a
        division (LLVM keeps a division by a constant other than a power of two)."""
        a, b = args
        divisor = self.value_of(b) if name == "div" else None
        if divisor is not None:
            with np.errstate(all="ignore"):
                b = self.constant(np.asarray(1, dtype) / np.asarray(divisor, dtype), dtype)
            name = "mul"
        if name == "mul":
            for operand, other in ((a, b), (b, a)):
                if self.value_of(other) == 1:
                    return operand
        expr = f"{a} {'/' if name == 'div' else '*'} {b}"
        return expr if dtype == np.float64 else f"{ctor(dtype)}({expr})"

    def expression(self, eqn, args) -> str:
        name, params = eqn.primitive.name, eqn.params
        dtype = np.dtype(eqn.outvars[0].aval.dtype)
        in_dtype = np.dtype(eqn.invars[0].aval.dtype) if eqn.invars else dtype
        make = ctor(dtype)
        wrap = (lambda e: e) if dtype == np.float64 else (lambda e: f"{make}({e})")  # float64 stays float64
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
        if name in LOGICAL:
            template = LOGICAL[name][0 if dtype.kind == "b" else 1]
            return template.format(**named)
        if name in ("div", "rem") and dtype.kind in "iu":
            a, b = args
            quotient = f"(abs({a}) // abs({b})) * (1 if ({a} < 0) == ({b} < 0) else -1)"  # C: toward zero
            return f"{make}({quotient})" if name == "div" else f"{make}({a} - {b} * {quotient})"
        if name in ("div", "mul") and dtype.kind == "f":
            return self.product(name, args, dtype)
        if name == "rem":
            return wrap(f"math.fmod({args[0]}, {args[1]})")
        if name == "round":
            a = args[0]
            if int(params.get("rounding_method", 0)) == 0:  # half away from zero
                return wrap(f"math.copysign(np.floor(abs({a}) + {self.constant(0.5, dtype)}), {a})")
            return wrap(f"np.rint({a})")
        if name not in EXPRESSIONS:
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
        expr = EXPRESSIONS[name].format(**named, **consts)
        # float64 arithmetic stays float64 in numba; other types are pinned (float32 math
        # functions may widen, integers would follow Python's rules)
        return expr if dtype.kind == "b" or dtype == np.float64 else f"{make}({expr})"
