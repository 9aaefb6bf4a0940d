"""Floquet multipliers of a periodic orbit, its stability, and the bifurcation a multiplier signals.

The monodromy matrix ``M = d phi_T / d x`` (the Jacobian of the period map at the orbit) has
the Floquet multipliers as eigenvalues; the orbit is asymptotically stable when every
multiplier is inside the unit circle (an autonomous orbit has one trivial multiplier 1, the
shift along the orbit, left out of the test). A multiplier leaving the circle at ``+1`` is a
fold (or a branch point), at ``-1`` a period doubling, a complex pair a Neimark-Sacker
bifurcation (Seydel, *Practical Bifurcation and Stability Analysis*, 3rd ed. 2010, Sec. 7.4;
Leine & Nijmeijer, *Dynamics and Bifurcations of Non-smooth Mechanical Systems*, 2004, Ch. 7).

Regularized laws: the monodromy is the Jacobian of the *regularized* RK4 period map, exact
by forward-mode AD. For a law that is Lipschitz in the slip velocity (Quinn, the
static-kinetic Quinn, Awrejcewicz, Karnopp's band) this flow is differentiable along an orbit
that crosses the band transversally, and its monodromy is the linearization of exactly the
map whose fixed point is computed: the multipliers decide the stability of the orbit the
library integrates. As the band narrows (``eps -> 0``) the Jacobian of the passage through
the band converges to the saltation matrix of the Filippov limit, and the band's stiff
contraction during stick gives the multipliers near 0 that exact stick has (Leine &
Nijmeijer 2004, Sec. 7.2: the smoothed system's monodromy converges to the one of the
non-smooth system with saltation matrices). No saltation matrix has to be assembled by hand,
and no transition has to be located; the price is that a multiplier computed at a finite
``eps`` carries an O(eps) error against the exact-stick limit. One caveat, measured against
the exact flow: that limit is the regularized *ODE*'s. At a fixed ``h / eps`` (Quinn's ``eps
= 2 h``) RK4 crosses the band in a step or two, and an orbit whose slip reverses without
sticking (Den Hartog's) keeps an O(1) error in its multipliers that depends on where the
steps fall (a few per cent); sticking orbits converge at O(eps).

Exact stick: ``periodic_orbit(..., integrator=EventDriven(...))`` shoots on the event-driven
flow, and its monodromy is the forward-mode Jacobian through the located events, i.e. the
product of the regimes' Jacobians and the saltation matrices (Leine & Nijmeijer 2004, Sec.
7.2); a sticking orbit has a multiplier 0 there (see
:func:`~jaxfriction._workflows.periodic.flow.exact_period_run`).
"""

from __future__ import annotations

import numpy as np

#: A multiplier within this distance of the unit circle counts as on it (critical).
CRITICAL_TOL = 1e-6


def floquet_multipliers(monodromy) -> np.ndarray:
    """Eigenvalues of the monodromy matrix, sorted by decreasing modulus.

    Args:
        monodromy: ``(d, d)`` real matrix ``d phi_T / d x``.

    Returns:
        ``(d,)`` complex NumPy array.
    """
    mu = np.linalg.eigvals(np.asarray(monodromy, dtype=float))
    return mu[np.argsort(-np.abs(mu), kind="stable")]


def nontrivial(multipliers, autonomous: bool) -> np.ndarray:
    """The multipliers less the trivial one of an autonomous orbit (the one nearest 1)."""
    mu = np.asarray(multipliers)
    if not autonomous or mu.size == 0:
        return mu
    return np.delete(mu, int(np.argmin(np.abs(mu - 1.0))))


def is_stable(multipliers, autonomous: bool = False, tol: float = CRITICAL_TOL) -> bool:
    """True when every non-trivial multiplier is in the closed unit circle up to ``tol``
    (``max |mu| <= 1 + tol``; a critical multiplier on the circle counts as stable)."""
    mu = nontrivial(multipliers, autonomous)
    return bool(mu.size == 0 or np.max(np.abs(mu)) <= 1.0 + tol)


def crossing_kind(before, after, autonomous: bool = False) -> str | None:
    """The bifurcation between two orbits of a branch whose stability differs, from the
    multiplier that crossed the unit circle: ``"fold"`` (real, through +1; a branch point
    too), ``"period-doubling"`` (real, through -1) or ``"neimark-sacker"`` (a complex pair);
    None when the number of multipliers outside the circle is the same."""
    a, b = nontrivial(before, autonomous), nontrivial(after, autonomous)
    if int(np.sum(np.abs(a) > 1)) == int(np.sum(np.abs(b) > 1)):
        return None
    # the multiplier nearest the circle on the side that has it outside
    outside = b if np.sum(np.abs(b) > 1) > np.sum(np.abs(a) > 1) else a
    mu = outside[int(np.argmin(np.abs(np.abs(outside) - 1.0)))]
    if abs(mu.imag) > 1e-6 * max(1.0, abs(mu)):
        return "neimark-sacker"
    return "fold" if mu.real > 0 else "period-doubling"
