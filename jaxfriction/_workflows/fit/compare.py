"""Model comparison: several candidate systems or laws fitted to one record, side by side."""

from __future__ import annotations

import dataclasses
import warnings

from .fit import fit
from .result import FitWarning


@dataclasses.dataclass(frozen=True, eq=False)
class ModelComparison:
    """Result of :func:`compare_models`.

    Attributes:
        results: dict model name -> :class:`FitResult`, in the order given.
        best: the name of the model with the lowest AIC among those that converged (None
            if none converged).
    """

    results: dict
    best: str | None

    def rows(self) -> list:
        """One dict per model: ``model``, ``n_params``, ``residual_std``, ``noise_ratio``,
        ``aic``, ``bic``, ``delta_aic`` (to the lowest), ``converged``, ``fits_data``,
        ``lack_of_fit``."""
        aic_min = min(r.aic for r in self.results.values())
        return [{"model": name, "n_params": len(r.names), "residual_std": r.residual_std,
                 "noise_ratio": r.goodness.get("noise_ratio"), "aic": r.aic, "bic": r.bic,
                 "delta_aic": r.aic - aic_min, "converged": r.converged, "fits_data": r.fits_data,
                 "lack_of_fit": r.goodness.get("lack_of_fit", "")} for name, r in self.results.items()]

    def table(self) -> str:
        """The comparison as a text table, lowest AIC first."""
        rows = sorted(self.rows(), key=lambda r: r["aic"])
        width = max(8, *(len(r["model"]) for r in rows))
        lines = [f"{'model':<{width}} {'params':>6} {'resid. std':>11} {'/ noise':>8} {'AIC':>11} {'dAIC':>9} "
                 f"{'BIC':>11}  verdict"]
        for r in rows:
            verdict = ("fits" if r["fits_data"] else "DOES NOT FIT") + ("" if r["converged"] else ", not converged")
            lines.append(f"{r['model']:<{width}} {r['n_params']:>6} {r['residual_std']:>11.4g} {r['noise_ratio']:>8.3g} "
                         f"{r['aic']:>11.1f} {r['delta_aic']:>9.1f} {r['bic']:>11.1f}  {verdict}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready: the rows and every model's report."""
        return {"best": self.best, "rows": self.rows(),
                "results": {name: r.to_dict() for name, r in self.results.items()}}


def compare_models(models, data, **fit_options) -> ModelComparison:
    """Fit several candidate models to the same record(s) and compare them.

    Args:
        models: dict name -> ``(system, initial, bounds)``: each a :func:`fit` problem
            (``initial`` None for a global search over ``bounds``); the systems may differ
            in their law, their structure or the parameters estimated.
        data: a :class:`~jaxfriction.Measurement` or a list of them, shared by all models.
        **fit_options: passed to every :func:`fit` (``dt``, ``noise``, ``search``, ...).

    Returns:
        A :class:`ModelComparison`: per model its residual std, AIC ``n ln(RSS / n) + 2 k``
            and BIC ``n ln(RSS / n) + k ln n`` (Akaike 1974, Schwarz 1978; ``k`` free
            variables), the lack-of-fit verdict and the number of parameters. The fits'
            own :class:`FitWarning` are collected in each report, not raised again.

    Raises:
        ValueError: ``models`` empty or not ``name -> (system, initial, bounds)``, and
            whatever :func:`fit` raises, prefixed with the model's name.
    """
    if not isinstance(models, dict) or not models:
        raise ValueError(f"models must be a non-empty dict name -> (system, initial, bounds), got {models!r}")
    results = {}
    for name, spec in models.items():
        if not isinstance(spec, (tuple, list)) or len(spec) != 3:
            raise ValueError(f"models[{name!r}] must be (system, initial, bounds), got {spec!r}")
        system, initial, bounds = spec
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)
            try:
                results[name] = fit(system, initial, data, bounds=bounds, **fit_options)
            except ValueError as exc:
                raise ValueError(f"models[{name!r}]: {exc}") from None
    converged = {n: r for n, r in results.items() if r.converged}
    best = min(converged, key=lambda n: converged[n].aic) if converged else None
    return ModelComparison(results=results, best=best)
