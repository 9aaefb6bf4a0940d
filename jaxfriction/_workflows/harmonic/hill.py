"""Stability of a harmonic-balance solution by Hill's method.

A perturbation ``y(t) = e^(lambda t) p(t)`` of a periodic solution, ``p`` of the solution's
period, solves the linearized equations when its Fourier coefficients ``p_hat`` satisfy
``J p_hat = -lambda p_hat``, with ``J = dR/dc`` the Jacobian of the harmonic-balance
residual ``R(c) = D c - P f(E c)`` (:mod:`.balance`) at the solution: the eigenvalues of
``-J`` (the Hill matrix) approximate the Floquet exponents, each repeated at ``lambda + i k
omega`` for the harmonics ``k`` the truncation keeps. Of the ``(2 H + 1) w`` eigenvalues the
``w`` whose eigenvectors are centred on the zeroth harmonic are the exponents (the symmetry
criterion of Guillot, Lazarus, Thomas, Vergez & Cochelin 2020, J. Sound Vib. 475:115284;
Hill's method for harmonic balance: Lazarus & Thomas 2010, C. R. Mecanique 338:510), and the
Floquet multipliers are ``exp(lambda T)``.

Hill's method needs every state among the unknowns. Hysteretic elements marched through the
period (:mod:`.march`) are a memory of the slip path: a stuck element's force depends on the
slip since it stuck, which for a perturbation ``e^(lambda t) p(t)`` depends on ``lambda``
itself, and the march relaxes the elements at the period's mean slip, which a growing
perturbation does not have. Their Jacobian is not a Hill matrix (on the stuck, linear joint
of :func:`~jaxfriction.jointed_bar` its "multipliers" came out 0.47 against the exact 0.92),
so :func:`~jaxfriction.harmonic_balance` refuses ``stability="hill"`` there and uses the
monodromy of :func:`.march.marched_period_map`.
"""

from __future__ import annotations

import numpy as np


def hill_exponents(jacobian, omega: float, width: int) -> np.ndarray:
    """The ``width`` Floquet exponents of a harmonic-balance solution by Hill's method.

    Args:
        jacobian: ``(K w, K w)`` with ``K = 2 H + 1``: ``dR/dc`` of the residual with respect
            to the coefficients ``(K, w)`` flattened row by row (:mod:`.fourier`'s layout,
            ``[a_0, a_1, b_1, ..., a_H, b_H]`` of each component).
        omega: the solution's fundamental frequency (rad per time unit, > 0).
        width: ``w``, the number of unknown components.

    Returns:
        ``(w,)`` complex exponents ``lambda`` (1/time), by decreasing real part (an
        exponent's imaginary part is defined modulo ``omega``: this is the copy whose
        eigenvector is centred on the zeroth harmonic).
    """
    jac = np.asarray(jacobian, dtype=float)
    values, vectors = np.linalg.eig(-jac)
    k = jac.shape[0] // width
    harmonics = (k - 1) // 2
    v = vectors.T.reshape(-1, k, width)  # one row per eigenvector: its coefficients (K, w)
    a, b = v[:, 1::2], v[:, 2::2]
    plus = np.sum(np.abs(a - 1j * b) ** 2, axis=2) / 4  # |c_{+k}|^2, k = 1..H
    minus = np.sum(np.abs(a + 1j * b) ** 2, axis=2) / 4
    total = np.sum(np.abs(v[:, 0]) ** 2, axis=1) + np.sum(plus + minus, axis=1)
    index = np.arange(1, harmonics + 1)
    centre = np.sum(index * (plus - minus), axis=1) / np.where(total > 0, total, 1.0)
    chosen = np.argsort(np.abs(centre), kind="stable")[:width]
    exponents = values[chosen]
    return exponents[np.argsort(-exponents.real, kind="stable")]


def hill_multipliers(jacobian, omega: float, width: int) -> np.ndarray:
    """Floquet multipliers ``exp(lambda T)`` ``(w,)`` of :func:`hill_exponents`, ``T = 2 pi /
    omega``, by decreasing modulus (NaN where the Jacobian is not finite)."""
    jac = np.asarray(jacobian, dtype=float)
    if not np.all(np.isfinite(jac)):
        return np.full(width, np.nan + 0j)
    return np.exp(hill_exponents(jac, omega, width) * (2 * np.pi / omega))
