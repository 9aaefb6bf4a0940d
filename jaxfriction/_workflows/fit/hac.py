"""Standard errors that hold under autocorrelated residuals: the HAC sandwich of a fit.

Gauss-Newton standard errors, ``sigma^2 (J^T J)^-1``, assume independent residuals of equal
variance. The residuals of a model fitted to real measurements are rarely that: open-loop
drift, an unmodelled resonance or a slightly wrong law leave residuals that stay of one
sign for hundreds of samples, and the white-noise standard errors are then too small by the
square root of the number of samples per independent piece of information (for AR(1)
residuals of lag-1 correlation ``phi``, by ``sqrt((1 + phi) / (1 - phi))``).

The heteroskedasticity and autocorrelation consistent (HAC) sandwich (Newey & West 1987,
Econometrica 55: 703-708) replaces the white-noise middle of the covariance by the long-run
covariance of the score contributions ``g_t = J_t^T r_t`` (``J_t`` the Jacobian row of
residual ``t``, ``r_t`` the residual):

    cov = n / (n - k) B M B,   B = (J^T J)^-1,
    M = sum_columns sum_{|j| < T} k(j / S) sum_t g_t g_{t-j}^T,

with the Bartlett kernel ``k(x) = max(0, 1 - |x|)`` (positive semi-definite) and the sums
over lags taken within each residual column (one time series per record and measured
quantity, :func:`~.diagnostics.residual_columns`), never across columns. ``B`` is the
inverse over every free variable (parameters and multiple-shooting segment states), so the
segment states are eliminated consistently; only the parameter block is kept. It is
computed through the influence series ``h_t = [B g_t]_params`` (a ``p``-vector per sample),
whose lagged products are summed directly or, for long bandwidths, by FFT. The continuity defects of multiple shooting enter
the bread ``B`` only: they are penalties, not measurements, and carry no noise. ``n / (n -
k)`` (``k`` free variables) is the degrees-of-freedom factor that makes the lag-0 term
match the Gauss-Newton ``sigma^2 = RSS / (n - k)`` for white residuals.

The bandwidth ``S`` is Andrews's (1991, Econometrica 59: 817-858, section 6) AR(1) plug-in
for the Bartlett kernel, per column: ``S = 1.1447 (alpha(1) T)^(1/3)`` with ``alpha(1) =
sum_a 4 rho_a^2 s_a^4 / ((1 - rho_a)^6 (1 + rho_a)^2) / sum_a s_a^4 / (1 - rho_a)^4``,
``rho_a`` and ``s_a^2`` the lag-1 coefficient and innovation variance of an AR(1) fitted to
influence component ``a`` standardised to unit variance (weights ``w_a = 1``). ``rho_a`` is
clipped to ``+-0.999`` and ``S`` to half the column's length: beyond that the estimate has
too few independent blocks to average (Kiefer & Vogelsang 2005, Econometric Theory 21:
1130-1164) and is biased low; the report says when the cap was reached.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Andrews (1991) constant of the Bartlett kernel's optimal bandwidth, ``S = 1.1447 (alpha(1) T)^(1/3)``.
BARTLETT_CONSTANT = 1.1447
#: AR(1) coefficients of the bandwidth's plug-in are clipped to this magnitude.
RHO_LIMIT = 0.999
#: The bandwidth is capped at this fraction of the column's length.
MAX_BANDWIDTH_FRACTION = 0.5


def andrews_bandwidth(series) -> float:
    """Andrews's (1991, section 6) AR(1) plug-in bandwidth of the Bartlett kernel.

    Args:
        series: ``(T, m)`` the time series whose long-run covariance is wanted (here the
            influence series of one residual column); components that are identically zero
            are ignored.

    Returns:
        ``S = 1.1447 (alpha(1) T)^(1/3)`` (in samples, a float >= 0; 0 when no component
        varies or ``T < 3``), before any cap.
    """
    x = np.asarray(series, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    t = x.shape[0]
    if t < 3:
        return 0.0
    num = den = 0.0
    for a in range(x.shape[1]):
        col = x[:, a]
        scale = float(np.sqrt(np.mean(col * col)))
        if not scale > 0 or not math.isfinite(scale):
            continue
        col = col / scale
        lagged = float(np.sum(col[:-1] ** 2))
        if not lagged > 0:
            continue
        rho = float(np.clip(np.sum(col[1:] * col[:-1]) / lagged, -RHO_LIMIT, RHO_LIMIT))
        s2 = float(np.mean((col[1:] - rho * col[:-1]) ** 2))
        num += 4 * rho**2 * s2**2 / ((1 - rho) ** 6 * (1 + rho) ** 2)
        den += s2**2 / (1 - rho) ** 4
    if not den > 0:
        return 0.0
    return BARTLETT_CONSTANT * (num / den * t) ** (1 / 3)


def bartlett_long_run(series, bandwidth: float) -> np.ndarray:
    """``sum_{|j| < T} k(j / S) sum_t h_t h_{t-j}^T`` with the Bartlett kernel (sums, not means).

    Args:
        series: ``(T, m)`` the series ``h_t``.
        bandwidth: ``S`` in samples (``S <= 1`` keeps lag 0 only: White's estimator).

    Returns:
        ``(m, m)`` symmetric positive semi-definite matrix. The lagged products are summed
        directly up to 64 lags, by FFT beyond (zero-padded, no wrap-around; one component
        at a time, so memory stays ``O(T m)``).
    """
    h = np.asarray(series, dtype=float)
    if h.ndim == 1:
        h = h[:, None]
    t, m = h.shape
    lags = min(t - 1, max(0, math.ceil(bandwidth) - 1))
    out = h.T @ h
    if lags == 0:
        return out
    weights = 1.0 - np.arange(1, lags + 1) / bandwidth
    gamma = np.zeros((m, m))
    if lags <= 64:
        for j, w in enumerate(weights, start=1):
            gamma += w * (h[j:].T @ h[:-j])  # sum_t h(t) h(t - j)^T
    else:
        size = 1 << (2 * t - 1).bit_length()
        f = np.fft.rfft(h, n=size, axis=0)  # (size // 2 + 1, m)
        for a in range(m):
            # c[j, b] = sum_t h_a(t + j) h_b(t), j = 1 .. lags
            cross = np.fft.irfft(f[:, a : a + 1] * np.conj(f), n=size, axis=0)[1 : lags + 1]
            gamma[a] = weights @ cross
    return out + gamma + gamma.T


def hac_covariance(jac, residuals, columns, n_params: int) -> tuple[np.ndarray, dict]:
    """The HAC sandwich covariance of the parameters (see the module docstring).

    Args:
        jac: ``(n_stacked, k)`` Jacobian of the stacked residuals (data, then weighted
            continuity defects) with respect to every free variable, natural
            parametrisation; the parameters are its first ``n_params`` columns.
        residuals: ``(n_stacked,)`` the stacked residuals at the optimum.
        columns: list of index arrays into the data residuals, one per residual time
            series (record and measured column), in time order.
        n_params: ``p``, the number of parameters.

    Returns:
        ``(cov, info)``: ``cov`` ``(p, p)`` (NaN where ``J^T J`` is singular or the Jacobian
        is not finite), and ``info`` (a JSON-ready dict): ``kernel`` (``"bartlett"``),
        ``bandwidth_rule`` (``"andrews-1991-ar1"``), ``bandwidths`` (per column, in
        samples, after the cap), ``capped`` (True when a column's bandwidth hit half its
        length).
    """
    jac = np.asarray(jac, dtype=float)
    r = np.asarray(residuals, dtype=float)
    k = jac.shape[1]
    n_data = int(sum(len(c) for c in columns))
    info: dict[str, Any] = {"kernel": "bartlett", "bandwidth_rule": "andrews-1991-ar1", "bandwidths": [], "capped": False}
    nan = np.full((n_params, n_params), np.nan)
    if not (np.all(np.isfinite(jac)) and np.all(np.isfinite(r))) or n_data <= k:
        return nan, info
    # the bread, with the columns equilibrated: B = D^-1 (J_s^T J_s)^-1 D^-1, J_s = J D^-1
    norms = np.linalg.norm(jac, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    js = jac / norms
    try:
        inv_s = np.linalg.inv(js.T @ js)
    except np.linalg.LinAlgError:
        return nan, info
    if not np.all(np.isfinite(inv_s)):
        return nan, info
    # influence of each data residual on the parameters: h_t = [B J_t^T]_params r_t
    lever = (js[:n_data] @ inv_s[:, :n_params]) / norms[:n_params]  # (n_data, p)
    influence = lever * r[:n_data, None]
    meat = np.zeros((n_params, n_params))
    for idx in columns:
        h = influence[np.asarray(idx)]
        cap = MAX_BANDWIDTH_FRACTION * h.shape[0]
        bandwidth = andrews_bandwidth(h)
        if bandwidth > cap:
            bandwidth, info["capped"] = cap, True
        info["bandwidths"].append(float(bandwidth))
        meat += bartlett_long_run(h, bandwidth)
    cov = meat * n_data / (n_data - k)
    return 0.5 * (cov + cov.T), info
