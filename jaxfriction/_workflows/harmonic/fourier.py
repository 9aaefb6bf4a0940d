"""The real Fourier basis of harmonic balance: coefficients to samples over one period and back.

A periodic signal of ``H`` harmonics is held as ``2 H + 1`` coefficients per component,
``c = [a_0, a_1, b_1, ..., a_H, b_H]``, of

    ``x(t) = a_0 + sum_k a_k cos(k omega (t - t0)) + b_k sin(k omega (t - t0))``.

:func:`synthesis` gives its values at ``N`` equally spaced phases ``theta_j = 2 pi j / N``,
:func:`analysis` the coefficients of ``H`` harmonics of ``N`` samples (the discrete Fourier
projection: exact for a trigonometric polynomial of degree at most ``H`` when ``N > 2 H``;
higher harmonics of the samples alias into the result, the alternating frequency-time
scheme's sampling error, which :func:`~jaxfriction.harmonic_balance` estimates by doubling
``N``), and :func:`derivative` the coefficients of ``dx/dt``. Plain matrices: ``N (2 H + 1)``
multiply-adds per component, differentiable by JAX in any mode.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def n_coefficients(harmonics: int) -> int:
    """``2 H + 1``: the coefficients of ``H`` harmonics and the mean."""
    return 2 * int(harmonics) + 1


def _angles(harmonics: int, samples: int) -> np.ndarray:
    """``(N, H)``: ``2 pi j k / N`` for ``j < N``, ``k = 1 .. H``."""
    j = np.arange(samples)[:, None]
    k = np.arange(1, harmonics + 1)[None, :]
    return 2.0 * np.pi * ((j * k) % samples) / samples


def synthesis(harmonics: int, samples: int, dtype=float):
    """``(N, 2 H + 1)`` matrix ``E``: ``E @ c`` are the values at the phases ``2 pi j / N``.

    Args:
        harmonics: ``H >= 0``.
        samples: ``N >= 1`` phases over one period.
        dtype: the matrix's float type.

    Returns:
        A JAX array ``(N, 2 H + 1)``: columns ``1, cos(theta), sin(theta), cos(2 theta), ...``.
    """
    theta = _angles(harmonics, samples)
    cols = np.empty((samples, n_coefficients(harmonics)))
    cols[:, 0] = 1.0
    cols[:, 1::2] = np.cos(theta)
    cols[:, 2::2] = np.sin(theta)
    return jnp.asarray(cols, dtype)


def analysis(harmonics: int, samples: int, dtype=float):
    """``(2 H + 1, N)`` matrix ``P``: ``P @ x`` are the coefficients of ``H`` harmonics of the
    samples ``x`` at the phases ``2 pi j / N`` (``a_0`` their mean, ``a_k``, ``b_k`` twice the
    mean of ``x cos(k theta)``, ``x sin(k theta)``). ``P E = I`` when ``N > 2 H``.

    Raises:
        ValueError: ``N <= 2 H`` (the harmonics could not be told apart; named ``samples``).
    """
    if samples <= 2 * harmonics:
        raise ValueError(f"samples must exceed 2 * harmonics = {2 * harmonics} for the Fourier projection, got {samples}")
    theta = _angles(harmonics, samples)
    rows = np.empty((n_coefficients(harmonics), samples))
    rows[0] = 1.0 / samples
    rows[1::2] = 2.0 / samples * np.cos(theta).T
    rows[2::2] = 2.0 / samples * np.sin(theta).T
    return jnp.asarray(rows, dtype)


def derivative(harmonics: int, omega):
    """``(2 H + 1, 2 H + 1)`` matrix ``D``: ``D @ c`` are the coefficients of ``dx/dt``
    (``a_k -> k omega b_k``, ``b_k -> -k omega a_k``).

    Args:
        harmonics: ``H``.
        omega: the fundamental frequency (rad per time unit; may be traced).
    """
    n = n_coefficients(harmonics)
    up = np.zeros((n, n))
    for k in range(1, harmonics + 1):
        up[2 * k - 1, 2 * k] = k
        up[2 * k, 2 * k - 1] = -k
    return omega * jnp.asarray(up, jnp.result_type(float))


def resized(coefficients, harmonics: int):
    """``coefficients`` ``(2 H' + 1, ...)`` with ``H`` harmonics: zeros appended or the highest
    harmonics dropped (a guess from a solution of another size)."""
    c = jnp.asarray(coefficients)
    n = n_coefficients(harmonics)
    if c.shape[0] >= n:
        return c[:n]
    return jnp.concatenate([c, jnp.zeros((n - c.shape[0],) + c.shape[1:], c.dtype)], axis=0)


def extremes(coefficients, points: int):
    """The largest and smallest value over the period of each component of the signal with
    ``coefficients`` ``(2 H + 1, m)``: the extreme samples of ``points`` equally spaced
    phases, each refined by three Newton steps on ``dx/dtheta = 0`` within half a spacing
    (so the peak of a smooth signal is found to round-off, not to the grid's ``O(spacing^2)``).

    Returns:
        ``(largest (m,), smallest (m,))``.
    """
    c = jnp.asarray(coefficients)
    harmonics = (c.shape[0] - 1) // 2
    k = jnp.arange(1, harmonics + 1, dtype=c.dtype)
    a, b = c[1::2], c[2::2]
    spacing = 2 * jnp.pi / points

    def value(theta, order):  # d^order x / d theta^order at phases theta (p,), of every component
        kt = theta[:, None] * k[None, :]
        cos, sin = jnp.cos(kt), jnp.sin(kt)
        if order == 0:
            return c[0] + cos @ a + sin @ b
        if order == 1:
            return (-sin * k) @ a + (cos * k) @ b
        return (-cos * k**2) @ a + (-sin * k**2) @ b

    theta = jnp.arange(points, dtype=c.dtype) * spacing
    x = value(theta, 0)  # (points, m)

    def refine(start):  # start (m,) phases of one extreme per component
        t = start
        for _ in range(3):
            d1 = jnp.diagonal(value(t, 1))
            d2 = jnp.diagonal(value(t, 2))
            move = jnp.where(jnp.abs(d2) > 0, -d1 / jnp.where(jnp.abs(d2) > 0, d2, 1.0), 0.0)
            t = start + jnp.clip(t + move - start, -0.5 * spacing, 0.5 * spacing)
        return jnp.diagonal(value(t, 0))

    hi = jnp.maximum(jnp.max(x, axis=0), refine(theta[jnp.argmax(x, axis=0)]))
    lo = jnp.minimum(jnp.min(x, axis=0), refine(theta[jnp.argmin(x, axis=0)]))
    return hi, lo
