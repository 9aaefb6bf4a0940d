"""Whether a fixed step resolves what drives a system: its forcing period, its record's samples.

A fixed-step run whose step jumps over the forcing returns a number, not an error: RK4 at
12 steps per forcing period measured the oscillator's dissipation 8.8 % off with status 0,
and a quake run whose step was 20 000 record samples long saw almost none of the record.
The rule (checked by :func:`~jaxfriction.simulate` for fixed-step solvers,
:func:`~jaxfriction.sweep` and :func:`~jaxfriction.quake_response`, before anything runs):

- at least :data:`STEPS_PER_PERIOD` (20) steps per period ``2 pi / |omega|`` of every
  :class:`~jaxfriction.Harmonic` drive of the system and, in a sweep, of the template's
  ``frequency`` path (a swept ``omega``: its largest value);
- a step no longer than the sample interval of every :class:`~jaxfriction.GroundMotion`
  (at least one step per record sample);
- in a sweep and a quake run, a step no longer than the run (and than a sweep's measured
  window): such a ``dt`` is a mistaken argument (a window measured in one step).

A step is refused with a ``ValueError`` naming ``dt``. (The fixed-step grids shorten the
step to land on ``t1``, so the step :func:`~jaxfriction.simulate` uses is ``min(dt, t1 -
t0)``; that is what it checks against the forcing and the records.)
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import is_concrete, named_modules
from .._forcing.drives import Harmonic
from .._forcing.ground_motion import GroundMotion

#: The fewest fixed steps per forcing period accepted (RK4's phase and amplitude error per
#: period is ~(2 pi / N)^4 / 120 relative: 8e-5 at 20; the oscillator's window dissipation was
#: 8.8 % off at 12.6 steps per period).
STEPS_PER_PERIOD = 20


def _drives(tree):
    """``(path, module)`` for every Harmonic and GroundMotion inside ``tree``."""
    return [(path, m) for path, m in named_modules(tree) if isinstance(m, (Harmonic, GroundMotion))]


def _value(system, path):
    from .._paths import get_parameter

    try:
        return get_parameter(system, path)
    except ValueError:
        return None


def check_step_resolution(system, dt, *, span=None, run=None, window=None, swept=None, frequency=None, option="dt"):
    """Raise ``ValueError`` naming ``option`` unless the fixed step ``dt`` resolves the
    forcing and records of ``system`` (see the module docstring).

    Args:
        system: a jaxfriction system.
        dt: the step bound.
        span: the run length (the step used is at most this).
        run: the run length, when a ``dt`` longer than it is refused (a sweep's, a quake's).
        window: a measured window (a sweep's): ``dt`` must not be longer.
        swept: ``{path: values}`` of a sweep's grid, for a swept ``omega``.
        frequency: the path of a further forcing frequency (rad per time unit), e.g. a
            template's ``frequency`` that is no Harmonic drive (a chain's ``omega``).
        option: how the message names the step (``"dt"``, ``"--dt"``).
    """
    if dt is None or not is_concrete(dt):
        return
    dt = float(dt)
    for length, what in ((run, "the run"), (window, "the measured window")):
        if length is not None and dt > float(length) * (1 + 1e-12):
            raise ValueError(f"{option} = {dt:g} is longer than {what} ({float(length):g}): use a step that "
                             f"resolves it")
    span = run if span is None else span
    h = dt if span is None else min(dt, float(span))
    swept = swept or {}
    frequencies = {} if frequency is None else {frequency: swept.get(frequency, _value(system, frequency))}
    drives = _drives(system)
    for path, drive in drives:
        if isinstance(drive, Harmonic):
            name = f"{path}.omega" if path else "omega"
            if name not in swept and is_concrete(drive.amplitude) and \
                    not np.any(np.asarray(drive.amplitude, dtype=float) != 0):
                continue  # no forcing to resolve
            frequencies.setdefault(name, swept.get(name, drive.omega))
    for name, values in frequencies.items():
        if values is None or not is_concrete(values):
            continue
        try:
            omega = float(np.nanmax(np.abs(np.asarray(values, dtype=float))))
        except (TypeError, ValueError):  # a malformed grid: refused with its own message later
            continue
        if omega > 0 and h * STEPS_PER_PERIOD * omega > 2 * math.pi * (1 + 1e-9):
            period = 2 * math.pi / omega
            raise ValueError(f"{option} = {dt:g} does not resolve the forcing: {period / h:.3g} steps per period "
                             f"of {name} = {omega:g} (period {period:.4g}), at least {STEPS_PER_PERIOD} are "
                             f"needed: use {option} <= {period / STEPS_PER_PERIOD:.4g}")
    for path, drive in drives:
        if isinstance(drive, GroundMotion) and is_concrete(drive.dt):
            sample = float(drive.dt)
            if h > sample * (1 + 1e-9):
                record = f"the record {drive.name!r}" if drive.name else "the record" + (f" ({path})" if path else "")
                raise ValueError(f"{option} = {dt:g} is longer than the sample interval {sample:g} s of {record}: it "
                                 f"would step over the record's samples; use {option} <= {sample:g}")
