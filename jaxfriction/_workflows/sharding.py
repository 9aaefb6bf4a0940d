"""Batch evaluation of a per-lane function, its lanes sharded over devices."""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

#: XLA CPU options for the batched friction kernels: 512-bit vectors lift the throughput of
#: the default sweep by about 1.2x on AVX-512 machines and cost nothing elsewhere
#: (``scripts/bench.py``).
CPU_COMPILER_OPTIONS = {"xla_cpu_prefer_vector_width": "512"}


def lane_devices(devices=None):
    """The devices a batch is sharded over: ``devices``, or all local devices.

    On CPU, split the host into one device per core before JAX starts computing, e.g.
    ``jax.config.update("jax_num_cpu_devices", os.cpu_count())`` (the ``jaxfriction`` CLI
    does this; ``--devices`` sets the count).

    Returns: a list of devices. Raises: ValueError for an empty list.
    """
    devices = list(jax.local_devices() if devices is None else devices)
    if not devices:
        raise ValueError("devices must name at least one device")
    return devices


def sharded_vmap(fn, devices=None):
    """``jit(vmap(fn))`` over dicts of lane arrays, the lane axis sharded over ``devices``.

    Args:
        fn: ``fn(**point) -> pytree`` for one lane (scalars in, arrays out).
        devices: see :func:`lane_devices`. The batch size must be a multiple of their
            number (callers pad).

    Returns: a jitted function of one dict ``{name: (B,) array}`` returning ``fn``'s pytree
        with a leading lane axis. Lanes never communicate, so each device runs its share
        of the batch independently (no collectives).
    """
    devices = lane_devices(devices)
    sharding = NamedSharding(Mesh(np.array(devices), ("lanes",)), PartitionSpec("lanes"))
    options = CPU_COMPILER_OPTIONS if devices[0].platform == "cpu" else None
    return jax.jit(jax.vmap(lambda point: fn(**point)), in_shardings=(sharding,), compiler_options=options)
