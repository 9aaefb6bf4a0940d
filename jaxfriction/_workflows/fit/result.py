"""The report of :func:`~jaxfriction.fit`: estimates, standard errors and what they can be trusted for."""

from __future__ import annotations

import dataclasses
import math

import numpy as np


class FitWarning(UserWarning):
    """Raised (as a warning) by :func:`~jaxfriction.fit` when its result cannot be taken at face
    value: not converged, a model that does not explain the data, a parameter without
    sensitivity, ``J^T J`` singular. The same text is in ``FitResult.warnings``."""


@dataclasses.dataclass(frozen=True, eq=False)
class FitResult:
    """Report of :func:`fit`.

    Attributes:
        params: dict path -> estimate (the physical parameters only).
        stderr: dict path -> Gauss-Newton standard error (NaN where the variance is not
            positive). Valid only when ``stderr_reliable``.
        covariance: ``(p, p)`` covariance of the estimates, order of ``names``.
        names: the fitted parameter paths.
        residual_std: ``sqrt(RSS / (n_residuals - n_variables))``, the estimated noise
            standard deviation of the (weighted) data residuals (units of q).
        loss_history: ``(n_steps + 1,)`` loss of the local optimiser at every iterate (mean
            squared residual plus the weighted continuity defects).
        n_steps: optimiser steps taken (least-squares solvers: accepted steps).
        converged: the Gauss-Newton step from the final point is below 0.1 standard error in
            every parameter (the optimiser's remaining error is statistically negligible),
            the loss is finite and the Jacobian is finite and not exploding.
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
        stderr_reliable: the standard errors mean what they say: converged, every
            parameter has a sensitivity, and the model explains the data (``fits_data``).
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
            each ``params``, ``loss``, ``count``), or None for a local fit.
        n_evaluations: misfit evaluations (design points plus optimiser steps; a step of a
            least-squares solver evaluates the residuals and their Jacobian).
        warnings: the :class:`FitWarning` texts raised by the fit.
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
    problem: object = None
    u: np.ndarray | None = None
    stderr_reliable: bool = False
    goodness: dict = dataclasses.field(default_factory=dict)
    identifiability: dict = dataclasses.field(default_factory=dict)
    search: dict | None = None
    n_evaluations: int = 0
    warnings: tuple = ()

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
        """A text report: estimates and standard errors (in brackets when unreliable),
        convergence, goodness of fit, identifiability and the global search's optima."""
        width = max(12, *(len(n) for n in self.names))
        lines = [f"{'parameter':<{width}} {'estimate':>14} {'stderr':>12} {'rel. stderr':>12}"]
        for name in self.names:
            value, err = self.params[name], self.stderr[name]
            rel = abs(err / value) if value != 0 else math.inf
            e, r = f"{err:.3g}", f"{rel:.2%}"
            if not self.stderr_reliable:
                e, r = f"[{e}]", f"[{r}]"
            lines.append(f"{name:<{width}} {value:>14.6g} {e:>12} {r:>12}")
        if not self.stderr_reliable:
            lines.append("standard errors in [brackets] are unreliable (see the warnings below)")
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
        lines.append(
            f"{self.optimizer} ({self.gradient}-mode gradients), {self.n_steps} steps in "
            f"{self.seconds:.1f} s: {'converged' if self.converged else 'NOT converged'} ({self.message})"
        )
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

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
    return value
