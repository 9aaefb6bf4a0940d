"""Argument validation shared by every module, and parameter constraints.

Checks run on concrete values (Python numbers, NumPy arrays, concrete JAX arrays) when a
module is built or a function is called. Values that are JAX tracers (inside ``jit``,
``vmap`` or ``grad``) cannot be inspected at trace time and are passed through; the
integrators flag non-finite trajectories in their ``status`` instead of failing a batch.

Parameter constraints. Laws, drives and systems declare the valid range of their
parameters in a ``constraints()`` method that returns a sequence of :class:`Constraint`
(built with :func:`real`, :func:`positive`, :func:`nonnegative`, :func:`at_most`). The same
declaration serves twice: with concrete values :func:`check_constraints` raises a
``ValueError`` naming the parameter when the module is built, and with traced values (a
lane of a sweep, inside ``vmap``) :func:`constraints_hold` evaluates them to one boolean,
which the sweep turns into the lane's ``STATUS_INVALID_PARAMETER`` instead of a silently
wrong number.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array


def is_concrete(value) -> bool:
    """True when ``value`` (or every leaf of it) can be read at trace time."""
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(value))


def is_static_zero(value) -> bool:
    """True for a literal Python zero (not a traced or array value).

    Modules leave out terms whose coefficient is such a zero (a fixed floor, no damping, no
    phase): the numbers are the same, and XLA cannot drop ``0 * x`` itself (``0 * inf`` is
    NaN), so the terms would otherwise cost time in every step.
    """
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


def as_float_array(name, value) -> np.ndarray:
    """``value`` as a float array, or ``ValueError`` naming ``name`` (strings, None, objects)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None


def check_choice(name: str, value, choices: tuple) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is one of the strings ``choices``
    (an array or another object is refused, not compared element by element)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def numeric_array(name: str):
    """A field converter to a JAX array that refuses what is not numbers (strings, None,
    ragged lists) with a ``ValueError`` naming ``name`` (JAX's own message names a dtype)."""

    def convert(value):
        if is_concrete(value) and not isinstance(value, jax.Array):
            return jnp.asarray(as_float_array(name, value))  # a None inside is NaN: refused as not finite
        return jnp.asarray(value)

    return convert


def check_real(name: str, value, *, positive: bool = False, nonnegative: bool = False, scalar: bool = False) -> Any:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is finite (and > 0 or >= 0; with
    ``scalar``, a single number).

    Tracers and None are skipped (see module docstring); strings are refused even where
    NumPy would convert them. Returns ``value`` unchanged.
    """
    if value is None or not is_concrete(value):
        return value
    arr = as_float_array(name, value)
    if scalar and arr.ndim != 0:
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and not np.all(arr > 0):
        raise ValueError(f"{name} must be > 0, got {value!r}")
    if nonnegative and not np.all(arr >= 0):
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return value


def check_int(name: str, value, *, minimum: int | None = None) -> int:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is an integer (Python or NumPy,
    not a bool) of at least ``minimum``. Returns ``int(value)``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def renamed_keyword(function: str, new_name: str, new, old_name: str, old, missing=None):
    """The value of keyword ``new_name``, or of its deprecated alias ``old_name`` with a
    DeprecationWarning (``old`` None: not given). Raises TypeError when both are given, and
    when neither is and ``missing`` is ``"required"``."""
    if old is not None:
        if new is not None:
            raise TypeError(f"{function}: give {new_name}, not both {new_name} and {old_name} (its old name)")
        warnings.warn(f"{function}: the keyword {old_name} is now {new_name}; {old_name} will be removed in the next "
                      f"release", DeprecationWarning, stacklevel=3)
        return old
    if new is None and missing == "required":
        raise TypeError(f"{function}: missing the argument {new_name}")
    return new


def check_time_span(t0: float, t1: float, dt: float | None = None) -> None:
    """Validate an integration window: finite ``t0 < t1`` and, if given, ``dt > 0``."""
    check_real("t0", t0, scalar=True)
    check_real("t1", t1, scalar=True)
    if dt is not None:
        check_real("dt", dt, positive=True, scalar=True)
    if is_concrete((t0, t1)) and not float(t1) > float(t0):
        raise ValueError(f"t1 must be greater than t0, got t0={t0!r}, t1={t1!r}")


def check_not_above(name: str, value, other_name: str, other) -> None:
    """Raise ``ValueError`` unless ``value <= other`` (e.g. ``mu_k <= mu_s``)."""
    if is_concrete((value, other)) and np.any(np.asarray(value) > np.asarray(other)):
        raise ValueError(f"{name} must be <= {other_name}, got {name}={value!r}, {other_name}={other!r}")


# ---------------------------------------------------------------------------------------------
# declarative parameter constraints


class Constraint(NamedTuple):
    """A parameter's valid range: ``kind`` is ``"real"`` (finite), ``"positive"``,
    ``"nonnegative"``, ``"at_most"`` (``value <= other``, both finite) or ``"at_least"``
    (``value >= other``, a number; ``other_name`` says why)."""

    name: str
    value: Any
    kind: str
    other_name: str | None = None
    other: Any = None

    def holds(self) -> Array:
        """Scalar boolean (a JAX array for traced values): every element is in range."""
        value = jnp.asarray(self.value)
        ok = jnp.all(jnp.isfinite(value))
        if self.kind == "positive":
            ok = ok & jnp.all(value > 0)
        elif self.kind == "nonnegative":
            ok = ok & jnp.all(value >= 0)
        elif self.kind == "at_most":
            ok = ok & jnp.all(value <= jnp.asarray(self.other))
        elif self.kind == "at_least":
            ok = ok & jnp.all(value >= self.other)
        return ok

    def check(self) -> None:
        """Raise ``ValueError`` naming the parameter if a concrete value is out of range."""
        if self.value is None:
            raise ValueError(f"{self.name} must be a real number, got None")
        if isinstance(self.value, (list, tuple)) and not self.value:
            raise ValueError(f"{self.name} must be a real number or a non-empty array, got {self.value!r}")
        if self.kind == "at_most":
            check_real(self.name, self.value)
            check_real(self.other_name, self.other)  # type: ignore[arg-type]  # other_name is set for at_most
            check_not_above(self.name, self.value, self.other_name, self.other)  # type: ignore[arg-type]  # other_name is set for at_most
        elif self.kind == "at_least":
            check_real(self.name, self.value)
            if not bool(self.holds()):
                raise ValueError(f"{self.name} must be >= {self.other} ({self.other_name}), got {self.value}")
        else:
            check_real(self.name, self.value, positive=self.kind == "positive",
                       nonnegative=self.kind == "nonnegative")


def real(name, value) -> Constraint:
    """``value`` must be finite (every element)."""
    return Constraint(name, value, "real")


def positive(name, value) -> Constraint:
    """``value`` must be finite and > 0."""
    return Constraint(name, value, "positive")


def nonnegative(name, value) -> Constraint:
    """``value`` must be finite and >= 0."""
    return Constraint(name, value, "nonnegative")


def at_most(name, value, other_name, other) -> Constraint:
    """``value <= other`` (e.g. ``at_most("mu_k", mu_k, "mu_s", mu_s)``)."""
    return Constraint(name, value, "at_most", other_name, other)


def at_least(name, value, bound, why) -> Constraint:
    """``value >= bound`` (a number), with the reason ``why`` given in the error."""
    return Constraint(name, value, "at_least", why, bound)


def check_constraints(module: eqx.Module) -> None:
    """Raise ``ValueError`` for the first concrete parameter of ``module`` out of range."""
    for constraint in module.constraints():  # type: ignore[attr-defined]  # every checked module defines constraints()
        constraint.check()


def named_modules(tree, prefix: str = ""):
    """``(path, module)`` for every equinox module inside ``tree``, the tree itself first
    (path ``""``); fields, tuples, lists and dicts are searched, and paths are written as
    leaf paths are (``"law"``, ``"contacts[1].law"``)."""
    if isinstance(tree, eqx.Module):
        yield prefix, tree
        for field in dataclasses.fields(tree):
            yield from named_modules(getattr(tree, field.name, None), f"{prefix}.{field.name}" if prefix else field.name)
    elif isinstance(tree, (list, tuple)):
        for i, item in enumerate(tree):
            yield from named_modules(item, f"{prefix}[{i}]")
    elif isinstance(tree, dict):
        for key, item in tree.items():
            yield from named_modules(item, f"{prefix}[{key!r}]")


def array_parameters(tree) -> list[str]:
    """``"path of shape (...)"`` for every array-valued field (ndim >= 1) of the modules of ``tree``."""
    found = []
    for path, module in named_modules(tree):
        for field in dataclasses.fields(module):
            value = getattr(module, field.name, None)
            if isinstance(value, (list, np.ndarray, jax.Array)) and np.ndim(value) >= 1:
                found.append(f"{path + '.' if path else ''}{field.name} of shape {np.shape(value)}")
    return found


def check_field_shape(system, y0) -> None:
    """Raise ``ValueError`` naming the array-valued parameters when ``system.vector_field``
    cannot map the state ``y0`` to a state of its shape (a parameter of the wrong shape:
    ``Oscillator(stiffness=[[1.0]])``, a law's coefficient longer than its elements).
    :func:`~jaxfriction.simulate` calls it once a run has failed, to say which parameter (an
    ``eval_shape`` costs some 3 % of a warm ``simulate`` call). Skipped under tracing."""
    if not is_concrete((system, y0)):
        return
    try:
        out = jax.eval_shape(system.vector_field, jnp.zeros((), y0.dtype), y0)
        problem = None if out.shape == y0.shape else f"the rates have shape {out.shape}, the state {y0.shape}"
    except (TypeError, ValueError) as exc:
        problem = str(exc).split("\n")[0]
    if problem is not None:
        arrays = ", ".join(array_parameters(system)) or "none"
        raise ValueError(f"a parameter of {type(system).__name__} has the wrong shape (array-valued parameters: "
                         f"{arrays}): {problem}")


def check_tree_constraints(tree) -> None:
    """Raise ``ValueError`` for the first concrete parameter out of range in any module of
    ``tree`` (a system after :func:`~jaxfriction.set_parameters`, which does not check),
    naming the module's path."""
    for path, module in named_modules(tree):
        for constraint in getattr(module, "constraints", lambda: ())():
            try:
                constraint.check()
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}" if path else str(exc)) from None


def without_tangents(tree) -> Any:
    """``tree`` with ``jax.lax.stop_gradient`` on every array leaf (other leaves kept as they
    are): for checks that yield a status, whose derivatives nobody needs and whose tangents
    would only cost compile time."""
    return jax.tree.map(lambda x: jax.lax.stop_gradient(x) if eqx.is_array(x) else x, tree)


def constraints_hold(tree) -> Array:
    """One boolean: every constraint of every module in ``tree`` holds (traceable).

    Args:
        tree: a system (or any pytree of modules); modules without a ``constraints`` method
            are skipped.

    Returns:
        A scalar boolean JAX array.
    """
    tree = without_tangents(tree)
    ok = jnp.asarray(True)
    for _, module in named_modules(tree):
        for constraint in getattr(module, "constraints", lambda: ())():
            ok = ok & constraint.holds()
    return ok
