"""How a sweep's lanes are computed: ``vmap`` of ``lax.scan`` (XLA), one fused Pallas kernel,
or the fused lane program compiled by numba.

Options are small objects that carry their behaviour, as diffrax's solvers do: each knows
whether it can run a sweep (:meth:`AbstractKernel.why_not`) and builds the lane program
that the engine runs (:meth:`AbstractKernel.program`). :class:`VmapKernel` (the XLA path),
:class:`FusedKernel` (one Pallas kernel per block of lanes), :class:`CompiledLoopKernel`
(the same lane program emitted for numba, on CPUs) and :class:`AutoKernel` (the default:
asks the fused kernel on a GPU, the compiled loop on a CPU, the XLA path otherwise, with the
reason logged).
"""

from __future__ import annotations

import abc
import logging

import equinox as eqx

from ..._checks import check_int, check_real

log = logging.getLogger("jaxfriction")


class AbstractKernel(eqx.Module):
    """Where a sweep's lanes are computed (see :func:`as_kernel`)."""

    @abc.abstractmethod
    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        """The lane program for a sweep: ``(fn, name, reason)``.

        Args:
            lane: the sweep's :class:`~jaxfriction._workflows.sweep.lane.Lane`.
            paths: the swept paths (the program's per-lane inputs).
            devices: the devices the lanes run on.
            dry: the program is built to be inspected or lowered, not run (a GPU kernel may
                then be built off a GPU).

        Returns:
            ``fn`` (called by the engine with ``{path: (B,)}`` chunks, ``vmap``-ed unless
                it is ``batched``), the kernel's name (``"vmap"`` or ``"fused"``) and why
                it was chosen.

        Raises:
            ValueError: naming ``kernel``, where the option cannot run this sweep.
        """

    def why_not(self, lane, paths: list[str], devices: list) -> str | None:
        """Why this kernel cannot run the sweep, or None when it can."""
        return None


class VmapKernel(AbstractKernel):
    """The XLA path: one lane program, ``jax.vmap``-ed over a chunk's lanes and sharded over
    the devices. Runs every system, solver, observable and gradient mode on every backend."""

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        return lane, "vmap", "asked for (VmapKernel)"


class FusedKernel(AbstractKernel):
    """One fused Pallas kernel per block of lanes (fixed-step RK4, the window observables and
    forward-mode tangents accumulated in the kernel; :mod:`jaxfriction._kernels.fused_rk4`).

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
        """The first reason of :func:`~jaxfriction._workflows.sweep.fused.fused_support`
        (solver, observables, gradient mode, carried size, component-wise tracing; on a GPU
        also Triton lowering), or None."""
        from .fused import fused_support

        return fused_support(lane, paths, triton=not self._interpret(devices))

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        from .fused import FusedLanes

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


#: States of more than this many numbers are written as loops by default (see
#: :class:`CompiledLoopKernel`): one expression per component would be thousands of lines
#: (the n = 32 chain's 67 numbers: 5,018 lines) and its planning alone takes seconds.
LOOPED_STATE = 64


class CompiledLoopKernel(AbstractKernel):
    """The fused lane program emitted as Python source and compiled by numba, for CPUs
    (:mod:`jaxfriction._kernels.compiled_loop`): blocks of ``lanes`` lanes under
    ``numba.prange`` over the cores, the whole time loop of each block inside, the state and
    its forward-mode tangents in local scalars, the window's reductions accumulated at the
    saved points. The physics is the system's own ``vector_field``, traced and evaluated
    component by component as in :class:`FusedKernel`, which supports the same sweeps
    (RK4 with a ``dt``, the default window observables, no gradient or forward mode,
    systems whose vector field evaluates component-wise) and gives the same outputs and
    status codes as the XLA path, to round-off.

    The program is compiled once per sweep structure (about a second) and kept on disk
    (see :func:`~jaxfriction._kernels.numba_program.cache_folder`): a later sweep of the same
    structure, in any process, compiles nothing. Lanes are not split over JAX's CPU
    devices: numba's threads share them out (``NUMBA_NUM_THREADS``, default all cores).

    Many contacts (a Burridge-Knopoff chain, an Iwan joint of many sliders) are written as
    loops over each lane's arrays instead (:mod:`jaxfriction._kernels.looped`): the program
    then has the same size whatever the number of blocks, sliders or elements.

    Args:
        lanes: lanes per block, the loop LLVM vectorizes. None (default): chosen per chunk,
            the largest power of two from 8 to 512 that gives every thread a block and keeps
            a block's state and tangents within 32 KiB (a core's level-1 cache); one lane per
            block for a looped program (the loops over a lane's arrays are vectorized).
        loops: write the program as loops over each lane's arrays: True always, False never
            (one expression per component), None (default) for states of more than
            :data:`LOOPED_STATE` numbers and where one expression per component does not fit
            (more than :data:`~jaxfriction._kernels.compiled_loop.MAX_SOURCE_LINES` lines).

    Raises:
        ValueError: ``lanes`` not a positive integer, ``loops`` not None or a bool; in a
            sweep, numba not installed or a sweep it does not support (with the reason).
    """

    lanes: int | None = eqx.field(default=None, static=True)
    loops: bool | None = eqx.field(default=None, static=True)

    def __check_init__(self):
        if self.lanes is not None:
            check_int("lanes", self.lanes, minimum=1)
        if not (self.loops is None or isinstance(self.loops, bool)):
            raise ValueError(f"loops must be None, True or False, got {self.loops!r}")

    def why_not(self, lane, paths: list[str], devices: list) -> str | None:
        """numba's absence or the first reason of
        :func:`~jaxfriction._workflows.sweep.fused.fused_support` (solver, observables,
        gradient mode, carried size, component-wise tracing, an operation with no scalar
        form), or None."""
        from .fused import fused_support

        if self.loops is not None:
            return fused_support(lane, paths, numba=True, loops=self.loops)
        if not self._large(lane) and fused_support(lane, paths, numba=True) is None:
            return None
        return fused_support(lane, paths, numba=True, loops=True)

    @staticmethod
    def _large(lane) -> bool:
        """A state past :data:`LOOPED_STATE`: loops without trying one expression per component."""
        return lane.measure.y0.size > LOOPED_STATE

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        from .compiled import CompiledLoopLanes
        from .fused import fused_support

        reason = self.why_not(lane, paths, devices)
        if reason is not None:
            raise ValueError(f"kernel: the compiled loop cannot run this sweep: {reason}")
        looped = self.loops if self.loops is not None else \
            self._large(lane) or fused_support(lane, paths, numba=True) is not None
        reason = "numba on the CPU" + (", written as loops over each lane's arrays" if looped else "")
        log.debug("sweep on the compiled loop: %s", reason)
        return CompiledLoopLanes(lane, self.lanes, looped), "compiled", reason


class AutoKernel(AbstractKernel):
    """The fused kernel (:class:`FusedKernel` with its defaults) when the devices are GPUs,
    the compiled loop (:class:`CompiledLoopKernel`) when they are CPUs, where the sweep is
    supported (on a GPU, also no larger than
    :data:`~jaxfriction._workflows.sweep.fused.MAX_GPU_OPERATIONS` per-lane operations per step,
    which Triton compiles in seconds); otherwise the XLA path (:class:`VmapKernel`). The choice and its reason are
    logged (logger ``"jaxfriction"``: a warning when a GPU sweep falls back, info when a CPU
    sweep does, debug otherwise)
    and kept in the dataset's ``kernel`` and ``kernel_reason`` attributes."""

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        platform = devices[0].platform
        option: AbstractKernel
        reason: str | None
        if platform == "cpu":
            option, name = CompiledLoopKernel(), "compiled loop"
        elif platform == "gpu":
            option, name = FusedKernel(), "fused kernel"
        else:
            reason = f"the devices are {platform}; the fused kernel runs on GPUs, the compiled loop on CPUs"
            log.debug("sweep on the XLA path: %s", reason)
            return lane, "vmap", reason
        reason = option.why_not(lane, paths, devices)
        if reason is None and platform == "gpu":
            from .fused import too_large_for_the_gpu

            reason = too_large_for_the_gpu(lane, paths)
        if reason is not None:  # a GPU sweep that falls back loses far more: a warning there
            log.log(logging.WARNING if platform == "gpu" else logging.INFO,
                    "sweep falls back to the XLA path (vmap of scan) from the %s: %s", name, reason)
            return lane, "vmap", reason
        return option.program(lane, paths, devices, dry=dry)


def as_kernel(kernel) -> AbstractKernel:
    """The kernel option for ``kernel``: an object, ``"auto"``, ``"vmap"``, ``"fused"`` or
    ``"compiled"``.

    Raises:
        ValueError: naming ``kernel`` for anything else.
    """
    from ..options import as_option

    return as_option(kernel, AbstractKernel, {"auto": AutoKernel, "vmap": VmapKernel, "fused": FusedKernel,
                                                "compiled": CompiledLoopKernel}, "kernel")
