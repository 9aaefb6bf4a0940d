"""What a fit can be trusted for: standard errors, goodness of fit, identifiability.

Standard errors are Gauss-Newton (Seber & Wild 2003 ch. 2; Bard 1974 ch. 7): ``cov =
sigma^2 (J^T J)^-1`` at the optimum, restricted to the parameters. They are valid only at a
converged optimum of a model that explains the data; the report says when either fails, and
gives beside them the HAC sandwich (:mod:`~.hac`), which holds under autocorrelated
residuals (model error).

Goodness of fit compares the residual standard deviation with the noise level: the user's
``noise`` (then a chi-square test of ``RSS / noise^2`` on ``n - p`` degrees of freedom), or
an estimate from the record itself (third differences of neighbouring samples: a smooth
signal sampled densely cancels, white noise of variance ``s^2`` gives differences of
variance ``20 s^2``; robust median absolute deviation). The residuals' order is tested as
well: a model that explains the data leaves residuals that change sign at random
(Wald-Wolfowitz runs test; lag-1 autocorrelation reported), a model that does not leaves
long runs.

Identifiability reads the Jacobian at the optimum in relative units (columns scaled by
``|theta|``, segment states by their scales), with the segment states eliminated (Schur
complement of ``J^T J``): its condition number, the combinations of parameters with a
relative standard error above 10 % (eigenvectors of the eliminated ``J^T J``, named by path),
and parameters whose column is zero to round-off.
"""

from __future__ import annotations

import math

import numpy as np

#: Significance level of the lack-of-fit tests (chi-square with known noise; runs test).
LACK_OF_FIT_ALPHA = 1e-3
#: With the noise estimated from the record: residual std above this multiple of it is a misfit.
NOISE_RATIO_LIMIT = 1.5
#: A parameter combination with a relative standard error above this is poorly determined.
POORLY_DETERMINED = 0.1
#: A column of the scaled Jacobian at most this fraction of the largest is a zero sensitivity
#: (round-off of an exactly zero derivative included).
NEAR_ZERO = 1e-8


def noise_from_differences(x) -> float:
    """Noise standard deviation of a sampled signal ``(n,)`` from its third differences.

    ``sigma = 1.4826 median|d - median d| / sqrt(20)`` with ``d = Delta^3 x``; a signal that
    is smooth on the sampling scale contributes ``h^3 x'''`` to ``d`` and is ignored; where
    it is not (sparse sampling, impacts), the estimate is too large, so the lack-of-fit
    verdict errs towards "fits". NaN for fewer than 8 samples.
    """
    x = np.asarray(x, dtype=float)
    if x.shape[0] < 8:
        return math.nan
    d = np.diff(x, n=3)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / math.sqrt(20.0))


def estimate_noise(data, velocity_weight: float, weights) -> float:
    """Pooled noise standard deviation of the data residuals, in their (weighted) units."""
    total, count = 0.0, 0
    for m, w in zip(data, weights):
        channels = None if m.channels is None else np.column_stack(list(m.channels.values()))
        for values, factor in ((m.q, 1.0), (m.v, velocity_weight), (channels, 1.0)):
            if values is None:
                continue
            for col in values.T:
                s = noise_from_differences(col) * factor * math.sqrt(w)
                if math.isfinite(s):
                    total += s * s * col.shape[0]
                    count += col.shape[0]
    return math.sqrt(total / count) if count else math.nan


def runs_test(residual_columns) -> tuple[float, float]:
    """Wald-Wolfowitz runs test on the signs of residuals, pooled over columns.

    Returns ``(z, p)``: the standardized number of runs and the one-sided probability of so
    few runs for independent residuals (too few runs: systematic misfit).
    """
    from scipy.stats import norm

    runs = expected = variance = 0.0
    for r in residual_columns:
        signs = np.sign(r[r != 0])
        n_pos, n_neg = float(np.sum(signs > 0)), float(np.sum(signs < 0))
        n = n_pos + n_neg
        if n_pos == 0 or n_neg == 0:
            continue
        runs += 1 + float(np.sum(signs[1:] != signs[:-1]))
        mean = 2 * n_pos * n_neg / n + 1
        expected += mean
        variance += (mean - 1) * (mean - 2) / (n - 1)
    if variance <= 0:
        return math.nan, math.nan
    z = (runs - expected) / math.sqrt(variance)
    return z, float(norm.cdf(z))


def lag1_autocorrelation(residual_columns) -> float:
    """Lag-1 autocorrelation of the residuals, pooled over columns (about ``+-1 / sqrt(n)`` for
    white noise)."""
    num = den = 0.0
    for r in residual_columns:
        r = r - np.mean(r)
        num += float(np.sum(r[1:] * r[:-1]))
        den += float(np.sum(r * r))
    return num / den if den > 0 else math.nan


def residual_columns(residuals, problem) -> list[np.ndarray]:
    """The data residuals split into their time series (one per record and measured column)."""
    out, offset = [], 0
    for rec in problem.records:
        for values in (rec.q, rec.v, rec.channels):
            if values is None:
                continue
            n, k = values.shape
            block = residuals[offset : offset + n * k].reshape(n, k)
            out += [block[:, j] for j in range(k)]
            offset += n * k
    return out


def goodness_of_fit(residuals, problem, n_vars: int, noise, noise_estimated: bool) -> dict:
    """The goodness-of-fit part of the report (a dict; see :class:`~jaxfriction.FitResult`)."""
    from scipy.stats import chi2

    n = residuals.shape[0]
    rss = float(np.sum(residuals**2))
    dof = n - n_vars
    residual_std = math.sqrt(rss / dof)
    cols = residual_columns(residuals, problem)
    z, p_runs = runs_test(cols)
    out = {
        "noise": noise,
        "noise_source": "given" if not noise_estimated else "estimated from the record (third differences)",
        "residual_std": residual_std,
        "noise_ratio": residual_std / noise if noise and math.isfinite(noise) else math.nan,
        "lag1_autocorrelation": lag1_autocorrelation(cols),
        "runs_z": z,
        "runs_p": p_runs,
        "chi2": math.nan,
        "chi2_p": math.nan,
        "dof": dof,
    }
    reasons = []
    if not noise_estimated:
        out["chi2"] = rss / noise**2
        out["chi2_p"] = float(chi2.sf(out["chi2"], dof))
        if out["chi2_p"] < LACK_OF_FIT_ALPHA:
            reasons.append(f"chi-square {out['chi2']:.4g} on {dof} degrees of freedom (p = {out['chi2_p']:.2g}): "
                           f"the residuals are {out['noise_ratio']:.3g} x the given noise")
    elif out["noise_ratio"] > NOISE_RATIO_LIMIT:
        reasons.append(f"residual std {residual_std:.4g} is {out['noise_ratio']:.3g} x the noise estimated from the "
                       f"record ({noise:.4g})")
    if math.isfinite(p_runs) and p_runs < LACK_OF_FIT_ALPHA:
        reasons.append(f"the residuals are systematic: runs test z = {z:.3g} (p = {p_runs:.2g}), lag-1 "
                       f"autocorrelation {out['lag1_autocorrelation']:.3g}")
    out["fits_data"] = not reasons
    out["lack_of_fit"] = "; ".join(reasons)
    return out


def covariance(jac, residual_std, n_params: int) -> tuple[np.ndarray, bool]:
    """Gauss-Newton covariance of the parameters ``(p, p)`` and whether it is usable.

    Returns ``(cov, ok)``: NaN where ``J^T J`` is singular; ``ok`` is False then, and when a
    variance is not positive.
    """
    try:
        with np.errstate(all="ignore"):
            inv = np.linalg.inv(jac.T @ jac)
        if not np.all(np.isfinite(inv)):
            raise np.linalg.LinAlgError
    except (np.linalg.LinAlgError, ValueError):
        return np.full((n_params, n_params), np.nan), False
    cov = residual_std**2 * inv[:n_params, :n_params]
    return cov, bool(np.all(np.diag(cov) > 0))


def identifiability(jac, theta, state_scale, names, residual_std) -> dict:
    """The identifiability part of the report (a dict; see :class:`~jaxfriction.FitResult`)."""
    p = len(names)
    scale = np.concatenate([np.where(theta[:p] != 0, np.abs(theta[:p]), 1.0), np.asarray(state_scale, dtype=float)])
    js = jac * scale
    norms = np.linalg.norm(js[:, :p], axis=0)
    top = float(np.max(norms, initial=0.0))
    zero = [names[i] for i in range(p) if not norms[i] > NEAR_ZERO * top]
    fisher = js.T @ js
    f_pp, f_ps, f_ss = fisher[:p, :p], fisher[:p, p:], fisher[p:, p:]
    with np.errstate(all="ignore"):
        try:
            f_eff = f_pp - f_ps @ np.linalg.solve(f_ss, f_ps.T) if f_ss.size else f_pp
        except np.linalg.LinAlgError:
            f_eff = f_pp - f_ps @ np.linalg.pinv(f_ss) @ f_ps.T
    f_eff = 0.5 * (f_eff + f_eff.T)
    if not np.all(np.isfinite(f_eff)):
        return {"condition_number": math.inf, "weak_combinations": [], "zero_sensitivity": zero}
    lam, vec = np.linalg.eigh(f_eff)
    lam_max = float(lam[-1]) if lam.size else 0.0
    cond = math.sqrt(lam_max / lam[0]) if lam.size and lam[0] > 0 else math.inf
    weak = []
    for k in range(lam.size):
        rel = residual_std / math.sqrt(lam[k]) if lam[k] > 1e-12 * lam_max and lam[k] > 0 else math.inf
        if rel <= POORLY_DETERMINED:
            continue
        v = vec[:, k] * np.sign(vec[np.argmax(np.abs(vec[:, k])), k])
        terms = [(float(v[i]), names[i]) for i in np.argsort(-np.abs(v)) if abs(v[i]) >= 0.2]
        weak.append({"combination": " ".join(f"{c:+.2f} {n}" for c, n in terms), "rel_stderr": rel,
                     "vector": dict(zip(names, v.tolist()))})
    return {"condition_number": cond, "weak_combinations": weak, "zero_sensitivity": zero}
