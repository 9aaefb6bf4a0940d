"""The Pallas executor: a sweep's lanes as one fused kernel per block of lanes.

Under ``vmap``, ``lax.scan`` of RK4 runs every time step as several XLA kernels over the
batch, each reading and writing its intermediates in memory. Here one program of a
``pallas_call`` owns a block of lanes and runs the transient and the measured window in
``fori_loop`` s with the state (and its forward-mode tangents) held in registers, and it
accumulates the window's reductions (:func:`~jaxfriction._lanes.pieces.merge_measures`) at
every saved point. Only the window's first and last states, their tangents and those
reductions leave the kernel; :meth:`~jaxfriction._lanes.traced.LaneProgram.lane_outputs`
forms the lanes' results from them as on the XLA path. On a GPU the kernel is lowered by
Triton (float32 and float64); elsewhere it runs in Pallas' interpret mode, slowly, for tests.

:class:`FusedKernel` is the option (``sweep(kernel=...)``), :class:`FusedLanes` what the
sweep's engine calls, :func:`run_pallas` the kernel itself.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._checks import check_int, check_real
from .componentwise import cells_of, traced_cells
from .kernels import AbstractKernel
from .pieces import LanePieces, final_measures, first_measures, lane_block, merge_measures, running_max
from .traced import LaneProgram, support

if TYPE_CHECKING:
    from .program import Lane

log = logging.getLogger("jaxfriction")

#: The most per-lane operations of one step (with tangents) that :class:`~jaxfriction.AutoKernel`
#: gives the GPU kernel: its time loop's body is one Triton program, whose compile time grows
#: faster than the program (the oscillator's few hundred operations compile in seconds, the
#: n = 32 Burridge-Knopoff chain's 4,311 did not compile in minutes: ``docs/performance.md``,
#: "Numbers behind the defaults"). The bound between is a choice, not a measurement: larger
#: programs run on the XLA path, with the reason logged; ``kernel="fused"`` still runs the kernel.
MAX_GPU_OPERATIONS = 1000


class FusedKernel(AbstractKernel):
    """One fused Pallas kernel per block of lanes (fixed-step RK4, the window observables and
    forward-mode tangents accumulated in the kernel; :mod:`jaxfriction._lanes.fused`).

    Supported: the RK4 solver, the default window observables
    (:data:`~jaxfriction.WINDOW_OBSERVABLES`, any subset), no gradient or forward-mode
    gradients, and systems whose ``vector_field`` can be evaluated component by component
    (no loops, solves, sorts or gathers at state-dependent indices inside it: every system
    of the library except :class:`~jaxfriction.TwoBlocksOnBelt`, whose contact forces come
    from a linear solve, and tabulated ground motions) whose operations all lower to Triton
    (checked on a GPU by lowering and verifying the kernel). Asking for it where it is not
    supported raises ``ValueError`` with the reason.

    Args:
        block: lanes per kernel program (a power of two; default 128, one lane per thread
            with ``num_warps=4``).
        num_warps: Triton warps per program (GPU).
        interpret: run in Pallas' interpret mode. None (default): on GPUs compiled by
            Triton, elsewhere interpreted (correct, slow: for tests of the kernel on CPU).

    Raises:
        ValueError: ``block`` not a power of two, ``num_warps`` not positive; in a sweep,
            ``interpret=False`` off a GPU.
    """

    shortcut: ClassVar[str] = "fused"
    platforms: ClassVar[tuple[str, ...]] = ("gpu",)
    title: ClassVar[str] = "the fused kernel"

    block: int = eqx.field(default=128, static=True)
    num_warps: int = eqx.field(default=4, static=True)
    interpret: bool | None = eqx.field(default=None, static=True)

    def __check_init__(self):
        check_int("block", self.block, minimum=1)
        if self.block & (self.block - 1):
            raise ValueError(f"block must be a power of two, got {self.block!r}")
        check_real("num_warps", self.num_warps, positive=True)

    def _interpret(self, devices):
        return devices[0].platform != "gpu" if self.interpret is None else self.interpret

    def why_not(self, lane, paths: list[str], devices: list) -> str | None:
        """The common reasons (:func:`~jaxfriction._lanes.traced.support`: solver,
        observables, gradient mode, carried size, component-wise tracing), then the kernel's
        own: tracing the Pallas call; on a GPU also Triton lowering. None when it can."""
        triton = not self._interpret(devices)

        def check(pieces, shared, names) -> str | None:
            p = jnp.zeros((8, len(names)), jnp.result_type(float))
            jax.eval_shape(lambda shared, p: run_pallas(pieces, shared, p, block=8, interpret=True), shared, p)
            if triton:
                from .lowering import triton_problems

                problems = triton_problems(lambda shared, p: run_pallas(pieces, shared, p, block=8), shared, p)
                return "; ".join(problems) or None
            return None

        return support(lane, paths, ("fused", triton), check)

    def auto_why_not(self, lane, paths: list[str], devices: list) -> str | None:
        """:meth:`why_not`, and a step of more than :data:`MAX_GPU_OPERATIONS` per-lane
        operations, which Triton would compile for minutes."""
        reason = self.why_not(lane, paths, devices)
        if reason is not None:
            return reason
        program = LaneProgram(lane)
        operations = sum(program.pieces(program.names(dict.fromkeys(paths)))[0].operations_per_step().values())
        if operations <= MAX_GPU_OPERATIONS:
            return None
        return (f"a step of the lane program has {operations} operations per lane, more than the "
                f"{MAX_GPU_OPERATIONS} the GPU kernel takes on: Triton would compile it for minutes (the n = 32 "
                f"chain's 4,311: over 230 s on an H200), where XLA takes seconds; kernel='fused' forces it")

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        interpret, platform = self._interpret(devices), devices[0].platform
        if not interpret and platform != "gpu" and not dry:
            raise ValueError(f"kernel: FusedKernel(interpret=False) compiles for a GPU, but the devices are "
                             f"{platform}; leave interpret=None (interpret mode off a GPU)")
        reason = self.why_not(lane, paths, devices)
        if reason is not None:
            raise ValueError(f"kernel: the fused kernel cannot run this sweep: {reason}")
        reason = "interpret mode (not a GPU)" if interpret else "Triton on the GPU"
        log.debug("sweep on the fused kernel: %s", reason)
        return FusedLanes(lane, self.block, self.num_warps, interpret), "fused", reason


class FusedLanes(eqx.Module):
    """A chunk of lanes of a sweep, computed by the fused kernel (``batched``: the engine
    passes whole chunks, ``{path: (B,)}``, instead of ``vmap``-ing one lane)."""

    lane: Lane
    block: int = eqx.field(static=True)
    num_warps: int = eqx.field(static=True)
    interpret: bool = eqx.field(static=True)
    batched = True

    def __call__(self, **points):
        program = LaneProgram(self.lane)
        names = program.names(points)
        p = program.values(points, names)
        n = p.shape[0]
        block = min(self.block, next_power_of_two(n))  # a device's share smaller than a block: no idle lanes
        padded = -(-n // block) * block
        p_run = jnp.concatenate([p, jnp.broadcast_to(p[-1:], (padded - n, p.shape[1]))]) if padded > n else p
        pieces, shared = program.pieces(names)
        raw = {k: v[:n] for k, v in run_pallas(pieces, shared, p_run, block=block, interpret=self.interpret,
                                               num_warps=self.num_warps).items()}
        return program.lane_outputs(names, pieces.plan, p, raw)


def pallas_body(pieces: LanePieces, shared_ref, p_ref, out_ref) -> None:
    """The body of one program: ``shared_ref`` the shared values (flat), ``p_ref``
    ``(rows, block)`` lane values, ``out_ref`` ``(rows, block)`` outputs (see
    :attr:`~jaxfriction._lanes.pieces.LanePieces.outputs`)."""
    plan, dtype = pieces.plan, pieces.dtype
    block = p_ref.shape[1]
    p, shared = pieces.lane_cells(p_ref), pieces.shared_cells(shared_ref)

    def lanes(cell) -> Any:
        return lane_block(cell, dtype, block)

    def pack(y, ydot) -> tuple:
        return tuple(lanes(c) for c in np.ravel(y)) + tuple(lanes(c) for c in np.ravel(ydot))

    def unpack(carry) -> tuple:
        n = pieces.n_y
        return (traced_cells(carry[:n], (n,)), traced_cells(carry[n:], (pieces.n_w, n)))

    def advance(carry, t0, h, first, count) -> tuple:
        def body(k, carry) -> tuple:
            t = jnp.asarray(t0, dtype) + (first + k).astype(dtype) * jnp.asarray(h, dtype)
            y, ydot = unpack(carry)
            y, ydot = pieces.step(traced_cells([t], ()), cells_of(h, dtype), y, shared, p, ydot)
            return pack(y, ydot)

        return lax.fori_loop(0, count, body, carry)

    carry = pack(*pieces.start(shared, p))
    pre = {}
    if plan.n_pre and pieces.reductions.rate:
        # the transient judged at the window's cadence, as RK4.transient_and_window judges it
        def rate_after(carry, first, count, peak) -> tuple:
            carry = advance(carry, 0.0, plan.h_pre, first, count)
            t = (first + count).astype(dtype) * jnp.asarray(plan.h_pre, dtype)
            rate = lanes(pieces.rate_at(traced_cells([t], ()), unpack(carry)[0], shared, p)[()])
            return carry, running_max(rate, peak)

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
        out = pieces.point(traced_cells([t], ()), y, shared, p, ydot)
        return {k: (lanes(v[()]) if v.ndim == 0 else tuple(lanes(c) for c in np.ravel(v))) for k, v in out.items()}

    first = measure(jnp.asarray(plan.t_measure, dtype), carry)

    def save(i, state) -> tuple:
        carry, acc = state
        carry = advance(carry, plan.t_measure, plan.h, i * plan.every, plan.every)
        t = jnp.asarray(plan.t_measure, dtype) + ((i + 1) * plan.every).astype(dtype) * jnp.asarray(plan.h, dtype)
        return carry, merge_measures(acc, measure(t, carry))

    carry, acc = lax.fori_loop(0, plan.n_saves, save, (carry, first_measures(first)))
    last = measure(jnp.asarray(plan.t_measure + plan.n_saves * plan.every * plan.h, dtype), carry)
    acc = final_measures(acc, last, plan.n_saves)

    n = pieces.n_y
    values = {"y_a": y_a[:n], "y_b": carry[:n], "ya_dot": y_a[n:], "yb_dot": carry[n:], **acc, **pre}
    for name, (row, _) in pieces.outputs.items():
        value = values[name]
        for k, v in enumerate(value if isinstance(value, tuple) else (value,)):
            out_ref[row + k, :] = v.astype(dtype)


def run_pallas(pieces: LanePieces, shared, p, *, block=128, interpret=False, num_warps=4) -> dict:
    """Run the pieces as one Pallas kernel per block of lanes over lanes ``p`` ``(B, P)``.

    Args:
        pieces: the lane program's traced pieces.
        shared: the shared arrays (shapes as the pieces' ``shared_example``).
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
    rows_in, rows_out, n_shared = next_power_of_two(pieces.n_p), next_power_of_two(pieces.n_out), next_power_of_two(pieces.n_shared)
    p_rows = jnp.zeros((rows_in, n_lanes), pieces.dtype).at[: pieces.n_p].set(p.T.astype(pieces.dtype))
    flat = [jnp.ravel(jnp.asarray(x)).astype(pieces.dtype) for x in shared]
    shared_flat = jnp.zeros(n_shared, pieces.dtype).at[: pieces.n_shared].set(
        jnp.concatenate(flat) if flat else jnp.zeros(0, pieces.dtype))
    params = None
    if not interpret:
        from jax.experimental.pallas import triton as pltriton

        params = pltriton.CompilerParams(num_warps=num_warps, num_stages=1)
    out = pl.pallas_call(
        functools.partial(pallas_body, pieces),
        out_shape=jax.ShapeDtypeStruct((rows_out, n_lanes), pieces.dtype),
        grid=(n_lanes // block,),
        in_specs=[pl.BlockSpec((n_shared,), lambda i: (0,)), pl.BlockSpec((rows_in, block), lambda i: (0, i))],
        out_specs=pl.BlockSpec((rows_out, block), lambda i: (0, i)),
        interpret=interpret,
        compiler_params=params,
    )(shared_flat, p_rows)
    result = {}
    for name, (row, shape) in pieces.outputs.items():
        size = int(np.prod(shape, dtype=int))
        result[name] = out[row : row + size].T.reshape((n_lanes,) + shape)
    return result


def next_power_of_two(n: int) -> int:
    """Triton blocks have power-of-two shapes."""
    return 1 << max(0, int(n) - 1).bit_length()
