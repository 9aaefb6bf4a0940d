"""How a sweep's lanes are computed: ``vmap`` of ``lax.scan`` (XLA) or one fused Pallas kernel.

Options are small objects, as the gradient modes: :class:`VmapKernel`, :class:`FusedKernel`
and :class:`AutoKernel` (the default: the fused kernel on a GPU whenever the sweep is one it
supports, the XLA path otherwise, with the reason logged).
"""

from __future__ import annotations

import logging

import equinox as eqx

from ..._checks import check_real

log = logging.getLogger("jaxfriction")


class AbstractKernel(eqx.Module):
    """Where a sweep's lanes are computed (see :func:`as_kernel`)."""


class VmapKernel(AbstractKernel):
    """The XLA path: one lane program, ``jax.vmap``-ed over a chunk's lanes and sharded over
    the devices. Runs every system, solver, observable and gradient mode on every backend."""


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
        if isinstance(self.block, bool) or not isinstance(self.block, int) or self.block < 1 \
                or self.block & (self.block - 1):
            raise ValueError(f"block must be a power of two, got {self.block!r}")
        check_real("num_warps", self.num_warps, positive=True)


class AutoKernel(AbstractKernel):
    """The fused kernel (:class:`FusedKernel` with its defaults) when the devices are GPUs
    and the sweep is supported, otherwise the XLA path (:class:`VmapKernel`). The choice and
    its reason are logged (logger ``"jaxfriction"``: a warning when a GPU sweep falls back,
    debug otherwise) and kept in the dataset's ``kernel`` and ``kernel_reason`` attributes."""


def as_kernel(kernel) -> AbstractKernel:
    """The kernel option for ``kernel``: an object, ``"auto"``, ``"vmap"`` or ``"fused"``.

    Raises:
        ValueError: naming ``kernel`` for anything else.
    """
    from ..options import as_option

    return as_option(kernel, AbstractKernel, {"auto": AutoKernel, "vmap": VmapKernel, "fused": FusedKernel}, "kernel")
