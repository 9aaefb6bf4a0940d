"""Model comparison: several candidate systems or laws fitted to one record, side by side, ranked
by their simulation error on held-out data (a validation record, or K-fold cross-validation
over contiguous windows) or, without held-out data, by AIC."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from ..._checks import check_int
from .fit import fit
from .measurement import Measurement
from .result import FitWarning
from .validation import LARGER_IS_BETTER, METRICS, check_validation, report_from, validate

#: Lag-1 autocorrelation of the fit residuals above which the comparison notes that AIC and BIC
#: (which assume independent residuals) are not to be trusted for ranking.
CORRELATED_RESIDUALS = 0.5
#: The note printed under the table when some model's residuals are correlated.
CORRELATED_NOTE = ("information criteria assume independent residuals; rank by validation (the residuals of "
                   "{models} have lag-1 autocorrelation above {limit}: model error or drift, not white noise)")


@dataclasses.dataclass(frozen=True, eq=False)
class ModelComparison:
    """Result of :func:`compare_models`.

    Attributes:
        results: dict model name -> :class:`FitResult` (fitted to all of ``data``), in the
            order given; models whose fit failed are in ``failures`` instead.
        best: without held-out data, the name of the model with the lowest AIC among those
            that converged (None if none converged); with a validation record or folds, the
            model with the best validation figure (``ranked_by``) among those whose
            validation simulation is finite, converged or not (None if none is).
        ranked_by: ``"aic"``, or the validation figure ranked on (``"rms"``, ``"nrmse"``,
            ``"fit_percent"``, ``"relative_error_percent"``, ``"max_abs_error"``, or
            ``"<column>.<figure>"``).
        validation: dict model name -> :class:`ValidationReport` on the validation
            record(s) (None for a model whose validation simulation failed); with folds, the
            held-out windows pooled (every window's simulation against its data); empty
            without held-out data.
        scores: dict model name -> the ranking value: the ``ranked_by`` figure on the
            validation record(s), with folds its mean over the held-out windows (inf where
            the simulation was not finite).
        folds: the number of cross-validation folds, or None.
        fold_reports: with folds, dict model name -> list of per-window
            :class:`ValidationReport` (None for a window whose fit or simulation failed).
        failures: dict model name -> why it is not ranked (its fit failed outright, or its
            validation simulation is not finite).
        notes: lines printed under the table (correlated residuals).
    """

    results: dict
    best: str | None
    ranked_by: str = "aic"
    validation: dict = dataclasses.field(default_factory=dict)
    scores: dict = dataclasses.field(default_factory=dict)
    folds: int | None = None
    fold_reports: dict = dataclasses.field(default_factory=dict)
    failures: dict = dataclasses.field(default_factory=dict)
    notes: tuple = ()

    @property
    def validated(self) -> bool:
        """Ranked by held-out simulation error (a validation record or folds)."""
        return self.ranked_by != "aic"

    def rows(self) -> list:
        """One dict per model: ``model``, ``n_params``, ``residual_std``, ``noise_ratio``,
        ``aic``, ``bic``, ``delta_aic`` (to the lowest), ``converged``, ``fits_data``,
        ``lack_of_fit``, ``lag1_autocorrelation``; with held-out data also ``score`` (the
        ranking value), ``val_rms``, ``val_nrmse``, ``val_fit_percent``,
        ``val_relative_error_percent`` (pooled; NaN where the simulation failed); and
        ``failed`` (the reason, or ``""``). A model whose fit failed has NaN figures."""
        aics = [r.aic for r in self.results.values() if math.isfinite(r.aic)]
        aic_min = min(aics) if aics else math.nan
        rows = []
        for name, r in self.results.items():
            row = {"model": name, "n_params": len(r.names), "residual_std": r.residual_std,
                   "noise_ratio": r.goodness.get("noise_ratio"), "aic": r.aic, "bic": r.bic,
                   "delta_aic": r.aic - aic_min, "converged": r.converged, "fits_data": r.fits_data,
                   "lack_of_fit": r.goodness.get("lack_of_fit", ""),
                   "lag1_autocorrelation": r.goodness.get("lag1_autocorrelation", math.nan),
                   "failed": self.failures.get(name, "")}
            if self.validated:
                row.update(_validation_columns(self.validation.get(name), self.scores.get(name, math.inf)))
            rows.append(row)
        for name, reason in self.failures.items():
            if name not in self.results:
                row = {"model": name, "n_params": 0, "residual_std": math.nan, "noise_ratio": math.nan,
                       "aic": math.nan, "bic": math.nan, "delta_aic": math.nan, "converged": False,
                       "fits_data": False, "lack_of_fit": "", "lag1_autocorrelation": math.nan, "failed": reason}
                if self.validated:
                    row.update(_validation_columns(None, math.inf))
                rows.append(row)
        return rows

    def ranking(self) -> list:
        """The model names, best first: by ``scores`` (validation), else by AIC; failed
        models last."""
        rows = self.rows()
        if self.validated:
            sign = -1.0 if self.ranked_by.rpartition(".")[2] in LARGER_IS_BETTER else 1.0
            key = (lambda r: (bool(r["failed"]), _finite_or_inf(sign * r["score"])))
        else:
            key = (lambda r: (bool(r["failed"]), _finite_or_inf(r["aic"])))
        return [r["model"] for r in sorted(rows, key=key)]

    def table(self) -> str:
        """The comparison as a text table, best first (lowest validation error, else lowest
        AIC), then the notes."""
        order = {name: i for i, name in enumerate(self.ranking())}
        rows = sorted(self.rows(), key=lambda r: order[r["model"]])
        width = max(8, *(len(r["model"]) for r in rows))
        head = (f"{'model':<{width}} {'params':>6} {'resid. std':>11} {'/ noise':>8} {'AIC':>11} {'dAIC':>9} "
                f"{'BIC':>11}")
        if self.validated:
            label = ("val. " + self.ranked_by) if self.folds is None else f"{self.folds}-fold {self.ranked_by}"
            head += f" {'lag1':>6} {label:>16} {'val. fit %':>10}"
        lines = [head + "  verdict"]
        for r in rows:
            if r["failed"] and not math.isfinite(r["aic"]):
                lines.append(f"{r['model']:<{width}} {'-':>6} {'-':>11} {'-':>8} {'-':>11} {'-':>9} {'-':>11}"
                             + (f" {'-':>6} {'-':>16} {'-':>10}" if self.validated else "")
                             + f"  FAILED: {r['failed']}")
                continue
            verdict = ("fits" if r["fits_data"] else "DOES NOT FIT") + ("" if r["converged"] else ", not converged")
            if r["failed"]:
                verdict += f"; NOT RANKED: {r['failed']}"
            noise = r["noise_ratio"] if r["noise_ratio"] is not None else math.nan
            line = (f"{r['model']:<{width}} {r['n_params']:>6} {r['residual_std']:>11.4g} {noise:>8.3g} "
                    f"{r['aic']:>11.1f} {r['delta_aic']:>9.1f} {r['bic']:>11.1f}")
            if self.validated:
                line += f" {r['lag1_autocorrelation']:>6.2f} {r['score']:>16.4g} {r['val_fit_percent']:>10.2f}"
            lines.append(line + "  " + verdict)
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready: the ranking, the rows, the notes, every model's report and validation."""
        from .result import _finite_json

        out = {"best": self.best, "ranked_by": self.ranked_by, "folds": self.folds, "ranking": self.ranking(),
               "rows": self.rows(), "notes": list(self.notes), "failures": dict(self.failures),
               "results": {name: r.to_dict() for name, r in self.results.items()}}
        if self.validated:
            out["validation"] = {name: None if v is None else v.to_dict() for name, v in self.validation.items()}
            out["scores"] = dict(self.scores)
        if self.fold_reports:
            out["fold_reports"] = {name: [None if v is None else v.to_dict() for v in reports]
                                   for name, reports in self.fold_reports.items()}
        return _finite_json(out)


def _finite_or_inf(x) -> float:
    return x if x is not None and math.isfinite(x) else math.inf


def _validation_columns(report, score) -> dict:
    pooled = report.metrics["pooled"] if report is not None else {}
    return {"score": score, **{f"val_{k}": pooled.get(k, math.nan) for k in ("rms", "nrmse", "fit_percent",
                                                                              "relative_error_percent")}}


def _check_rank_by(rank_by) -> str:
    if not isinstance(rank_by, str):
        raise ValueError(f"rank_by must be a string such as 'rms' or 'q.fit_percent', got {rank_by!r}")
    if rank_by.rpartition(".")[2] not in METRICS:
        raise ValueError(f"rank_by must be one of {list(METRICS)} or '<column>.<figure>' (e.g. 'q.rms'), "
                         f"got {rank_by!r}")
    return rank_by


def _as_records(name, value) -> list:
    records = [value] if isinstance(value, Measurement) else value
    if not isinstance(records, (list, tuple)) or not records or not all(isinstance(r, Measurement) for r in records):
        raise ValueError(f"{name} must be a Measurement or a non-empty list of them, got {type(value).__name__}")
    return list(records)


def fold_windows(record: Measurement, folds: int) -> list:
    """``folds`` contiguous windows of ``record`` of equal length, each a
    :class:`~jaxfriction.Measurement` (:meth:`~jaxfriction.Measurement.window`).

    The last ``n mod folds`` samples are left out so that every window has ``n // folds``
    samples, and every window estimates its start state (a known ``y0`` of the record is
    dropped from the first): each fold is then treated alike, and one compiled fit and one
    compiled simulation serve every fold.

    Raises:
        ValueError: windows of fewer than 3 samples (naming ``folds``).
    """
    size = len(record) // folds
    if size < 3:
        raise ValueError(f"folds = {folds} leaves windows of {size} samples of {record.name or 'the record'} "
                         f"({len(record)} samples); at least 3 each are needed")
    windows = []
    for k in range(folds):
        w = record.window(float(record.t[k * size]), float(record.t[(k + 1) * size - 1]))
        windows.append(dataclasses.replace(w, y0=None, name=f"{record.name or 'record'}[fold {k + 1}/{folds}]"))
    return windows


def _fit(name, system, initial, bounds, data, fit_options):
    """``(FitResult, None)`` or ``(None, reason)`` when the fit fails outright: a non-finite
    loss at the start or at the end, or an error other than a bad argument (ValueError
    naming the model otherwise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)
        try:
            result = fit(system, initial, data, bounds=bounds, **fit_options)
        except ValueError as exc:
            if "is not finite" in str(exc) and str(exc).startswith("initial: the loss"):
                return None, f"fit failed: {exc}"
            raise ValueError(f"models[{name!r}]: {exc}") from None
        except (RuntimeError, FloatingPointError, ArithmeticError) as exc:
            return None, f"fit failed: {type(exc).__name__}: {exc}"
    if not (math.isfinite(float(result.loss_history[-1])) and all(math.isfinite(v) for v in result.params.values())):
        return result, "fit failed: the final loss or an estimate is not finite"
    return result, None


def _validate(result, records, fit_options):
    """``(ValidationReport, None)`` or ``(None, reason)`` when the simulation is not finite."""
    try:
        return validate(result, records, dt=fit_options.get("dt"), outputs=fit_options.get("outputs")), None
    except RuntimeError as exc:
        return None, f"validation simulation failed: {exc}"


def compare_models(models, data, *, validation=None, folds: int | None = None, rank_by: str = "rms",
                   **fit_options) -> ModelComparison:
    """Fit several candidate models to the same record(s) and compare them, by their
    simulation error on held-out data where there is some.

    With a ``validation`` record (or a list), every model is fitted to ``data`` and simulated
    over the validation record(s) (:func:`~jaxfriction.validate`: driven by their own inputs,
    from their start), and the models are ranked by the validation figure ``rank_by``. With
    ``folds = K`` (no validation record), K-fold cross-validation over contiguous windows: each
    record of ``data`` is cut into K contiguous windows of equal length (:func:`fold_windows`:
    each estimates its start state; the last ``n mod K`` samples are left out); for each k the model is fitted
    to the other K - 1 windows of every record (a list of records, each with its own start
    state) and simulated over window k; the ranking value is the mean of the K held-out
    figures (Stone 1974, "Cross-validatory choice and assessment of statistical predictions",
    J. R. Stat. Soc. B 36; contiguous blocks, not random samples, because neighbouring
    samples of a trajectory are correlated: Arlot & Celisse 2010, Statist. Surv. 4, sec. 8.1).
    Without either, the models are ranked by AIC (as before).

    AIC and BIC stay as columns. Both assume independent residuals; when a model's fit
    residuals have a lag-1 autocorrelation above 0.5 (``goodness["lag1_autocorrelation"]``,
    the signature of model error or drift under simulation-error fitting) the table adds a
    note saying so: rank by validation.

    Args:
        models: dict name -> ``(system, initial, bounds)``: each a :func:`fit` problem
            (``initial`` None for a global search over ``bounds``); the systems may differ
            in their law, their structure or the parameters estimated.
        data: a :class:`~jaxfriction.Measurement` or a list of them, shared by all models.
        validation: None, or a :class:`~jaxfriction.Measurement` or list of them that no
            model is fitted to (each with its measured inputs where the models are driven).
        folds: None, or an integer ``K >= 2`` (without ``validation``): K-fold
            cross-validation over contiguous windows of each record of ``data``.
        rank_by: the validation figure to rank on (default ``"rms"``, the pooled RMS of the
            simulation error): ``"rms"``, ``"nrmse"``, ``"fit_percent"`` (larger is better),
            ``"relative_error_percent"``, ``"max_abs_error"``, pooled over the columns, or one
            column's: ``"q.rms"``, ``"v.fit_percent"``, ``"friction_force.nrmse"``. Ignored
            without held-out data.
        **fit_options: passed to every :func:`fit` (``dt``, ``noise``, ``search``, ...;
            ``dt`` and ``outputs`` also to the validation simulation).

    Returns:
        A :class:`ModelComparison`: per model its residual std, AIC ``n ln(RSS / n) + 2 k``
            and BIC ``n ln(RSS / n) + k ln n`` (Akaike 1974, Schwarz 1978; ``k`` free
            variables), the lack-of-fit verdict and the number of parameters; with
            held-out data the validation reports, the ranking values and ``best``, the
            lowest validation error among the models whose simulation is finite (converged
            or not: under model error the convergence test is not the question). A model
            whose fit fails outright (a non-finite loss) or whose validation simulation is
            not finite is not ranked; the reason is in ``failures`` and in the table. The
            fits' own :class:`FitWarning` are collected in each report, not raised again.

    Raises:
        ValueError: ``models`` empty or not ``name -> (system, initial, bounds)``; ``validation``
            not a Measurement or list of them, or one a model cannot simulate (another
            system's record: a channel or degree of freedom it lacks, missing inputs),
            prefixed with the model's name; ``folds`` not an integer >= 2, given with
            ``validation``, or leaving windows of fewer than 3 samples; ``rank_by`` unknown
            (a column no validation record measures included); whatever :func:`fit` raises
            for bad arguments, prefixed with the model's name.
    """
    if not isinstance(models, dict) or not models:
        raise ValueError(f"models must be a non-empty dict name -> (system, initial, bounds), got {models!r}")
    for name, spec in models.items():
        if not isinstance(spec, (tuple, list)) or len(spec) != 3:
            raise ValueError(f"models[{name!r}] must be (system, initial, bounds), got {spec!r}")
    held_out = validation is not None or folds is not None
    if validation is not None:
        validation = _as_records("validation", validation)
        if folds is not None:
            raise ValueError("folds: give a validation record or folds, not both")
    if folds is not None:
        folds = check_int("folds", folds, minimum=2)
    if held_out:
        rank_by = _check_rank_by(rank_by)
        records = _as_records("data", data)
        windows = [fold_windows(r, folds) for r in records] if folds is not None else None
        column = rank_by.rpartition(".")[0]
        measured = {c for r in (validation or records) for c in r.columns()}
        if column and column not in measured:
            raise ValueError(f"rank_by: column {column!r} is not measured by the "
                             f"{'validation' if validation else 'data'} record(s) (they measure {sorted(measured)})")
    if validation is not None:  # before any fit: another system's record is refused at once
        inputs = {p for r in records for p in (r.inputs or ())}
        for name, (system, _, _) in models.items():
            try:
                check_validation(system, validation, outputs=fit_options.get("outputs"), inputs=inputs)
            except ValueError as exc:
                raise ValueError(f"models[{name!r}]: {exc}") from None

    results, failures, reports, scores, fold_reports = {}, {}, {}, {}, {}
    for name, (system, initial, bounds) in models.items():
        result, failed = _fit(name, system, initial, bounds, data, fit_options)
        if result is not None:
            results[name] = result
        if failed is not None:
            failures[name] = failed
            continue
        if not held_out:
            continue
        if validation is not None:
            report, failed = _validate(result, validation, fit_options)
            reports[name] = report
            if failed is not None:
                failures[name] = failed
                scores[name] = math.inf
                continue
            scores[name] = report.metric(rank_by)
        else:
            scores[name], reports[name], fold_reports[name], failed = _cross_validate(
                name, system, initial, bounds, windows, folds, rank_by, fit_options)
            if failed is not None:
                failures[name] = failed
    notes = _notes(results, held_out)
    if held_out:
        sign = -1.0 if rank_by.rpartition(".")[2] in LARGER_IS_BETTER else 1.0
        ranked = {n: s for n, s in scores.items() if n not in failures and math.isfinite(s)}
        best = min(ranked, key=lambda n: sign * ranked[n]) if ranked else None
        return ModelComparison(results=results, best=best, ranked_by=rank_by, validation=reports, scores=scores,
                               folds=folds, fold_reports=fold_reports, failures=failures, notes=notes)
    converged = {n: r for n, r in results.items() if r.converged and n not in failures}
    best = min(converged, key=lambda n: converged[n].aic) if converged else None
    return ModelComparison(results=results, best=best, failures=failures, notes=notes)


def _cross_validate(name, system, initial, bounds, windows, folds, rank_by, fit_options):
    """K-fold over contiguous windows: ``(mean held-out figure, pooled report, per-fold
    reports, failure reason or None)``."""
    per_fold, values, reasons = [], [], []
    for k in range(folds):
        train = [w for ws in windows for j, w in enumerate(ws) if j != k]
        held = [ws[k] for ws in windows]
        result, failed = _fit(name, system, initial, bounds, train, fit_options)
        if failed is None:
            try:
                report, failed = _validate(result, held, fit_options)
            except ValueError as exc:
                raise ValueError(f"models[{name!r}]: fold {k + 1}: {exc}") from None
        if failed is not None:
            per_fold.append(None)
            reasons.append(f"fold {k + 1}: {failed}")
            continue
        per_fold.append(report)
        values.append(report.metric(rank_by))
    if reasons:
        return math.inf, None, per_fold, "; ".join(reasons)
    pooled = report_from([d for rep in per_fold for d in rep.data],
                         [p for rep in per_fold for p in rep.predictions])
    return float(np.mean(values)), pooled, per_fold, None


def _notes(results, held_out) -> tuple:
    correlated = [n for n, r in results.items()
                  if abs(r.goodness.get("lag1_autocorrelation", 0.0) or 0.0) > CORRELATED_RESIDUALS]
    if not correlated:
        return ()
    note = CORRELATED_NOTE.format(models=", ".join(correlated), limit=CORRELATED_RESIDUALS)
    if not held_out:
        note += "; give compare_models a validation record (validation=...) or folds=K"
    return (note,)
