"""Batch evaluation of a per-lane function, its lanes sharded over devices, compiled once.

The lane function is a callable pytree (an equinox module, e.g. a sweep's lane program)
or a plain function. Its arrays are arguments of the compiled program and everything else
(Python numbers, static fields, functions) is part of the cache key, so a second sweep of the
same structure and shapes reuses the compiled program instead of compiling again.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..._lanes.structure import HashedOnce

#: XLA CPU options for the batched friction kernels: 512-bit vectors lift the throughput of
#: the default sweep by about 1.2x on AVX-512 machines and cost nothing elsewhere
#: (``scripts/benchmarks/bench.py``).
CPU_COMPILER_OPTIONS = {"xla_cpu_prefer_vector_width": "512"}

#: Compiled batch programs, least recently used last out (at most ``_CACHE_SIZE``).
_CACHE: collections.OrderedDict = collections.OrderedDict()
_CACHE_SIZE = 16


def lane_devices(devices: list | None = None) -> list:
    """The devices a batch is sharded over: ``devices``, or all local devices.

    On CPU, split the host into one device per core before JAX starts computing, e.g.
    ``jax.config.update("jax_num_cpu_devices", os.cpu_count())`` (the ``jaxfriction`` CLI
    does this; ``--devices`` sets the count).

    Returns:
        A list of devices.

    ``devices`` may also be a count ``n``: the first ``n`` local devices.

    Raises:
        ValueError: an empty list, a count < 1 or beyond the local devices, anything else.
    """
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        available = jax.local_devices()
        if not 1 <= devices <= len(available):
            raise ValueError(f"devices: a count must be between 1 and the {len(available)} local devices, got "
                             f"{devices}")
        return available[:devices]
    try:
        devices = list(jax.local_devices() if devices is None else devices)
    except TypeError:
        raise ValueError(f"devices must be a list of JAX devices, a count or None, got {devices!r}") from None
    if not devices:
        raise ValueError("devices must name at least one device")
    if not all(isinstance(d, jax.Device) for d in devices):
        raise ValueError(f"devices must be a list of JAX devices, a count or None, got {devices!r}")
    return devices


def _signature(tree):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((np.shape(x), str(getattr(x, "dtype", type(x).__name__))) for x in leaves)


def compiled_batch(fn, points: dict, devices: list) -> tuple[Callable, float]:
    """``(run, compile_seconds)``: ``run(points) -> fn``'s outputs with a leading lane axis.

    Args:
        fn: ``fn(**point) -> pytree`` for one lane (scalars in, arrays out); a callable pytree
            (equinox module) or a function. One with a true ``batched`` attribute takes a
            device's share of the lanes at once (``{name: (b,)}``) instead of being ``vmap``-ed;
            one with a true ``one_device`` attribute runs on the first device only (it
            spreads the lanes over the cores itself: the compiled loop).
        points: example dict ``{name: (B,) array}`` (shapes and dtypes of every call).
        devices: the lane axis is sharded over them (``B`` a multiple of their number).

    Returns:
        The compiled program and the seconds spent compiling it (0 when it came from the
            cache). Lanes never communicate, so each device runs its share independently.
    """
    devices = lane_devices(devices)
    if getattr(fn, "one_device", False):
        devices = devices[:1]
    dynamic, static = eqx.partition(fn, eqx.is_array)
    # the static parts hashed once: a module's hash walks its fields, and a lookup hashes twice
    key: tuple | None = (HashedOnce(static), _signature(dynamic), _signature(points), tuple(devices))
    try:
        program = _CACHE.get(key)
    except TypeError:  # a lane function with unhashable static parts: compiled for this call only
        key = program = None
    if program is not None:
        _CACHE.move_to_end(key)
        return (lambda pts: program(dynamic, pts)), 0.0
    lanes = NamedSharding(Mesh(np.array(devices), ("lanes",)), PartitionSpec("lanes"))
    replicated = NamedSharding(Mesh(np.array(devices), ("lanes",)), PartitionSpec())
    options = CPU_COMPILER_OPTIONS if devices[0].platform == "cpu" else None

    def batch(dynamic, pts) -> Any:
        lane = eqx.combine(dynamic, static)
        if getattr(lane, "batched", False):  # a whole chunk at once (the fused kernel), each device its share
            mesh = Mesh(np.array(devices), ("lanes",))
            return jax.shard_map(lambda d, p: eqx.combine(d, static)(**p), mesh=mesh,
                                 in_specs=(PartitionSpec(), PartitionSpec("lanes")), out_specs=PartitionSpec("lanes"),
                                 check_vma=False)(dynamic, pts)
        return jax.vmap(lambda point: lane(**point))(pts)

    began = time.perf_counter()
    program = jax.jit(batch, in_shardings=(replicated, lanes), compiler_options=options).lower(
        dynamic, points).compile()
    seconds = time.perf_counter() - began
    if key is not None:
        _CACHE[key] = program
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return (lambda pts: program(dynamic, pts)), seconds
