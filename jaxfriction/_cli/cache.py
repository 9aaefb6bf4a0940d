"""JAX's persistent compilation cache, switched on by the command line (never by the library).

A sweep's lane program takes seconds to compile; JAX can store the compiled executable on
disk and load it in the next process that compiles the same program on the same machine
and JAX version, so a repeated ``jaxfriction sweep`` of the same structure starts at once.
The cache folder is ``$JAXFRICTION_CACHE_DIR`` (or ``--cache-dir``), else JAX's own
``JAX_COMPILATION_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/jaxfriction/jax-cache``
(``~/.cache/jaxfriction/jax-cache``). ``--no-cache`` or ``JAXFRICTION_NO_CACHE=1`` turns it off.

Nothing here imports JAX at module level: building the command group and printing ``--help``
stays free of it.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

#: Programs that compile in less than this (seconds) are not stored: the sweep's lane
#: programs (about 1 s and more) are, the many small helper programs are not. JAX's own
#: default, 1 s, would leave out a small sweep's program.
MIN_COMPILE_SECONDS = 0.5


def default_cache_dir(environ=None) -> Path:
    """The default cache folder: ``$XDG_CACHE_HOME/jaxfriction/jax-cache``.

    Args:
        environ: the environment to read (default: ``os.environ``). ``XDG_CACHE_HOME`` is used
            when it is an absolute path (the XDG rule), else ``~/.cache``.

    Returns:
        The folder (not created).
    """
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "jaxfriction" / "jax-cache"


def _unusable(path: Path) -> str | None:
    """Why ``path`` cannot hold the cache (created if missing), or None when it can."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(path, os.W_OK | os.X_OK):
        return "not writable"
    return None


def configure_compilation_cache(cache_dir=None, enabled=True) -> Path | None:
    """Point JAX's persistent compilation cache at a folder, or switch it off, before compiling.

    Call before the first compilation of the process: JAX opens its cache once. It does not
    start JAX's backend, so the CPU device split (``jax_num_cpu_devices``) may come after.

    Args:
        cache_dir: the folder (str or path; ``~`` is expanded). None: JAX's own
            ``jax_compilation_cache_dir`` when already set (``JAX_COMPILATION_CACHE_DIR``),
            else :func:`default_cache_dir`.
        enabled: False switches JAX's persistent cache off (JAX's own setting included), and
            the compiled loop's numba cache (``JAXFRICTION_NO_CACHE=1`` for this process).

    Programs that compile in less than :data:`MIN_COMPILE_SECONDS` are not stored, unless
    ``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS`` is set (JAX's own threshold then holds).
    Entries of any size are stored (JAX's ``jax_persistent_cache_min_entry_size_bytes``
    defaults to 0) and the folder is not size-limited: delete it to reclaim the space.

    Returns:
        The cache folder in use, or None when the cache is off. A folder that cannot be
        created or written prints a warning on stderr naming it and the run goes on without
        the cache (None); it never fails the command.
    """
    import jax

    if not enabled:
        jax.config.update("jax_enable_compilation_cache", False)
        os.environ["JAXFRICTION_NO_CACHE"] = "1"  # the compiled loop's numba cache too
        return None
    if cache_dir is not None:
        folder = Path(cache_dir).expanduser()
        os.environ["JAXFRICTION_CACHE_DIR"] = str(folder)  # the compiled loop's: its compiled_loop folder
    else:
        folder = Path(jax.config.jax_compilation_cache_dir or default_cache_dir())  # type: ignore[attr-defined]  # jax.config's options are set at runtime
    problem = _unusable(folder)
    if problem is not None:
        click.echo(f"Warning: compilation cache folder {folder} (--cache-dir, JAXFRICTION_CACHE_DIR): {problem}; "
                   "running without the compilation cache (--no-cache silences this)", err=True)
        jax.config.update("jax_enable_compilation_cache", False)
        return None
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_compilation_cache_dir", str(folder))
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:  # else JAX's own setting holds
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    return folder
