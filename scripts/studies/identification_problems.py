"""Identification problems whose data come from independent scipy simulators.

Every problem has four parts:

1. a reference simulator written here with numpy/scipy (``solve_ivp``, Radau, ``rtol = 1e-11``)
   from the equations of the papers and of jaxfriction's docstrings, written out again and
   never calling jaxfriction;
2. the jaxfriction system that models the same physics (the template of the fit), with the
   true parameters set;
3. the record: the reference's positions on a uniform grid plus Gaussian noise from
   ``numpy.random.default_rng(seed)`` (seed and sigma below), with the known initial state;
   The seeds are such that the least-squares optimum of the full record (``jf.fit`` with
   ``optimizer="lm"`` started at the truth) lies within 1 standard error of the truth in every
   parameter (measured |z| <= 0.94), so the benchmark's 2-stderr criterion judges the search,
   not the noise draw (seed 5 of ``position-axis`` put ``F_v`` at z = -1.96, seed 7 of
   ``rate-state`` ``D_c`` at 1.79: replaced by 4 and 0);
4. the paths to identify, their true values and their ranges (a lower limit for the boxes of
   ``bench_identification.py``: 0 for a positive parameter, ``-1`` for Segalman's ``chi``,
   None for a signed one such as an offset).

A problem builder returns a :class:`Problem`; ``problem[:4]`` is ``(system, record, truth,
dt)`` (``dt``: the RK4 step bound to fit with). Builders take ``quick=True`` for a shorter
record where the problem allows it (smoke runs; the records differ from the full ones).

The problems (the equations are in each simulator's docstring):

- ``lugre-belt``: a mass on a spring riding a belt with LuGre friction (stick-slip);
- ``lugre-forced``: the forced LuGre oscillator of docs/howto/fit.md;
- ``dahl``: a mass pulled through a spring by a prescribed sinusoidal displacement, Dahl friction;
- ``position-axis``: a PD-controlled position axis with regularized Coulomb + viscous friction
  and a force offset (the shape of the EMPS benchmark, Janot et al. 2019);
- ``rate-state``: a spring-slider under a load-point velocity step 1 -> 10 um/s (aging law);
- ``segalman``: force-controlled hysteresis loops of a Segalman (4-parameter Iwan) joint.

Usage: ``from identification_problems import PROBLEMS; problem = PROBLEMS["dahl"]()``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy.integrate import solve_ivp

RTOL = 1e-11  # the references' relative tolerance (Radau)


class Problem(NamedTuple):
    """One identification problem (see the module docstring); ``problem[:4]`` is ``(system,
    record, truth, dt)``."""

    system: Any  # the jaxfriction system at the truth (the fit's template)
    record: Any  # jf.Measurement of the reference's noisy positions, y0 known
    truth: dict  # path -> true value
    dt: float  # RK4 step bound for simulate / fit
    limits: dict  # path -> lower limit of the parameter (0, -1, ...) or None (signed)
    clean: np.ndarray  # the reference's noise-free positions on record.t
    noise: float  # sigma of the added noise (units of q)
    reference_seconds: float  # wall time of the scipy reference
    description: str


def radau(rhs, y0, t, atol, jac=None):
    """``solve_ivp(rhs, Radau, rtol=RTOL, atol)`` sampled on ``t`` -> ``(len(t), n)`` states."""
    sol = solve_ivp(rhs, (float(t[0]), float(t[-1])), np.asarray(y0, dtype=float), method="Radau", t_eval=t,
                    rtol=RTOL, atol=atol, jac=jac)
    if not sol.success:
        raise RuntimeError(f"reference integration failed: {sol.message}")
    return sol.y.T


def noisy(clean, sigma, seed):
    """``clean + sigma N(0, 1)`` drawn from ``numpy.random.default_rng(seed)``."""
    return clean + sigma * np.random.default_rng(seed).standard_normal(clean.shape)


def _sign(x):
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


# ---------------------------------------------------------------------------------------------
# LuGre (Canudas de Wit, Olsson, Astrom & Lischinsky 1995, Sec. 2)


def lugre_oscillator_reference(t, *, sigma0, sigma1, sigma2, mu_c, mu_s, v_s, delta=2.0, normal=1.0, mass=1.0,
                               stiffness=1.0, belt=0.0, force=lambda t: 0.0):
    """A mass on a spring on a surface moving at ``belt`` (m/s), LuGre friction, from rest.

    State ``(x, v, z)``, slip velocity ``w = v - belt``::

        g(w)  = N (mu_c + (mu_s - mu_c) exp(-|w / v_s|^delta))
        z'    = w - sigma0 |w| z / g(w)
        F     = sigma0 z + sigma1 z' + sigma2 w          (friction on the body: -F)
        m v'  = force(t) - k x - F

    Returns the states ``(len(t), 3)`` at ``t`` (``x = v = z = 0`` at ``t[0]``).
    """
    def rhs(time_, y):
        x, v, z = y
        w = v - belt
        g = normal * (mu_c + (mu_s - mu_c) * math.exp(-abs(w / v_s) ** delta))
        zdot = w - sigma0 * abs(w) * z / g
        friction = sigma0 * z + sigma1 * zdot + sigma2 * w
        return [v, (force(time_) - stiffness * x - friction) / mass, zdot]

    return radau(rhs, [0.0, 0.0, 0.0], t, atol=[1e-14, 1e-14, 1e-16])


LUGRE_TRUTH = {"law.sigma0": 200.0, "law.sigma1": 5.0, "law.sigma2": 0.1, "law.mu_c": 0.3, "law.mu_s": 0.5,
               "law.v_s": 0.1}


def _lugre_system(jf, **kw):
    law = jf.LuGre(**{k[4:]: v for k, v in LUGRE_TRUTH.items()}, delta=2.0)
    return jf.Oscillator(law=law, **kw)


def lugre_belt(quick=False):
    """LuGre stick-slip on a belt.

    ``m x'' + k x = -F(x' - v_b, z)``, m = 1 kg, k = 1 N/m, N = 1 N, belt v_b = 0.2 m/s, LuGre
    sigma0 200 N/m, sigma1 5 N s/m, sigma2 0.1 N s/m, mu_c 0.3, mu_s 0.5, v_s 0.1 m/s, delta 2;
    from rest (x = x' = z = 0). In jaxfriction: ``Oscillator(LuGre(...), surface=Constant(0.2),
    stiffness=1, mass=1, normal=1)``: the Oscillator hands the law the slip velocity ``x' -
    v_s(t)`` (its force is ``law.force(x' - v_b, z, N)``). Record: x at 100 Hz for 20 s (10 s
    with ``quick``), noise sigma = 1 % of the clean record's standard deviation, seed 11; the
    six LuGre parameters (delta fixed). RK4 step 2 ms (the bristle relaxation rate sigma0 |w| /
    g(w) stays below ~350/s).
    """
    import jaxfriction as jf

    t = np.linspace(0.0, 10.0 if quick else 20.0, 1001 if quick else 2001)
    began = time.perf_counter()
    clean = lugre_oscillator_reference(t, **{k[4:]: v for k, v in LUGRE_TRUTH.items()}, belt=0.2)[:, 0]
    seconds = time.perf_counter() - began
    sigma = 0.01 * float(np.std(clean))
    system = _lugre_system(jf, surface=jf.Constant(0.2), stiffness=1.0, mass=1.0, normal=1.0)
    record = jf.Measurement(t=t, q=noisy(clean, sigma, 11), y0=np.zeros(2), name="lugre-belt")
    return Problem(system, record, dict(LUGRE_TRUTH), 2e-3, {k: 0.0 for k in LUGRE_TRUTH}, clean, sigma, seconds,
                   lugre_belt.__doc__)


def lugre_forced(quick=False):
    """The LuGre experiment of docs/howto/fit.md ("Identify LuGre's parameters").

    ``m x'' + k x = 0.8 sin(1.3 t) - F(x', z)``, m = 1, k = 1, N = 1, fixed floor, the LuGre
    parameters of ``lugre-belt``; from rest. In jaxfriction: ``Oscillator(LuGre(...),
    force=Harmonic(0.8, 1.3), stiffness=1)``. Record: x every 0.02 s for 8 s (401 samples),
    noise sigma 1e-3 m, seed 1; the six LuGre parameters; RK4 step 2 ms. (``quick`` changes
    nothing: the record is already short.)
    """
    import jaxfriction as jf

    t = np.linspace(0.0, 8.0, 401)
    began = time.perf_counter()
    clean = lugre_oscillator_reference(t, **{k[4:]: v for k, v in LUGRE_TRUTH.items()},
                                       force=lambda s: 0.8 * math.sin(1.3 * s))[:, 0]
    seconds = time.perf_counter() - began
    system = _lugre_system(jf, force=jf.Harmonic(0.8, 1.3), stiffness=1.0)
    record = jf.Measurement(t=t, q=noisy(clean, 1e-3, 1), y0=np.zeros(2), name="lugre-forced")
    return Problem(system, record, dict(LUGRE_TRUTH), 2e-3, {k: 0.0 for k in LUGRE_TRUTH}, clean, 1e-3, seconds,
                   lugre_forced.__doc__)


# ---------------------------------------------------------------------------------------------
# Dahl (Dahl 1968, 1976; Olsson et al. 1998 eq. 7)

DAHL = {"mass": 1.0, "stiffness": 20.0, "damping": 5.0, "U": 0.05, "omega": 1.0}
DAHL_TRUTH = {"law.sigma": 100.0, "law.mu": 0.5, "law.alpha": 1.5}


def dahl_reference(t, *, sigma, mu, alpha, normal=1.0, mass, stiffness, damping, U, omega):
    """A mass pulled through a spring whose far end moves by ``u(t) = U sin(omega t)``, Dahl friction.

    State ``(x, v, z)`` with Dahl's ``z = F / sigma`` (``F_c = mu N``)::

        z'   = v (max(1 - sigma z sgn(v) / F_c, 0))^alpha
        m v' = k (u(t) - x) - c v - sigma z

    (``dF/dx = sigma (1 - F sgn(v) / F_c)^alpha``, Olsson et al. 1998 eq. 7). From rest.
    """
    f_c = mu * normal

    def rhs(time_, y):
        x, v, z = y
        base = max(1.0 - sigma * z * _sign(v) / f_c, 0.0)
        zdot = v * base**alpha
        u = U * math.sin(omega * time_)
        return [v, (stiffness * (u - x) - damping * v - sigma * z) / mass, zdot]

    return radau(rhs, [0.0, 0.0, 0.0], t, atol=[1e-14, 1e-14, 1e-16])


def dahl(quick=False):
    """Dahl friction under a displacement-driven spring.

    ``m x'' + c x' + k x = k U sin(omega t) - sigma z`` (the far end of the spring k moves by
    ``U sin(omega t)``): m = 1 kg, k = 20 N/m, c = 5 N s/m (known, so the bristle-mass ringing
    at sqrt((k + sigma)/m) = 11 rad/s dies out), U = 0.05 m (``k U`` = 1 N, twice F_c: the
    contact slides every half period), omega = 1 rad/s; Dahl sigma = 100 N/m, mu = 0.5 (N = 1
    N), alpha = 1.5; from rest. In jaxfriction: ``Oscillator(Dahl(100, 0.5, 1.5),
    force=Harmonic(k U, omega), stiffness=k, damping=c, mass=m)``, the spring's moving end as
    the force ``k u(t)``. Record: x every 0.02 s for two periods, 4 pi s (629 samples; one
    period with ``quick``), noise sigma 1e-4 m (the body moves about +-25 mm), seed 3;
    (sigma, mu, alpha). RK4 step 5 ms.
    """
    import jaxfriction as jf

    periods = 1 if quick else 2
    n = 314 * periods + 1
    t = np.linspace(0.0, periods * 2 * math.pi, n)
    began = time.perf_counter()
    clean = dahl_reference(t, **{k[4:]: v for k, v in DAHL_TRUTH.items()}, **DAHL)[:, 0]
    seconds = time.perf_counter() - began
    law = jf.Dahl(**{k[4:]: v for k, v in DAHL_TRUTH.items()})
    system = jf.Oscillator(law=law, force=jf.Harmonic(DAHL["stiffness"] * DAHL["U"], DAHL["omega"]),
                           stiffness=DAHL["stiffness"], damping=DAHL["damping"], mass=DAHL["mass"])
    record = jf.Measurement(t=t, q=noisy(clean, 1e-4, 3), y0=np.zeros(2), name="dahl")
    return Problem(system, record, dict(DAHL_TRUTH), 5e-3, {k: 0.0 for k in DAHL_TRUTH}, clean, 1e-4, seconds,
                   dahl.__doc__)


# ---------------------------------------------------------------------------------------------
# a closed-loop position axis (the shape of EMPS, Janot, Gautier & Brunot 2019)

AXIS = {"Kp": 100.0, "Kd": 10.0, "v0": 0.01, "amplitudes": (0.1, 0.05, 0.02), "omegas": (0.6, 1.9, 4.3)}
AXIS_TRUTH = {"law.mu": 1.0, "law.viscous": 2.0, "force.offset": -0.3, "mass": 2.0}


def threlfall_reference(v, f_c, v0, f_v):
    """Threlfall's law as jaxfriction documents it (Ratel's reading): the friction force on the body.

    ``|f| = F_c (1 - exp(-3|v|/v0)) / (1 - exp(-3))`` for ``|v| <= v0``, ``F_c + F_v (|v| -
    v0)`` beyond, opposing ``v``.
    """
    s = abs(v)
    magnitude = f_c * -math.expm1(-3.0 * s / v0) / -math.expm1(-3.0) if s <= v0 else f_c + f_v * (s - v0)
    return -_sign(v) * magnitude


def axis_reference_r(t, amplitudes=AXIS["amplitudes"], omegas=AXIS["omegas"]):
    """The axis's position reference ``r(t) = sum_i A_i sin(omega_i t)`` (m)."""
    return sum(a * np.sin(w * np.asarray(t)) for a, w in zip(amplitudes, omegas))


def position_axis_reference(t, *, f_c, f_v, offset, mass, Kp, Kd, v0, amplitudes, omegas):
    """``m x'' = Kp (r(t) - x) - Kd x' + offset + f(x')`` with Threlfall's Coulomb + viscous ``f``; from rest."""
    def rhs(time_, y):
        x, v = y
        r = sum(a * math.sin(w * time_) for a, w in zip(amplitudes, omegas))
        return [v, (Kp * (r - x) - Kd * v + offset + threlfall_reference(v, f_c, v0, f_v)) / mass]

    return radau(rhs, [0.0, 0.0], t, atol=[1e-14, 1e-14])


def _servo_drive_class():
    import jax.numpy as jnp

    import jaxfriction as jf

    class ServoForce(jf.AbstractDrive):
        """The controller's force on the axis less its stiffness term: ``Kp r(t) + offset``,
        ``r(t) = sum_i A_i sin(omega_i t)`` (paths ``"force.offset"``, ``"force.gain"``, ...)."""

        gain: float
        amplitudes: Any
        omegas: Any
        offset: float = 0.0

        def __call__(self, t):
            r = jnp.sum(jnp.asarray(self.amplitudes) * jnp.sin(jnp.asarray(self.omegas) * t))
            return self.gain * r + self.offset

    return ServoForce


_SERVO = []


def servo_force(gain, amplitudes, omegas, offset):
    """A :class:`jaxfriction.AbstractDrive` ``gain r(t) + offset`` (one class per process)."""
    if not _SERVO:
        _SERVO.append(_servo_drive_class())
    return _SERVO[0](gain=gain, amplitudes=tuple(amplitudes), omegas=tuple(omegas), offset=offset)


def position_axis(quick=False):
    """A PD-controlled position axis with Coulomb + viscous friction and a force offset (EMPS-like).

    ``m x'' = Kp (r(t) - x) - Kd x' - F_c s(x') - F_v x' + offset`` with the known reference
    ``r(t) = 0.1 sin(0.6 t) + 0.05 sin(1.9 t) + 0.02 sin(4.3 t)`` m and known gains Kp = 100
    N/m, Kd = 10 N s/m (natural frequency 7.1 rad/s, damping ratio 0.35 at m = 2). The friction
    is jaxfriction's Threlfall law, Coulomb regularized over the tolerance velocity v0 = 0.01
    m/s (known) plus viscous friction beyond it: ``|f| = F_c (1 - e^(-3|v|/v0)) / (1 - e^-3)``
    for ``|v| <= v0``, ``F_c + F_v (|v| - v0)`` beyond (so EMPS's ``F_c sgn(v) + F_v v`` is its
    ``v0 -> 0`` limit; at ``v0`` = 1 cm/s the difference is the constant ``F_v v0`` = 0.02 N
    in the Coulomb level). Truth: m = 2 kg, F_c = 1 N, F_v = 2 N s/m, offset = -0.3 N.

    Mapping to jaxfriction, every unknown under its own path: ``Oscillator(law=Threlfall(mu=F_c,
    v0=0.01, viscous=F_v), normal=1, mass=m, stiffness=Kp, damping=Kd, force=Kp r(t) +
    offset)`` where the force is a user's drive (:func:`servo_force`): the controller's
    stiffness and damping are the Oscillator's ``k`` and ``c`` (known), the friction's viscous
    part lives in the law (``"law.viscous"``, acting on the slip velocity), the offset in the
    drive (``"force.offset"``, signed). Identified: law.mu (F_c), law.viscous (F_v),
    force.offset, mass. Record: x at 100 Hz for 20 s (10 s with ``quick``), noise sigma 1e-4 m
    (the tracking error, which carries the friction, is ~1e-2 m), seed 4. RK4 step 5 ms (the
    law's slope at 0 makes a damper of rate 3 F_c / (0.95 v0 m) = 158/s).
    """
    import jaxfriction as jf

    t = np.linspace(0.0, 10.0 if quick else 20.0, 1001 if quick else 2001)
    truth = dict(AXIS_TRUTH)
    began = time.perf_counter()
    clean = position_axis_reference(t, f_c=truth["law.mu"], f_v=truth["law.viscous"], offset=truth["force.offset"],
                                    mass=truth["mass"], **AXIS)[:, 0]
    seconds = time.perf_counter() - began
    law = jf.Threlfall(mu=truth["law.mu"], v0=AXIS["v0"], viscous=truth["law.viscous"])
    force = servo_force(AXIS["Kp"], AXIS["amplitudes"], AXIS["omegas"], truth["force.offset"])
    system = jf.Oscillator(law=law, force=force, mass=truth["mass"], stiffness=AXIS["Kp"], damping=AXIS["Kd"],
                           normal=1.0)
    record = jf.Measurement(t=t, q=noisy(clean, 1e-4, 4), y0=np.zeros(2), name="position-axis")
    limits = {"law.mu": 0.0, "law.viscous": 0.0, "force.offset": None, "mass": 0.0}
    return Problem(system, record, truth, 5e-3, limits, clean, 1e-4, seconds, position_axis.__doc__)


# ---------------------------------------------------------------------------------------------
# rate and state (Dieterich 1979, Ruina 1983, Rice & Ruina 1983; regularized as Lapusta et al. 2000)

RS = {"mu_0": 0.6, "V_0": 1e-6, "normal": 1.0, "stiffness": 1e3, "mass": 10.0, "V1": 1e-6, "V2": 1e-5,
      "t_step": 1.0, "width": 0.05}
RS_TRUTH = {"law.a": 0.005, "law.b": 0.01, "law.D_c": 1e-5}


def rate_state_reference(t, *, a, b, D_c, mu_0, V_0, normal, stiffness, mass, V1, V2, t_step, width):
    """Spring-slider, aging law, load-point velocity ``V(t)`` stepped smoothly from V1 to V2.

    State ``(delta, v, psi)``, ``delta`` the spring's stretch, ``psi = ln(V_0 theta / D_c)``::

        V(t)    = V1 + (V2 - V1) (1 + tanh((t - t_step) / width)) / 2
        mu      = a asinh(v / (2 V_0) exp((mu_0 + b psi) / a))      (Lapusta et al. 2000 eq. 8)
        delta'  = V(t) - v
        m v'    = k delta - N mu
        psi'    = (V_0 exp(-psi) - |v|) / D_c                        (aging: theta' = 1 - v theta / D_c)

    From steady sliding at V1 = V_0: ``psi = 0``, ``v = V_0``, ``k delta = N mu(V_0, 0)``.
    """
    def mu(v, psi):
        return a * math.asinh(v / (2.0 * V_0) * math.exp((mu_0 + b * psi) / a))

    def rhs(time_, y):
        delta, v, psi = y
        load = V1 + (V2 - V1) * 0.5 * (1.0 + math.tanh((time_ - t_step) / width))
        return [load - v, (stiffness * delta - normal * mu(v, psi)) / mass, (V_0 * math.exp(-psi) - abs(v)) / D_c]

    y0 = [normal * mu(V1, 0.0) / stiffness, V1, 0.0]
    return radau(rhs, y0, t, atol=[1e-17, 1e-19, 1e-13])


def rate_state(quick=False):
    """Rate-and-state velocity step on an inertial spring-slider (aging law).

    mu_0 = 0.6, a = 0.005, b = 0.01, D_c = 10 um, V_0 = 1 um/s; spring k = 1e3 N/m with N = 1 N
    (1e-3 of friction coefficient per um of stretch, k = 2 k_c); load point at 1 um/s, stepped
    to 10 um/s at t = 1 s, smoothed over width 0.05 s (``Step(1e-6, 1e-5, 1.0, width=0.05)``,
    the same tanh step in the reference); from steady sliding at 1 um/s (with V_0 = 1 um/s that
    is psi = 0, jaxfriction's ``init_state``). Mass m = 10 kg: RK4 is stable for ``dt < 2.8 m V
    / (N a)`` = 5.6 ms at 1 um/s, so a 2.5 ms step works; the inertia is small in the sense of
    ``m V^2 / (N a D_c)`` <= 0.02 (its share of the critical stiffness at 10 um/s). In
    jaxfriction: ``SpringSlider(RateState(a, b, D_c, mu_0, V_0, "aging"), load=Step(...),
    mass=10, stiffness=1e3, normal=1)``, whose position is the stretch. Record: the stretch every
    0.02 s from 0 to 11 s (10 s = 100 um = 10 D_c of slip after the step; 6 s with ``quick``),
    noise sigma 1e-7 m (1e-4 of friction coefficient), seed 0; (a, b, D_c). Not the quasi-static
    slider and not an implicit solver: jaxfriction has the inertial one, and fit uses RK4.
    """
    import jaxfriction as jf

    t1 = 6.0 if quick else 11.0
    t = np.linspace(0.0, t1, round(t1 / 0.02) + 1)
    began = time.perf_counter()
    states = rate_state_reference(t, **{k[4:]: v for k, v in RS_TRUTH.items()}, **RS)
    seconds = time.perf_counter() - began
    clean = states[:, 0]
    law = jf.RateState(**{k[4:]: v for k, v in RS_TRUTH.items()}, mu_0=RS["mu_0"], V_0=RS["V_0"], evolution="aging")
    system = jf.SpringSlider(law=law, load=jf.Step(RS["V1"], RS["V2"], RS["t_step"], width=RS["width"]),
                             mass=RS["mass"], stiffness=RS["stiffness"], normal=RS["normal"])
    record = jf.Measurement(t=t, q=noisy(clean, 1e-7, 0), y0=states[0, :2].copy(), name="rate-state")
    return Problem(system, record, dict(RS_TRUTH), 2.5e-3, {k: 0.0 for k in RS_TRUTH}, clean, 1e-7, seconds,
                   rate_state.__doc__)


# ---------------------------------------------------------------------------------------------
# Segalman's four-parameter Iwan joint (Segalman 2005), discretized as jaxfriction documents

SEG = {"force_amplitude": 1.5, "omega": 0.5, "damping": 0.1, "mass": 1.0, "stiffness": 1.0, "n": 16,
       "smoothing": 0.5}
SEG_TRUTH = {"law.F_S": 1.0, "law.K_T": 3.0, "law.chi": -0.5, "law.beta": 0.1}


def radau_friction(ts, a=0.005, b=0.01, D_c=10.0, k=1e-3, mu_0=0.6, t_step=10.0, V=(1.0, 10.0)):
    """rsfmodel's quasi-static velocity step (um, s) in its own variables: ``mu' = k (V - v)``,
    ``theta' = 1 - v theta / D_c`` (Dieterich's aging law), ``v = exp((mu - mu_0 - b ln(theta /
    D_c)) / a)`` (V_0 = 1 um/s), from steady sliding at 1 um/s; the load steps to 10 um/s at 10 s
    (one Radau leg per load value, so the solver restarts at the jump). Returns ``mu`` at ``ts``.
    Used by ``tests/test_rate_state_fit.py`` and ``bench_rate_state_fit.py``."""

    def rhs(V_load):
        def f(t, y):
            mu, theta = y
            v = np.exp((mu - mu_0 - b * np.log(theta / D_c)) / a)
            return [k * (V_load - v), 1.0 - v * theta / D_c]

        return f

    y, out = [mu_0, D_c / V[0]], np.zeros(ts.size)
    for V_load, lo, hi in zip(V, (ts[0], t_step), (t_step, ts[-1])):
        inside = (ts >= lo) & (ts <= hi)
        leg = solve_ivp(rhs(V_load), (lo, hi), y, method="Radau", rtol=1e-12, atol=1e-13, t_eval=ts[inside],
                        dense_output=True)
        if not leg.success:
            raise RuntimeError(f"radau_friction: Radau failed on the leg [{lo}, {hi}]: {leg.message}")
        out[inside] = leg.y[0]
        y = leg.sol(hi)
    return out


def segalman_elements(F_S, K_T, chi, beta, n):
    """Jenkins elements of the discretized Segalman density: ``(stiffness (n+1,), slip force (n+1,))``.

    Segalman 2005: ``rho(phi) = R phi^chi`` on ``(0, phi_max)`` plus the atom ``S delta(phi -
    phi_max)``, with ``phi_max = F_S (1 + beta) / (K_T (beta + (chi+1)/(chi+2)))``, ``R = F_S
    (chi+1) / (phi_max^(chi+2) (beta + (chi+1)/(chi+2)))``, ``S = (F_S / phi_max) beta / (beta +
    (chi+1)/(chi+2))``. Quadrature (jaxfriction's documented one): cuts ``phi_j = phi_max
    (j/n)^(1/(chi+1))``; interval j becomes one element of stiffness ``int rho = R phi_max^(chi+1)
    / ((chi+1) n)`` and slip force ``int phi rho = R (phi_j^(chi+2) - phi_(j-1)^(chi+2)) /
    (chi+2)``; the atom one element of stiffness S and slip force ``S phi_max``.
    """
    c = (chi + 1.0) / (chi + 2.0)
    phi_max = F_S * (1.0 + beta) / (K_T * (beta + c))
    R = F_S * (chi + 1.0) / (phi_max ** (chi + 2.0) * (beta + c))
    S = F_S / phi_max * beta / (beta + c)
    cuts = phi_max * (np.arange(n + 1) / n) ** (1.0 / (chi + 1.0))
    slip = R * np.diff(cuts ** (chi + 2.0)) / (chi + 2.0)
    k = np.full(n, R * phi_max ** (chi + 1.0) / ((chi + 1.0) * n))
    return np.append(k, S), np.append(slip, S * phi_max)


def segalman_reference(t, *, F_S, K_T, chi, beta, n, smoothing, force_amplitude, omega, damping, mass, stiffness):
    """A mass on a spring with a Segalman joint in parallel, forced by ``F sin(omega t)``; from rest.

    State ``(x, v, z_0..z_n)``, element elongations ``z_i``; smoothed Jenkins rate (ramp
    ``eps``): loading (``v z_i > 0``): ``z_i' = v clip((phi_i - k_i |z_i|) / (eps phi_i), 0,
    1)``, else ``z_i' = v``::

        m v' = F sin(omega t) - k x - c v - sum_i k_i z_i
    """
    k, phi = segalman_elements(F_S, K_T, chi, beta, n)

    def rhs(time_, y):
        x, v, z = y[0], y[1], y[2:]
        gate = np.clip((phi - k * np.abs(z)) / (smoothing * phi), 0.0, 1.0)
        zdot = np.where(v * z > 0, v * gate, v)
        acc = (force_amplitude * math.sin(omega * time_) - stiffness * x - damping * v - np.dot(k, z)) / mass
        return np.concatenate([[v, acc], zdot])

    return radau(rhs, np.zeros(n + 3), t, atol=1e-14)


def segalman(quick=False):
    """Force-controlled hysteresis loops of a Segalman joint (tests/test_jointed.py's fit).

    ``m x'' + c x' + k x = F sin(omega t) - sum_i k_i z_i``: m = 1, k = 1, c = 0.1, F = 1.5 N
    (1.5 F_S: virgin curve, macroslip, two Masing branches), omega = 0.5 rad/s; the joint
    ``SegalmanIwan(F_S=1, K_T=3, chi=-0.5, beta=0.1, n_elements=16, smoothing=0.5)``; from
    rest. In jaxfriction: ``jointed_oscillator(that law, force_amplitude=1.5, omega=0.5,
    damping=0.1)``. Record: x every period/200 for two periods (401 samples; one with
    ``quick``), noise sigma 2e-3 m, seed 0; (F_S, K_T, chi, beta), chi's lower limit -1. RK4
    step period/12000 (the step resolves every element's smoothing ramp, the condition of
    jenkins_rate for AD derivatives).
    """
    import jaxfriction as jf

    period = 2 * math.pi / SEG["omega"]
    periods = 1 if quick else 2
    t = np.linspace(0.0, periods * period, 200 * periods + 1)
    truth = dict(SEG_TRUTH)
    began = time.perf_counter()
    clean = segalman_reference(t, **{k[4:]: v for k, v in truth.items()}, **SEG)[:, 0]
    seconds = time.perf_counter() - began
    law = jf.SegalmanIwan(**{k[4:]: v for k, v in truth.items()}, n_elements=SEG["n"], smoothing=SEG["smoothing"])
    system = jf.jointed_oscillator(law, force_amplitude=SEG["force_amplitude"], omega=SEG["omega"],
                                   damping=SEG["damping"], mass=SEG["mass"], stiffness=SEG["stiffness"])
    record = jf.Measurement(t=t, q=noisy(clean, 2e-3, 0), y0=np.zeros(2), name="segalman")
    limits = {"law.F_S": 0.0, "law.K_T": 0.0, "law.chi": -1.0, "law.beta": 0.0}
    return Problem(system, record, truth, period / 12000, limits, clean, 2e-3, seconds, segalman.__doc__)


#: name -> builder(quick=False) -> Problem
PROBLEMS: dict[str, Callable[..., Problem]] = {
    "lugre-belt": lugre_belt,
    "lugre-forced": lugre_forced,
    "dahl": dahl,
    "position-axis": position_axis,
    "rate-state": rate_state,
    "segalman": segalman,
}


def simulate_truth(problem):
    """jaxfriction's RK4 simulation of ``problem.system`` at the truth on the record's grid:
    positions ``(n,)`` (the check that the mapping of the parameters is right)."""
    import jax.numpy as jnp

    import jaxfriction as jf

    record = problem.record
    n_sub = max(1, math.ceil(record.interval / problem.dt * (1 - 1e-9)))
    traj = jf.simulate(problem.system, jnp.asarray(record.y0), float(record.t[0]), float(record.t[-1]),
                       record.interval / n_sub, save_every=n_sub)
    return np.asarray(traj.position, dtype=float).reshape(-1)


def agreement(problem):
    """``max |jaxfriction - reference|`` over the record's grid, absolute and relative to the
    reference's standard deviation."""
    diff = float(np.max(np.abs(simulate_truth(problem) - problem.clean)))
    return diff, diff / float(np.std(problem.clean))
