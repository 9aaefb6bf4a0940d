"""A general sweep engine: chunked, sharded over local devices, saved chunk by chunk, resumable.

``run_sweep(fn, grid)`` evaluates ``fn(**point)`` (a dict of per-lane outputs) at every point
of a labelled grid. Lanes run in chunks of ``chunk_size``: ``vmap`` inside a chunk, the
chunk's lanes sharded over the given devices (on CPU, split the host with
``jax.config.update("jax_num_cpu_devices", N)`` before JAX starts computing). With ``out_dir``
every finished chunk is written atomically (temporary file, then rename), next to a
manifest of the sweep's arguments; a run interrupted at any point (Ctrl-C, ``kill -9``) and
started again with the same arguments loads the finished chunks and computes only the rest,
ending with exactly the dataset an uninterrupted run gives.

Several processes (one per host, or several on one host) share a sweep without code
changes: start the same script in every process and call ``jax.distributed.initialize(...)``
before anything else touches JAX. ``run_sweep`` then sees ``jax.process_count() > 1``, and
process ``p`` of ``P`` computes the chunks ``i`` with ``i % P == p`` on its own local devices,
writing them into ``out_dir``, which must be a folder every process sees (a shared
filesystem). After a barrier every process assembles, and returns, the full dataset from the
chunk files; process 0 alone writes ``result.nc``.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from pathlib import Path

import jax
import numpy as np
import xarray as xr
from jax.experimental import multihost_utils
from tqdm.auto import tqdm

from ..._checks import check_int
from ..._integrate.status import STATUS_NONFINITE, STATUS_OK
from .chunks import Chunks
from .folder import SHARED_FILE_TIMEOUT, open_folder, wait_for
from .sharding import compiled_batch


def _lanes(grid, samples):
    if not grid:
        raise ValueError("grid must name at least one parameter")
    axes = {k: np.asarray(v, dtype=float) for k, v in grid.items()}
    for name, values in axes.items():
        if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
            raise ValueError(f"grid[{name!r}] must be a non-empty 1-D array of finite values")
    if samples:
        sizes = {v.size for v in axes.values()}
        if len(sizes) != 1:
            raise ValueError(f"samples need grid arrays of one length, got {sorted(sizes)}")
        return axes, {k: v for k, v in axes.items()}, ("sample",)
    mesh = np.meshgrid(*axes.values(), indexing="ij")
    return axes, {k: m.ravel() for k, m in zip(axes, mesh)}, tuple(axes)


def _manifest(axes, samples, chunk_size, tag):
    digest = hashlib.sha256()
    for name, values in axes.items():
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(values).tobytes())
    return {"grid_sha256": digest.hexdigest(), "samples": bool(samples), "chunk_size": int(chunk_size), "tag": tag}


def chunk_owner(index: int, process_count: int) -> int:
    """The process that computes chunk ``index`` in a sweep over ``process_count`` processes.

    Round robin (``index % process_count``) rather than contiguous blocks: neighbouring chunks
    cost about the same, so when the cost drifts along the grid (e.g. with the first axis)
    every process still gets a fair mix of cheap and dear chunks.
    """
    return index % process_count


def run_sweep(fn, grid, *, samples=False, out_dir=None, chunk_size=1024, devices=None, progress=True, tag="",
              finalize=None, output_dims=None, coords=None) -> xr.Dataset:
    """Evaluate ``fn`` over a labelled grid (see module docstring).

    Four stages: the folder (lock, manifest; :func:`~.folder.open_folder`), the chunks
    (:class:`~.chunks.Chunks`, loaded or computed; :func:`_compute`), with several processes the other processes' chunks
    (:func:`_load_others`), and the dataset (:func:`_dataset`, then ``finalize`` and
    ``result.nc``).

    Args:
        fn: ``fn(**point) -> dict`` of JAX outputs (scalars, or arrays of a fixed shape per
            lane); must be ``vmap``-able. An output named ``status`` (int) is kept per lane;
            otherwise lanes with a non-finite output get status 1.
        grid: dict name -> 1-D array. By default the outer product of the axes; with
            ``samples=True`` the arrays are equal-length lists of points (e.g. a Latin
            hypercube), along a ``sample`` dimension.
        out_dir: folder for the chunk files, manifest and ``result.nc`` (netCDF); None keeps
            everything in memory (not resumable). Required with several processes, where it
            must be a folder all of them see (shared filesystem).
        chunk_size: lanes per compiled call (rounded up to a multiple of the device count).
        devices: devices to shard each chunk over (default ``jax.local_devices()``); with
            several processes they must be local to the calling process.
        progress: tqdm bar (chunks, lanes per second, time left).
        tag: free text that must match on resume (e.g. a hash of ``fn``'s settings).
        finalize: optional ``finalize(ds) -> ds`` applied before ``result.nc`` is written
            (labels, attributes of the calling workflow).
        output_dims: ``output_dims(name, ndim) -> names`` of an output's ``ndim`` per-lane
            axes (default ``<name>_dim<i>``).
        coords: dict dimension name -> labels of axes.

    Files and safety. Every chunk file carries its lane range, a digest of its lanes'
    parameter values and of the manifest, and a digest of its results, checked when it is
    loaded: a file whose results were rewritten (even into a valid file), a file of another grid
    (even with the manifest deleted), another chunk (files swapped or renamed) or another
    sweep raises ``ValueError`` naming the file. Temporary files have unique names (process
    id and a random suffix) and are renamed into place, ``result.nc`` included, so a reader
    never sees half a file. The sweep holds a lock on ``out_dir`` (``flock`` on the folder
    itself, which leaves no file behind; where a filesystem refuses that, a ``.sweep.lock``
    file; process 0 of a multi-process sweep): a second sweep started into the same folder
    waits for the first to finish and then resumes from its chunks; the operating system
    releases the lock of a killed process.

    Several processes: after ``jax.distributed.initialize(...)`` in every process (e.g. the
    same script started N times with ``coordinator_address``, ``num_processes`` and its
    ``process_id``, or with no arguments under SLURM / Open MPI, which are detected), every
    process calls ``run_sweep`` with the same arguments. Process ``p`` of ``P`` computes the
    chunks ``i`` with ``i % P == p`` (:func:`chunk_owner`), compiled for and sharded over its
    own local devices only (no cross-process collective inside the sweep), and writes them to
    ``out_dir``; process 0 writes the manifest. Small collectives (``process_allgather`` /
    ``sync_global_devices``, gloo on CPU) check that all processes got the same arguments
    and see the same ``out_dir``, and, once every process has written its chunks, act as the
    barrier after which every process reads the others' chunks and returns the full dataset.
    Process 0 alone writes ``result.nc``, before the last barrier, so it exists once any
    process returns. Every process needs the same number of local devices. Resume works as
    with one process, also with another process count: finished chunk files are loaded. If a
    process dies, the others fail at their next barrier (on CPU, gloo reports the lost peer at
    once) and JAX's coordination service ends them after its heartbeat timeout (100 s by
    default); every finished chunk is on disk, so start all again to resume.

    Returns:
        ``xarray.Dataset`` over the grid (or ``sample``) with every output and ``status``;
            attributes ``chunks_computed`` and ``chunks_loaded`` say what this call did in
            this process (computed here, or read from chunk files: finished in an earlier run
            or, with several processes, by another process; they add up to the number of
            chunks), ``process_index`` / ``process_count`` say which process of how many
            returned it, and ``compile_seconds`` / ``run_seconds`` time the compilation and
            this process's chunks apart (compilation is skipped, 0 s, when this process has
            nothing to compute).

    Raises:
        ValueError: a bad grid or ``chunk_size``, an ``out_dir`` that is a file or holds a
            sweep with other arguments, a chunk file that does not belong to this sweep
            (named), and with several processes: no ``out_dir``, an ``out_dir`` not shared
            by all of them, ``devices`` of another process, or arguments that differ between
            processes (raised in every process alike).
    """
    check_int("chunk_size", chunk_size, minimum=1)
    axes, lanes, dims = _lanes(grid, samples)
    process_count, process_index = jax.process_count(), jax.process_index()
    if process_count > 1 and out_dir is None:
        raise ValueError(f"out_dir is required when jax.process_count() > 1 (here {process_count}): the "
                         f"processes exchange their chunks through files in a folder they all see")
    devices = list(jax.local_devices() if devices is None else devices)
    total = next(iter(lanes.values())).size
    chunk = -(-min(chunk_size, total) // len(devices)) * len(devices)
    manifest = _manifest(axes, samples, chunk, tag)
    chunks = Chunks(lanes, chunk, manifest)
    mine = [i for i in range(chunks.count) if chunk_owner(i, process_count) == process_index]

    lock, words = None, None
    if out_dir is not None:
        lock, words = open_folder(Path(out_dir), manifest, devices, mine, progress)
        chunks.folder = Path(out_dir)
    try:
        parts, stats = _compute(fn, chunks, mine, devices, progress)
        stats.update(devices=len(devices), tag=tag, process_index=process_index, process_count=process_count)
        if process_count > 1:
            barrier = f"jaxfriction.run_sweep:{int(words[0]):08x}"  # type: ignore[index]
            multihost_utils.sync_global_devices(f"{barrier}:chunks written")
            _load_others(chunks, parts, process_count)
        ds = _dataset([parts[i] for i in range(chunks.count)], axes, samples, total, dims, stats, output_dims,
                      coords)
        if finalize is not None:
            ds = finalize(ds)
        if chunks.folder is not None and process_index == 0:
            tmp = chunks.folder / f"result.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp.nc"
            ds.to_netcdf(tmp, engine="h5netcdf")
            os.replace(tmp, chunks.folder / "result.nc")  # readers see the old file or the new one, never half of it
        if process_count > 1:
            multihost_utils.sync_global_devices(f"{barrier}:result written")
    finally:
        if lock is not None:
            lock.release()
    return ds


def _compute(fn, chunks, mine, devices, progress):
    """Stage 2: load this process's finished chunks and compute the others (compiled once, on
    the first chunk to compute; each chunk dispatched before the previous one is fetched and
    saved, so the device never waits for the disk).

    Returns:
        ``(parts, stats)``: chunk index -> outputs, and the dataset attributes
            ``chunks_computed``, ``chunks_loaded``, ``chunk_size``, ``compile_seconds``,
            ``run_seconds``.
    """
    process_count, process_index = jax.process_count(), jax.process_index()
    compiled, compile_seconds = None, 0.0
    parts, computed, pending = {}, 0, None
    start = time.perf_counter()
    desc = "sweep" if process_count == 1 else f"sweep [process {process_index}/{process_count}]"

    def finish(i: int, result) -> None:
        """Fetch chunk ``i``'s result (the device may still be computing it) and save it."""
        if not isinstance(result, dict):
            raise ValueError(f"fn must return a dict name -> per-lane output, got {type(result).__name__}")
        out = {k: np.asarray(v) for k, v in jax.device_get(result).items()}
        if chunks.folder is not None:
            chunks.save(i, out)
        parts[i] = out

    with tqdm(total=len(mine), unit="chunk", disable=not progress, desc=desc) as bar:
        for i in mine:
            file = chunks.file(i)
            if file is not None and file.exists():
                parts[i] = chunks.load(i)
                bar.update(1)
                continue
            if compiled is None:  # compile only when there is something to compute
                compiled, compile_seconds = compiled_batch(fn, chunks.points(0), devices)
                began = time.perf_counter()
            result = compiled(chunks.points(i))
            if pending is not None:
                finish(*pending)
                # lanes of the chunks computed and fetched so far (not loaded ones, not the one
                # just dispatched) over the time since computing began
                rate = (computed * chunks.chunk) / max(time.perf_counter() - began, 1e-9)
                bar.set_postfix(lanes_per_s=f"{rate:.3g}")
            pending = (i, result)
            computed += 1
            bar.update(1)
        if pending is not None:
            finish(*pending)
    return parts, {"chunks_computed": computed, "chunks_loaded": chunks.count - computed, "chunk_size": chunks.chunk,
                   "compile_seconds": compile_seconds,
                   "run_seconds": time.perf_counter() - start - compile_seconds}


def _load_others(chunks, parts, process_count):
    """Stage 3 with several processes: read the chunks the other processes wrote."""
    for i in range(chunks.count):
        if i not in parts:
            file = chunks.file(i)
            if not wait_for(file, SHARED_FILE_TIMEOUT):
                owner = chunk_owner(i, process_count)
                raise RuntimeError(f"{file} (chunk of process {owner}) is missing after all processes finished; "
                                   f"is out_dir {chunks.folder} shared by all of them?")
            parts[i] = chunks.load(i)


def _dataset(ordered, axes, samples, total, dims, attrs, output_dims, coords):
    """Stage 4: the chunks' outputs joined into an ``xarray.Dataset`` over the grid."""
    shape = tuple(a.size for a in axes.values()) if not samples else (total,)
    data = {}
    for k in ordered[0]:
        joined = np.concatenate([p[k] for p in ordered])[:total]
        data[k] = joined.reshape(shape + joined.shape[1:])
    if "status" not in data:
        finite = np.all([np.isfinite(v).reshape(shape + (-1,)).all(axis=-1) for v in data.values()], axis=0)
        data["status"] = np.where(finite, STATUS_OK, STATUS_NONFINITE).astype(np.int8)

    def var_dims(k, v) -> tuple[str, ...]:
        n = v.ndim - len(shape)
        return dims + (tuple(output_dims(k, n)) if output_dims else tuple(f"{k}_dim{i}" for i in range(n)))

    axis_coords = {k: (k, v) for k, v in axes.items()} if not samples else {k: ("sample", v) for k, v in axes.items()}
    return xr.Dataset({k: (var_dims(k, v), v) for k, v in data.items()},
                      coords={**axis_coords, **dict(coords or {})}, attrs=attrs)
