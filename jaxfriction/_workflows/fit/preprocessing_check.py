"""Does a pre-processing choice move a fitted quantity by more than its standard error?

The same model is fitted to each variant of a record (raw, detrended in slip, detrended in
time, offsets removed...), and a quantity of the estimates (``a - b`` of a rate-and-state
fit) is computed with its delta-method standard error in each
(:meth:`FitResult.derived <jaxfriction.FitResult.derived>`). Each fit's standard error
measures the noise given that variant; none measures the choice between variants. When the
spread of the quantity over the variants exceeds the largest standard error, the data do not
determine the quantity beyond that choice, and the report says so (and a
:class:`~jaxfriction.FitWarning` is raised); when the variants disagree on its sign, the sign
is not determined either.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable

import numpy as np

from ..._checks import check_real
from .measurement import Measurement
from .result import FitResult, FitWarning


@dataclasses.dataclass(frozen=True)
class PreprocessingSensitivity:
    """A quantity fitted under several pre-processing variants of one record
    (:func:`~jaxfriction.preprocessing_sensitivity`).

    Attributes:
        name: the quantity's name.
        values: dict variant -> the quantity's estimate (units of the quantity).
        stderr: dict variant -> its standard error, the column the fit trusts (HAC where
            :attr:`FitResult.trusted_stderr <jaxfriction.FitResult.trusted_stderr>` says
            so, else Gauss-Newton; the other where that one is NaN).
        results: dict variant -> the :class:`~jaxfriction.FitResult`.
        preprocessing: dict variant -> the record's ``preprocessing`` lines.
        spread: ``max(values) - min(values)``.
        spread_in_stderr: ``spread`` over the largest standard error (inf where that is 0
            or NaN).
        outweighs: ``spread_in_stderr > threshold``: the pre-processing choice moves the
            quantity by more than the noise does.
        sign_determined: every variant gives the same sign, each at least 2 standard errors
            from 0.
        message: one sentence saying the above (empty when nothing is flagged).
    """

    name: str
    values: dict
    stderr: dict
    results: dict
    preprocessing: dict
    spread: float
    spread_in_stderr: float
    outweighs: bool
    sign_determined: bool
    message: str

    def summary(self) -> str:
        """A table: variant, value, standard error, value over standard error, and each
        variant's pre-processing steps; then the message."""
        width = max(8, *(len(k) for k in self.values))
        lines = [f"{'variant':<{width}} {self.name:>14} {'stderr':>10} {'z':>7}"]
        for key, value in self.values.items():
            err = self.stderr[key]
            z = value / err if err > 0 else math.inf
            lines.append(f"{key:<{width}} {value:>14.6g} {err:>10.3g} {z:>7.1f}")
            lines += [f"{'':<{width}}   - {step}" for step in self.preprocessing[key]]
        lines.append(f"spread {self.spread:.3g} = {self.spread_in_stderr:.3g} standard errors")
        if self.message:
            lines.append(self.message)
        return "\n".join(lines)


def _trusted(quantity, result: FitResult) -> float:
    first, second = quantity.stderr, quantity.stderr_hac
    if getattr(result, "trusted_stderr", "gauss-newton") == "hac":
        first, second = second, first
    return float(first if math.isfinite(first) else second)


def preprocessing_sensitivity(fit: Callable[[Measurement], FitResult], variants: dict, quantity: Callable,
                              *, name: str | None = None, threshold: float = 1.0,
                              warn: bool = True) -> PreprocessingSensitivity:
    """Fit one model to each pre-processing variant of a record and compare a quantity.

    Example: the sign of ``a - b`` on a velocity step, raw against detrended::

        variants = {"raw": record, "detrended": jf.detrend(record, "mu", against=slip, window=(0, 10))}
        check = jf.preprocessing_sensitivity(lambda m: jf.fit(slider, start, m, optimizer="lm"),
                                             variants, lambda p: p["law.a"] - p["law.b"], name="a - b")
        print(check.summary())

    Args:
        fit: ``fit(record) -> FitResult``: the same model and options for every variant
            (a closure over :func:`~jaxfriction.fit`).
        variants: dict variant name -> :class:`~jaxfriction.Measurement` (at least two).
        quantity: ``f(params: dict path -> scalar) -> scalar``, traced by JAX
            (:meth:`FitResult.derived <jaxfriction.FitResult.derived>`: delta method, Seber &
            Wild 2003 section 5.1).
        name: the quantity's name (default the function's).
        threshold: the spread, in the largest standard error, above which the choice is
            flagged (default 1).
        warn: raise a :class:`~jaxfriction.FitWarning` when flagged (default True).

    Returns:
        A :class:`PreprocessingSensitivity`.

    Warns:
        FitWarning: the spread over the variants exceeds ``threshold`` standard errors
            (with "the sign of ... is not determined by these data" when the variants
            disagree on it).

    Raises:
        ValueError: naming ``fit`` (not callable, or not returning a FitResult),
            ``variants`` (fewer than two, or not Measurements), ``threshold``.
    """
    if not callable(fit):
        raise ValueError(f"fit must be a callable record -> FitResult, got {fit!r}")
    if not isinstance(variants, dict) or len(variants) < 2:
        raise ValueError(f"variants must be a dict name -> Measurement with at least two entries, got {variants!r}")
    bad = [k for k, m in variants.items() if not isinstance(m, Measurement)]
    if bad:
        raise ValueError(f"variants: {bad} are not jaxfriction.Measurement records")
    check_real("threshold", threshold, positive=True)
    values, errors, results, steps = {}, {}, {}, {}
    label = name
    for key, record in variants.items():
        result = fit(record)
        if not isinstance(result, FitResult):
            raise ValueError(f"fit must return a FitResult, got {type(result).__name__} for variant {key!r}")
        q = result.derived(quantity, name=name)
        if isinstance(q, dict):
            raise ValueError("quantity must return one scalar, not a dict")
        label = q.name
        values[key], errors[key], results[key] = q.value, _trusted(q, result), result
        steps[key] = tuple(record.preprocessing)
    vals = np.asarray(list(values.values()))
    errs = np.asarray(list(errors.values()))
    spread = float(np.max(vals) - np.min(vals))
    largest = float(np.max(errs)) if np.all(np.isfinite(errs)) else math.nan
    ratio = spread / largest if largest > 0 else math.inf
    outweighs = bool(ratio > threshold)
    sign_determined = bool((np.all(vals > 0) or np.all(vals < 0)) and np.all(np.abs(vals) >= 2 * errs))
    signs_differ = bool(np.any(vals > 0) and np.any(vals < 0))
    message = ""
    if outweighs:
        message = (f"the pre-processing choice moves {label} by {spread:.3g}, {ratio:.3g} standard errors (the largest, "
                   f"{largest:.3g}, of {len(values)} variants)")
        message += (f": the sign of {label} is not determined by these data" if signs_differ else
                    f": {label} is determined by these data only up to that choice")
        if warn:
            warnings.warn(message, FitWarning, stacklevel=2)
    return PreprocessingSensitivity(name=label, values=values, stderr=errors, results=results, preprocessing=steps,  # type: ignore[arg-type]
                                    spread=spread, spread_in_stderr=ratio, outweighs=outweighs,
                                    sign_determined=sign_determined, message=message)
