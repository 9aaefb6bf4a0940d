"""The XLA executor: the lane program ``jax.vmap``-ed over a chunk's lanes."""

from __future__ import annotations

from typing import ClassVar

from .kernels import AbstractKernel


class VmapKernel(AbstractKernel):
    """The XLA path: one lane program (:class:`~jaxfriction._lanes.program.Lane`),
    ``jax.vmap``-ed over a chunk's lanes and sharded over the devices. Runs every system,
    solver, observable and gradient mode on every backend."""

    shortcut: ClassVar[str] = "vmap"
    title: ClassVar[str] = "the XLA path"

    def program(self, lane, paths: list[str], devices: list, *, dry: bool = False) -> tuple:
        return lane, "vmap", "asked for (VmapKernel)"
