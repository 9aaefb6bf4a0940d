"""The compiled loop's program around its pieces: blocks of lanes, the time steps, the saved points.

:class:`~jaxfriction._lanes.compiled_loop.CompiledLoop` traces a lane's pieces (start, step,
saved point, the transient's rate; written one expression per component, or as loops over the
lane's arrays by :mod:`jaxfriction._lanes.looped`). :func:`program_source` writes the module
that numba compiles around them: one function ``run`` (numba compiles one function: each
function of its own costs a compilation, and a callee's code is optimized again in each
caller). A thread's blocks of lanes in turn; per block, one loop over the ``N`` steps of the
transient and the window, each piece written once: at state ``m`` (after ``m`` steps) the
transient's rate where due, the window's saved points where due (the first at ``m = n_pre``,
the last at ``m = N``), then step ``m``. A piece is its shared lines (scalars, once per step)
and its loop over the block's lanes. The reduction rules of :mod:`jaxfriction._lanes.pieces`
(first, merged and final saved point, the transient's running maximum) are traced and written
for the block's lanes. A block's arrays are flat, rows at constant offsets ``row * L``: LLVM
then sees that the lane loop's loads and stores never overlap and vectorizes it without
runtime checks (it gives up past eight checked arrays, e.g. rows of a 2-D array with tangents).
"""

from __future__ import annotations

import re
from typing import Any

import jax
import numpy as np

from .pieces import final_measures, first_measures, merge_measures, running_max
from .source_writer import REASSOCIATE, SELECT, ctor

#: The step loop's body indent (spaces).
_I = 12


def rule_lines(writer, dtype, lanes, rule, args, targets) -> list[str]:
    """The lines of one lane that evaluate ``rule(*args)`` (a reduction rule of
    :mod:`jaxfriction._lanes.pieces`) and store its outputs in ``targets``.

    Args:
        writer: the program's :class:`~jaxfriction._lanes.source_writer.Writer`.
        dtype: the program's float type; ``lanes``: lanes per block.
        rule: the rule (a function of pytrees of arrays).
        args, targets: pytrees of the names of one lane's values (strings).
    """
    leaves, tree = jax.tree.flatten(args)
    out_leaves, out_tree = jax.tree.flatten(targets)
    spec = jax.ShapeDtypeStruct((lanes,), dtype)

    def flat(*values):
        out = rule(*jax.tree.unflatten(tree, list(values)))
        return jax.tree.leaves(jax.tree.map(lambda _, v: v, jax.tree.unflatten(out_tree, out_leaves), out))

    with jax.disable_jit():  # inlined: jnp.where and isnan are jitted functions
        closed = jax.make_jaxpr(flat)(*[spec] * len(leaves))
    shared, lane, outs, _ = writer.write(closed, leaves, hoist=False)
    assert not shared, shared  # every input is a lane's value
    return lane + [f"{target} = {writer.cast(name, dtype)}" for target, name in zip(out_leaves, outs)
                   if target != name]


def _loop(lines, indent):
    """A loop over the block's lanes around ``lines``."""
    return [" " * indent + "for j in range(L):", *(" " * (indent + 4) + x for x in lines or ["pass"])]


class _Program:
    """The module's parts, written in the order that numbers the writer's constants and
    values (the source is reproducible to the byte)."""

    def __init__(self, fused, writer, pieces, point_names, n_c, *, lanes, looped, stages, dense_rate):
        self.f, self.plan, self.writer, self.pieces = fused, fused.plan, writer, pieces
        self.dtype, self.L, self.n_c = np.dtype(fused.dtype), lanes, n_c
        self.looped, self.stages, self.dense_rate = looped, stages, dense_rate
        self.F = ctor(self.dtype)
        self.offsets, at = {}, 0
        for name, size in point_names:
            self.offsets[name] = (at, size)
            at += size
        self.n_m = max(at, 1)
        plan = self.plan
        self.n_steps = plan.n_pre + plan.n_saves * plan.every
        self.n_stage = fused.n_k * (1 + fused.n_w) if stages else 0  # a stage's K and its tangents (the stage loop)
        # the hoisted lane values that some piece reads: rows of one array per dtype
        self.kept = [] if looped else sorted({v for piece in pieces.values() for v in piece[3]},
                                             key=lambda v: int(v[1:]))
        self.q_arrays: dict[Any, list[Any]] = {}
        self.q_rows: dict[str, str] = {}
        for v in self.kept:
            array = self.q_arrays.setdefault(writer.types[v], [f"Q{len(self.q_arrays)}", 0])
            self.q_rows[v] = f"{array[0]}[{array[1] * self.L} + j]"
            array[1] += 1
        self.scratch: dict[Any, Any] = {}

    def cast(self, name):
        return self.writer.cast(name, self.dtype)

    def const(self, value):
        return self.writer.constant(value, self.dtype)

    def m(self, name, k=0):
        return f"M[{(self.offsets[name][0] + k) * self.L} + j]"

    def rule(self, rule, args, targets):
        return rule_lines(self.writer, self.dtype, self.L, rule, args, targets)

    def render(self, name, indent):
        """A looped piece (:mod:`jaxfriction._lanes.looped`)."""
        return self.pieces[name].render(indent, self.L, self.scratch)

    def lanes_of(self, piece, n_carry, stores, indent):
        """A piece written one expression per component: its shared lines and its lane loop
        (loads, its lines, ``stores(outs)``)."""
        used = set(re.findall(r"\b[pc]\d+\b", "\n".join(piece[1] + piece[2])))
        loads = [f"p{i} = PB[{i * self.L} + j]" for i in range(self.f.n_p) if f"p{i}" in used]
        loads += [f"c{i} = C[{i * self.L} + j]" for i in range(n_carry) if f"c{i}" in used]
        loads += [f"{v} = {self.q_rows[v]}" for v in piece[3]]
        return [" " * indent + x for x in piece[0]] + _loop(loads + piece[1] + stores(piece[2]), indent)

    def store(self, array):
        return lambda names: [f"{array}[{i * self.L} + j] = {self.cast(o)}" for i, o in enumerate(names)]

    def rate_max(self, new, due=None):
        """The transient's rate ``new``: its running maximum in ``AQ`` (where ``due``)."""
        lines = self.rule(running_max, (new, "AQ[j]"), "q")
        return lines + [f"AQ[j] = {'q' if due is None else f'sel({due}, q, AQ[j])'}"]

    def measures(self):
        """The reduction rules' lines: the first saved point, a later one merged, the last
        (with the rows of the output it writes) and the window's first state."""
        f, plan, L, n_y, n_w = self.f, self.plan, self.L, self.f.n_y, self.f.n_w
        rows = f.outputs
        measured = {k: self.m(k) for k in self.offsets if k != "peak_dot"}
        if "peak_dot" in self.offsets:
            measured["peak_dot"] = tuple(self.m("peak_dot", w) for w in range(n_w))
        acc = {"finite": "AF[j]", "stuck": "AS[j]", "stuck_first": "FS[j]", "peak": "AP[j]", "rate": "AR[j]",
               "peak_dot": tuple(f"AD[{w * L} + j]" for w in range(n_w))}
        acc = {k: acc[k] for k in first_measures(measured)}
        first = self.rule(first_measures, (measured,), acc)
        merge = self.rule(merge_measures, (acc, measured), acc)
        last = self.rule(lambda acc, m: final_measures(acc, m, plan.n_saves), (acc, measured),
                         {k: v for k, v in acc.items() if k != "stuck_first"})

        def rows_of(name, first, count):  # rows ``first...`` of C into the output rows of ``name``
            return [f"for i in range({count}):", f"    OUT[{rows[name][0]} + i, lo + j] = C[({first} + i) * L + j]"]

        outs = rows_of("y_b", 0, n_y) + (rows_of("yb_dot", n_y, n_y * n_w) if n_w else [])
        outs += [f"OUT[{rows['finite'][0]}, lo + j] = AF[j]"]
        for name, accumulator in (("stuck", "AS"), ("peak", "AP"), ("rate", "AR"), ("rate_pre", "AQ")):
            if name in rows:
                outs += [f"OUT[{rows[name][0]}, lo + j] = {accumulator}[j]"]
        if "peak_dot" in rows:
            outs += [f"OUT[{rows['peak_dot'][0] + w}, lo + j] = AD[{w * L} + j]" for w in range(n_w)]
        y_a = rows_of("y_a", 0, n_y) + (rows_of("ya_dot", n_y, n_y * n_w) if n_w else [])
        return first, merge, last + outs, y_a

    def stage_loop(self, indent):
        """RK4's stages in the order and arithmetic of
        :func:`~jaxfriction._integrate.stages.staged_rk4_step`: the first stage's ``K``
        (``CK``, also ``CA``), then the later three as one loop over them (at ``ts``, from the
        step's start along the previous ``K`` over ``ha``: ``CZ``, summed into ``CA`` with
        weights 2, 2, 1 and copied to ``CK``), then the ``finish`` piece from ``C`` and ``CA``;
        the tangents ride along. The first stage is written apart: read from ``C`` itself, its
        rate is not a copy away, and each later stage's state is computed in the loops that
        read it (as loops of their own, the Iwan joint of 100 sliders ran a third slower:
        ``docs/performance.md``). The new state is copied over the old after it, as for a step
        written out."""
        half, two = self.const(0.5), self.const(2.0)

        def rows(at, *lines):
            return _loop([f"for i in range({self.n_stage}):", *("    " + x for x in lines)], at)

        inner = " " * (indent + 4)
        return [*self.render("field", indent), *rows(indent, "CA[i * L + j] = CK[i * L + j]"),
                " " * indent + "for st in range(1, 4):",
                inner + f"ts = sel(st == 3, t + h, t + {half} * h)",
                inner + f"ha = sel(st == 3, h, {half} * h)",
                inner + f"wt = sel(st == 3, {self.const(1.0)}, {two})",  # 1.0 x is x, to the bit
                *self.render("next_stage", indent + 4),
                *rows(indent + 4, "x = CZ[i * L + j]", "CA[i * L + j] = CA[i * L + j] + wt * x", "CK[i * L + j] = x"),
                *self.render("finish", indent)]

    def rendered(self):
        """The pieces' lines at their places in the program (the looped pieces rendered
        first: the scratch arrays' sizes come from them)."""
        n_c, I = self.n_c, _I
        if self.looped:
            out = {"start": self.render("start", 8), "point": self.render("point", I + 4),
                   "step": self.stage_loop(I + 4) if self.stages else self.render("step", I + 4)}
            # the new state copied over the old (swapping the two arrays would make ``C`` a
            # variable of many definitions, whose every use numba's SSA pass traces back
            # through the blocks between: recursion past Python's limit)
            out["step"] += _loop([f"for i in range({n_c + self.dense_rate}):", "    C[i * L + j] = CN[i * L + j]"],
                                 I + 4)
            if "rate" in self.pieces:
                out["rate"] = self.render("rate", I + 4) + _loop(["r = W[j]", *self.rate_max("r")], I + 4)
            if self.dense_rate:
                out["step"] += _loop([f"r = C[{n_c * self.L} + j]", *self.rate_max("r", "due")], I + 4)
            return out

        def step_stores(names):
            lines = self.store("C")(names[:n_c])
            if self.dense_rate:  # the transient's rate at the step's start (t = F(n) h_pre: T0 is 0)
                lines += [f"r = {self.cast(names[n_c])}", *self.rate_max("r", "due")]
            return lines

        out = {"start": self.lanes_of(self.pieces["start"], 0, self.store("C"), 8),
               "point": self.lanes_of(self.pieces["point"], n_c, self.store("M"), I + 4),
               "step": self.lanes_of(self.pieces["step"], n_c, step_stores, I + 4)}
        if "rate" in self.pieces:
            out["rate"] = self.lanes_of(self.pieces["rate"], self.f.n_y,
                                        lambda outs: [f"r = {self.cast(outs[0])}", *self.rate_max("r")], I + 4)
        return out

    def arrays(self, scalars):
        """``run``'s head: the shared scalars read from ``S``, the block's arrays."""
        F, L, n_p, n_w, n_c, writer = self.F, self.L, self.f.n_p, self.f.n_w, self.n_c, self.writer
        return [*(f"    {name} = {writer.cast(f'S[{i}]', dt) if dt != self.dtype else f'S[{i}]'}"
                  for name, i, dt in scalars),
                f"    PB = np.empty({max(n_p, 1) * L}, {F})",
                f"    C = np.empty({(n_c + self.dense_rate) * L}, {F})",
                *([f"    CN = np.empty({(n_c + self.dense_rate) * L}, {F})",
                   *(f"    {a} = np.empty({self.n_stage * L}, {F})" for a in (("CZ", "CK", "CA") if self.stages else ())),
                   f"    W = np.empty(L, {F})"] if self.looped else []),
                *(f"    X_{np.dtype(dt).name} = np.empty({max(n, 1) * L}, {ctor(dt)})"
                  for dt, n in (self.scratch.items() if self.looped else [])),
                f"    M = np.empty({self.n_m * L}, {F})",
                *(f"    {a} = np.empty(L, {F})" for a in ("AF", "AS", "FS", "AP", "AR", "AQ")),
                f"    AD = np.empty({max(n_w, 1) * L}, {F})",
                *(f"    {name} = np.empty({max(rows, 1) * L}, {ctor(dt)})" for dt, (name, rows) in self.q_arrays.items())]

    def source(self, scalars) -> str:
        """The module (``scalars``: the shared scalars' names, offsets in ``S`` and dtypes)."""
        plan, L, F, I, writer = self.plan, self.L, self.F, _I, self.writer
        n_pre, every, n_steps, n_p = plan.n_pre, plan.every, self.n_steps, self.f.n_p
        T0, HPRE = self.const(0.0), self.const(plan.h_pre)
        TM, H = self.const(plan.t_measure), self.const(plan.h)
        TEND = self.const(plan.t_measure + plan.n_saves * plan.every * plan.h)
        NEG_INF = self.const(-np.inf)
        first, merge, last, y_a = self.measures()
        rendered = self.rendered()
        body = ["def run(S, P, OUT, first, stride):", *self.arrays(scalars),
                *("    " + x for x in writer.hoisted_shared),
                "    b = first", "    while b < P.shape[1] // L:", "        lo = b * L",
                *_loop([f"PB[{i * L} + j] = P[{i}, lo + j]" for i in range(n_p)] + ["AQ[j] = " + NEG_INF], 8),
                *_loop([f"p{i} = PB[{i * L} + j]" for i in range(n_p)] + writer.hoisted_lane
                       + [f"{self.q_rows[v]} = {v}" for v in self.kept], 8),
                *rendered["start"],
                f"        for n in range({n_steps + 1}):"]
        if "rate" in self.pieces:  # the transient judged at the window's cadence, as the Pallas kernel judges it
            due = f"n == {n_pre}" if self.dense_rate else f"n >= 1 and n <= {n_pre} and (n % {every} == 0 or n == {n_pre})"
            body += [" " * I + f"if {due}:",
                     " " * (I + 4) + f"tq = {F}(n) * {HPRE}",
                     *rendered["rate"]]
        body += [" " * I + f"if n == {n_pre}:", *_loop(y_a, I + 4),
                 " " * I + "for e in range(2):",  # the saved points at state n: first or merged, then last
                 # the times are one definition each (a conditional value, not branches): numba's
                 # SSA pass traces a variable of several definitions back through every block
                 # between a use and them, and a looped piece reads the time deep inside its loops
                 " " * (I + 4) + f"kind = (1 if n == {n_pre} else (2 if n > {n_pre} and (n - {n_pre}) % {every} == 0 "
                 f"else 0)) if e == 0 else (3 if n == {n_steps} else 0)",
                 " " * (I + 4) + f"tp = sel(e == 0, sel(n == {n_pre}, {TM}, {TM} + {F}(n - {n_pre}) * {H}), {TEND})",
                 " " * (I + 4) + "if kind == 0:", " " * (I + 8) + "continue",
                 *rendered["point"],
                 " " * (I + 4) + "if kind == 1:", *_loop(first, I + 8),
                 " " * (I + 4) + "elif kind == 2:", *_loop(merge, I + 8),
                 " " * (I + 4) + "else:", *_loop(last, I + 8),
                 " " * I + f"if n < {n_steps}:",
                 " " * (I + 4) + f"t = sel(n < {n_pre}, {T0} + {F}(n) * {HPRE}, {TM} + {F}(n - {n_pre}) * {H})",
                 " " * (I + 4) + f"h = sel(n < {n_pre}, {HPRE}, {H})",
                 " " * (I + 4) + f"due = (n >= 1) & (n < {n_pre})",
                 *rendered["step"],
                 "        b += stride"]
        arrays = [f"{name} = np.frombuffer(bytes.fromhex({value.tobytes().hex()!r}), np.{value.dtype.name}).copy()"
                  for name, value in writer.arrays.items()]
        head = ['"""The fused lane program of a jaxfriction sweep, emitted for numba (generated)."""', "",
                "import math", "", "import numpy as np", SELECT, *([REASSOCIATE] if self.looped else []),
                f"L = {self.L}", *writer.globals_source(), *arrays]
        return "\n".join(head) + "\n\n\n" + "\n".join(body) + "\n"


def program_source(fused, writer, pieces, point_names, n_c, scalars, *, lanes, looped, stages=False,
                   dense_rate=False) -> str:
    """The Python module of the compiled loop around its traced pieces.

    Args:
        fused: the lane's :class:`~jaxfriction._lanes.pieces.LanePieces` (sizes, plan, output rows).
        writer: the :class:`~jaxfriction._lanes.source_writer.Writer` that wrote the pieces.
        pieces: name -> a written piece: ``(shared lines, lane lines, out names, hoisted)``
            one expression per component, or a :class:`~jaxfriction._lanes.looped.Piece`
            (``looped``); ``start``, ``point``, ``step`` (or the stage loop's ``field``,
            ``next_stage`` and ``finish`` with ``stages``) and, when the transient is
            judged, ``rate``.
        point_names: the saved point's outputs, ``(name, size)`` in the order of ``M``'s rows.
        n_c: the carried numbers of one lane (state and tangents).
        scalars: the shared scalars ``(name, offset in S, dtype)`` read at ``run``'s start.
        lanes: lanes per block ``L``; ``looped``: the pieces are looped;
        stages: RK4's later three stages written once, in a loop over them;
        dense_rate: the transient's rate computed with each step (judged at every step).

    Returns:
        The module's source; its function ``run(S, P, OUT, first, stride)`` runs blocks
        ``first, first + stride, ...`` of the lanes' columns of ``P`` and writes ``OUT``.
    """
    program = _Program(fused, writer, pieces, point_names, n_c, lanes=lanes, looped=looped, stages=stages,
                       dense_rate=dense_rate)
    return program.source(scalars)


#: A block of one lane (``L = 1``, ``j = 0``): an index ``(row) * L + j`` is ``row``, ``row + j``
#: is ``row`` (patterns, replacements; the first two fold rows ``int`` and ``int + k``).
_ONE_LANE = tuple((re.compile(pattern), replacement) for pattern, replacement in (
    (r"\((\d+)\) \* L \+ j\b", r"\1"), (r"\((\d+) \+ ([ik])\) \* L \+ j\b", r"\1 + \2"),
    (r"\(([^()\[\]]+)\) \* L \+ j\b", r"(\1)"), (r"\b([ik]) \* L \+ j\b", r"\1"),
    (r"\[(\d+) \+ j\]", r"[\1]"), (r"\[j\]", "[0]")))


def one_lane(source: str) -> str:
    """``source`` with the lane index folded away for blocks of one lane (the looped program's
    default). numba types every integer operation of an index before LLVM folds it: on a
    100-block chain's program with a tangent, the folded indices cut numba's compile by about
    a third (``docs/performance.md``); the machine code is the same."""
    for pattern, replacement in _ONE_LANE:
        source = pattern.sub(replacement, source)
    return source
