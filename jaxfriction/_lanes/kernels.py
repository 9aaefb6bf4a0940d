"""How a sweep's lanes are computed: the executor options.

An executor runs the lane program (:mod:`jaxfriction._lanes.program`, in its traced form
:mod:`jaxfriction._lanes.traced` for the compiled ones) over a chunk of lanes. Options are
small objects that carry their behaviour, as diffrax's solvers do: each knows whether it
can run a sweep (:meth:`AbstractKernel.why_not`, its own restrictions) and builds what the
engine calls (:meth:`AbstractKernel.program`). The executors, one module each:
:class:`~jaxfriction.VmapKernel` (:mod:`.vmap`, the XLA path), :class:`~jaxfriction.FusedKernel`
(:mod:`.fused`, one Pallas kernel per block of lanes) and
:class:`~jaxfriction.CompiledLoopKernel` (:mod:`.compiled`, the program emitted for numba, on
CPUs); :class:`AutoKernel` (the default) asks the first executor that prefers the devices'
platform and falls back to the XLA path, with the reason logged.

A fourth executor is one module: a subclass of :class:`AbstractKernel` with a ``shortcut``
(its name in ``sweep(kernel=...)``), the ``platforms`` where :class:`AutoKernel` prefers it,
``why_not`` and ``program``; its module name goes into :data:`EXECUTORS`.
"""

from __future__ import annotations

import abc
import functools
import importlib
import logging
from typing import ClassVar

import equinox as eqx

from .._options import as_option

log = logging.getLogger("jaxfriction")

#: The executor modules of this folder, in :class:`AutoKernel`'s order of preference.
EXECUTORS = ("fused", "compiled", "vmap")


class AbstractKernel(eqx.Module):
    """Where a sweep's lanes are computed (see :func:`as_kernel`).

    Class attributes: ``shortcut`` (the string that names the executor's default option),
    ``platforms`` (the device platforms on which :class:`AutoKernel` tries it first) and
    ``title`` (its name in log messages).
    """

    shortcut: ClassVar[str] = ""
    platforms: ClassVar[tuple[str, ...]] = ()
    title: ClassVar[str] = ""

    @abc.abstractmethod
    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        """The lane program for a sweep: ``(fn, name, reason)``.

        Args:
            lane: the sweep's :class:`~jaxfriction._lanes.program.Lane`.
            paths: the swept paths (the program's per-lane inputs).
            devices: the devices the lanes run on.
            dry: the program is built to be inspected or lowered, not run (a GPU kernel may
                then be built off a GPU).

        Returns:
            ``fn`` (called by the engine with ``{path: (B,)}`` chunks, ``vmap``-ed unless
                it is ``batched``), the executor's shortcut (``"vmap"``, ``"fused"``,
                ``"compiled"``) and why it was chosen.

        Raises:
            ValueError: naming ``kernel``, where the option cannot run this sweep.
        """

    def why_not(self, lane, paths: list[str], devices: list) -> str | None:
        """Why this executor cannot run the sweep, or None when it can."""
        return None

    def auto_why_not(self, lane, paths: list[str], devices: list) -> str | None:
        """Why :class:`AutoKernel` leaves this executor for the XLA path (default: :meth:`why_not`)."""
        return self.why_not(lane, paths, devices)


@functools.cache
def _executors() -> tuple[type[AbstractKernel], ...]:
    found: list[type[AbstractKernel]] = []
    for module in EXECUTORS:
        names = vars(importlib.import_module(f"{__package__}.{module}"))
        found += [cls for cls in names.values() if isinstance(cls, type) and issubclass(cls, AbstractKernel)
                  and cls.__module__ == f"{__package__}.{module}" and cls.shortcut]
    return tuple(found)


def executors() -> list[type[AbstractKernel]]:
    """The executor options of :data:`EXECUTORS`, in that order (their modules imported once)."""
    return list(_executors())


class AutoKernel(AbstractKernel):
    """The first executor that prefers the devices' platform (the fused kernel,
    :class:`~jaxfriction.FusedKernel`, on GPUs; the compiled loop,
    :class:`~jaxfriction.CompiledLoopKernel`, on CPUs) where it supports the sweep (on a
    GPU, also no larger than :data:`~jaxfriction._lanes.fused.MAX_GPU_OPERATIONS` per-lane
    operations per step, which Triton compiles in seconds); otherwise the XLA path
    (:class:`~jaxfriction.VmapKernel`). The choice and its reason are logged (logger
    ``"jaxfriction"``: a warning when a GPU sweep falls back, info when a CPU sweep does,
    debug otherwise) and kept in the dataset's ``kernel`` and ``kernel_reason`` attributes."""

    shortcut: ClassVar[str] = "auto"

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        platform = devices[0].platform
        found = executors()
        preferred = [cls for cls in found if platform in cls.platforms]
        xla = next(cls for cls in found if cls.shortcut == "vmap")()
        if not preferred:
            names = ", ".join(f"{cls.title} on {'/'.join(cls.platforms)}s" for cls in found if cls.platforms)
            reason = f"the devices are {platform}; {names}"
            log.debug("sweep on the XLA path: %s", reason)
            return xla.program(lane, paths, devices, dry=dry)[:2] + (reason,)
        option = preferred[0]()
        why = option.auto_why_not(lane, paths, devices)
        if why is not None:  # a GPU sweep that falls back loses far more: a warning there
            log.log(logging.WARNING if platform == "gpu" else logging.INFO,
                    "sweep falls back to the XLA path (vmap of scan) from %s: %s", option.title, why)
            return xla.program(lane, paths, devices, dry=dry)[:2] + (why,)
        return option.program(lane, paths, devices, dry=dry)


def as_kernel(kernel) -> AbstractKernel:
    """The kernel option for ``kernel``: an object, ``"auto"``, or an executor's shortcut
    (``"vmap"``, ``"fused"``, ``"compiled"``).

    Raises:
        ValueError: naming ``kernel`` for anything else.
    """
    if isinstance(kernel, AbstractKernel):
        return kernel
    options: list[type[AbstractKernel]] = [AutoKernel, *executors()]
    return as_option(kernel, AbstractKernel, {cls.shortcut: cls for cls in options}, "kernel")
