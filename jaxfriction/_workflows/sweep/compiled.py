"""A sweep's lanes through the compiled loop: the fused lane program, compiled by numba on CPUs.

:class:`CompiledLoopLanes` is :class:`~jaxfriction._workflows.sweep.fused.FusedLanes` with
the Pallas kernel replaced by its numba form
(:class:`~jaxfriction._kernels.compiled_loop.CompiledLoop`): the same traced pieces (RK4
step with tangents, saved-point reductions, output rows), run by a ``jax.pure_callback``
inside the sweep's compiled program, and the same
:meth:`~jaxfriction._workflows.sweep.fused.FusedLanes._lane_outputs` after it, so
observables, gradients and status codes are formed exactly as for the fused kernel and the
XLA path.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._kernels.compiled_loop import CompiledLoop
from ..._kernels.numba_program import numba_threads
from ..._paths import get_parameter
from .fused import FusedLanes


class CompiledLoopLanes(eqx.Module):
    """A chunk of lanes computed by the numba program (``batched``: the engine passes whole
    chunks ``{path: (B,)}``; ``one_device``: numba spreads the lanes over the cores itself, so
    the chunk is not split over JAX's CPU devices)."""

    lane: eqx.Module
    lanes: int | None = eqx.field(static=True)
    loops: bool = eqx.field(default=False, static=True)  #: written as loops over each lane's arrays
    batched = True
    one_device = True

    def __call__(self, **points):
        fused = FusedLanes(self.lane, 128, 4, True)
        names = fused._names(points)
        dtype = jnp.result_type(float)
        n = next(iter(points.values())).shape[0]
        columns = [points[k] if k in points else jnp.full((n,), get_parameter(self.lane.system, k)) for k in names]
        p = jnp.stack([jnp.asarray(c, dtype) for c in columns], axis=1)
        looped = self.loops
        kernel, shared = fused.build(names, analyse_live=not looped)
        lanes = self.lanes or block_lanes(n, kernel.n_y * (1 + kernel.n_w) * np.dtype(dtype).itemsize, looped)
        padded = -(-n // lanes) * lanes
        p_run = jnp.concatenate([p, jnp.broadcast_to(p[-1:], (padded - n, p.shape[1]))]) if padded > n else p
        loop = CompiledLoop(kernel, lanes, looped=looped)
        flat = [jnp.ravel(jnp.asarray(x)).astype(dtype) for x in shared]
        shared_flat = jnp.concatenate(flat) if flat else jnp.zeros(0, dtype)
        n_out, np_dtype = kernel.n_out, np.dtype(dtype)

        def host(shared_flat, p_rows) -> np.ndarray:
            out = np.empty((n_out, padded), np_dtype)
            shared_in, p_in = (np.ascontiguousarray(x, np_dtype) for x in (shared_flat, p_rows))
            shared_in.flags.writeable = p_in.flags.writeable = False  # one compiled signature: read-only inputs
            loop.run(shared_in, p_in, out)
            return out

        out = jax.pure_callback(host, jax.ShapeDtypeStruct((n_out, padded), dtype), shared_flat, p_run.T)
        raw = {}
        for name, (row, shape) in kernel.outputs.items():
            size = int(np.prod(shape, dtype=int))
            raw[name] = out[row: row + size].T.reshape((padded,) + shape)[:n]
        return jax.vmap(lambda p, out: fused._lane_outputs(names, kernel.plan, p, out))(p, raw)


#: Lanes per block of a program written as loops over each lane's arrays: one, so that LLVM
#: vectorizes the loops over a lane's elements (blocks, sliders, contacts).
LOOPED_LANES = 1

#: Bytes of carried state (state and tangents) of one block, at most: they stay in a core's
#: 32 KiB level-1 cache through the time loop.
BLOCK_BYTES = 32 * 1024


def block_lanes(n: int, carried_bytes: int = 80, looped: bool = False) -> int:
    """Lanes per block for a chunk of ``n`` lanes whose state and tangents take
    ``carried_bytes`` per lane: the largest power of two from 8 to 512 that still gives
    every thread a block and keeps a block's carried values within :data:`BLOCK_BYTES`.
    Larger blocks share the per-step work common to all lanes (the time, a forcing shared
    by every lane) among more lanes, until a block's values spill the cache (the measured
    trade-off is in ``docs/performance.md``, "Numbers behind the defaults")."""
    if looped:
        return LOOPED_LANES
    per_thread = max(1, n // numba_threads())
    fits = max(1, BLOCK_BYTES // max(1, int(carried_bytes)))
    return int(max(8, min(512, 1 << (fits.bit_length() - 1), 1 << (per_thread.bit_length() - 1))))
