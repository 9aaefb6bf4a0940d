"""How the period of a periodic steady state is known: from the forcing, or unknown (autonomous).

A forced system's steady state has the period of its forcing. The forcing is found where
:mod:`jaxfriction._integrate.resolution` finds it: every :class:`~jaxfriction.Harmonic` drive
of the system with a non-zero amplitude (``"force.omega"``), or a path named by the caller
(``frequency=``, as a :class:`~jaxfriction.Template` names ``"omega"`` for the chain). A
system with no such drive is autonomous (the belt, the spring-slider): its period is an
unknown of the shooting problem, guessed from a transient (:func:`estimate_period`: the mean
spacing of a position's upward crossings through its mean).
"""

from __future__ import annotations

import math

import numpy as np

from ..._checks import check_real, is_concrete, named_modules
from ..._forcing.drives import Harmonic
from ..._paths import check_paths, get_parameter


def forcing_frequency_path(system, frequency: str | None = None) -> str | None:
    """The path of the forcing frequency (rad per time unit) of ``system``, or None if autonomous.

    Args:
        system: a jaxfriction system.
        frequency: an explicit path (checked), e.g. ``"omega"`` for a chain; default: the
            ``omega`` of the system's Harmonic drives with non-zero amplitude.

    Returns:
        A path such as ``"force.omega"``, or None when no drive forces the system.

    Raises:
        ValueError: naming ``frequency`` for an unknown path, or when Harmonic drives of
            different frequencies force the system (quasi-periodic or period of a common
            multiple: give ``frequency`` and ``period``).
    """
    if frequency is not None:
        check_paths(system, [frequency], "frequency")
        return frequency
    found = []
    for path, module in named_modules(system):
        if not isinstance(module, Harmonic):
            continue
        if is_concrete(module.amplitude) and not np.any(np.asarray(module.amplitude, dtype=float) != 0):
            continue
        found.append(f"{path}.omega" if path else "omega")
    if not found:
        return None
    omegas = {p: get_parameter(system, p) for p in found}
    if is_concrete(list(omegas.values())):
        values = {p: float(np.asarray(v)) for p, v in omegas.items()}
        first = next(iter(values.values()))
        if any(not math.isclose(v, first, rel_tol=1e-12) for v in values.values()):
            raise ValueError(f"frequency: the system is forced at several frequencies {values}; name the one "
                             f"whose period the steady state has (frequency=...) and give period=")
    return found[0]


def forcing_period(system, frequency: str):
    """``2 pi / |omega|`` at path ``frequency`` (traceable: the value may be a sweep's tracer)."""
    import jax.numpy as jnp

    return 2 * jnp.pi / jnp.abs(jnp.asarray(get_parameter(system, frequency), dtype=float))


def estimate_period(ts, q) -> float | None:
    """The mean spacing of the upward crossings of ``q`` through its mean (interpolated), or
    None with fewer than two crossings. Host-side."""
    ts, q = np.asarray(ts, dtype=float), np.asarray(q, dtype=float)
    q = q - q.mean()
    i = np.flatnonzero((q[:-1] < 0) & (q[1:] >= 0))
    if i.size < 2:
        return None
    crossings = ts[i] + (ts[i + 1] - ts[i]) * (-q[i]) / (q[i + 1] - q[i])
    return float(np.mean(np.diff(crossings)))


def _forced_period(system, frequency, period) -> float:
    """``T = 2 pi / omega`` of a forced system (ValueError naming ``period`` if one was given,
    ``frequency`` if it is not positive)."""
    if period is not None:
        raise ValueError(f"period: a forced system's period is 2 pi / {frequency}; do not give period "
                         f"(or name no frequency for an autonomous system)")
    T = float(forcing_period(system, frequency))
    check_real("frequency", T, positive=True)
    return T


def _need_transient(transient):
    """An autonomous system without a period guess needs a transient to estimate it from."""
    if transient is None:
        raise ValueError("period: an autonomous system needs a period guess, or a transient (time units) to "
                         "estimate it from")


def _estimated_period(ts, q) -> float:
    """:func:`estimate_period`, or ValueError naming ``transient`` when ``q`` does not oscillate."""
    period = estimate_period(ts, q)
    if period is None:
        raise ValueError("transient: no oscillation in the second half of the transient to estimate a "
                         "period from (the system may be at rest); give period= or a longer transient")
    return period
