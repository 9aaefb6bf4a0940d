"""Lowering the fused kernel for an NVIDIA GPU through Triton, without a GPU, and verifying it.

JAX lowers a program for another platform on request (``lowering_platforms=("cuda",)``), and
Pallas turns each kernel into a Triton module on the way, with every operation's lowering
rule applied. What the lowering does not do is verify the module (Triton's own checks run
when the GPU compiles it), so an operation Triton would refuse, e.g. a ``select`` on an
integer, passes. :func:`triton_problems` verifies every Triton module it makes.
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax


@contextlib.contextmanager
def _verifying(problems):
    """While active, every Triton module Pallas lowers is verified; failures go to ``problems``.
    (Pallas' lowering entry point is private: where it is missing, nothing is verified.)"""
    try:
        from jax._src.pallas.triton import lowering
    except ImportError:  # pragma: no cover - a JAX without Pallas' Triton lowering
        yield
        return
    original = getattr(lowering, "lower_jaxpr_to_triton_module", None)
    if original is None:  # pragma: no cover - renamed in a later JAX
        yield
        return

    def verified(*args, **kwargs) -> Any:
        result = original(*args, **kwargs)
        try:
            if result.module.operation.verify() is False:
                problems.append("the Triton module does not verify")
        except Exception as exc:  # noqa: BLE001 - MLIR reports a failed verification by raising
            problems.append(f"the Triton module does not verify: {' '.join(str(exc).split())[:400]}")
        return result

    lowering.lower_jaxpr_to_triton_module = verified
    try:
        yield
    finally:
        lowering.lower_jaxpr_to_triton_module = original


def triton_problems(fn, *args) -> list[str]:
    """Lower ``jax.jit(fn)(*args)`` for an NVIDIA GPU (Triton) and verify its kernels.

    Needs no GPU. ``fn`` must call its Pallas kernels with Triton compiler parameters (not in
    interpret mode).

    Returns:
        A list of problems, empty when the program lowers to Triton and every module verifies.
    """
    problems: list[str] = []
    with _verifying(problems):
        try:
            text = jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
            if "triton" not in text:
                problems.append("the lowered program holds no Triton kernel")
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            problems.append(f"lowering for a GPU (Triton) fails: {type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:400]}")
    return problems
