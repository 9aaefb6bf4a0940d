"""Sensitivities of observables to system parameters: gradients, elasticities, a finite-difference check.

Parameters are named by their leaf paths in the system (``"law.mu"``, ``"law.eps"``,
``"force.amplitude"``, ``"stiffness"``, ``"masses[2]"``; :func:`~jaxfriction.parameter_paths`
lists them). An observable is any scalar function of a system (dissipation per cycle,
stick fraction, rest position, peak sliding...), usually built on
:func:`~jaxfriction.simulate`. For gradients over a grid of parameter values use
:func:`~jaxfriction.sweep` (window observables) or :func:`~jaxfriction.sensitivity_map`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jax import Array

from .._checks import check_real, renamed_keyword
from .._paths import check_paths, get_parameter, scalar_parameter_paths, set_parameters
from .._templates import Template, split_template
from .gradient import as_gradient_mode
from .identity import ByCode

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem


def _resolve(system, wrt):
    system = split_template(system)[0]
    names = scalar_parameter_paths(system) if wrt is None else ([wrt] if isinstance(wrt, str) else list(wrt))
    if not names:
        raise ValueError("wrt must name at least one parameter path")
    check_paths(system, names, "wrt")
    return system, names, {n: jnp.asarray(get_parameter(system, n), dtype=float) for n in names}


def scalar_wrt(system, wrt):
    """``(system, names, values)`` of the paths ``wrt`` (a path, a list, or None for every
    scalar parameter) of a system or template, each a scalar: ValueError naming ``wrt`` for
    an empty list, an unknown path or an array leaf."""
    system, names, p0 = _resolve(system, wrt)
    bad = [n for n in names if p0[n].shape != ()]
    if bad:
        raise ValueError(f"wrt: {bad} are arrays; name their elements, e.g. {bad[0]}[0]")
    return system, names, p0


def _scalar_value(value):
    """``value`` as a 0-d array; a ValueError naming ``observable`` for anything else."""
    try:
        value = jnp.asarray(value)
    except TypeError:
        raise ValueError(f"observable must return a scalar, got {type(value).__name__}") from None
    if value.shape != ():
        raise ValueError(f"observable must return a scalar, got an array of shape {value.shape}; reduce it (e.g. "
                         f"the value at the last time, or a maximum)")
    return value


@eqx.filter_jit
def _value_and_jacobian(observable, system, p0, mode):
    def f(values) -> tuple[dict[str, Array], None]:
        return {"value": _scalar_value(observable(set_parameters(system, values)))}, None

    out, jac, _ = mode.value_and_jacobian(f, p0)
    return out, jac


def sensitivity(observable: Callable, system: AbstractFrictionSystem | Template,
                wrt: list[str] | None = None, gradient="auto", *, params: list[str] | None = None) -> dict:
    """Value, gradient and elasticities of ``observable(system)`` with respect to ``wrt``.

    Args:
        observable: scalar function of a system.
        system: the system at the point of interest (or a :class:`~jaxfriction.Template`).
        wrt: leaf paths (default: every scalar parameter, array leaves by element,
            ``"law.mu[0]"``); each must be a scalar (an element ``"masses[2]"`` of an array
            leaf, not the whole array). The same keyword as :func:`~jaxfriction.sweep`'s.
        gradient: a gradient mode object (:class:`~jaxfriction.ForwardMode`,
            :class:`~jaxfriction.ReverseMode`, :class:`~jaxfriction.AutoMode`) or its name.

    Returns:
        Dict with ``value`` (float), ``gradient`` and ``elasticity`` (dicts path -> float;
            the elasticity ``d ln Q / d ln p = (p / Q) dQ/dp`` is NaN where ``Q = 0``) and
            ``mode`` (the mode used).

    Warns:
        DeprecationWarning: for ``params=``, the old name of ``wrt`` (kept for one release).
        UserWarning: for every derivative that automatic differentiation gives as 0 (to
            round-off: ``|g| max(|p|, 1) <= 1e-10`` of the value or the largest such term)
            while a central step of 1e-3 (relative) changes the observable: the parameter
            acts through an exact switch (a slip threshold that only moves when an element
            or contact switches, e.g. :class:`~jaxfriction.SegalmanIwan` without
            ``smoothing`` under an adaptive solver; fixed-step RK4 marches it and differentiates
            the switch), invisible to AD; the warning gives the finite-difference slope.

    Raises:
        ValueError: unknown or non-scalar paths, a bad gradient mode, or an observable
            whose value is not a scalar.
    """
    wrt = renamed_keyword("sensitivity", "wrt", wrt, "params", params)
    system, names, p0 = scalar_wrt(system, wrt)
    mode = as_gradient_mode(gradient).resolve(len(names))
    # one compiled program per observable code and system structure: the differentiated values
    # enter as arrays, so a second call at other values compiles nothing
    system = set_parameters(system, p0)
    try:
        out, jac = _value_and_jacobian(ByCode(observable), system, p0, mode)
    except ValueError as exc:
        if str(exc).startswith("observable must return a scalar"):
            raise ValueError(str(exc)) from None
        out, jac = _value_and_jacobian.__wrapped__(observable, system, p0, mode)  # type: ignore[attr-defined]  # the undecorated function of eqx.filter_jit
    except Exception:  # noqa: BLE001
        # an observable that needs concrete values inside (Python control flow on values,
        # dissipation_per_cycle without n_cycles) runs on the eager path, where the time grid
        # stays concrete; a genuine error is raised from there
        out, jac = _value_and_jacobian.__wrapped__(observable, system, p0, mode)  # type: ignore[attr-defined]  # the undecorated function of eqx.filter_jit
    value = float(out["value"])
    grad = np.array([float(jac[n]["value"]) for n in names])
    p = np.array([float(p0[n]) for n in names])
    elasticity = grad * p / value if value != 0 else np.full_like(grad, np.nan)
    # a derivative zero to round-off (relative to the value and the other derivatives) that a
    # finite step contradicts
    scale = np.maximum(np.abs(p), 1.0)
    level = max(abs(value), float(np.max(np.abs(grad) * scale)))
    for name, g, s in zip(names, grad, scale):
        if abs(g) * s <= 1e-10 * level:
            slope = finite_difference_gradient(observable, system, [name], rel_step=1e-3)[name]
            if abs(slope) * s > 1e-6 * level:
                warnings.warn(f"d observable / d {name} is exactly 0 by automatic differentiation, but a finite step "
                              f"of 1e-3 gives {slope:.4g}: {name} acts through an exact switch, invisible to AD; "
                              f"use a law continuous in it (e.g. smoothing > 0), or fixed-step RK4 with a law it marches "
                              f"(marched_in_rk4)", UserWarning, stacklevel=2)
    return {"value": value, "gradient": dict(zip(names, grad.tolist())),
            "elasticity": dict(zip(names, elasticity.tolist())), "mode": type(mode).__name__}


def finite_difference_gradient(observable: Callable, system: AbstractFrictionSystem | Template,
                               wrt: list[str] | None = None, rel_step: float = 1e-6, *,
                               params: list[str] | None = None) -> dict[str, float]:
    """Central finite differences of ``observable`` (a cross-check of :func:`sensitivity`).

    Step ``h = rel_step * max(|p|, 1)`` per parameter.

    Returns:
        Dict path -> float.

    Raises:
        ValueError: unknown or non-scalar paths, ``rel_step`` not a finite number > 0, an
            observable whose value is not a scalar.
    """
    check_real("rel_step", rel_step, positive=True)
    wrt = renamed_keyword("finite_difference_gradient", "wrt", wrt, "params", params)
    system, names, p0 = _resolve(system, wrt)
    out = {}
    for name in names:
        h = rel_step * max(abs(float(p0[name])), 1.0)
        plus = _scalar_value(observable(set_parameters(system, {name: p0[name] + h})))
        minus = _scalar_value(observable(set_parameters(system, {name: p0[name] - h})))
        out[name] = float((plus - minus) / (2 * h))
    return out
