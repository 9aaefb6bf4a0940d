"""The report of a fit at the optimiser's end point: standard errors (Gauss-Newton and HAC),
whether the optimiser stopped at an optimum, goodness of fit, identifiability, estimates at a
bound and the warnings (:class:`~jaxfriction.FitResult`).

Stopping and statistics are separate statements. ``stopped_at_optimum`` says why the
optimiser stopped: because the loss and the step stagnated (a relative loss change below
``tol`` with the Gauss-Newton step from the end point below 0.1 standard error, the larger
of the Gauss-Newton and HAC ones, or the full Gauss-Newton step lowering the loss by less
than 0.01 / (n - k) relative; or a trust-region solver whose trial steps shrank by 4^25
without lowering the loss, or failed 3 times in a row once the loss had stagnated), not because it reached ``steps`` or met a non-finite loss.
``optimizer_error_negligible`` is the statistical statement: the Gauss-Newton step from the
end point is below 0.1 of the trusted standard error in every parameter.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np

from ..._paths import set_parameters
from . import diagnostics
from .hac import hac_covariance
from .local_phase import NEGLIGIBLE, NO_DECREASE, STEP_LIMIT, negligible_decrease
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
                             f"only moves when an element or contact switches); use a law continuous in it "
                             f"(e.g. smoothing > 0), or fixed-step RK4 with a law it marches (marched_in_rk4)")
        else:
            reasons[name] = "the records do not depend on it (a finite step of 1e-3 leaves every residual unchanged)"
    return reasons


#: An estimate within this fraction of its box's width of a bound (half-lines: of the larger
#: of ``|bound|`` and the initial guess's distance to it) is reported at the bound.
BOUND_MARGIN = 1e-3
#: |lag-1 autocorrelation| * sqrt(n) above this: the residuals are autocorrelated (about 3
#: standard errors of a white sequence's lag-1 autocorrelation, Box & Jenkins 1976 sec. 2.1.6).
AUTOCORRELATION_Z = 3.0
#: HAC / Gauss-Newton standard errors outside [1 / x, x] in a parameter: they disagree.
AGREEMENT_FACTOR = 1.25
#: The optimiser's remaining error is negligible below this fraction of a standard error.
STEP_FRACTION = 0.1


def _stop_kind(message: str) -> str:
    """``"step-limit"``, ``"non-finite"``, ``"no-decrease"``, ``"negligible-decrease"`` or
    ``"stagnation"`` from the local
    run's message (:func:`~.local_phase.run_optax`, :func:`~.local_phase.run_least_squares`)."""
    if message.startswith(STEP_LIMIT):
        return "step-limit"
    if "non-finite" in message:
        return "non-finite"
    if message.startswith(NO_DECREASE):
        return "no-decrease"
    if message.startswith(NEGLIGIBLE):
        return "negligible-decrease"
    return "stagnation"


def _bound_edges(problem, theta) -> dict:
    """dict path -> ``{"side", "bound", "margin"}`` for each estimate within :data:`BOUND_MARGIN`
    of a bound (at or beyond it included)."""
    out = {}
    lo, hi, p0 = (np.asarray(x, dtype=float) for x in (problem.lo, problem.hi, problem.p0))
    for i, (name, kind) in enumerate(zip(problem.names, problem.kinds)):
        x = float(theta[i])
        sides = []
        if kind == "interval":
            m = BOUND_MARGIN * (hi[i] - lo[i])
            sides = [("lower", lo[i], m), ("upper", hi[i], m)]
        elif kind == "lower":
            sides = [("lower", lo[i], BOUND_MARGIN * max(abs(lo[i]), abs(p0[i] - lo[i])))]
        elif kind == "upper":
            sides = [("upper", hi[i], BOUND_MARGIN * max(abs(hi[i]), abs(hi[i] - p0[i])))]
        for side, bound, m in sides:
            if (x - bound if side == "lower" else bound - x) <= m:
                out[name] = {"side": side, "bound": float(bound), "margin": float(m), "interval": kind == "interval"}
    return out


def _bound_warning(name, value, edge) -> str:
    where = "of its box" if edge["interval"] else "of its range"
    return (f"{name} = {value:.6g} is at the {edge['side']} bound {edge['bound']:.6g} {where} (within "
            f"{edge['margin']:.3g}): the data ask for a value at or beyond it; widen the "
            f"{'box' if edge['interval'] else 'bound'} or fix the parameter (its standard errors do not hold "
            f"at a bound)")


def _trust(lag1, n_data, se, se_hac, capped) -> tuple[str, str]:
    """``(trusted, verdict)``: which standard errors to trust (``"gauss-newton"`` or ``"hac"``)
    and the report's one line saying why."""
    ok = np.isfinite(se) & np.isfinite(se_hac) & (se > 0) & (se_hac > 0)
    if not np.any(ok):
        if np.any(np.isfinite(se_hac)):
            return "hac", "only the HAC standard errors are finite: trust the HAC column"
        return "gauss-newton", "HAC standard errors unavailable (J^T J singular or the Jacobian not finite)"
    ratio = se_hac[ok] / se[ok]
    worst = float(np.max(np.maximum(ratio, 1 / ratio)))
    typical = float(np.median(ratio))
    correlated = math.isfinite(lag1) and abs(lag1) * math.sqrt(n_data) > AUTOCORRELATION_Z
    cap = (" (bandwidth capped at half the record: residuals this persistent leave few independent "
           "stretches, so even the HAC errors are a lower bound)") if capped else ""
    if correlated:
        return "hac", (f"residuals are autocorrelated (lag-1 {lag1:.2f}): trust the HAC column; the Gauss-Newton "
                       f"one assumes white noise (HAC / Gauss-Newton {typical:.3g}){cap}")
    if worst > AGREEMENT_FACTOR:
        return "hac", (f"residuals look white (lag-1 {lag1:.2f}) but the two columns differ by up to "
                       f"{worst:.3g}x (unequal variances along the record?): trust the HAC column{cap}")
    return "gauss-newton", (f"residuals look white (lag-1 {lag1:.2f}): both columns agree (to {worst - 1:.0%}); "
                            f"the Gauss-Newton one is the more precise")


def report(problem: Problem, data, u, at_u, history, taken: int, message: str, started: float, label: str,
           mode: str, noise, search_report, evaluations: int, velocity_weight, weights) -> FitResult:
    """The :class:`FitResult` at the optimiser's end point ``u``."""
    names, p, n_data = problem.names, problem.n_params, problem.n_data
    theta, slope = (np.asarray(x, dtype=float) for x in natural_and_slope(u, problem))
    stacked, jac_u = at_u or forward_value_and_grad(u, problem)[2:]
    stacked, jac = np.asarray(stacked, dtype=float), np.asarray(jac_u, dtype=float) / slope
    n_vars = jac.shape[1]
    fit_warnings = []
    kind = _stop_kind(message)

    # goodness of fit, on the data residuals
    noise_estimated = noise is None
    if noise_estimated:
        noise = diagnostics.estimate_noise(data, float(velocity_weight), weights)
    goodness = diagnostics.goodness_of_fit(stacked[:n_data], problem, n_vars, float(noise), noise_estimated)
    residual_std = goodness["residual_std"]

    # Gauss-Newton covariance in the natural parametrisation
    cov, cov_ok = diagnostics.covariance(jac, residual_std, p)
    ident = diagnostics.identifiability(jac, theta, np.asarray(problem.state_scale), names, residual_std)
    if cov_ok and any(not math.isfinite(w["rel_stderr"]) for w in ident["weak_combinations"]):
        # a combination the data do not determine at all (the scaled J^T J is singular to
        # 1e-12): whether inv() still returns numbers depends on round-off, so decide it here
        cov, cov_ok = np.full((p, p), np.nan), False
    se = np.where(np.diag(cov) > 0, np.sqrt(np.abs(np.diag(cov))), np.nan)

    # the HAC sandwich over the residual columns (time series), parameters' block
    columns = diagnostics.residual_columns(np.arange(n_data), problem)
    if cov_ok:
        cov_hac, hac_info = hac_covariance(jac, stacked, columns, p)
    else:
        cov_hac, hac_info = np.full((p, p), np.nan), {"kernel": "bartlett", "bandwidth_rule": "andrews-1991-ar1",
                                                      "bandwidths": [], "capped": False}
    se_hac = np.where(np.diag(cov_hac) > 0, np.sqrt(np.abs(np.diag(cov_hac))), np.nan)
    trusted, verdict = _trust(goodness["lag1_autocorrelation"], n_data, se, se_hac, hac_info["capped"])
    se_trusted = se_hac if trusted == "hac" else se

    # the Gauss-Newton step from the end point, against the standard errors and the loss
    with np.errstate(all="ignore"):
        if np.all(np.isfinite(jac)) and np.all(np.isfinite(stacked)):
            step_gn = np.linalg.lstsq(jac, -stacked, rcond=None)[0]
            rss = float(np.sum(stacked**2))
            gain = float(np.sum((jac @ step_gn) ** 2)) / rss if rss > 0 else 0.0
        else:
            step_gn, gain = np.full(n_vars, np.nan), math.nan
        yardstick = np.fmax(se, se_hac)
        step_any = float(np.max(np.abs(step_gn[:p]) / yardstick))
        step_gn_se = float(np.max(np.abs(step_gn[:p]) / se))
        step_hac_se = float(np.max(np.abs(step_gn[:p]) / se_hac))
        step_trusted = float(np.max(np.abs(step_gn[:p]) / se_trusted))
    step_small = step_any <= STEP_FRACTION or gain <= negligible_decrease(problem)
    finite_loss = math.isfinite(history[-1])
    stopped = finite_loss and (kind in ("no-decrease", "negligible-decrease") or (kind == "stagnation" and step_small))
    if finite_loss and kind == "stagnation" and not step_small:
        message += (f"; but the Gauss-Newton step from the end point is still {step_any:.3g} standard errors "
                    f"(not an optimum yet)")
    converged = stopped and cov_ok
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
    negligible = converged and step_trusted <= STEP_FRACTION

    edges = _bound_edges(problem, theta)
    reasons = _zero_sensitivity_reasons(list(names), ident["zero_sensitivity"], theta, problem)
    ident["reasons"] = reasons
    # Gauss-Newton standard errors assume a model that explains the data (diagnostics.py);
    # the HAC ones hold under autocorrelated model error; neither holds at a bound
    sound = converged and not reasons and not edges
    reliable = sound and step_gn_se <= STEP_FRACTION and bool(goodness["fits_data"])
    hac_reliable = sound and step_hac_se <= STEP_FRACTION
    if not converged:
        fit_warnings.append(f"the fit did not converge ({message}): its standard errors are unreliable")
    elif reasons:
        fit_warnings.append("standard errors are unreliable: " + "; ".join(f"{n}: {r}" for n, r in reasons.items()))
    elif not negligible:
        fit_warnings.append(f"the optimiser stopped at an optimum of the computed loss, but the Gauss-Newton step "
                            f"from its end point is {step_trusted:.3g} {'HAC' if trusted == 'hac' else 'Gauss-Newton'} "
                            f"standard errors (more than {STEP_FRACTION:g}): the optimiser's error is not negligible "
                            f"(a rough loss, or a flat valley); restart from the end point or another guess")
    if reasons and not converged:
        fit_warnings += [f"{n} has no sensitivity: {r}" for n, r in reasons.items()]
    if not goodness["fits_data"]:
        fit_warnings.append(f"the model does not explain the data: {goodness['lack_of_fit']}")
    fit_warnings += [_bound_warning(n, float(theta[names.index(n)]), e) for n, e in edges.items()]
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
        stderr_hac={n: float(se_hac[i]) for i, n in enumerate(names)},
        covariance_hac=cov_hac,
        stderr_hac_reliable=hac_reliable,
        hac=hac_info,
        trusted_stderr=trusted,
        stderr_verdict=verdict,
        stopped_at_optimum=stopped,
        stop_reason=kind,
        gauss_newton_step={n: float(step_gn[i]) for i, n in enumerate(names)},
        step_in_stderr=step_trusted,
        optimizer_error_negligible=negligible,
        at_bounds=list(edges),
        bound_edges=edges,
        preprocessing=tuple(tuple(m.preprocessing) for m in data) if any(m.preprocessing for m in data) else (),
    )
