"""One fused Pallas kernel per block of lanes: fixed-step RK4 through the whole time loop.

Under ``vmap``, ``lax.scan`` of RK4 runs every time step as several XLA kernels over the
batch, each reading and writing its intermediates in memory. Here one program of a
``pallas_call`` owns a block of lanes and runs the transient and the measured window in
``fori_loop`` s with the state (and its forward-mode tangents) held in registers, and it
accumulates the window's reductions (stick indicator, peak slip, internal-state rate,
finiteness) at every saved point. Only the window's first and last states, their tangents
and those reductions leave the kernel.

The physics is the system's own ``vector_field``: the RK4 step of one lane (and its
``jax.jvp``) is traced and evaluated component by component
(:mod:`jaxfriction._kernels.componentwise`), so a user's own law or system runs in the
kernel as it is written. On a GPU the kernel is lowered by Triton (float32 and float64);
elsewhere it runs in Pallas' interpret mode, slowly, for tests.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array, lax
from jax.extend import core as jex_core

from .._integrate.rk4 import rk4_step
from .._integrate.stability import saved_state_rate
from .._laws.vector import safe_norm
from .._observables.stick import STICK_TOL
from .componentwise import Componentwise, Unsupported, cells_of, is_concrete, traced_cells


@dataclasses.dataclass(frozen=True)
class WindowPlan:
    """The fixed-step grids of one lane: a transient of ``n_pre`` steps of ``h_pre`` from
    ``t = 0`` (none when ``n_pre == 0``), then ``n_saves * every`` steps of ``h`` from
    ``t_measure``, reduced at every ``every``-th step (the saved points)."""

    n_pre: int
    h_pre: float
    t_measure: float
    n_saves: int
    every: int
    h: float


@dataclasses.dataclass(frozen=True)
class Reductions:
    """Which reductions over the window's saved points the kernel accumulates."""

    stuck: bool = False  #: trapezoidal fraction of saved points with every |slip| <= STICK_TOL
    peak: bool = False  #: largest slip speed (norm for a vector law) over saved points and contacts
    peak_tangent: bool = False  #: the tangents of ``peak`` (where the maximum is reached)
    rate: bool = False  #: largest step-rule rate (dynamic laws, exact Coulomb), window and transient


def _slip_measures(system, t, y):
    """``(stuck, peak)`` at one saved point, as :func:`~jaxfriction.stick_mask` and
    :func:`~jaxfriction.peak_slip` compute them."""
    slip = system.slip_velocity(t, y)
    law = getattr(system, "law", None)
    stuck = jnp.all(jnp.abs(jnp.ravel(slip)) <= STICK_TOL)
    peak = jnp.max(safe_norm(slip) if law is not None and law.vector else jnp.abs(slip))
    return stuck, peak


class FusedRK4:
    """The traced pieces of the kernel for one lane program (built once per compilation).

    Args:
        make_system: ``make_system(shared, p) -> system`` of one lane from the values shared
            by every lane (``shared``: a list of arrays, e.g. the template system's leaves)
            and the lane's own values ``p`` ``(P,)``.
        initial_state: ``initial_state(shared, p) -> (state_size,)``, where every lane starts.
        shared_example: the shared arrays (only shapes and dtypes are used).
        n_p: the number of lane values ``P``.
        plan: the :class:`WindowPlan`.
        wrt: indices into ``p`` of the parameters to carry tangents for (forward mode).
        reductions: the :class:`Reductions` to accumulate.
        observed: ``observed(y_a, y_b, shared, p) -> outputs``, what is computed from the
            window's first and last states outside the kernel (observables, statuses), or
            None. Given, only the state components those outputs read are integrated, with
            those that the reductions read and that the step needs to advance them; the others
            (an energy book that no output reads: the input work when ``energy_residual`` is
            not asked for) keep their start value (:attr:`live`).

    Raises:
        Unsupported: the system's step cannot be evaluated component-wise (named).
    """

    def __init__(self, make_system, initial_state, shared_example, n_p, plan, wrt, reductions, observed=None,
                 analyse_live=True):
        self.plan, self.wrt, self.reductions = plan, tuple(wrt), reductions
        self.dtype = jnp.result_type(float)
        self.shared = [jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)) for x in shared_example]
        self.n_shared = sum(int(np.prod(x.shape, dtype=int)) for x in self.shared)
        self.n_p, self.n_w = int(n_p), len(self.wrt)
        basis = np.zeros((self.n_w, self.n_p), self.dtype)
        basis[np.arange(self.n_w), list(self.wrt)] = 1.0

        def with_tangents(f, primals, tangent_rows) -> tuple:
            """``f(*primals)`` (once) and its derivatives along each of the W rows."""
            return jax.vmap(lambda *d: jax.jvp(f, primals, d), out_axes=(None, 0))(*tangent_rows)

        def start(shared, p) -> tuple:
            if not self.n_w:
                return initial_state(shared, p), jnp.zeros((0,) + y_shape, self.dtype)
            return with_tangents(lambda p: initial_state(shared, p), (p,), (basis,))

        def step(t, h, y, shared, p, ydot) -> tuple:
            def advance(y, p) -> Any:
                y_next = rk4_step(make_system(shared, p).vector_field, t, y, h)
                return y_next if self.live is None else jnp.where(self.live, y_next, y)

            return with_tangents(advance, (y, p), (ydot, basis)) if self.n_w else (advance(y, p), ydot)

        def point(t, y, shared, p, ydot) -> dict:
            system = make_system(shared, p)
            out: dict[str, Any] = {}
            if reductions.stuck or reductions.peak:
                stuck, peak = _slip_measures(system, t, y)
                out.update(stuck=stuck, peak=peak)
                if reductions.peak_tangent and self.n_w:
                    out["peak_dot"] = with_tangents(lambda y, p: _slip_measures(make_system(shared, p), t, y)[1],
                                                    (y, p), (ydot, basis))[1]
            if reductions.rate:
                out["rate"] = rate_at(t, y, shared, p)
            out["finite"] = jnp.all(jnp.isfinite(y if self.live is None else
                                                 jnp.stack([y[i] for i in np.flatnonzero(self.live)])))
            return out

        def rate_at(t, y, shared, p) -> Array:
            rate = saved_state_rate(make_system(shared, p), jnp.reshape(t, (1,)), y[None])
            return jnp.zeros((), y.dtype) if rate is None else rate

        t, h = jax.ShapeDtypeStruct((), self.dtype), jax.ShapeDtypeStruct((), self.dtype)
        p = jax.ShapeDtypeStruct((self.n_p,), self.dtype)
        y_shape = jax.eval_shape(initial_state, self.shared, p).shape
        self.n_y = int(np.prod(y_shape, dtype=int))
        y, ydot = jax.ShapeDtypeStruct((self.n_y,), self.dtype), jax.ShapeDtypeStruct((self.n_w, self.n_y), self.dtype)
        #: which state components are integrated (bools, ``(n_y,)``), or None: all
        self.live = None
        if observed is not None and analyse_live:
            self.live = self._live(observed, lambda *a: step(*a)[0], point, rate_at, (t, h, y, self.shared, p, ydot))
        #: the pieces as functions of one lane's arrays (for the looped program,
        #: :mod:`jaxfriction._kernels.looped`), and their example arguments
        self.functions = {"start": (start, (self.shared, p)), "step": (step, (t, h, y, self.shared, p, ydot)),
                          "point": (point, (t, y, self.shared, p, ydot)), "rate_at": (rate_at, (t, y, self.shared, p))}
        self.start = Componentwise(start, self.shared, p)
        self.step = Componentwise(step, t, h, y, self.shared, p, ydot)
        self.point = Componentwise(point, t, y, self.shared, p, ydot)
        self.rate_at = Componentwise(rate_at, t, y, self.shared, p)
        self.outputs = self._layout()

    def _live(self, observed, step, point, rate_at, specs):
        """The state components that the outputs need (see ``observed``), as a bool array, or
        None when all are (or when a piece cannot be traced component-wise). A component is
        needed when ``observed``, the saved-point reductions or the transient's rate read
        it, or when the step of a needed component reads it."""
        t, h, y, shared, p, ydot = specs
        n = self.n_y
        ends = jax.ShapeDtypeStruct((2 * n,), self.dtype)
        needed = components_read(lambda yy, shared, p: observed(yy[:n], yy[n:], shared, p), (ends, shared, p))
        if needed is None or len({i % n for i in needed}) == n:  # e.g. energy_residual: every book
            return None

        def reduced(y, t, shared, p, ydot) -> dict:  # the finiteness check follows the live components
            return {k: v for k, v in point(t, y, shared, p, ydot).items() if k != "finite"}

        pieces = [components_read(reduced, (y, t, shared, p, ydot))]
        if self.reductions.rate:
            pieces.append(components_read(lambda y, t, shared, p: rate_at(t, y, shared, p), (y, t, shared, p)))
        if any(r is None for r in pieces):
            return None
        live = {i % n for i in needed}.union(*pieces)
        while len(live) < n:  # close under the step: what advancing the live components reads
            order = sorted(live)

            def advanced(y, t, h, shared, p, ydot, order=order) -> list:
                y_next = step(t, h, y, shared, p, ydot)
                return [y_next[i] for i in order]

            reads = components_read(advanced, (y, t, h, shared, p, ydot))
            if reads is None:
                return None
            if reads <= live:
                break
            live |= reads
        return None if len(live) == n else np.isin(np.arange(n), sorted(live))

    def operations_per_step(self, block: int = 2) -> dict:
        """Per-lane operations of one RK4 step (with tangents), by primitive name: the
        arithmetic the kernel does per lane and step (shared and constant values excluded),
        for the throughput-to-peak ratio of ``scripts/benchmarks/bench_gpu.py``."""
        from .componentwise import count_operations

        counts = {}

        def trace(shared_flat, p_rows) -> Any:
            shared, p = self._shared_cells(shared_flat), self._lane_cells(p_rows)
            y, ydot = self.start(shared, p)
            y, ydot = (traced_cells([_lanes(c, self.dtype, block) for c in np.ravel(x)], x.shape) for x in (y, ydot))
            t = traced_cells([jnp.zeros((), self.dtype)], ())
            counts.update(count_operations(self.step, t, cells_of(1e-2, self.dtype), y, shared, p, ydot)[1])
            return jnp.zeros(())

        jax.make_jaxpr(trace)(jnp.zeros(max(self.n_shared, 1), self.dtype), jnp.zeros((self.n_p, block), self.dtype))
        return counts

    def _shared_cells(self, flat):
        """The shared arrays as cells, from their flat concatenation (a ref or an array)."""
        shared, offset = [], 0
        for x in self.shared:
            size = int(np.prod(x.shape, dtype=int))
            shared.append(traced_cells([flat[offset + k].astype(x.dtype) for k in range(size)], x.shape))
            offset += size
        return shared

    def _lane_cells(self, rows):
        """The lane values ``p`` as cells, one ``(block,)`` row each (a ref or an array)."""
        return traced_cells([rows[i, :] for i in range(self.n_p)], (self.n_p,))

    def _layout(self):
        """Output rows: name -> (first row, shape per lane)."""
        shapes = {"y_a": (self.n_y,), "y_b": (self.n_y,), "finite": ()}
        if self.n_w:
            shapes.update(ya_dot=(self.n_w, self.n_y), yb_dot=(self.n_w, self.n_y))
        if self.reductions.stuck:
            shapes["stuck"] = ()
        if self.reductions.peak:
            shapes["peak"] = ()
            if self.reductions.peak_tangent and self.n_w:
                shapes["peak_dot"] = (self.n_w,)
        if self.reductions.rate:
            shapes["rate"] = ()
            if self.plan.n_pre:
                shapes["rate_pre"] = ()
        rows, start = {}, 0
        for name, shape in shapes.items():
            rows[name] = (start, shape)
            start += int(np.prod(shape, dtype=int))
        return rows

    @property
    def n_out(self) -> int:
        return sum(int(np.prod(s, dtype=int)) for _, s in self.outputs.values())

    def kernel(self, shared_ref, p_ref, out_ref) -> None:
        """The body of one program: ``shared_ref`` the shared values (flat), ``p_ref``
        ``(rows, block)`` lane values, ``out_ref`` ``(rows, block)`` outputs (see
        :meth:`_layout`)."""
        plan, dtype = self.plan, self.dtype
        block = p_ref.shape[1]
        p, shared = self._lane_cells(p_ref), self._shared_cells(shared_ref)

        def lanes(cell) -> Any:
            return _lanes(cell, dtype, block)

        def pack(y, ydot) -> tuple:
            return tuple(lanes(c) for c in np.ravel(y)) + tuple(lanes(c) for c in np.ravel(ydot))

        def unpack(carry) -> tuple:
            n = self.n_y
            return (traced_cells(carry[:n], (n,)), traced_cells(carry[n:], (self.n_w, n)))

        def advance(carry, t0, h, first, count) -> tuple:
            def body(k, carry) -> tuple:
                t = jnp.asarray(t0, dtype) + (first + k).astype(dtype) * jnp.asarray(h, dtype)
                y, ydot = unpack(carry)
                y, ydot = self.step(traced_cells([t], ()), cells_of(h, dtype), y, shared, p, ydot)
                return pack(y, ydot)

            return lax.fori_loop(0, count, body, carry)

        # jnp.max's rule: the larger value, and NaN once met (not Triton's maxnum)
        def takes_over(new, acc) -> Any:
            return (new > acc) | jnp.isnan(new)

        carry = pack(*self.start(shared, p))
        pre = {}
        if plan.n_pre and self.reductions.rate:
            # the transient judged at the window's cadence, as RK4.transient_and_window judges it
            def rate_after(carry, first, count, peak) -> tuple:
                carry = advance(carry, 0.0, plan.h_pre, first, count)
                t = (first + count).astype(dtype) * jnp.asarray(plan.h_pre, dtype)
                rate = lanes(self.rate_at(traced_cells([t], ()), unpack(carry)[0], shared, p)[()])
                return carry, jnp.where(takes_over(rate, peak), rate, peak)

            n_blocks, rest = divmod(plan.n_pre, plan.every)
            peak = lanes(jnp.asarray(-jnp.inf, dtype))
            carry, peak = lax.fori_loop(0, n_blocks, lambda i, s: rate_after(s[0], i * plan.every, plan.every, s[1]),
                                        (carry, peak))
            if rest:
                carry, peak = rate_after(carry, jnp.asarray(n_blocks * plan.every), rest, peak)
            pre["rate_pre"] = peak
        elif plan.n_pre:
            carry = advance(carry, 0.0, plan.h_pre, 0, plan.n_pre)
        y_a = carry

        def measure(t, carry) -> dict:
            y, ydot = unpack(carry)
            out = self.point(traced_cells([t], ()), y, shared, p, ydot)
            return {k: (lanes(v[()]) if v.ndim == 0 else tuple(lanes(c) for c in np.ravel(v))) for k, v in out.items()}

        def merge(acc, new) -> dict:
            out = {"finite": acc["finite"] * new["finite"]}
            if "stuck" in acc:
                out["stuck"] = acc["stuck"] + new["stuck"]
            if "peak" in acc:
                higher = takes_over(new["peak"], acc["peak"])
                out["peak"] = jnp.where(higher, new["peak"], acc["peak"])
                if "peak_dot" in acc:
                    out["peak_dot"] = tuple(jnp.where(higher, n, a) for n, a in zip(new["peak_dot"], acc["peak_dot"]))
            if "rate" in acc:
                out["rate"] = jnp.where(takes_over(new["rate"], acc["rate"]), new["rate"], acc["rate"])
            return out

        first = measure(jnp.asarray(plan.t_measure, dtype), carry)

        def save(i, state) -> tuple:
            carry, acc = state
            carry = advance(carry, plan.t_measure, plan.h, i * plan.every, plan.every)
            t = jnp.asarray(plan.t_measure, dtype) + ((i + 1) * plan.every).astype(dtype) * jnp.asarray(plan.h, dtype)
            return carry, merge(acc, measure(t, carry))

        carry, acc = lax.fori_loop(0, plan.n_saves, save, (carry, first))
        last = measure(jnp.asarray(plan.t_measure + plan.n_saves * plan.every * plan.h, dtype), carry)
        if "stuck" in acc:  # trapezoid over equal segments: the end points count half
            acc["stuck"] = (acc["stuck"] - 0.5 * (first["stuck"] + last["stuck"])) / plan.n_saves

        n = self.n_y
        values = {"y_a": y_a[:n], "y_b": carry[:n], "ya_dot": y_a[n:], "yb_dot": carry[n:], **acc, **pre}
        for name, (row, _) in self.outputs.items():
            value = values[name]
            for k, v in enumerate(value if isinstance(value, tuple) else (value,)):
                out_ref[row + k, :] = v.astype(dtype)

    def __call__(self, shared, p, *, block=128, interpret=False, num_warps=4):
        """Run the kernel over lanes ``p`` ``(B, P)``.

        Args:
            shared: the shared arrays (shapes as ``shared_example``).
            p: lane values, ``(B, P)`` with ``B`` a multiple of ``block``.
            block: lanes per program (a power of two).
            interpret: run in Pallas' interpret mode (any backend; slow).
            num_warps: Triton warps per program (GPU).

        Returns:
            dict name -> ``(B, ...)`` arrays: ``y_a``, ``y_b`` (first and last window state),
                ``ya_dot``/``yb_dot`` ``(B, W, state_size)`` with tangents, ``finite`` (1.0
                when every saved window state is finite) and the reductions requested.
        """
        from jax.experimental import pallas as pl

        n_lanes = p.shape[0]
        if n_lanes % block:
            raise ValueError(f"the lane count {n_lanes} must be a multiple of block={block}")
        rows_in, rows_out, n_shared = next_power_of_two(self.n_p), next_power_of_two(self.n_out), next_power_of_two(self.n_shared)
        p_rows = jnp.zeros((rows_in, n_lanes), self.dtype).at[: self.n_p].set(p.T.astype(self.dtype))
        flat = [jnp.ravel(jnp.asarray(x)).astype(self.dtype) for x in shared]
        shared_flat = jnp.zeros(n_shared, self.dtype).at[: self.n_shared].set(
            jnp.concatenate(flat) if flat else jnp.zeros(0, self.dtype))
        params = None
        if not interpret:
            from jax.experimental.pallas import triton as pltriton

            params = pltriton.CompilerParams(num_warps=num_warps, num_stages=1)
        out = pl.pallas_call(
            self.kernel,
            out_shape=jax.ShapeDtypeStruct((rows_out, n_lanes), self.dtype),
            grid=(n_lanes // block,),
            in_specs=[pl.BlockSpec((n_shared,), lambda i: (0,)), pl.BlockSpec((rows_in, block), lambda i: (0, i))],
            out_specs=pl.BlockSpec((rows_out, block), lambda i: (0, i)),
            interpret=interpret,
            compiler_params=params,
        )(shared_flat, p_rows)
        result = {}
        for name, (row, shape) in self.outputs.items():
            size = int(np.prod(shape, dtype=int))
            result[name] = out[row : row + size].T.reshape((n_lanes,) + shape)
        return result


def components_read(fn, example_args) -> set[int] | None:
    """The indices of the components of ``fn``'s first argument (a vector) that its outputs
    read, or None when ``fn`` has an operation without a component-wise rule.

    ``fn`` is evaluated component-wise (:class:`~jaxfriction._kernels.componentwise.Componentwise`)
    on one traced scalar per component of every argument, so each operation of the trace
    acts on scalars; the trace is then walked back from its outputs.

    Args:
        fn: ``fn(*args)`` -> a pytree of arrays.
        example_args: shapes and dtypes of the arguments (``jax.ShapeDtypeStruct`` pytrees).

    Returns:
        A set of indices into the first argument's flattened components, or None. An
        operation whose result is unused counts for nothing; ``x * 0`` still reads ``x``.
    """
    try:
        piece = Componentwise(fn, *example_args)
    except Unsupported:
        return None
    leaves, tree = jax.tree.flatten(example_args)
    sizes = [int(np.prod(leaf.shape, dtype=int)) for leaf in leaves]

    def flat(*scalars) -> list:
        cells, at = [], 0
        for leaf, size in zip(leaves, sizes):
            cells.append(traced_cells(list(scalars[at: at + size]), leaf.shape))
            at += size
        out = piece(*jax.tree.unflatten(tree, cells))
        leaves_out = jax.tree.leaves(out, is_leaf=lambda x: isinstance(x, np.ndarray))
        return [c for leaf in leaves_out for c in np.ravel(leaf) if not is_concrete(c)]

    specs = [jax.ShapeDtypeStruct((), leaf.dtype) for leaf, size in zip(leaves, sizes) for _ in range(size)]
    jaxpr = jax.make_jaxpr(flat)(*specs).jaxpr
    read = {v for v in jaxpr.outvars if not isinstance(v, jex_core.Literal)}
    for eqn in reversed(jaxpr.eqns):
        if any(v in read for v in eqn.outvars):
            read.update(v for v in eqn.invars if not isinstance(v, jex_core.Literal))
    return {i for i, v in enumerate(jaxpr.invars[: sizes[0]]) if v in read}


def _lanes(cell, dtype, block):
    """A cell as a ``(block,)`` array of ``dtype`` (loop carries need one type and shape)."""
    cell = jnp.asarray(cell, dtype) if is_concrete(cell) else cell.astype(dtype)
    return jnp.broadcast_to(cell, (block,))


def next_power_of_two(n: int) -> int:
    """Triton blocks have power-of-two shapes."""
    return 1 << max(0, int(n) - 1).bit_length()
