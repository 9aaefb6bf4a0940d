"""XLA's CPU option that compiles each small time-stepping loop into one kernel.

Since JAX 0.7, XLA's CPU backend runs a ``while`` loop (``lax.scan``, ``fori_loop``) as a
sequence of small kernels ("thunks") per iteration. A loop body of more than 8 thunks that
touches any buffer above 512 bytes (a saved trajectory, a sampled input, a batch of lanes) is
handed to a concurrent executor whose scheduling costs microseconds per iteration, far more
than the arithmetic of one RK4 step of a small friction system. XLA's
``xla_cpu_small_while_loop_byte_threshold`` compiles a loop whose buffers sum to less than
the threshold into a single kernel instead (1 kB by default).

What this gains on a fit's forward runs and Jacobians is measured by
``scripts/benchmarks/bench_loop_kernels.py`` and recorded in ``docs/performance.md``.

:func:`enable_loop_kernels` raises the threshold to :data:`LOOP_KERNEL_BYTES` in
``XLA_FLAGS`` when ``JAXFRICTION_XLA_LOOP_KERNELS=1`` is set in the environment and
``import jaxfriction`` runs before JAX has started its backends (the usual case: importing
JAX or switching its 64-bit mode starts nothing). It leaves the variable alone where the user
set the option already. The option changes only how XLA's CPU backend compiles loops (GPUs are
untouched) and applies to the whole process, so any other JAX code in it gets the same loop
kernels.

It is opt-in, not the default, for two reasons. It applies to the whole process: a user's own
JAX code gets single-kernel loops too, where a large operation inside a loop body loses XLA's
intra-operation threads. And the single kernel rounds differently: XLA contracts a
multiply-add into one fused instruction in some copies of a value and not in others, so a
sweep's results change in the last bit with its chunk size (the suite holds them bitwise equal;
jax 0.10.2, ``docs/performance.md``). The same contraction made the Westermo-Udwadia solver
compare a time with a copy of itself rounded differently and flag a finished step as failed;
that solver now keeps a flag instead (fixed on 2026-11-27), so only the last-bit difference
remains.
"""

from __future__ import annotations

import os
import sys

#: The threshold set (bytes): 10 MB, the smallest tried at which 12 vmapped shooting segments
#: of the EMPS record (a fit's multiple-shooting loop) leave the slow path.
LOOP_KERNEL_BYTES = 10_000_000
OPTION = "xla_cpu_small_while_loop_byte_threshold"
#: Set this environment variable to ``1`` to have ``import jaxfriction`` set the option.
OPT_IN = "JAXFRICTION_XLA_LOOP_KERNELS"


def _backends_started() -> bool:
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge
    except ImportError:  # a JAX without the private module: assume the worst
        return True
    started = getattr(xla_bridge, "backends_are_initialized", None)
    return True if started is None else bool(started())


def with_loop_kernels(flags: str, threshold: int = LOOP_KERNEL_BYTES) -> str:
    """``flags`` (an ``XLA_FLAGS`` value) with the loop-kernel threshold added.

    An existing ``--xla_backend_extra_options=...`` gets the option appended to its
    comma-separated list; otherwise the flag is added. A value that names the option
    already is returned unchanged.

    Args:
        flags: the current ``XLA_FLAGS`` (possibly empty).
        threshold: bytes.

    Returns:
        The new ``XLA_FLAGS`` value.
    """
    if OPTION in flags:
        return flags
    entry = f"{OPTION}={int(threshold)}"
    words = flags.split()
    for i, word in enumerate(words):
        if word.startswith("--xla_backend_extra_options="):
            words[i] = f"{word},{entry}" if not word.endswith("=") else f"{word}{entry}"
            return " ".join(words)
    return " ".join(words + [f"--xla_backend_extra_options={entry}"])


def loop_kernels_active() -> bool:
    """Whether ``XLA_FLAGS`` holds the loop-kernel option (set by :func:`enable_loop_kernels`
    or by the user), that is, whether XLA's CPU backend compiles small loops into single
    kernels in this process."""
    return OPTION in os.environ.get("XLA_FLAGS", "")


def enable_loop_kernels() -> bool:
    """Raise XLA's small-loop threshold in ``XLA_FLAGS`` (see the module docstring).

    Returns:
        True when the option is in ``XLA_FLAGS`` for the backends JAX will start (set
        here or by the user), False when it is not (not asked for with
        ``JAXFRICTION_XLA_LOOP_KERNELS=1``, or JAX's backends had started before
        ``jaxfriction`` was imported, so that the variable is read no more).
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if OPTION in flags:
        return True
    if os.environ.get(OPT_IN, "0").strip() != "1" or _backends_started():
        return False
    os.environ["XLA_FLAGS"] = with_loop_kernels(flags)
    return True
