"""The report of a fit at the optimiser's end point: standard errors, convergence, goodness of
fit, identifiability and the warnings (:class:`~jaxfriction.FitResult`)."""

from __future__ import annotations

import math
import time
import warnings
from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np

from ..._paths import set_parameters
from . import diagnostics
from .problem import _stacked, forward_value_and_grad, natural_and_slope
from .result import FitResult, FitWarning

if TYPE_CHECKING:
    from .problem import Problem


def _zero_sensitivity_reasons(names, zero, theta, problem):
    """Why a parameter's column of the Jacobian is (near) zero: a finite step of 1e-3
    (relative) either changes the residuals (the parameter acts through an exact switch,
    invisible to automatic differentiation) or it does not (the records do not depend on it)."""
    reasons = {}
    base = np.asarray(theta, dtype=float)
    for name in zero:
        i = names.index(name)
        h = 1e-3 * (abs(base[i]) or 1.0)
        plus, minus = base.copy(), base.copy()
        plus[i] += h
        minus[i] -= h
        diff = _stacked(jnp.asarray(plus), problem) - _stacked(jnp.asarray(minus), problem)
        slope = float(jnp.linalg.norm(diff)) / (2 * h)
        if slope > 0:
            reasons[name] = (f"automatic differentiation gives 0 while a finite step of 1e-3 changes the residuals "
                             f"(|dr/dp| ~ {slope:.3g}): it acts through an exact switch (a slip threshold that "
                             f"only moves when an element or contact switches); use a law continuous in it, "
                             f"e.g. smoothing > 0")
        else:
            reasons[name] = "the records do not depend on it (a finite step of 1e-3 leaves every residual unchanged)"
    return reasons


def report(problem: Problem, data, u, at_u, history, taken: int, message: str, started: float, label: str,
           mode: str, noise, search_report, evaluations: int, velocity_weight, weights) -> FitResult:
    """The :class:`FitResult` at the optimiser's end point ``u``."""
    names, p, n_data = problem.names, problem.n_params, problem.n_data
    theta, slope = (np.asarray(x, dtype=float) for x in natural_and_slope(u, problem))
    stacked, jac_u = at_u or forward_value_and_grad(u, problem)[2:]
    stacked, jac = np.asarray(stacked, dtype=float), np.asarray(jac_u, dtype=float) / slope
    n_vars = jac.shape[1]
    fit_warnings = []

    # goodness of fit, on the data residuals
    noise_estimated = noise is None
    if noise_estimated:
        noise = diagnostics.estimate_noise(data, float(velocity_weight), weights)
    goodness = diagnostics.goodness_of_fit(stacked[:n_data], problem, n_vars, float(noise), noise_estimated)
    residual_std = goodness["residual_std"]

    # Gauss-Newton covariance in the natural parametrisation; convergence: the Gauss-Newton step
    # from the end point is below 0.1 standard error in every parameter
    cov, cov_ok = diagnostics.covariance(jac, residual_std, p)
    ident = diagnostics.identifiability(jac, theta, np.asarray(problem.state_scale), names, residual_std)
    if cov_ok and any(not math.isfinite(w["rel_stderr"]) for w in ident["weak_combinations"]):
        # a combination the data do not determine at all (the scaled J^T J is singular to
        # 1e-12): whether inv() still returns numbers depends on round-off, so decide it here
        cov, cov_ok = np.full((p, p), np.nan), False
    se = np.where(np.diag(cov) > 0, np.sqrt(np.abs(np.diag(cov))), np.nan)
    with np.errstate(all="ignore"):
        step_gn = np.linalg.lstsq(jac, -stacked, rcond=None)[0] if np.all(np.isfinite(jac)) else np.full(n_vars, np.nan)
    converged = bool(math.isfinite(history[-1]) and cov_ok and np.all(np.abs(step_gn[:p]) <= 0.1 * se))
    if not cov_ok:
        message += "; J^T J is singular (parameters not identifiable from these data)"
    # relative sensitivities d q / d ln(theta) far beyond the data's size mean exploding
    # tangents: RK4 unstable in a stiff stick band (h mu N / (m eps) > 2.8) or a stiff internal
    # state while the clipped force keeps the trajectory itself bounded; the Jacobian is garbage
    data_size = max(max(float(np.max(np.abs(x))) for m in data
                        for x in (m.q, m.v, *(m.channels or {}).values()) if x is not None), 1e-300)
    sensitivity = np.abs(jac) * np.maximum(np.abs(theta), 1e-300)
    if not np.all(np.isfinite(jac)) or float(np.max(sensitivity, initial=0.0)) > 1e8 * data_size:
        converged = False
        message += ("; the Jacobian is non-finite or exploding (derivatives of the simulation are unstable: "
                    "reduce dt, or bound the parameters away from a too stiff stick band or internal state)")

    reasons = _zero_sensitivity_reasons(list(names), ident["zero_sensitivity"], theta, problem)
    ident["reasons"] = reasons
    # Gauss-Newton standard errors assume a model that explains the data (diagnostics.py)
    reliable = converged and not reasons and bool(goodness["fits_data"])
    if not converged:
        fit_warnings.append(f"the fit did not converge ({message}): its standard errors are unreliable")
    elif reasons:
        fit_warnings.append("standard errors are unreliable: " + "; ".join(f"{n}: {r}" for n, r in reasons.items()))
    if reasons and not converged:
        fit_warnings += [f"{n} has no sensitivity: {r}" for n, r in reasons.items()]
    if not goodness["fits_data"]:
        fit_warnings.append(f"the model does not explain the data: {goodness['lack_of_fit']}")
    for w in fit_warnings:
        warnings.warn(w, FitWarning, stacklevel=3)

    initial_states, offset = [], p
    width = 2 * problem.system.n_dof + problem.system.n_internal
    for rec in problem.records:
        k = rec.n_free_states
        states = theta[offset : offset + width * k].reshape(k, width)
        offset += width * k
        if rec.y0 is not None:
            states = np.concatenate([np.asarray(rec.y0, dtype=float)[None], states])
        initial_states.append(states)
    params = {n: float(theta[i]) for i, n in enumerate(names)}
    return FitResult(
        params=params,
        stderr={n: float(se[i]) for i, n in enumerate(names)},
        covariance=cov,
        names=names,
        residual_std=residual_std,
        loss_history=np.asarray(history),
        n_steps=taken,
        converged=converged,
        optimizer=label,
        gradient=mode,
        n_residuals=n_data,
        n_variables=n_vars,
        initial_states=initial_states,
        system=set_parameters(problem.system, params),
        seconds=time.perf_counter() - started,
        message=message,
        problem=problem,
        u=np.asarray(u, dtype=float),
        stderr_reliable=reliable,
        goodness=goodness,
        identifiability=ident,
        search=search_report,
        n_evaluations=evaluations,
        warnings=tuple(fit_warnings),
    )
