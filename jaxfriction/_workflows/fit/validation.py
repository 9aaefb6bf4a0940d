"""Validation of a model on a record it was not fitted to: the simulation error and the field's
figures of merit (RMS, NRMSE, fit %, the EMPS benchmark's relative error).

Every figure compares the measured column ``y`` (``n`` samples) with the model's free-run
simulation ``y_sim`` of the same record (:func:`~jaxfriction.predict`: driven by the record's
own inputs, from its start, no correction by the data), with ``e = y - y_sim`` and
``||.||`` the Euclidean norm over the samples:

- ``rms = ||e|| / sqrt(n)`` (units of the column);
- ``nrmse = ||e|| / ||y - mean(y)||``, the RMS over the column's standard deviation (``ddof
  = 0``): the normalised root-mean-square error of the System Identification Toolbox's
  ``compare`` and ``goodnessOfFit(..., 'NRMSE')`` (MathWorks), the complement of Ljung's fit;
- ``fit_percent = 100 (1 - nrmse)``: Ljung's "fit" (L. Ljung, System Identification: Theory
  for the User, 2nd ed., Prentice Hall 1999, sec. 16.4; MATLAB ``compare``), 100 for a
  perfect simulation, 0 for one no better than the column's mean, negative when worse;
- ``relative_error_percent = 100 ||e|| / ||y||``: the relative error of the simulated signal,
  the EMPS benchmark's figure of merit (A. Janot, M. Gautier, M. Brunot, "Data Set and
  Reference Models of EMPS", Workshop on Nonlinear System Identification Benchmarks 2019,
  eq. 11: ``||q_dm - q_dm_sim|| / ||q_dm||`` for the position, the same for the controller
  force), in percent;
- ``max_abs_error = max |e|`` (units of the column).

A normalisation whose denominator is zero (a constant column for ``nrmse``, an all-zero column
for the relative error) gives NaN.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

#: The figures of merit of one column, in the order :meth:`ValidationReport.table` prints them.
METRICS = ("rms", "nrmse", "fit_percent", "relative_error_percent", "max_abs_error")
#: Figures where a larger value is better (the others: smaller is better).
LARGER_IS_BETTER = ("fit_percent",)
#: The pooled entry of :attr:`ValidationReport.metrics`.
POOLED = "pooled"


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.nan


def error_metrics(measured, simulated) -> dict:
    """The figures of merit of a simulated signal against the measured one.

    Args:
        measured: ``(n,)`` measured values ``y`` (any unit), or several columns pooled as one
            list of ``(n_j,)`` arrays (then ``mean(y)`` is each column's own mean: the pooled
            NRMSE is ``||e|| / sqrt(sum_j ||y_j - mean(y_j)||^2)``).
        simulated: the simulation ``y_sim``, shaped as ``measured``.

    Returns:
        dict: ``rms``, ``nrmse``, ``fit_percent``, ``relative_error_percent``,
            ``max_abs_error`` (formulas in the module docstring: Ljung 1999 sec. 16.4; Janot,
            Gautier & Brunot 2019 eq. 11), ``n`` (values compared), ``std`` (the measured
            values' standard deviation about their column means, ``ddof = 0``).

    Raises:
        ValueError: ``simulated`` shaped unlike ``measured``, or no values.
    """
    ys = [np.asarray(y, dtype=float).ravel() for y in (measured if isinstance(measured, list) else [measured])]
    ss = [np.asarray(s, dtype=float).ravel() for s in (simulated if isinstance(simulated, list) else [simulated])]
    if len(ys) != len(ss) or any(y.shape != s.shape for y, s in zip(ys, ss)):
        raise ValueError(f"simulated must have the shape of measured, got {[s.shape for s in ss]} for "
                         f"{[y.shape for y in ys]}")
    n = sum(y.size for y in ys)
    if n == 0:
        raise ValueError("measured: no values to compare")
    err2 = sum(float(np.sum((y - s) ** 2)) for y, s in zip(ys, ss))
    dev2 = sum(float(np.sum((y - y.mean()) ** 2)) for y in ys)
    norm2 = sum(float(np.sum(y**2)) for y in ys)
    nrmse = _ratio(math.sqrt(err2), math.sqrt(dev2))
    return {
        "rms": math.sqrt(err2 / n),
        "nrmse": nrmse,
        "fit_percent": 100.0 * (1.0 - nrmse),
        "relative_error_percent": 100.0 * _ratio(math.sqrt(err2), math.sqrt(norm2)),
        "max_abs_error": max(float(np.max(np.abs(y - s))) if y.size else 0.0 for y, s in zip(ys, ss)),
        "n": n,
        "std": math.sqrt(dev2 / n),
    }


@dataclasses.dataclass(frozen=True, eq=False)
class ValidationReport:
    """The simulation error of a model on validation record(s) (:func:`validate`).

    Attributes:
        metrics: dict column -> figures of merit (``rms``, ``nrmse``, ``fit_percent``,
            ``relative_error_percent``, ``max_abs_error``, ``n``, ``std``; see
            :func:`validate`), one entry per measured column (``"q"``, ``"v"``, ``"q1"``,
            a channel name; a column measured in several records is pooled over them, each
            record's values about their own mean for ``nrmse``), and
            ``"pooled"``: every measured value of every column and record together.
        rms: the pooled RMS, ``sqrt(mean e^2)`` over every compared value (mixed units when
            the columns differ in units: positions and velocities are compared as the fit's
            misfit compares them, with weight 1).
        records: the names of the validation records.
        n_samples: samples per record.
        predictions: per record, the simulated :class:`~jaxfriction.Measurement`
            (:func:`~jaxfriction.predict`).
        per_record: per record, dict column -> figures of merit.
        data: the validation records (:class:`~jaxfriction.Measurement`).
    """

    metrics: dict
    rms: float
    records: tuple = ()
    n_samples: tuple = ()
    predictions: tuple = ()
    per_record: tuple = ()
    data: tuple = ()

    @property
    def fit_percent(self) -> float:
        """The pooled fit % (Ljung's fit)."""
        return self.metrics[POOLED]["fit_percent"]

    def metric(self, name: str) -> float:
        """One figure of merit: ``"rms"`` (pooled), ``"nrmse"``, ``"fit_percent"``, ... of the
        pooled entry, or ``"<column>.<figure>"`` (``"q.rms"``, ``"v.fit_percent"``).

        Raises:
            ValueError: an unknown column or figure (the message lists them).
        """
        column, _, figure = name.rpartition(".")
        column = column or POOLED
        if column not in self.metrics or figure not in METRICS:
            raise ValueError(f"rank_by must be one of {list(METRICS)} or '<column>.<figure>' with a column of "
                             f"{[c for c in self.metrics if c != POOLED]}, got {name!r}")
        return self.metrics[column][figure]

    def table(self) -> str:
        """The figures of merit as a text table, one row per column and the pooled row."""
        width = max(8, *(len(c) for c in self.metrics))
        lines = [f"{'column':<{width}} {'RMS':>11} {'NRMSE':>8} {'fit %':>8} {'rel. err %':>11} {'max |err|':>11} "
                 f"{'samples':>8}"]
        for column, m in self.metrics.items():
            lines.append(f"{column:<{width}} {m['rms']:>11.4g} {m['nrmse']:>8.4g} {m['fit_percent']:>8.2f} "
                         f"{m['relative_error_percent']:>11.4g} {m['max_abs_error']:>11.4g} {m['n']:>8d}")
        return "\n".join(lines)

    def summary(self) -> str:
        """A header naming the records and the figures' formulas, then :meth:`table`."""
        names = ", ".join(self.records) or "the validation record"
        head = (f"validation on {names} ({sum(self.n_samples)} samples), simulation error "
                f"(NRMSE = RMS / std, fit % = 100 (1 - NRMSE), rel. err = ||e|| / ||y||):")
        return head + "\n" + self.table()

    def line(self) -> str:
        """The one-line digest of :meth:`FitResult.summary`: the RMS and fit % per column."""
        names = ", ".join(self.records) or "the validation record"
        cols = [c for c in self.metrics if c != POOLED]
        parts = [f"{c} RMS {self.metrics[c]['rms']:.4g}, fit {self.metrics[c]['fit_percent']:.1f} %" for c in cols]
        if len(cols) > 1:
            parts.append(f"pooled RMS {self.rms:.4g}")
        return f"validation on {names}: " + "; ".join(parts)

    def to_dict(self) -> dict:
        """JSON-ready: the metrics (non-finite values as None), the records and their sizes;
        not the predictions."""
        from .result import _finite_json

        return _finite_json({"metrics": {c: dict(m) for c, m in self.metrics.items()}, "rms": self.rms,
                             "records": list(self.records), "n_samples": list(self.n_samples),
                             "per_record": [{c: dict(m) for c, m in r.items()} for r in self.per_record]})


def _input_paths(model) -> set:
    """The input paths that drove the records a :class:`~jaxfriction.FitResult` was fitted to."""
    paths: set[str] = set()
    for rec in getattr(getattr(model, "problem", None), "records", ()) or ():
        paths.update(getattr(rec, "input_paths", ()) or ())
    return paths


def _fit_step(model) -> float | None:
    """The RK4 step a :class:`~jaxfriction.FitResult` was fitted with (the finest over its
    records), None for other models or an adaptive fit."""
    records = getattr(getattr(model, "problem", None), "records", ()) or ()
    if not records or any(getattr(rec, "solver", None) is not None for rec in records):
        return None
    steps = [getattr(rec, "h", None) for rec in records]
    return min(float(h) for h in steps) if all(h is not None for h in steps) else None  # type: ignore[arg-type]  # all steps are set (checked)


def check_validation(model, record, *, outputs=None, inputs=(), what: str = "validation") -> list:
    """The validation record(s) checked against ``model`` before any fit or simulation.

    Args:
        model: a system, a :class:`~jaxfriction.Template` or a :class:`~jaxfriction.FitResult`.
        record: a :class:`~jaxfriction.Measurement` or a list of them.
        outputs: user channel functions, as in :func:`~jaxfriction.fit`.
        inputs: the input paths of the records the model is (or will be) fitted to: each
            validation record must carry them too (without them the model would run on the
            template's placeholder drive).
        what: the argument's name in messages.

    Returns:
        The records as a list.

    Raises:
        ValueError: naming ``what``: not a Measurement or a list of them, a channel the model
            cannot compute, a degree of freedom it lacks, an input path that is not one of
            its drives, or inputs missing.
    """
    from .outputs import check_outputs
    from .setup import check_data

    system = getattr(model, "system", model)
    records, _ = check_data(record, system.n_dof, None, system.n_internal, system, check_outputs(outputs),
                            what=what)
    needed = set(inputs) | _input_paths(model)
    for i, r in enumerate(records):
        missing = sorted(needed - set(r.inputs or ()))
        if missing:
            raise ValueError(f"{what}[{i}] ({r.name or 'record'}) has no inputs for {missing}, which drove the "
                             f"records the model is fitted to; give its measured inputs "
                             f"(Measurement(inputs={{{missing[0]!r}: ...}}))")
    return records


def validate(model, record, *, dt: float | None = None, outputs: dict | None = None) -> ValidationReport:
    """Simulate ``model`` over validation record(s) and measure the simulation error.

    The model runs free over each record (:func:`~jaxfriction.predict`: driven by the
    record's own measured inputs, from the record's start state, its known ``y0`` or one
    estimated from its first samples), and every measured column is compared with its
    simulation: ``rms = ||e|| / sqrt(n)``, ``nrmse = ||e|| / ||y - mean(y)||`` (RMS over the
    column's standard deviation), ``fit_percent = 100 (1 - nrmse)`` (Ljung's fit: L. Ljung,
    System Identification, 2nd ed. 1999, sec. 16.4; MATLAB ``compare``),
    ``relative_error_percent = 100 ||e|| / ||y||`` (the EMPS benchmark's relative error of a
    simulated signal: Janot, Gautier & Brunot 2019, eq. 11) and ``max_abs_error``, with ``e =
    y - y_sim`` and ``||.||`` the Euclidean norm over the samples.

    Args:
        model: a system, a :class:`~jaxfriction.Template` or a :class:`~jaxfriction.FitResult`
            (its fitted system).
        record: a :class:`~jaxfriction.Measurement` or a list of them: the validation
            record(s), each with its measured inputs where the model is driven by them.
        dt: largest RK4 step (default: a FitResult's own fitted step, else as in
            :func:`~jaxfriction.predict`).
        outputs: user channel functions, as in :func:`~jaxfriction.fit`.

    Returns:
        A :class:`ValidationReport`: per column (pooled over the records) and pooled over
            every column, the figures above; the predictions.

    Raises:
        ValueError: ``record`` not a Measurement or a list of them, or a record the model
            cannot simulate (a channel it cannot compute, a degree of freedom it lacks, an
            input path that is not one of its drives, inputs missing where the fitted
            model's records had them), naming ``record``; whatever
            :func:`~jaxfriction.predict` raises for ``dt`` or ``outputs``.
        RuntimeError: the simulation of a record is not finite.
    """
    from .predict import predict

    records = check_validation(model, record, outputs=outputs, what="record")
    if dt is None:
        dt = _fit_step(model)
    return report_from(records, [predict(model, r, dt=dt, outputs=outputs) for r in records])


def report_from(records, predictions) -> ValidationReport:
    """The :class:`ValidationReport` of simulations ``predictions`` of ``records`` (two lists of
    :class:`~jaxfriction.Measurement` with the same columns, pairwise): per column pooled over
    the records (each about its own mean), and every column pooled."""
    measured: dict[str, list[np.ndarray]] = {}
    simulated: dict[str, list[np.ndarray]] = {}
    per_record = []
    for r, p in zip(records, predictions):
        ys, ss = r.columns(), p.columns()
        per_record.append({c: error_metrics(ys[c], ss[c]) for c in ys})
        for c in ys:
            measured.setdefault(c, []).append(ys[c])
            simulated.setdefault(c, []).append(ss[c])
    metrics = {c: error_metrics(measured[c], simulated[c]) for c in measured}
    metrics[POOLED] = error_metrics([y for c in measured for y in measured[c]],
                                    [s for c in simulated for s in simulated[c]])
    return ValidationReport(metrics=metrics, rms=metrics[POOLED]["rms"],
                            records=tuple(r.name or f"record {i}" for i, r in enumerate(records)),
                            n_samples=tuple(len(r) for r in records), predictions=tuple(predictions),
                            per_record=tuple(per_record), data=tuple(records))
