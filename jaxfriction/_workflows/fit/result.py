"""The report of :func:`~jaxfriction.fit`: estimates, Gauss-Newton standard errors, history."""

from __future__ import annotations

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(frozen=True, eq=False)
class FitResult:
    """Report of :func:`fit`.

    Attributes:
        params: dict path -> estimate (the physical parameters only).
        stderr: dict path -> Gauss-Newton standard error.
        covariance: ``(p, p)`` covariance of the estimates, order of ``names``.
        names: the fitted parameter paths.
        residual_std: ``sqrt(RSS / (n_residuals - n_variables))``, the estimated noise
            standard deviation of the (weighted) data residuals (units of q).
        loss_history: ``(n_steps + 1,)`` loss at every iterate (mean squared residual plus
            the weighted continuity defects).
        n_steps: optimiser steps taken (least-squares solvers: accepted steps). converged: the Gauss-Newton step
            from the final point is below 0.1 standard error in every parameter (the
            optimiser's remaining error is statistically negligible) and the loss is finite.
        optimizer: the shortcut's name, ``"optax"``, or the optimistix solver's class name.
            gradient: ``"forward"`` or ``"reverse"``.
        n_residuals: data residuals (positions, plus velocities where measured).
        n_variables: free variables (parameters plus estimated segment initial states).
        initial_states: per record, ``(S, 2 n_dof)`` estimated (or known) segment start
            states (positions, then velocities).
        system: the template system with the estimates set.
        seconds: wall time of the fit. message: why the optimiser stopped.
        problem: the least-squares problem (an equinox module: template system, records,
            parameter transforms) that follow-up workflows reuse (posterior sampling).
        u: ``(n_variables,)`` the optimum in the optimiser's unconstrained variables.
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

    @property
    def correlation(self):
        """Correlation matrix of the estimates, ``(p, p)``."""
        s = np.sqrt(np.diag(self.covariance))
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.covariance / np.outer(s, s)

    def summary(self):
        """A text table: estimate, standard error and relative error per parameter."""
        width = max(12, *(len(n) for n in self.names))
        lines = [f"{'parameter':<{width}} {'estimate':>14} {'stderr':>12} {'rel. stderr':>12}"]
        for name in self.names:
            value, err = self.params[name], self.stderr[name]
            rel = abs(err / value) if value != 0 else math.inf
            lines.append(f"{name:<{width}} {value:>14.6g} {err:>12.3g} {rel:>11.2%}")
        lines.append(
            f"residual std {self.residual_std:.4g} ({self.n_residuals} residuals, {self.n_variables} "
            f"free variables); final loss {self.loss_history[-1]:.4g}"
        )
        lines.append(
            f"{self.optimizer} ({self.gradient}-mode gradients), {self.n_steps} steps in "
            f"{self.seconds:.1f} s: {'converged' if self.converged else 'NOT converged'} ({self.message})"
        )
        return "\n".join(lines)

    def to_dict(self):
        """JSON-ready dict (everything but ``system``)."""
        return {
            "params": dict(self.params),
            "stderr": dict(self.stderr),
            "names": list(self.names),
            "covariance": np.asarray(self.covariance).tolist(),
            "residual_std": self.residual_std,
            "loss_history": np.asarray(self.loss_history).tolist(),
            "final_loss": float(self.loss_history[-1]),
            "n_steps": self.n_steps,
            "converged": self.converged,
            "optimizer": self.optimizer,
            "gradient": self.gradient,
            "n_residuals": self.n_residuals,
            "n_variables": self.n_variables,
            "initial_states": [np.asarray(s).tolist() for s in self.initial_states],
            "seconds": self.seconds,
            "message": self.message,
        }
