"""Closed-form solutions of the Coulomb oscillator."""

from __future__ import annotations

import math

from .._checks import check_real


def unforced_rest_position(x0, v0=0.0, mu_n=1.0, stiffness=1.0, mass=1.0, max_half_cycles=100_000):
    """Exact rest position of ``m x'' + k x = f`` with Coulomb friction (Quinn 2004 Sec. 3.1.1).

    Each half cycle is a harmonic arc about the centre ``c = -s mu_n / k`` (``s`` the
    direction of motion) and ends at a turning point; the amplitude about the origin drops
    by ``2 mu_n / k`` per half cycle. The motion stops at the first turning point with
    ``|x| <= mu_n / k``, where the force balance ``k x`` is within the static limit.
    Quinn's case ``x0 = 2.75, v0 = 0, mu N = 1``: one half cycle, rest at ``-0.75``.

    Args: ``x0`` (m), ``v0`` (m/s), ``mu_n`` = mu N >= 0 (N), ``stiffness`` k > 0 (N/m),
        ``mass`` m > 0 (kg). Plain floats (host-side reference).
    Returns: the rest position (float, m).
    Raises: ValueError for invalid arguments.
    """
    check_real("x0", x0)
    check_real("v0", v0)
    check_real("mu_n", mu_n, nonnegative=True)
    check_real("stiffness", stiffness, positive=True)
    check_real("mass", mass, positive=True)
    delta = mu_n / stiffness
    x, v = float(x0), float(v0)
    for _ in range(max_half_cycles):
        if v == 0.0 and abs(x) <= delta:
            return x
        s = math.copysign(1.0, v) if v != 0.0 else -math.copysign(1.0, x)
        centre = -s * delta
        amplitude = math.hypot(x - centre, v * math.sqrt(mass / stiffness))
        x, v = centre + s * amplitude, 0.0
    raise ValueError("max_half_cycles reached; mu_n is too small for the motion to stop")
