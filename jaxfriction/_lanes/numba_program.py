"""The compiled loop's program as numba runs it: compiled once per source, kept on disk, run on threads.

:func:`load` turns the Python source written by :class:`~jaxfriction._lanes.compiled_loop.CompiledLoop`
into a numba-compiled ``run`` (in memory once per process, and on disk in :func:`cache_folder` for
later processes, healing a damaged entry); :class:`Program` compiles it in a thread of its own and
shares a sweep's blocks of lanes out over threads. Nothing here knows what the program computes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import sys
import tempfile
import threading

import numpy as np

#: Compiled programs of this process by source hash.
_PROGRAMS: dict = {}
_LOCK = threading.Lock()


def cache_folder() -> str | None:
    """Where emitted programs and numba's compiled code are kept: the ``compiled_loop`` folder
    of the command line's cache folder (``$JAXFRICTION_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/jaxfriction``, else ``~/.cache/jaxfriction``); None with
    ``JAXFRICTION_NO_CACHE=1`` (the command line's ``--no-cache`` sets it) or where that
    folder cannot be made: the program is then compiled in memory, once per process."""
    if os.environ.get("JAXFRICTION_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("JAXFRICTION_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = os.path.join(xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache"),
                            "jaxfriction")
    folder = os.path.join(base, "compiled_loop")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def load(source: str, dtype) -> Program:
    """The numba-compiled ``run`` of ``source`` (cached in this process and on disk).

    The source goes to ``<cache>/jf_<hash>.py`` (written once, atomically) and is imported from
    there, so numba's ``cache=True`` keeps the machine code next to it for later processes
    (numba writes its ``.nbi`` / ``.nbc`` entries atomically too: a concurrent process never
    reads half of one). A damaged entry heals: a source file that does not hold the program
    is written again, and a machine-code entry that numba cannot read (truncated, zeroed,
    garbled) is removed and the program compiled again, with one ``jaxfriction`` log line
    naming the folder; the sweep goes on with the same result.
    """
    import numba

    key = hashlib.sha256(source.encode()).hexdigest()[:24]
    with _LOCK:
        if key in _PROGRAMS:
            return _PROGRAMS[key]
        folder = cache_folder()
        name = f"jf_compiled_loop_{key}"
        namespace = None
        if folder is not None:
            path = os.path.join(folder, name + ".py")
            try:
                if not _holds(path, source):  # absent, or truncated / garbled on disk: (re)written
                    if os.path.exists(path):
                        _report_damage(folder, name, f"{name}.py does not hold the program")
                        _remove_machine_code(folder, name)
                    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
                    with os.fdopen(fd, "w") as fh:
                        fh.write(source)
                    os.replace(tmp, path)
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]  # a spec for a file that exists
                sys.modules[name] = module  # numba's cache finds the module by name when it loads
                spec.loader.exec_module(module)  # type: ignore[union-attr]  # a spec for a file that exists
                namespace, cache = vars(module), True
            except OSError:
                namespace = None
        if namespace is None:
            namespace, cache = {"__name__": name}, False
            exec(compile(source, f"<{name}>", "exec"), namespace)
        t = {np.dtype(np.float64): numba.float64, np.dtype(np.float32): numba.float32}[np.dtype(dtype)]
        # contract: a * b + c as one fused multiply-add, as XLA:CPU compiles it (IEEE otherwise)
        options = {"cache": cache, "error_model": "numpy", "nogil": True, "fastmath": {"contract"}}
        readonly = numba.types.Array  # the inputs as JAX hands them to a callback: read-only
        signature = numba.void(readonly(t, 1, "C", readonly=True), readonly(t, 2, "C", readonly=True), t[:, ::1],  # type: ignore[call-overload, index]  # numba's stubs: types are callable and indexable
                               numba.int64, numba.int64)
        def jit():
            return numba.njit(signature, **options)(namespace["run"])

        def build():
            try:
                return jit()
            except Exception as exc:  # numba's cache reader raises whatever unpickling raises
                if not cache:
                    raise
                # a truncated or garbled .nbi / .nbc (a process killed while it wrote, a full
                # disk, a shared home): drop this program's entries and compile it again
                _report_damage(folder, name, f"{type(exc).__name__}: {exc}")
                _remove_machine_code(folder, name)
                return jit()

        run = Program(build, int(namespace["L"]))
        _PROGRAMS[key] = run
        return run


def _holds(path: str, source: str) -> bool:
    """The file at ``path`` exists and holds exactly ``source``."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read() == source
    except (OSError, UnicodeDecodeError):
        return False


def _remove_machine_code(folder: str, name: str) -> None:
    """Delete numba's cache entries (``__pycache__/<name>.*.nbi`` and ``.nbc``) of one program."""
    cache = os.path.join(folder, "__pycache__")
    try:
        entries = os.listdir(cache)
    except OSError:
        return
    for entry in entries:
        if entry.startswith(name + ".") and entry.endswith((".nbi", ".nbc")):
            try:
                os.remove(os.path.join(cache, entry))
            except OSError:
                pass


def _report_damage(folder: str, name: str, why: str) -> None:
    """One log line naming the cache folder and the damaged program (``jaxfriction`` logger)."""
    import logging

    logging.getLogger("jaxfriction").warning(
        "compiled-loop cache in %s: the entry of %s was unreadable (%s); removed, compiling it again",
        folder, name, why.splitlines()[0][:200] if why else "")


class Program:
    """``program(shared, p, out)``: the compiled blocks shared out over threads.

    The compiled code releases the GIL (``nogil``), so Python threads run blocks in
    parallel: the calling thread and ``n - 1`` workers of a pool kept by the process, ``n``
    numba's thread count (``NUMBA_NUM_THREADS``, default the cores), at most the number of
    blocks. The blocks are dealt in up to :data:`SHARES_PER_THREAD` ``n`` shares (share
    ``k`` of ``m``: blocks ``k, k + m, ...``), and each thread takes the next share when it
    is done with one, so a thread whose core is slower or busy runs fewer blocks (measured
    in ``docs/performance.md``, "Blocks dealt in shares"). (Threads instead of
    ``numba.prange``: the parallel compilation of the program cost seconds more.) A
    worker's error is raised in the caller.

    numba compiles (or loads) the program in a thread of its own, started here: within a
    sweep it runs while XLA compiles the sweep's own program around the callback (which
    releases the GIL), and the first call waits for it.
    """

    def __init__(self, build, lanes):
        import time

        self.lanes, self._blocks, self._error, self._seconds = lanes, None, None, 0.0
        self._done = threading.Event()

        def work():
            began = time.perf_counter()
            try:
                self._blocks = build()
            except BaseException as exc:  # noqa: BLE001 - raised again where the program is used
                self._error = exc
            finally:
                self._seconds = time.perf_counter() - began
                self._done.set()

        threading.Thread(target=work, name="jaxfriction-compiled-loop", daemon=True).start()

    def compiled(self) -> tuple:
        """``(blocks, seconds)``: the compiled function (waits for it) and its compile time.

        Raises:
            Exception: what numba raised compiling the program.
        """
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._blocks, self._seconds

    def __call__(self, shared, p, out) -> None:
        blocks = self.compiled()[0]
        n_blocks = p.shape[1] // self.lanes
        workers = max(1, min(numba_threads(), n_blocks))
        if workers == 1:
            blocks(shared, p, out, 0, 1)
            return
        shares = min(n_blocks, SHARES_PER_THREAD * workers)
        dealt = itertools.count()  # next() on it is one C call: atomic under the GIL

        def take():
            while (k := next(dealt)) < shares:
                blocks(shared, p, out, k, shares)

        pool = _workers(workers - 1)
        done = [pool.submit(take) for _ in range(1, workers)]
        take()
        for future in done:
            future.result()


def _workers(count: int):
    """The process's pool of at least ``count`` worker threads, kept between calls: threads
    started for each call cost a short sweep a varying part of its parallelism (measured in
    ``docs/performance.md``, "The threads of the compiled loop"). A forked child starts its
    own pool (the parent's threads do not survive a fork)."""
    global _POOL
    if _POOL is None or _POOL[0] < count:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = (count, ThreadPoolExecutor(max_workers=count, thread_name_prefix="jaxfriction-blocks"))
    return _POOL[1]


def _forget_pool() -> None:
    global _POOL
    _POOL = None


#: Shares of a call's blocks per thread, at most (one block per share below that): enough that
#: a thread on a slower core hands its later shares to the others.
SHARES_PER_THREAD = 32

#: ``(size, ThreadPoolExecutor)`` of :func:`_workers`, or None before the first parallel call.
_POOL: tuple | None = None
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def numba_threads() -> int:
    """numba's thread count (``NUMBA_NUM_THREADS``, default the cores), at least 1: the threads
    :class:`Program` shares a sweep's blocks over."""
    import numba

    return max(1, int(numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]  # set at runtime


def numba_available() -> str | None:
    """None when numba imports, else why not (the reason a sweep stays on the XLA path)."""
    if "numba" in sys.modules:
        return None
    try:
        import numba  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import failure means no compiled loop
        return f"numba is not installed ({type(exc).__name__}: {exc})"
    return None

