"""One process of a multi-process sweep, for tests/test_engine.py (not collected by pytest).

``python tests/_distributed_worker.py PORT NUM_PROCESSES PROCESS_ID OUT_DIR [RUNS]`` joins a
``jax.distributed`` cluster on localhost, runs ``run_sweep(fn, GRID, chunk_size=CHUNK_SIZE)``
into the shared OUT_DIR RUNS times in a row (default 1; a later run is a restart, the engine
keeps nothing in memory between calls) and prints one line ``RESULT {json}`` per run: the
dataset's attributes, the chunk files this process wrote (seen by wrapping ``np.savez``,
independent of the engine's own counts), the returned outputs' bytes in hex, and the messages
of the ValueErrors that a sweep without ``out_dir`` and one with another ``tag`` in every
process, or all devices of the cluster, raised first.

The test process imports ``fn``, ``GRID`` and ``CHUNK_SIZE`` from here to run the same sweep in
one process.
"""

import json
import re
import sys

import numpy as np

GRID = {"mu": np.linspace(0.1, 1.0, 7), "alpha": np.linspace(0.2, 2.0, 3)}
CHUNK_SIZE = 2  # 21 lanes -> 11 chunks, the last one padded


def fn(mu, alpha):
    import jax.numpy as jnp

    import jaxfriction as jf

    system = jf.Oscillator(law=jf.Quinn(mu, 0.02), force=jf.Harmonic(alpha, 0.5))
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 2.0, 0.01, save_every=None)
    return {"E": traj.friction_dissipation[-1], "x": traj.position[-1], "status": traj.status}


def main(port, num_processes, process_id, out_dir, runs=1):
    import jax

    # Before anything touches a JAX backend. CPU collectives (gloo, the default in jax 0.10)
    # carry run_sweep's barriers between the processes.
    jax.distributed.initialize(coordinator_address=f"localhost:{port}", num_processes=num_processes,
                               process_id=process_id, initialization_timeout=60)
    jax.config.update("jax_enable_x64", True)
    from jaxfriction._workflows.sweep.engine import run_sweep

    try:  # checked before any collective, so every process raises alike
        run_sweep(fn, GRID, chunk_size=CHUNK_SIZE, progress=False)
        missing_out_dir = ""
    except ValueError as err:
        missing_out_dir = str(err)
    try:  # another tag in every process: found by the first collective, before anything is written
        run_sweep(fn, GRID, chunk_size=CHUNK_SIZE, out_dir=out_dir, progress=False, tag=f"p{process_id}")
        other_arguments = ""
    except ValueError as err:
        other_arguments = str(err)
    try:  # every process's devices: not local
        run_sweep(fn, GRID, chunk_size=CHUNK_SIZE, out_dir=out_dir, progress=False, devices=jax.devices())
        foreign_devices = ""
    except ValueError as err:
        foreign_devices = str(err)

    savez = np.savez
    for _ in range(runs):
        written = []

        def recording_savez(file, *args, **kwds):
            written.append(int(re.search(r"chunk_(\d+)\.[^/]*tmp\.npz$", str(file)).group(1)))
            return savez(file, *args, **kwds)

        np.savez = recording_savez
        try:
            ds = run_sweep(fn, GRID, chunk_size=CHUNK_SIZE, out_dir=out_dir, progress=False)
        finally:
            np.savez = savez
        keys = ("process_index", "process_count", "chunks_computed", "chunks_loaded", "chunk_size", "devices")
        attrs = {k: ds.attrs[k] for k in keys}
        outputs = {k: np.ascontiguousarray(ds[k].values).tobytes().hex() for k in ("E", "x", "status")}
        record = {**attrs, "written": written, "outputs": outputs, "local_devices": len(jax.local_devices()),
                  "missing_out_dir": missing_out_dir, "other_arguments": other_arguments,
                  "foreign_devices": foreign_devices}
        print("RESULT " + json.dumps(record), flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], *map(int, sys.argv[5:6]))
