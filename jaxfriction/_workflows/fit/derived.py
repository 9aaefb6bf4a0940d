"""Derived quantities of fitted parameters with their standard errors, by the delta method.

For a smooth function ``f`` of the estimates ``theta`` (``a - b`` of a rate-and-state fit,
a ratio, a friction level at some velocity), ``var f(theta_hat) ~ g^T C g`` with ``g =
grad f(theta_hat)`` and ``C`` the estimates' covariance (first-order Taylor expansion:
Seber & Wild 2003, Nonlinear Regression, section 5.1; Taylor 1997, An Introduction to
Error Analysis, section 3.11 for the correlated form). The gradient is exact, by
``jax.jacfwd`` through the user's function; both covariances of the fit are propagated (the
Gauss-Newton one and the HAC one that holds under autocorrelated residuals).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class DerivedQuantity:
    """A function of the fitted parameters with its delta-method standard errors
    (:meth:`FitResult.derived <jaxfriction.FitResult.derived>`).

    Attributes:
        name: the quantity's name (the dict key of a dict-valued function, else ``name=``
            or the function's ``__name__``).
        value: ``f(theta_hat)`` (units of ``f``).
        stderr: ``sqrt(g^T C g)`` with the Gauss-Newton covariance (NaN where it is).
        stderr_hac: the same with the HAC covariance (NaN where it is).
        gradient: dict path -> ``d f / d theta`` at the estimates.
    """

    name: str
    value: float
    stderr: float
    stderr_hac: float
    gradient: dict

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as None)."""
        def fin(x):
            return float(x) if math.isfinite(x) else None

        return {"name": self.name, "value": fin(self.value), "stderr": fin(self.stderr),
                "stderr_hac": fin(self.stderr_hac), "gradient": {k: fin(v) for k, v in self.gradient.items()}}


def _spread(grad, cov) -> float:
    if cov is None:
        return math.nan
    cov = np.asarray(cov, dtype=float)
    if not (np.all(np.isfinite(cov)) and np.all(np.isfinite(grad))):
        return math.nan
    var = float(grad @ cov @ grad)
    return math.sqrt(var) if var >= 0 else math.nan


def delta_method(function: Callable, names, params: dict, covariance, covariance_hac,
                 name: str | None = None) -> DerivedQuantity | dict:
    """``function`` of the estimates with its delta-method standard errors.

    Args:
        function: ``f(p)`` with ``p`` a dict path -> JAX scalar (every fitted parameter),
            returning a scalar or a dict name -> scalar; traced by JAX, so written with
            ``jax.numpy`` (Python arithmetic works too).
        names: the fitted paths, the order of the covariances.
        params: dict path -> estimate.
        covariance: ``(p, p)`` Gauss-Newton covariance.
        covariance_hac: ``(p, p)`` HAC covariance, or None.
        name: the quantity's name for a scalar function (default: ``function.__name__``,
            ``"derived"`` for a lambda).

    Returns:
        A :class:`DerivedQuantity`, or for a dict-valued function a dict name ->
        :class:`DerivedQuantity`.

    Raises:
        ValueError: ``function`` is not callable, or returns something other than a real
            scalar or a dict of them (naming the offending entry); ``name`` not a string.
    """
    if not callable(function):
        raise ValueError(f"function must be a callable f(params: dict path -> scalar), got {function!r}")  # noqa: TRY004
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a string or None, got {name!r}")
    names = list(names)
    theta = jnp.asarray([params[n] for n in names])

    def f(x):
        out = function({n: x[i] for i, n in enumerate(names)})
        items = out.items() if isinstance(out, dict) else [(None, out)]
        values = []
        for key, v in items:
            v = jnp.asarray(v)
            if v.shape != () or not (jnp.issubdtype(v.dtype, jnp.floating) or jnp.issubdtype(v.dtype, jnp.integer)):
                what = "function" if key is None else f"function's entry {key!r}"
                raise ValueError(f"{what} must return a real scalar (or a dict of them), got shape {v.shape} "
                                 f"dtype {v.dtype}")
            values.append(v.astype(theta.dtype))
        return jnp.stack(values), [k for k, _ in items]

    try:
        values, keys = f(theta)
        jac = jax.jacfwd(lambda x: f(x)[0])(theta)
    except KeyError as error:
        raise ValueError(f"function: reads the unknown path {error}; the fitted paths are {names}") from None
    jac, values = np.asarray(jac, dtype=float), np.asarray(values, dtype=float)
    default = getattr(function, "__name__", "derived")
    default = "derived" if default == "<lambda>" else default
    out = {}
    for i, key in enumerate(keys):
        g = jac[i]
        out[key] = DerivedQuantity(
            name=str(key) if key is not None else (name or default), value=float(values[i]),
            stderr=_spread(g, covariance), stderr_hac=_spread(g, covariance_hac),
            gradient={n: float(g[j]) for j, n in enumerate(names)},
        )
    return out[None] if keys == [None] else out
