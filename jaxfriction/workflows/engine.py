"""A general sweep engine: chunked, sharded over local devices, saved chunk by chunk, resumable.

``run_sweep(fn, grid)`` evaluates ``fn(**point)`` (a dict of scalar outputs) at every point
of a labelled grid. Lanes run in chunks of ``chunk_size``: ``vmap`` inside a chunk, the
chunk's lanes sharded over the given devices (on CPU, split the host with
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` before JAX starts). With ``out_dir``
every finished chunk is written atomically (temporary file, then rename), next to a
manifest of the sweep's arguments; a run interrupted at any point (Ctrl-C, ``kill -9``) and
started again with the same arguments loads the finished chunks and computes only the rest,
ending with exactly the dataset an uninterrupted run gives.
"""

import hashlib
import json
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from tqdm.auto import tqdm

from ..integrate.trajectory import STATUS_NONFINITE, STATUS_OK


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


def run_sweep(fn, grid, *, samples=False, out_dir=None, chunk_size=1024, devices=None, progress=True, tag=""):
    """Evaluate ``fn`` over a labelled grid (see module docstring).

    Args:
        fn: ``fn(**point) -> dict`` of scalar JAX outputs; must be ``vmap``-able. An output
            named ``status`` (int) is kept per lane; otherwise lanes with a non-finite output
            get status 1.
        grid: dict name -> 1-D array. By default the outer product of the axes; with
            ``samples=True`` the arrays are equal-length lists of points (e.g. a Latin
            hypercube), along a ``sample`` dimension.
        out_dir: folder for the chunk files, manifest and ``result.nc`` (netCDF); None keeps
            everything in memory (not resumable).
        chunk_size: lanes per compiled call (rounded up to a multiple of the device count).
        devices: devices to shard each chunk over (default ``jax.local_devices()``).
        progress: tqdm bar (chunks, lanes per second, time left).
        tag: free text that must match on resume (e.g. a hash of ``fn``'s settings).

    Returns: ``xarray.Dataset`` over the grid (or ``sample``) with every output and ``status``;
        attributes ``chunks_computed`` and ``chunks_loaded`` say what this call did, and
        ``compile_seconds`` / ``run_seconds`` time the compilation and the chunks apart.

    Raises: ValueError for a bad grid or ``chunk_size``, or an ``out_dir`` holding a sweep
        with other arguments.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    axes, lanes, dims = _lanes(grid, samples)
    devices = list(jax.local_devices() if devices is None else devices)
    total = next(iter(lanes.values())).size
    chunk = -(-min(chunk_size, total) // len(devices)) * len(devices)
    n_chunks = -(-total // chunk)
    padded = {k: np.concatenate([v, np.full(n_chunks * chunk - total, v[-1])]) for k, v in lanes.items()}

    folder = None
    if out_dir is not None:
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        manifest = _manifest(axes, samples, chunk, tag)
        path = folder / "manifest.json"
        if path.exists():
            if json.loads(path.read_text()) != manifest:
                raise ValueError(f"out_dir {folder} holds a sweep with other arguments; use another folder")
        else:
            path.write_text(json.dumps(manifest))
        for stale in folder.glob("chunk_*.tmp.npz"):  # a chunk being written when the run was killed
            stale.unlink()

    sharding = NamedSharding(Mesh(np.array(devices), ("lanes",)), PartitionSpec("lanes"))
    jitted = jax.jit(jax.vmap(lambda point: fn(**point)), in_shardings=(sharding,))

    def chunk_points(i):
        return {k: jnp.asarray(v[i * chunk : (i + 1) * chunk]) for k, v in padded.items()}

    start = time.perf_counter()
    compiled = jitted.lower(chunk_points(0)).compile()
    compile_seconds = time.perf_counter() - start
    parts, computed, loaded = [], 0, 0
    start = time.perf_counter()
    with tqdm(total=n_chunks, unit="chunk", disable=not progress, desc="sweep") as bar:
        for i in range(n_chunks):
            file = None if folder is None else folder / f"chunk_{i:06d}.npz"
            if file is not None and file.exists():
                with np.load(file) as data:
                    parts.append({k: data[k] for k in data.files})
                loaded += 1
            else:
                out = {k: np.asarray(v) for k, v in jax.device_get(compiled(chunk_points(i))).items()}
                if file is not None:
                    tmp = file.with_suffix(".tmp.npz")
                    np.savez(tmp, **out)
                    os.replace(tmp, file)
                parts.append(out)
                computed += 1
            bar.update(1)
            bar.set_postfix(lanes_per_s=f"{(i + 1) * chunk / (time.perf_counter() - start):.3g}")

    run_seconds = time.perf_counter() - start
    shape = tuple(a.size for a in axes.values()) if not samples else (total,)
    data = {k: np.concatenate([p[k] for p in parts])[:total].reshape(shape) for k in parts[0]}
    if "status" not in data:
        finite = np.all([np.isfinite(v) for v in data.values()], axis=0)
        data["status"] = np.where(finite, STATUS_OK, STATUS_NONFINITE).astype(np.int8)
    coords = {k: (k, v) for k, v in axes.items()} if not samples else {k: ("sample", v) for k, v in axes.items()}
    ds = xr.Dataset({k: (dims, v) for k, v in data.items()}, coords=coords,
                    attrs={"chunks_computed": computed, "chunks_loaded": loaded, "chunk_size": chunk,
                           "devices": len(devices), "tag": tag, "compile_seconds": compile_seconds,
                           "run_seconds": run_seconds})
    if folder is not None:
        ds.to_netcdf(folder / "result.nc", engine="h5netcdf")
    return ds
