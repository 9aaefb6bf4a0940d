"""Closed-form solutions of the Coulomb oscillator."""

from __future__ import annotations

import math

from .._checks import check_real


def unforced_rest_position(x0: float, v0: float = 0.0, mu_n: float = 1.0, stiffness: float = 1.0,
                           mass: float = 1.0, max_half_cycles: int = 100_000) -> float:
    """Exact rest position of ``m x'' + k x = f`` with Coulomb friction (Quinn 2004 Sec. 3.1.1).

    Each half cycle is a harmonic arc about the centre ``c = -s mu_n / k`` (``s`` the
    direction of motion) and ends at a turning point; the amplitude about the origin drops
    by ``2 mu_n / k`` per half cycle. The motion stops at the first turning point with
    ``|x| <= mu_n / k``, where the force balance ``k x`` is within the static limit.
    Quinn's case ``x0 = 2.75, v0 = 0, mu N = 1``: one half cycle, rest at ``-0.75``.

    Arguments are plain floats (host-side reference).

    Args:
        x0: initial position (m).
        v0: initial velocity (m/s).
        mu_n: friction limit mu N >= 0 (N).
        stiffness: spring stiffness k > 0 (N/m).
        mass: mass m > 0 (kg).

    Returns:
        The rest position (float, m).

    Raises:
        ValueError: invalid arguments.
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


def den_hartog_response(force_amplitude: float, omega: float, mu_n: float, stiffness: float = 1.0,
                        mass: float = 1.0) -> tuple[float, float]:
    """Den Hartog's steady non-sticking response of ``m x'' + k x = f + P cos(omega t)``.

    Den Hartog (1931): in the steady, symmetric, non-sticking motion every half period is
    one slip interval, starting from rest at ``x = -X`` (forcing phase ``phi``) and ending
    at rest at ``x = +X``. Solving the slip solution's four end conditions gives

        ``X = (P/k) sqrt(1/(1 - b^2)^2 - (r U)^2)``,  ``U = tan(pi / (2 b)) / b``,
        ``sin(phi) = r U (1 - b^2)``,

    with ``b = omega / omega_n``, ``omega_n = sqrt(k/m)``, ``r = mu N / P`` (our derivation
    reproduces Den Hartog's ``U = sin(pi/b) / (b (1 + cos(pi/b)))``). The motion at forcing
    phase ``omega t + phi = 0`` (mod ``2 pi``) is ``x = -X``, ``x' = 0``.

    Arguments are plain floats.

    Args:
        force_amplitude: forcing amplitude P > 0 (N).
        omega: forcing frequency, > 0 (rad/s).
        mu_n: friction limit mu N >= 0 (N).
        stiffness: spring stiffness k > 0.
        mass: mass m > 0.

    Returns:
        ``(X, phi)``: amplitude (m) and phase (rad, in ``(-pi/2, pi/2)`` for b < 1, shifted by
            pi for b > 1 so that X > 0).

    Raises:
        ValueError: invalid arguments, ``b = 1`` (resonance), or friction too large for a
            non-sticking motion (``r U |1 - b^2| >= 1``).
    """
    check_real("force_amplitude", force_amplitude, positive=True)
    check_real("omega", omega, positive=True)
    check_real("mu_n", mu_n, nonnegative=True)
    check_real("stiffness", stiffness, positive=True)
    check_real("mass", mass, positive=True)
    b = omega / math.sqrt(stiffness / mass)
    if abs(1 - b * b) < 1e-12:
        raise ValueError("omega is at resonance (b = 1): Den Hartog's steady response is unbounded")
    r, u = mu_n / force_amplitude, math.tan(math.pi / (2 * b)) / b
    s = r * u * (1 - b * b)
    if abs(s) >= 1:
        raise ValueError(f"no steady non-sticking motion: r U |1 - b^2| = {abs(s):.3g} >= 1")
    a = force_amplitude / (stiffness * (1 - b * b))
    phi = math.asin(s)
    if a > 0:  # X = -a cos(phi) must be positive
        phi = math.pi - phi
    return -a * math.cos(phi), phi


def belt_limit_cycle(belt_velocity: float, mu_s_n: float, mu_k_n: float, stiffness: float = 1.0,
                     mass: float = 1.0) -> dict[str, float]:
    """Stick-slip limit cycle of the spring-mass on a belt, ``m x'' + k x = f(x' - v0)`` (paper 004).

    The block rides the belt (``x' = v0``) until the spring force ``k x`` reaches ``mu_s N``,
    then slips with friction ``+mu_k N`` about ``x_k = mu_k N / k``, starting ``d = (mu_s -
    mu_k) N / k`` above it with speed ``v0``, on the circle of radius ``A = sqrt(d^2 +
    (v0/omega_n)^2)`` in the ``(x - x_k, x'/omega_n)`` plane. It sticks again where ``x'`` first
    returns to ``v0``, at ``x = x_k - d``, after sweeping the angle ``pi + 2 theta``, ``theta =
    atan2(v0/omega_n, d)``.

    With ``mu_s = mu_k`` (the setup of the event-detection notes, paper 004) ``d = 0``: the
    block touches the belt speed once per cycle without sticking (``stick_duration = 0``) and
    the cycle is the free oscillation about ``x_k`` with period ``2 pi / omega_n``.

    Arguments are plain floats.

    Args:
        belt_velocity: belt velocity v0 > 0.
        mu_s_n: static limit mu_s N.
        mu_k_n: kinetic level mu_k N, with ``0 <= mu_k N <= mu_s N``.
        stiffness: spring stiffness k > 0.
        mass: mass m > 0.

    Returns:
        Dict with ``period``, ``stick_duration``, ``slip_duration``, ``peak_spring_force``
            (k (x_k + A)), ``min_spring_force`` (k (x_k - A)), ``stick_start`` and
            ``stick_end`` positions.

    Raises:
        ValueError: invalid arguments or ``mu_k N > mu_s N``.

    Examples:
        The belt of ``tests/test_static_kinetic.py`` (``v0 = 0.2``, ``mu_s = 1``, ``mu_k = 0.6``,
        ``N = k = m = 1``): 4 time units of stick, then a slip of ``pi + 2 atan(0.5)``:

        >>> from jaxfriction import belt_limit_cycle
        >>> cycle = belt_limit_cycle(0.2, 1.0, 0.6)
        >>> round(cycle["period"], 6), cycle["stick_duration"], round(cycle["peak_spring_force"], 6)
        (8.068888, 4.0, 1.047214)
    """
    check_real("belt_velocity", belt_velocity, positive=True)
    check_real("mu_s_n", mu_s_n, nonnegative=True)
    check_real("mu_k_n", mu_k_n, nonnegative=True)
    check_real("stiffness", stiffness, positive=True)
    check_real("mass", mass, positive=True)
    if not mu_k_n <= mu_s_n:
        raise ValueError(f"mu_k_n must be <= mu_s_n, got {mu_k_n!r} > {mu_s_n!r}")
    omega_n = math.sqrt(stiffness / mass)
    x_k, d = mu_k_n / stiffness, (mu_s_n - mu_k_n) / stiffness
    y0 = belt_velocity / omega_n
    amplitude, theta = math.hypot(d, y0), math.atan2(y0, d)
    slip = (math.pi + 2 * theta) / omega_n
    stick = 2 * d / belt_velocity
    return {
        "period": slip + stick,
        "stick_duration": stick,
        "slip_duration": slip,
        "peak_spring_force": stiffness * (x_k + amplitude),
        "min_spring_force": stiffness * (x_k - amplitude),
        "stick_start": x_k - d,
        "stick_end": x_k + d,
    }
