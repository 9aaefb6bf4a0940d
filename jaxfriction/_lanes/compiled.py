"""The numba executor: a sweep's lanes through the compiled loop on CPUs.

The lane program's traced pieces (:class:`~jaxfriction._lanes.traced.LaneProgram`: the RK4
step with tangents, the saved-point measures, the output rows) are written out as one numba
program (:class:`~jaxfriction._lanes.compiled_loop.CompiledLoop`), run by a
``jax.pure_callback`` inside the sweep's compiled program, and the lanes' results are formed
from its outputs by :meth:`~jaxfriction._lanes.traced.LaneProgram.lane_outputs`, as for the
fused kernel and the XLA path. :class:`CompiledLoopKernel` is the option
(``sweep(kernel=...)``), :class:`CompiledLoopLanes` what the sweep's engine calls.
"""

from __future__ import annotations

import collections
import logging
import weakref
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_int
from .compiled_loop import LANES, MAX_SOURCE_LINES, CompiledLoop
from .kernels import AbstractKernel
from .numba_program import load, numba_available, numba_threads
from .structure import remembered, structure
from .traced import MAX_CARRIED, LaneProgram, support

log = logging.getLogger("jaxfriction")


#: States of more than this many numbers are written as loops by default (see
#: :class:`CompiledLoopKernel`): one expression per component would be thousands of lines
#: (the n = 32 chain's 67 numbers: 4,755 lines) and its planning alone takes seconds.
LOOPED_STATE = 64

#: Steps of more than this many per-lane operations are written as loops by default. One
#: expression per component writes less than a line per operation (measured on chains,
#: Iwan and Segalman joints and jointed bars: ``docs/performance.md``), so past three times
#: :data:`~jaxfriction._lanes.compiled_loop.MAX_SOURCE_LINES` operations it does not fit,
#: and writing it to find out would take seconds of planning.
LOOPED_OPERATIONS = 3 * MAX_SOURCE_LINES


class CompiledLoopKernel(AbstractKernel):
    """The fused lane program emitted as Python source and compiled by numba, for CPUs
    (:mod:`jaxfriction._lanes.compiled_loop`): blocks of ``lanes`` lanes under
    ``numba.prange`` over the cores, the whole time loop of each block inside, the state and
    its forward-mode tangents in local scalars, the window's reductions accumulated at the
    saved points. The physics is the system's own ``vector_field``, traced and evaluated
    component by component as in :class:`FusedKernel`, which supports the same sweeps
    (RK4 with a ``dt``, the default window observables, no gradient or forward mode,
    systems whose vector field evaluates component-wise) and gives the same outputs and
    status codes as the XLA path, to round-off.

    The program is compiled once per sweep structure (about a second) and kept on disk
    (see :func:`~jaxfriction._lanes.numba_program.cache_folder`): a later sweep of the same
    structure, in any process, compiles nothing. Lanes are not split over JAX's CPU
    devices: numba's threads share them out (``NUMBA_NUM_THREADS``, default all cores).

    Many contacts (a Burridge-Knopoff chain, an Iwan joint of many sliders) are written as
    loops over each lane's arrays instead (:mod:`jaxfriction._lanes.looped`): the program
    then has the same size whatever the number of blocks, sliders or elements.

    Args:
        lanes: lanes per block, the loop LLVM vectorizes. None (default): chosen per chunk,
            the largest power of two from 8 to 512 that gives every thread a block and keeps
            a block's state and tangents within 32 KiB (a core's level-1 cache); one lane per
            block for a looped program (the loops over a lane's arrays are vectorized).
        loops: write the program as loops over each lane's arrays: True always, False never
            (one expression per component), None (default) for states of more than
            :data:`LOOPED_STATE` numbers, steps of more than :data:`LOOPED_OPERATIONS`
            per-lane operations, and where one expression per component does not fit (more
            than :data:`~jaxfriction._lanes.compiled_loop.MAX_SOURCE_LINES` lines).

    Raises:
        ValueError: ``lanes`` not a positive integer, ``loops`` not None or a bool; in a
            sweep, numba not installed or a sweep it does not support (with the reason).
    """

    shortcut: ClassVar[str] = "compiled"
    platforms: ClassVar[tuple[str, ...]] = ("cpu",)
    title: ClassVar[str] = "the compiled loop"

    lanes: int | None = eqx.field(default=None, static=True)
    loops: bool | None = eqx.field(default=None, static=True)

    def __check_init__(self):
        if self.lanes is not None:
            check_int("lanes", self.lanes, minimum=1)
        if not (self.loops is None or isinstance(self.loops, bool)):
            raise ValueError(f"loops must be None, True or False, got {self.loops!r}")

    def why_not(self, lane, paths: list[str], devices: list) -> str | None:
        """numba's absence, the common reasons (:func:`~jaxfriction._lanes.traced.support`:
        solver, observables, gradient mode, component-wise tracing) and the program's own (an
        operation with no scalar form; one expression per component: at most
        :data:`~jaxfriction._lanes.traced.MAX_CARRIED` carried numbers and
        :data:`~jaxfriction._lanes.compiled_loop.MAX_SOURCE_LINES` lines), or None."""
        return self._choice(lane, paths)[0]

    def _choice(self, lane, paths) -> tuple[str | None, bool]:
        """``(why_not, looped)``, worked out once per sweep structure (a plan asks it of the
        option's check and of its program, the default kernel of both)."""
        key = structure(lane) + (tuple(paths), self.loops)
        return remembered(_CHOICES, key, lambda: self._choose(lane, paths))

    def _choose(self, lane, paths) -> tuple[str | None, bool]:
        if self.loops is not None:
            return self._why_not(lane, paths, self.loops), self.loops
        if not self._large(lane, paths) and self._why_not(lane, paths, False) is None:
            return None, False
        return self._why_not(lane, paths, True), True

    @staticmethod
    def _why_not(lane, paths, looped: bool) -> str | None:
        missing = numba_available()
        if missing is not None:
            return missing

        def check(pieces, shared, names) -> str | None:
            # written for the lanes per block the sweep will take (a looped program: one), compiled when it runs
            lines = emitted(pieces, LOOPED_LANES if looped else LANES, looped).source.count("\n")
            if looped or lines <= MAX_SOURCE_LINES:
                return None
            return (f"the emitted program has {lines} lines, more than the compiled loop's {MAX_SOURCE_LINES}: "
                    f"numba would compile it for minutes (the jointed template's 64 Segalman elements: "
                    f"22,497 lines, 630 s for a 3-lane sweep), where XLA takes seconds")

        # written as loops over the lane's arrays, a program's size does not grow with them
        return support(lane, paths, ("compiled", looped), check, carried_limit=None if looped else MAX_CARRIED,
                       analyse_live=not looped)

    @staticmethod
    def _large(lane, paths) -> bool:
        """Loops without trying one expression per component: a state past
        :data:`LOOPED_STATE` numbers, or a step of more than :data:`LOOPED_OPERATIONS`
        per-lane operations (:attr:`~jaxfriction._lanes.pieces.LanePieces.lane_operations`,
        from the traced pieces the looped program is written from)."""
        if lane.measure.y0.size > LOOPED_STATE:
            return True
        program = LaneProgram(lane)
        try:
            pieces, _ = program.pieces(program.names(dict.fromkeys(paths)), analyse_live=False)
        except Exception:  # noqa: BLE001 - the sweep's support check names what fails
            return False
        return pieces.lane_operations > LOOPED_OPERATIONS

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        reason, looped = self._choice(lane, paths)
        if reason is not None:
            raise ValueError(f"kernel: the compiled loop cannot run this sweep: {reason}")
        reason = "numba on the CPU" + (", written as loops over each lane's arrays" if looped else "")
        log.debug("sweep on the compiled loop: %s", reason)
        return CompiledLoopLanes(lane, self.lanes, looped), "compiled", reason


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
        program = LaneProgram(self.lane)
        names = program.names(points)
        dtype = jnp.result_type(float)
        p = program.values(points, names)
        n = p.shape[0]
        looped = self.loops
        kernel, shared = program.pieces(names, analyse_live=not looped)
        lanes = self.lanes or block_lanes(n, kernel.n_y * (1 + kernel.n_w) * np.dtype(dtype).itemsize, looped)
        padded = -(-n // lanes) * lanes
        p_run = jnp.concatenate([p, jnp.broadcast_to(p[-1:], (padded - n, p.shape[1]))]) if padded > n else p
        run = load(emitted(kernel, lanes, looped).source, np.dtype(dtype))  # compiles in a thread of its own
        flat = [jnp.ravel(jnp.asarray(x)).astype(dtype) for x in shared]
        shared_flat = jnp.concatenate(flat) if flat else jnp.zeros(0, dtype)
        n_out, np_dtype = kernel.n_out, np.dtype(dtype)

        def host(shared_flat, p_rows) -> np.ndarray:
            out = np.empty((n_out, padded), np_dtype)
            shared_in, p_in = (np.ascontiguousarray(x, np_dtype) for x in (shared_flat, p_rows))
            shared_in.flags.writeable = p_in.flags.writeable = False  # one compiled signature: read-only inputs
            run(shared_in, p_in, out)
            return out

        out = jax.pure_callback(host, jax.ShapeDtypeStruct((n_out, padded), dtype), shared_flat, p_run.T)
        raw = {}
        for name, (row, shape) in kernel.outputs.items():
            size = int(np.prod(shape, dtype=int))
            raw[name] = out[row: row + size].T.reshape((padded,) + shape)[:n]
        return program.lane_outputs(names, kernel.plan, p, raw)


def emitted(pieces, lanes: int, looped: bool) -> CompiledLoop:
    """The program written for ``pieces`` with ``lanes`` lanes per block (not compiled), once
    per pieces (which are traced once per sweep structure): the support check and the run
    of a sweep share it."""
    written = _EMITTED.setdefault(pieces, {})
    if (lanes, looped) not in written:
        written[lanes, looped] = CompiledLoop(pieces, lanes, compile=False, looped=looped)
    return written[lanes, looped]


#: :meth:`CompiledLoopKernel._choice`'s latest answers by sweep structure and ``loops``.
_CHOICES: collections.OrderedDict = collections.OrderedDict()

#: :func:`emitted`'s programs, by the pieces they were written for (gone with the pieces).
_EMITTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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
