"""Den Hartog 1931: frequency-response curves of the Coulomb-damped oscillator, by continuation.

``m x'' + k x = P cos(omega t) - mu N sgn(x')`` (``m = k = N = P = 1``: ``omega_n = 1``, the
friction ratio ``r = mu N / P``), with Quinn's regularized law (``eps = 2 dt``, Quinn 2004
Sec. 3.1). For each ``r`` two branches of periodic orbits are continued in ``force.omega``
by pseudo-arclength (:func:`~jaxfriction.continue_orbits`) from a shooting orbit
(:func:`~jaxfriction.periodic_orbit`): below resonance from ``omega_low`` up towards 1,
above resonance from ``omega_high`` down towards 1 (for ``r < pi / 4`` the undamped
oscillator's resonance is unbounded: Den Hartog's closed form diverges at ``omega = 1``, so
each branch stops at ``|omega - 1| = gap``). Every point carries its Floquet multipliers
(stable drawn solid, unstable dashed) and its residual ``|phi_T(y0) - y0|``; the amplitude
is set against Den Hartog's closed form of the non-sticking steady motion
(:func:`~jaxfriction.den_hartog_response`, Den Hartog 1931 eq. 19) where the orbit does not
stick: at low frequency and large ``r`` the motion stops in each half cycle (at ``r = 0.5``,
``omega = 0.5``: 15 % of the period stuck, the amplitude 2.2 % below the closed form, whose
non-stop motion is not the steady state there).
"""

from __future__ import annotations

import math
import time

import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from .._forcing.drives import Harmonic
from .._laws import Quinn
from .._reference import den_hartog_response
from .._systems.oscillator import Oscillator
from .._workflows.periodic.continuation import continue_orbits
from .._workflows.periodic.shooting import periodic_orbit

#: the friction ratios r = mu N / P of the default figure
RATIOS = (0.2, 0.5)


def _closed_form(omega, r):
    out = np.full(len(omega), np.nan)
    for i, w in enumerate(omega):
        try:
            out[i] = den_hartog_response(1.0, float(w), r)[0]
        except ValueError:  # the closed form's motion sticks here (or resonance)
            pass
    return out


def den_hartog_branches(ratios=RATIOS, dt=5e-3, omega_low=0.5, omega_high=2.0, gap=0.08, ds_max=0.3,
                        max_points=200) -> tuple[dict, dict]:
    """Continue the frequency-response curves of the Coulomb-damped oscillator (module docstring).

    Args:
        ratios: friction ratios ``r = mu N / P`` (each in ``(0, pi / 4)``, where the
            resonance is unbounded).
        dt: RK4 step bound (time units); Quinn's ``eps = 2 dt``.
        omega_low, omega_high: starting frequencies of the branches below and above
            resonance (rad/s, ``0 < omega_low < 1 - gap``, ``omega_high > 1 + gap``).
        gap: each branch stops at ``|omega - 1| <= gap`` (``0 < gap < 0.5``).
        ds_max: largest arclength step of the continuation.
        max_points: points per branch at most.

    Returns:
        ``(numbers, branches)``: ``numbers`` is JSON-ready (per ``r`` and side: points,
            status, max relative gap of the amplitude to Den Hartog's closed form, the
            largest residual, whether every point is stable, the stuck fraction range, the
            run time); ``branches`` maps ``(r, side)`` to the ``xarray.Dataset`` of
            :func:`~jaxfriction.continue_orbits` with a ``den_hartog`` variable added.

    Raises:
        ValueError: arguments out of range (naming the argument).
    """
    check_real("dt", dt, positive=True)
    check_real("gap", gap, positive=True)
    if gap >= 0.5:
        raise ValueError(f"gap must be in (0, 0.5), got {gap}")
    check_real("omega_low", omega_low, positive=True)
    check_real("omega_high", omega_high, positive=True)
    if not omega_low < 1 - gap:
        raise ValueError(f"omega_low must be below 1 - gap = {1 - gap:g}, got {omega_low}")
    if not omega_high > 1 + gap:
        raise ValueError(f"omega_high must be above 1 + gap = {1 + gap:g}, got {omega_high}")
    ratios = tuple(float(r) for r in ratios)
    if not ratios:
        raise ValueError("ratios must hold at least one friction ratio")
    for r in ratios:
        if not 0 < r < math.pi / 4:
            raise ValueError(f"ratios: each r = mu N / P must be in (0, pi/4) (an unbounded resonance), got {r}")
    numbers = {"mass": 1.0, "stiffness": 1.0, "force_amplitude": 1.0, "dt": dt, "eps": 2 * dt, "gap": gap,
               "omega_low": omega_low, "omega_high": omega_high, "branches": {}}
    branches = {}
    for r in ratios:
        for side, w0, bounds, direction in (("below", omega_low, (omega_low, 1 - gap), 1),
                                            ("above", omega_high, (1 + gap, omega_high), -1)):
            start_time = time.perf_counter()
            # array parameters: one compilation serves every r (and both starts of a side)
            system = Oscillator(law=Quinn(mu=jnp.asarray(r), eps=jnp.asarray(2 * dt)),  # type: ignore[arg-type]
                                force=Harmonic(jnp.asarray(1.0), jnp.asarray(w0)))  # type: ignore[arg-type]
            start = periodic_orbit(system, dt=dt, transient=60.0, warn=False)
            if not start.converged:
                raise ValueError(f"r = {r}: the orbit at omega = {w0} did not converge ({start.status}); "
                                 "try a smaller dt")
            branch = continue_orbits(start, "force.omega", bounds=bounds, ds=0.05, ds_max=ds_max,
                                     direction=direction, max_points=max_points)
            omega = branch["force.omega"].values
            inside = (omega >= bounds[0]) & (omega <= bounds[1])
            branch = branch.isel(point=np.flatnonzero(inside))
            omega = branch["force.omega"].values
            exact = _closed_form(omega, r)
            # Den Hartog's motion never sticks: orbits that stick (low frequency, large r) are
            # outside the closed form's reach and left out of the comparison
            exact = np.where(branch["stick_fraction"].values > 0, np.nan, exact)
            branch["den_hartog"] = ("point", exact)
            amp = branch["amplitude"].values
            ok = np.isfinite(exact)
            gap_rel = np.abs(amp[ok] / exact[ok] - 1)
            numbers["branches"][f"r={r:g} {side}"] = {
                "r": r, "side": side, "points": int(omega.size), "status": branch.attrs["status"],
                "omega_range": [float(omega.min()), float(omega.max())],
                "amplitude_range": [float(amp.min()), float(amp.max())],
                "max_relative_gap_den_hartog": float(gap_rel.max()) if gap_rel.size else None,
                "points_with_closed_form": int(ok.sum()),
                "points_sticking": int((branch["stick_fraction"].values > 0).sum()),
                "max_residual": float(branch["residual"].max()),
                "all_stable": bool(branch["stable"].all()),
                "max_multiplier": float(np.nanmax(branch["max_multiplier"].values)),
                "stick_fraction_max": float(branch["stick_fraction"].max()),
                "seconds": round(time.perf_counter() - start_time, 2),
            }
            branches[(r, side)] = branch
    gaps = [b["max_relative_gap_den_hartog"] for b in numbers["branches"].values()
            if b["max_relative_gap_den_hartog"] is not None]
    numbers["max_relative_gap_den_hartog"] = max(gaps) if gaps else None
    return numbers, branches


def plot_den_hartog(numbers, branches, path) -> None:
    """Amplitude against forcing frequency, one colour per ``r``: the continued branches
    (stable solid, unstable dashed, :func:`~jaxfriction.plot_branch`) and Den Hartog's closed
    form (dots); right panel the dissipation per cycle against ``4 mu N X``."""
    from .._plots import plt  # pyplot, with the Agg back end set
    from .._workflows.periodic.plot import plot_branch

    fig, axes = plt.subplots(1, 2, figsize=(12, 5), constrained_layout=True)
    ratios = sorted({r for r, _ in branches})
    for k, r in enumerate(ratios):
        color = f"C{k}"
        for side in ("below", "above"):
            branch = branches.get((r, side))
            if branch is None:
                continue
            label = f"r = {r:g} (continued)" if side == "below" else None
            plot_branch(branch, ax=axes[0], label=label, color=color)
            w, exact = branch["force.omega"].values, branch["den_hartog"].values
            axes[0].plot(w[::2], exact[::2], "k.", ms=4, label="Den Hartog (1931)" if k == 0 and side == "below"
                         else None)
            axes[1].plot(w, branch["dissipation"].values, "-", color=color, label=label)
            axes[1].plot(w[::2], 4 * r * exact[::2], "k.", ms=4,
                         label="4 mu N X (Den Hartog)" if k == 0 and side == "below" else None)
    axes[0].axvline(1.0, color="grey", lw=0.6, ls=":")
    axes[0].set(xlabel="forcing frequency omega / omega_n", ylabel="amplitude X k / P",
                title="frequency response (stable solid, unstable dashed)")
    top = max(float(np.nanmax(b["amplitude"].values)) for b in branches.values())
    axes[0].set_ylim(0, 1.05 * top)
    axes[0].legend(fontsize=8)
    axes[1].set(xlabel="forcing frequency omega / omega_n", ylabel="dissipation per cycle D (J)",
                title="friction dissipation per cycle")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"Coulomb-damped oscillator, Quinn's law eps = {numbers['eps']:g}, RK4 dt = {numbers['dt']:g}: "
                 f"max |X / X_Den Hartog - 1| = {numbers['max_relative_gap_den_hartog']:.2e}")
    fig.savefig(path, dpi=110)
    plt.close(fig)
