"""The report of :func:`~jaxfriction.fit`: estimates, standard errors and what they can be trusted for."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .problem import Problem
    from .validation import ValidationReport


class FitWarning(UserWarning):
    """Raised (as a warning) by :func:`~jaxfriction.fit` when its result cannot be taken at face
    value: not converged, a model that does not explain the data, a parameter without
    sensitivity, ``J^T J`` singular, an estimate at a bound, an optimiser's error that is not
    negligible against the standard errors. The same text is in ``FitResult.warnings``."""


@dataclasses.dataclass(frozen=True, eq=False)
class FitResult:
    """Report of :func:`fit`.

    Attributes:
        params: dict path -> estimate (the physical parameters only).
        stderr: dict path -> Gauss-Newton standard error (NaN where the variance is not
            positive): white residuals assumed. Valid only when ``stderr_reliable``.
        covariance: ``(p, p)`` Gauss-Newton covariance of the estimates, order of ``names``.
        names: the fitted parameter paths.
        residual_std: ``sqrt(RSS / (n_residuals - n_variables))``, the estimated noise
            standard deviation of the (weighted) data residuals (units of q).
        loss_history: ``(n_steps + 1,)`` loss of the local optimiser at every iterate (mean
            squared residual plus the weighted continuity defects).
        n_steps: optimiser steps taken (least-squares solvers: accepted steps).
        converged: ``stopped_at_optimum``, ``J^T J`` is non-singular (the optimum is
            isolated) and the Jacobian is finite and not exploding. It does not depend on
            the noise model; a run that reached ``steps`` has not converged.
        optimizer: the shortcut's name, ``"optax"``, or the optimistix solver's class name.
        gradient: ``"forward"`` or ``"reverse"``.
        n_residuals: data residuals (positions, plus velocities where measured).
        n_variables: free variables (parameters plus estimated segment initial states).
        initial_states: per record, ``(S, 2 n_dof + n_internal)`` estimated (or known)
            segment start states (positions, velocities, then a dynamic law's internal
            variables).
        system: the template system with the estimates set.
        seconds: wall time of the fit.
        message: why the optimiser stopped.
        problem: the least-squares problem (an equinox module: template system, records,
            parameter transforms) that follow-up workflows reuse (posterior sampling).
        u: ``(n_variables,)`` the optimum in the optimiser's unconstrained variables.
        stderr_reliable: the Gauss-Newton standard errors mean what they say: converged,
            the Gauss-Newton step from the end point below 0.1 of them, every parameter has a
            sensitivity and is off its bounds, and the model explains the data
            (``fits_data``).
        goodness: goodness of fit (dict): ``noise`` and ``noise_source`` (given, or estimated
            from the record), ``residual_std``, ``noise_ratio`` (residual std / noise),
            ``chi2``, ``chi2_p`` and ``dof`` (chi-square test, known noise only),
            ``runs_z``, ``runs_p`` (runs test of the residuals' signs),
            ``lag1_autocorrelation``, ``fits_data`` (bool) and ``lack_of_fit`` (why not).
        identifiability: dict: ``condition_number`` of the relative Jacobian (segment
            states eliminated), ``weak_combinations`` (list of dicts ``combination``,
            ``rel_stderr``, ``vector``: parameter combinations with a relative standard
            error above 10 %), ``zero_sensitivity`` (paths whose Jacobian column is zero to
            round-off, at most 1e-8 of the largest),
            ``reasons`` (path -> why its sensitivity is zero).
        search: the global phase (dict: ``design``, ``candidates``, ``failed_candidates``,
            ``refined``, ``best_design_loss``, ``optima``: the distinct local optima found,
            each ``params``, ``loss``, ``count``; ``step``: the RK4 step used, ``dt``, the
            default it started from, ``default_dt``, the ``halvings`` between them where the
            box's ``corners`` broke RK4's step rules at the default, and the
            ``flagged_corners`` left, non-zero only when ``dt`` was given; no corners for a
            system fitted with its adaptive solver), or None for a local fit.
        n_evaluations: misfit evaluations (design points plus optimiser steps; a step of a
            least-squares solver evaluates the residuals and their Jacobian).
        warnings: the :class:`FitWarning` texts raised by the fit.
        stderr_hac: dict path -> HAC standard error (heteroskedasticity and autocorrelation
            consistent: Newey & West 1987 sandwich, Bartlett kernel, Andrews 1991 AR(1)
            plug-in bandwidth, lags summed within each residual column; segment states
            eliminated; NaN where unavailable). They hold under autocorrelated residuals
            (model error, drift), where the Gauss-Newton ones are too small.
        covariance_hac: ``(p, p)`` HAC covariance, order of ``names``.
        stderr_hac_reliable: converged, the Gauss-Newton step below 0.1 HAC standard
            error, every parameter sensitive and off its bounds (no ``fits_data``
            requirement: they are made for a model that does not explain the data exactly).
        hac: dict: ``kernel``, ``bandwidth_rule``, ``bandwidths`` (per residual column, in
            samples) and ``capped`` (a bandwidth reached half its column: the residuals are
            so persistent that even the HAC errors are a lower bound).
        trusted_stderr: ``"gauss-newton"`` (residuals look white and both columns agree)
            or ``"hac"`` (the residuals' lag-1 autocorrelation exceeds 3 / sqrt(n), or the
            columns differ by more than 25 %).
        stderr_verdict: the report's line saying which standard errors to trust and why.
        stopped_at_optimum: the optimiser stopped because the loss and the step stagnated:
            a relative loss change below ``tol`` with the Gauss-Newton step from the end
            point below 0.1 standard error (the larger of the Gauss-Newton and HAC ones) or
            lowering the loss by less than ``0.01 / (n - k)`` (relative), or a trust-region
            solver's trial steps shrank by 4^25 without lowering the loss (or failed 3 times
            in a row after the loss changed by less than ``tol`` over 5 steps), or, once a
            trial step was rejected, two accepted least-squares steps in a row lowered the
            loss by less than 0.01 in chi-square (``0.01 / (n - k)`` relative, realised and
            predicted); not because it
            reached ``steps`` or met a non-finite loss.
        stop_reason: ``"stagnation"``, ``"no-decrease"`` (the trust region shrank to
            nothing), ``"negligible-decrease"`` (the chi-square rule above), ``"step-limit"``
            or ``"non-finite"``.
        gauss_newton_step: dict path -> the full Gauss-Newton step from the end point
            (units of the parameter).
        step_in_stderr: ``max |gauss_newton_step| / trusted standard error`` over the
            parameters.
        optimizer_error_negligible: converged and ``step_in_stderr <= 0.1``: the
            optimiser's remaining error is statistically negligible.
        at_bounds: the paths whose estimate lies within 1e-3 of a bound: of the box width
            for an interval, of the larger of ``|bound|`` and the initial guess's distance
            to it for a half-line (a FitWarning names each).
        bound_edges: dict path -> ``{"side", "bound", "margin", "interval"}`` for ``at_bounds``.
        validation: the :class:`~jaxfriction.ValidationReport` of ``fit(..., validation=...)``
            (the simulation error on records not fitted), or None.
        preprocessing: per fitted record, its :attr:`~jaxfriction.Measurement.preprocessing`
            (the pre-processing steps applied to it, e.g. a detrend and its slope), so the
            choices travel with the estimates.
        constraints: dict name -> margin at the estimates of ``fit(..., constraints=...)``
            (``>= 0`` where the constraint holds).
    """

    params: dict
    stderr: dict
    covariance: np.ndarray
    names: tuple
    residual_std: float
    loss_history: np.ndarray
    n_steps: int
    converged: bool
    optimizer: str
    gradient: str
    n_residuals: int
    n_variables: int
    initial_states: list
    system: object
    seconds: float
    message: str
    problem: Problem | None = None
    u: np.ndarray | None = None
    stderr_reliable: bool = False
    goodness: dict = dataclasses.field(default_factory=dict)
    identifiability: dict = dataclasses.field(default_factory=dict)
    search: dict | None = None
    n_evaluations: int = 0
    warnings: tuple = ()
    stderr_hac: dict = dataclasses.field(default_factory=dict)
    covariance_hac: np.ndarray | None = None
    stderr_hac_reliable: bool = False
    hac: dict = dataclasses.field(default_factory=dict)
    trusted_stderr: str = "gauss-newton"
    stderr_verdict: str = ""
    stopped_at_optimum: bool = False
    stop_reason: str = ""
    gauss_newton_step: dict = dataclasses.field(default_factory=dict)
    step_in_stderr: float = math.nan
    optimizer_error_negligible: bool = False
    at_bounds: list = dataclasses.field(default_factory=list)
    bound_edges: dict = dataclasses.field(default_factory=dict)
    validation: ValidationReport | None = None
    preprocessing: tuple = ()
    constraints: dict = dataclasses.field(default_factory=dict)

    @property
    def correlation(self) -> np.ndarray:
        """Correlation matrix of the estimates, ``(p, p)``."""
        s = np.sqrt(np.diag(self.covariance))
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.covariance / np.outer(s, s)

    @property
    def fits_data(self) -> bool:
        """The model explains the data (no lack-of-fit test failed; see ``goodness``)."""
        return bool(self.goodness.get("fits_data", True))

    @property
    def aic(self) -> float:
        """Akaike's criterion of the least-squares fit, ``n ln(RSS / n) + 2 k`` (``n`` data
        residuals, ``k`` free variables; Gaussian errors of unknown variance, the
        variance's own parameter common to every model and left out)."""
        return self._log_likelihood_term + 2 * self.n_variables

    @property
    def bic(self) -> float:
        """Schwarz's criterion, ``n ln(RSS / n) + k ln n`` (as :attr:`aic`)."""
        return self._log_likelihood_term + self.n_variables * math.log(self.n_residuals)

    @property
    def _log_likelihood_term(self) -> float:
        """``n ln(RSS / n)``, the part of AIC and BIC that measures the misfit."""
        n = self.n_residuals
        return n * math.log(self.residual_std**2 * (n - self.n_variables) / n)

    def summary(self) -> str:
        """A text report: estimates with both standard errors (Gauss-Newton and HAC; in
        brackets when unreliable) and a line saying which to trust, estimates at a bound,
        goodness of fit, identifiability, the global search's optima and how the optimiser
        stopped."""
        width = max(12, *(len(n) for n in self.names))
        hac = self.stderr_hac or {}
        lines = [f"{'parameter':<{width}} {'estimate':>14} {'GN stderr':>12} {'HAC stderr':>12} {'rel. stderr':>12}"]
        for name in self.names:
            value, err, err_hac = self.params[name], self.stderr[name], hac.get(name, math.nan)
            trusted = err_hac if self.trusted_stderr == "hac" else err
            rel = abs(trusted / value) if value != 0 else math.inf
            e, h, r = f"{err:.3g}", f"{err_hac:.3g}", f"{rel:.2%}"
            if not self.stderr_reliable:
                e = f"[{e}]"
            if not self.stderr_hac_reliable:
                h = f"[{h}]"
            if not (self.stderr_hac_reliable if self.trusted_stderr == "hac" else self.stderr_reliable):
                r = f"[{r}]"
            row = f"{name:<{width}} {value:>14.6g} {e:>12} {h:>12} {r:>12}"
            edge = self.bound_edges.get(name)
            if edge is not None:
                row += f"  AT {edge['side'].upper()} BOUND {edge['bound']:.6g}"
            lines.append(row)
        if not (self.stderr_reliable and self.stderr_hac_reliable):
            lines.append("standard errors in [brackets] are unreliable (see the warnings below)")
        if self.stderr_verdict:
            column = "HAC" if self.trusted_stderr == "hac" else "Gauss-Newton"
            lines.append(f"standard errors: {self.stderr_verdict} (rel. stderr: the {column} column)")
        g = self.goodness
        lines.append(
            f"residual std {self.residual_std:.4g} ({self.n_residuals} residuals, {self.n_variables} "
            f"free variables); final loss {self.loss_history[-1]:.4g}"
        )
        if g:
            verdict = "fits the data" if g["fits_data"] else "DOES NOT FIT the data"
            test = (f"chi-square p = {g['chi2_p']:.2g}" if math.isfinite(g["chi2_p"])
                    else f"runs test p = {g['runs_p']:.2g}")
            lines.append(f"noise {g['noise']:.4g} ({g['noise_source']}); residual std / noise {g['noise_ratio']:.3g}, "
                         f"{test}, lag-1 autocorrelation {g['lag1_autocorrelation']:.2f}: {verdict}")
        ident = self.identifiability
        if ident:
            weak = "; ".join(f"{w['combination']} ({w['rel_stderr']:.0%})" for w in ident["weak_combinations"])
            lines.append(f"condition number {ident['condition_number']:.3g}"
                         + (f"; poorly determined: {weak}" if weak else ""))
        if self.search:
            s = self.search
            optima = ", ".join(f"{o['loss']:.4g} (x{o['count']})" for o in s["optima"])
            lines.append(f"global search: {s['candidates']} {s['design']} candidates ({s['failed_candidates']} failed), "
                         f"best {s['refined']} refined; distinct optima, loss: {optima}")
            step = s.get("step") or {}
            if step.get("halvings"):
                lines.append(f"RK4 step {step['dt']:.4g}: the default {step['default_dt']:.4g} broke the step rules "
                             f"at a corner of the box, halved {step['halvings']} time(s)")
            if step.get("flagged_corners"):
                lines.append(f"RK4 step {step['dt']:.4g} (given): the step rules flag {step['flagged_corners']} of "
                             f"the box's {step['corners']} corners; candidates there failed")
        lines.append(f"{self.optimizer} ({self.gradient}-mode gradients), {self.n_steps} steps in "
                     f"{self.seconds:.1f} s: {self._stop_line()}")
        if self.validation is not None:
            lines.append(self.validation.line())
        for j, steps in enumerate(self.preprocessing):
            lines += [f"pre-processing (record {j}): {step}" for step in steps]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def _stop_line(self) -> str:
        """How the optimiser stopped, never "converged" beside a step limit."""
        if self.converged:
            column = "HAC" if self.trusted_stderr == "hac" else "Gauss-Newton"
            step = (f"; Gauss-Newton step from the end point {self.step_in_stderr:.2g} {column} standard errors"
                    if math.isfinite(self.step_in_stderr) else "")
            return f"converged, stopped at an optimum ({self.message}){step}"
        if self.stopped_at_optimum:
            return f"stopped at an optimum but NOT converged ({self.message})"
        return f"NOT converged: {self.message}"

    def derived(self, function, name: str | None = None):
        """A function of the estimates with its standard errors, by the delta method.

        ``var f ~ g^T C g`` with ``g = grad f`` at the estimates (exact, ``jax.jacfwd``) and
        ``C`` each covariance of the fit (first-order Taylor expansion; Seber & Wild 2003,
        Nonlinear Regression, section 5.1; Taylor 1997, An Introduction to Error Analysis,
        section 3.11). Example: ``result.derived(lambda p: p["law.a"] - p["law.b"])`` for
        a rate-and-state ``a - b``.

        Args:
            function: ``f(p)`` with ``p`` a dict path -> JAX scalar of every fitted
                parameter, returning a scalar or a dict name -> scalar (JAX-traceable).
            name: the quantity's name (scalar functions; default the function's name).

        Returns:
            A :class:`~jaxfriction.DerivedQuantity` (``value``, ``stderr`` (Gauss-Newton),
            ``stderr_hac``, ``gradient``), or a dict name -> DerivedQuantity for a
            dict-valued function. Trust the standard error that :attr:`trusted_stderr`
            names.

        Raises:
            ValueError: ``function`` not callable, reading an unknown path, or returning
                something other than real scalars; ``name`` not a string.
        """
        from .derived import delta_method

        return delta_method(function, self.names, self.params, self.covariance, self.covariance_hac, name)

    def to_dict(self, history=False) -> dict:
        """JSON-ready dict of the report (everything but ``system``, ``problem`` and ``u``;
        the loss history only with ``history=True``)."""
        out = {
            "params": dict(self.params),
            "stderr": dict(self.stderr),
            "stderr_reliable": self.stderr_reliable,
            "names": list(self.names),
            "covariance": np.asarray(self.covariance).tolist(),
            "correlation": np.asarray(self.correlation).tolist(),
            "residual_std": self.residual_std,
            "final_loss": float(self.loss_history[-1]),
            "n_steps": self.n_steps,
            "n_evaluations": self.n_evaluations,
            "converged": self.converged,
            "fits_data": self.fits_data,
            "goodness": dict(self.goodness),
            "identifiability": {k: v for k, v in self.identifiability.items()},
            "search": self.search,
            "aic": self.aic,
            "bic": self.bic,
            "optimizer": self.optimizer,
            "gradient": self.gradient,
            "n_residuals": self.n_residuals,
            "n_variables": self.n_variables,
            "initial_states": [np.asarray(s).tolist() for s in self.initial_states],
            "seconds": self.seconds,
            "message": self.message,
            "warnings": list(self.warnings),
            "stderr_hac": dict(self.stderr_hac),
            "covariance_hac": None if self.covariance_hac is None else np.asarray(self.covariance_hac).tolist(),
            "stderr_hac_reliable": self.stderr_hac_reliable,
            "hac": dict(self.hac),
            "trusted_stderr": self.trusted_stderr,
            "stderr_verdict": self.stderr_verdict,
            "stopped_at_optimum": self.stopped_at_optimum,
            "stop_reason": self.stop_reason,
            "gauss_newton_step": dict(self.gauss_newton_step),
            "step_in_stderr": self.step_in_stderr,
            "optimizer_error_negligible": self.optimizer_error_negligible,
            "at_bounds": list(self.at_bounds),
            "bound_edges": {k: dict(v) for k, v in self.bound_edges.items()},
            "validation": None if self.validation is None else self.validation.to_dict(),
            "preprocessing": [list(steps) for steps in self.preprocessing],
            "constraints": dict(self.constraints),
        }
        if history:
            out["loss_history"] = np.asarray(self.loss_history).tolist()
        return _finite_json(out)


def _finite_json(value):
    """Non-finite floats as None (strict JSON)."""
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_json(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value
