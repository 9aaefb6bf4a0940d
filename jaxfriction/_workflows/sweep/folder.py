"""A sweep's folder: its lock, its manifest, and the checks several processes make before
they share it (see :func:`~jaxfriction._workflows.sweep.engine.run_sweep`)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import uuid
from pathlib import Path

import filelock
import jax
import numpy as np
from jax.experimental import multihost_utils

#: The lock file a sweep holds in its ``out_dir`` where the folder itself cannot be locked.
LOCK_NAME = ".sweep.lock"

SHARED_FILE_TIMEOUT = 60.0
"""Seconds a process waits for a file written by another process to appear in ``out_dir``
(a shared filesystem may show a new file to other hosts with a delay)."""


def _read_manifest(path, manifest):
    """0: no manifest yet; 1: the same sweep; 2: another sweep; 3: not a readable manifest."""
    if not path.exists():
        return 0
    try:
        return 1 if json.loads(path.read_text()) == manifest else 2
    except (OSError, ValueError):
        return 3


def saved_chunk_size(folder) -> int | None:
    """The ``chunk_size`` in the manifest of the sweep saved in ``folder``, or None (no folder,
    no manifest, or one that cannot be read: the engine then decides)."""
    try:
        return int(json.loads((Path(folder) / "manifest.json").read_text())["chunk_size"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _refuse_other_sweep(state, folder, manifest, devices):
    """Raise for a manifest of :func:`_read_manifest` state 2 (another sweep) or 3 (unreadable)."""
    if state == 2:
        raise ValueError(f"out_dir {folder} holds a sweep with other arguments (grid, samples, tag, or chunk_size "
                         f"{manifest['chunk_size']} after rounding to {len(devices)} devices); use another folder")
    if state == 3:
        raise ValueError(f"out_dir {folder} holds an unreadable manifest.json; use another folder")


class _FolderLock:
    """An exclusive lock on the folder itself (``flock`` on its descriptor): nothing is left in
    the folder after the sweep. Where the folder cannot be locked (no ``fcntl``, as on Windows,
    or a filesystem that refuses ``flock`` on a folder), the lock file :data:`LOCK_NAME`
    (the ``filelock`` package) stands in."""

    def __init__(self, folder):
        self.folder, self.fd, self.fallback = folder, None, None

    def acquire(self, blocking: bool) -> bool:
        """Take the lock; False if ``blocking`` is False and another process holds it."""
        try:
            import fcntl
        except ImportError:
            fcntl = None  # type: ignore[assignment]  # no fcntl on Windows
        if fcntl is not None and self.fallback is None:
            fd = os.open(self.folder, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
                self.fd = fd
                return True
            except BlockingIOError:
                os.close(fd)
                return False
            except OSError:  # e.g. a network filesystem: use a lock file
                os.close(fd)
        if self.fallback is None:
            self.fallback = filelock.FileLock(self.folder / LOCK_NAME)
        try:
            self.fallback.acquire(timeout=-1 if blocking else 0)
            return True
        except filelock.Timeout:
            return False

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None
        elif self.fallback is not None:
            self.fallback.release()


def _acquire(folder, progress):
    """Hold ``folder``'s sweep lock (:class:`_FolderLock`): a second sweep into the same folder
    waits until the first finishes, then resumes from its chunks. The operating system
    releases the lock of a process that is killed, so a crash never leaves the folder locked."""
    lock = _FolderLock(folder)
    if not lock.acquire(blocking=False):
        if progress:
            print(f"waiting for the sweep that is writing {folder} to finish ...", file=sys.stderr, flush=True)
        lock.acquire(blocking=True)
    return lock


def _write_atomic(path, text):
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def wait_for(path, timeout):
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _check_processes(folder, manifest, devices):
    """Multi-process set-up: validate arguments across processes, write the manifest once.

    Every step ends in a collective, so all processes reach the same verdict and raise together
    rather than leaving the others waiting at a barrier.
    """
    count, index = jax.process_count(), jax.process_index()
    per_process = np.bincount([d.process_index for d in jax.devices()], minlength=count)
    if np.any(per_process != per_process[0]):
        raise ValueError(f"every process needs the same number of local devices for the sweep's barriers; "
                         f"got {per_process.tolist()} devices in processes 0..{count - 1}")
    path = folder / "manifest.json"
    words = np.frombuffer(hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).digest(), np.uint32)
    # 1. Every process reads the manifest before anyone writes it, and they compare arguments.
    foreign = any(d.process_index != index for d in devices)
    state = np.concatenate([words, [foreign, _read_manifest(path, manifest)]]).astype(np.uint32)
    gathered = np.asarray(multihost_utils.process_allgather(state))
    if gathered[:, -2].any():
        raise ValueError(f"devices must be local to their process (jax.local_devices()) when "
                         f"jax.process_count() > 1; process(es) {np.flatnonzero(gathered[:, -2]).tolist()} "
                         f"got others")
    differ = [p for p in range(count) if not np.array_equal(gathered[p, :-2], gathered[0, :-2])]
    if differ:
        raise ValueError(f"run_sweep got other arguments (grid, samples, tag, or chunk_size rounded to the "
                         f"local device count) in process(es) {differ} than in process 0; run the same sweep "
                         f"everywhere")
    verdict = int(gathered[:, -1].max())
    _refuse_other_sweep(verdict, folder, manifest, devices)
    # 2. Process 0 writes it; every process must then see it, else out_dir is not shared.
    if index == 0 and verdict == 0:
        _write_atomic(path, json.dumps(manifest))
    seen = np.asarray(multihost_utils.process_allgather(np.uint32(
        wait_for(path, SHARED_FILE_TIMEOUT if index else 0.0))))
    blind = [p for p in range(count) if not seen[p]]
    if blind:
        raise ValueError(f"out_dir {folder} must be a folder shared by all processes: process(es) {blind} "
                         f"do not see the manifest.json written by process 0")
    return words


def open_folder(folder, manifest, devices, mine, progress):
    """Stage 1 with ``out_dir``: create the folder, take its lock (process 0), check or write
    the manifest (across processes) and remove this process's half-written chunk files.

    Returns:
        ``(lock or None, words)``: ``words`` identifies the sweep in the barriers' names.
    """
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"out_dir {folder} is a file, not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    lock = _acquire(folder, progress) if jax.process_index() == 0 else None  # the processes of one sweep share it
    try:
        if jax.process_count() > 1:
            words = _check_processes(folder, manifest, devices)
        else:
            words = None
            path = folder / "manifest.json"
            state = _read_manifest(path, manifest)
            _refuse_other_sweep(state, folder, manifest, devices)
            if state == 0:
                _write_atomic(path, json.dumps(manifest))
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    for i in mine:  # a chunk being written when the run was killed; only the owner touches its files
        for stale in folder.glob(f"chunk_{i:06d}.*tmp.npz"):
            stale.unlink(missing_ok=True)
    return lock, words
