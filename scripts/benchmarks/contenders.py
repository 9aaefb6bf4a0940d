"""Contenders of ``scripts/benchmarks/bench.py``: what a user would write instead of jaxfriction.

Every contender integrates the same equations on the same step-aligned grids with the same
classical RK4 as jaxfriction, so their results agree with the library's to round-off:

- **Workload A** (the default sweep): Quinn's forced oscillator ``x'' + x = f + alpha sin(omega t)``
  with ``f = -mu N clip(v / eps - zeta, -1, 1)``, ``zeta = clip(f_eq / (mu N), -1, 1)``
  (``sign(f_eq)`` when ``mu N = 0``), ``f_eq = x - alpha sin(omega t)``; from rest,
  ``cycles`` forcing periods on the last period's grid ``h = T / ceil(T / dt)`` of
  :func:`jaxfriction._integrate.grid.fixed_grid` (a sweep's transient that is whole windows
  takes the window's step: :func:`jaxfriction._integrate.solvers.transient_step`). The
  output ``D`` is the increase of ``E_friction = int -f v dt`` over the last period, with
  ``E_friction`` integrated by RK4 as a third state (as the library does). ``E_damping`` and
  ``W_input`` are dropped (they do not affect ``D``).
- **Workload B**: the Burridge-Knopoff chain of :mod:`jaxfriction._systems.chain`, final state.
- **The Iwan joint** (``scripts/benchmarks/bench_many_contacts.py --iwan``): the jointed
  oscillator of :func:`jaxfriction.jointed_oscillator` with ``n`` Jenkins sliders, final state.
- **The jointed bar** (``bench_many_contacts.py --bar``): the reduced-order
  :class:`~jaxfriction.ModalStructure` of :func:`jaxfriction.jointed_bar`, ``m`` modes and
  ``c`` Jenkins contacts, final state and friction dissipation.
- **Workload C**: ``dD/d(mu N)`` and ``dD/d alpha`` per trajectory.

Kernels: numba (serial and ``prange``-parallel, hand-optimized), vectorized numpy, scipy
``solve_ivp`` with a fixed-grid RK4 ``OdeSolver``, plain diffrax (RK4 from its Butcher
tableau, ``StepTo`` grids), and the ceiling micro-benchmarks (FMA and division rates).

Operation count of the numba forward kernel, per lane per RK4 step (from ``_stage`` and
``_rk4_lane`` below; FMAs not contracted, i.e. each ``a * b + c`` counts as 1 mul + 1 add):

    per stage (4 stages): F = a s (1 mul), f_eq = x - F (1 add), r = f_eq / (mu N) as
        f_eq * (1 / mu N) (1 mul), zeta = clip (2 min/max), u = v / eps - zeta as
        v * (1 / eps) - zeta (1 mul + 1 add), c = clip (2 min/max), f = (-mu N) c (1 mul),
        v' = f - f_eq (1 add), -E' = f v (1 mul)                     ->  8 flops, 4 min/max
    stage inputs (stages 2-4): x + (h/2) k, v + (h/2) k              -> 12 flops
    update x, v, E: y + h/6 (k1 + 2 k2 + 2 k3 + k4), 7 flops each     -> 21 flops
    total: 65 flops (adds + muls), 16 min/max, 0 divisions, 0 transcendentals per lane-step
    (plus 3 sines per *step* shared by all lanes of the batch, precomputed in a table).

The library's formula (``jaxfriction._laws.quinn``) multiplies by the reciprocals ``1 / mu N``
and ``1 / eps``, which depend on the parameters only (a scan hoists them out of its loop),
and integrates 5 states instead of 3.

Gradient kernel (forward-mode tangents in mu N and alpha, ``_gstage``/``_grad_lane``):
    per stage: primal 8 flops + tangents 23 flops (d f_eq_alpha 1, d zeta 5, d u 6, d f 4,
    d v' 2, d(-E') 6 -- less the primal's 8 already counted: 31 in all), 4 min/max, 6 compares,
    5 selects (clip derivatives, the mu N = 0 branch); stage inputs 3 x 6 x 2 = 36 flops;
    update 9 states x 7 = 63 flops; total 4 x 31 + 36 + 63 = 223 flops per lane-step,
    16 min/max, 0 divisions.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import ClassVar

import numpy as np
from numba import njit, prange

#: Lanes integrated together by the vectorized numba kernels (one SIMD-friendly block).
LANES = 16
LANES_GRAD = 16  # below 16, LLVM leaves the gradient loop scalar
#: FMA contraction allowed in the numba kernels (checked to keep agreement with jaxfriction).
FASTMATH = {"contract"}

FLOPS_PER_STEP_A = 65
MINMAX_PER_STEP_A = 16
DIVS_PER_STEP_A_NUMBA = 0
SINES_PER_STEP_A = 3  # per step of the whole batch, not per lane
FLOPS_PER_STEP_C = 223


# --------------------------------------------------------------------------- grids, lanes


def step_grid(t0, t1, dt):
    """``(n, h)`` of :func:`jaxfriction._integrate.grid.fixed_grid` with ``save_every=None``."""
    span = float(t1) - float(t0)
    n = max(1, math.ceil(span / float(dt) * (1.0 - 1e-12)))
    return n, span / n


def sweep_segments(omega, dt, cycles):
    """The two grids of ``cycle_metrics``: transient ``[0, (cycles-1) T]``, then the last period.

    Returns ``[(t0, n, h), (t0, n, h)]``.
    """
    period = 2 * math.pi / omega
    t_last = (cycles - 1) * period
    n_last, h_last = step_grid(t_last, t_last + period, dt)
    n_pre = (cycles - 1) * n_last  # the transient on the window's step, as the library runs it
    return [(0.0, n_pre, t_last / n_pre if n_pre else 0.0), (t_last, n_last, h_last)]


def sweep_lanes(batch):
    """Parameters ``(mu N, alpha)`` of the first ``batch`` lanes of one fixed sequence.

    A low-discrepancy (R2) sequence over ``mu N in [0, 1)``, ``alpha in [0.05, 2)``, so every
    batch is a prefix of the larger ones (results of a smaller run check a larger one).
    Lane 1 has ``mu N = 0`` exactly (the law's ``sign(f_eq)`` branch).
    """
    i = np.arange(batch, dtype=float)
    mu = (0.5 + i * 0.7548776662466927) % 1.0
    alpha = 0.05 + 1.95 * ((0.5 + i * 0.5698402909980532) % 1.0)
    if batch > 1:
        mu[1] = 0.0
    return mu, alpha


# --------------------------------------------------------------------------- numba, workload A


def _forcing_table_py(t0, n, h, omega, anchor):
    """``sin(omega t)`` at the three stage times ``t, t + h/2, t + h`` of every step, ``(n, 3)``.

    ``t = t0 + k h`` as in ``rk4_scan``. ``anchor = 1``: every value from ``sin``; ``anchor > 1``:
    a rotation recurrence by ``omega h / 2``, re-anchored with ``sin``/``cos`` every ``anchor`` steps.
    """
    tab = np.empty((n, 3))
    hh = 0.5 * h
    if anchor <= 1:
        for k in prange(n):
            t = t0 + k * h
            tab[k, 0] = math.sin(omega * t)
            tab[k, 1] = math.sin(omega * (t + hh))
            tab[k, 2] = math.sin(omega * (t + h))
        return tab
    ch = math.cos(omega * hh)
    sh = math.sin(omega * hh)
    n_chunks = (n + anchor - 1) // anchor
    for b in prange(n_chunks):
        k0 = b * anchor
        t = t0 + k0 * h
        s = math.sin(omega * t)
        c = math.cos(omega * t)
        for k in range(k0, min(k0 + anchor, n)):
            tab[k, 0] = s
            s1 = s * ch + c * sh
            c1 = c * ch - s * sh
            tab[k, 1] = s1
            s = s1 * ch + c1 * sh
            c = c1 * ch - s1 * sh
            tab[k, 2] = s
    return tab


_forcing_table_serial = njit(_forcing_table_py)
_forcing_table_parallel = njit(parallel=True)(_forcing_table_py)


@njit(inline="always", fastmath=FASTMATH)
def _stage(x, v, a, s, nm, im, ie):
    """Quinn's oscillator at one stage: returns ``(v', f v)``; ``f v = -E_friction'``.

    ``f_eq = x - F`` equals the library's ``0 - (F - x)`` exactly; ``v' = f - f_eq`` equals its
    ``nonfriction + f``. With ``mu N = 0``, ``im = 0`` and ``nm = -0``: ``f = 0`` whatever zeta.
    """
    feq = x - a * s
    z = min(max(feq * im, -1.0), 1.0)
    c = min(max(v * ie - z, -1.0), 1.0)
    f = nm * c
    return f - feq, f * v


@njit(inline="always", fastmath=FASTMATH)
def _rk4_lane(x, v, e, a, nm, im, ie, s1, s2, s4, hh, h, h6):
    """One classical RK4 step of ``(x, v, e)``, ``e`` = E_friction, as ``rk4_step``.

    The stages return ``f v = -E'``, so ``e - h/6 (sum)`` is exactly the library's
    ``e + h/6 (sum of -f v)`` (negation is exact). The stage velocities are ``x'``.
    """
    k1v, k1e = _stage(x, v, a, s1, nm, im, ie)
    x2 = x + hh * v
    v2 = v + hh * k1v
    k2v, k2e = _stage(x2, v2, a, s2, nm, im, ie)
    x3 = x + hh * v2
    v3 = v + hh * k2v
    k3v, k3e = _stage(x3, v3, a, s2, nm, im, ie)
    x4 = x + h * v3
    v4 = v + h * k3v
    k4v, k4e = _stage(x4, v4, a, s4, nm, im, ie)
    return (x + h6 * (v + 2.0 * v2 + 2.0 * v3 + v4),
            v + h6 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v),
            e - h6 * (k1e + 2.0 * k2e + 2.0 * k3e + k4e))


@njit(fastmath=FASTMATH)
def _segment_block(S, ie, tab, h):
    """``LANES`` lanes through one segment; ``S`` rows: x, v, E, alpha, -mu N, 1/(mu N)."""
    hh = 0.5 * h
    h6 = h / 6.0
    for k in range(tab.shape[0]):
        s1 = tab[k, 0]
        s2 = tab[k, 1]
        s4 = tab[k, 2]
        for j in range(LANES):  # vectorized by LLVM (constant trip count, one array)
            S[0, j], S[1, j], S[2, j] = _rk4_lane(S[0, j], S[1, j], S[2, j], S[3, j], S[4, j], S[5, j],
                                                  ie, s1, s2, s4, hh, h, h6)


@njit(fastmath=FASTMATH)
def _segment_scalar(x, v, e, a, nm, im, ie, tab, h):
    hh = 0.5 * h
    h6 = h / 6.0
    for k in range(tab.shape[0]):
        x, v, e = _rk4_lane(x, v, e, a, nm, im, ie, tab[k, 0], tab[k, 1], tab[k, 2], hh, h, h6)
    return x, v, e


def _sweep_py(mu, alpha, ie, tab1, h1, tab2, h2):
    batch = mu.shape[0]
    out = np.empty(batch)
    n_full = batch // LANES
    n_blocks = n_full + (batch - n_full * LANES)  # full blocks, then one task per leftover lane
    for b in prange(n_blocks):
        if b < n_full:
            lo = b * LANES
            S = np.zeros((6, LANES))
            for j in range(LANES):
                m = mu[lo + j]
                S[3, j] = alpha[lo + j]
                S[4, j] = -m
                S[5, j] = 1.0 / m if m > 0 else 0.0
            _segment_block(S, ie, tab1, h1)
            e0 = S[2].copy()
            _segment_block(S, ie, tab2, h2)
            for j in range(LANES):
                out[lo + j] = S[2, j] - e0[j]
        else:
            i = n_full * LANES + (b - n_full)
            m = mu[i]
            im = 1.0 / m if m > 0 else 0.0
            x, v, e = _segment_scalar(0.0, 0.0, 0.0, alpha[i], -m, im, ie, tab1, h1)
            e0 = e
            x, v, e = _segment_scalar(x, v, e, alpha[i], -m, im, ie, tab2, h2)
            out[i] = e - e0
    return out


_sweep_serial = njit(fastmath=FASTMATH)(_sweep_py)
_sweep_parallel = njit(parallel=True, fastmath=FASTMATH)(_sweep_py)


def _tables(segments, omega, anchor, parallel):
    """Forcing tables of both segments; in parallel only when every value is a ``sin``."""
    table = _forcing_table_parallel if parallel and anchor <= 1 else _forcing_table_serial
    (t1, n1, h1), (t2, n2, h2) = segments
    return table(t1, n1, h1, omega, anchor), h1, table(t2, n2, h2, omega, anchor), h2


def numba_sweep(mu, alpha, *, omega, eps, segments, parallel=False, anchor=1):
    """Workload A with numba: ``D`` of the last cycle per lane, ``(B,)``.

    ``anchor``: 1 computes the forcing with ``sin`` (3 per step, shared by all lanes); > 1 uses
    the rotation recurrence re-anchored every ``anchor`` steps. ``parallel``: blocks of lanes
    in ``prange`` (the serial kernel below two blocks, where threads cost more than they give).
    """
    tab1, h1, tab2, h2 = _tables(segments, omega, anchor, parallel)
    # a parallel region costs thread wake-ups: below two blocks of lanes the serial kernel is faster
    kernel = _sweep_parallel if parallel and len(mu) >= 2 * LANES else _sweep_serial
    return kernel(np.ascontiguousarray(mu, dtype=np.float64), np.ascontiguousarray(alpha, dtype=np.float64),
                  1.0 / eps, tab1, h1, tab2, h2)


# --------------------------------------------------------------------------- numba, workload C


@njit(inline="always", fastmath=FASTMATH)
def _gstage(x, v, xm, vm, xa, va, a, s, pos, nm, im, ie):
    """Stage with tangents in ``mu N`` (suffix m) and ``alpha`` (suffix a): ``(v', f v)`` and theirs.

    ``clip`` has derivative 1 strictly inside ``(-1, 1)``, 0 outside. ``mu N = 0`` (``pos``
    false): ``zeta = sign(f_eq)``, and ``im = 0`` zeroes zeta's tangent, as in the library
    (``d f/d mu N = -clip(v/eps - sign(f_eq))`` there, the one-sided derivative).
    """
    feq = x - a * s
    feqm = xm
    feqa = xa - s
    r = feq * im
    zc = min(max(r, -1.0), 1.0)
    zd = 1.0 if (r > -1.0) & (r < 1.0) else 0.0
    sg = 1.0 if feq > 0.0 else (-1.0 if feq < 0.0 else 0.0)
    z = zc if pos else sg
    zm = zd * ((feqm - r) * im)  # d(f_eq / mu N)/d mu N = (d f_eq - f_eq / mu N) / mu N
    za = zd * (feqa * im)
    u = v * ie - z
    c = min(max(u, -1.0), 1.0)
    cd = 1.0 if (u > -1.0) & (u < 1.0) else 0.0
    cm = cd * (vm * ie - zm)
    ca = cd * (va * ie - za)
    f = nm * c
    fm = nm * cm - c
    fa = nm * ca
    return f - feq, f * v, fm - feqm, fm * v + f * vm, fa - feqa, fa * v + f * va


@njit(inline="always", fastmath=FASTMATH)
def _grad_lane(x, v, e, xm, vm, em, xa, va, ea, a, pos, nm, im, ie, s1, s2, s4, hh, h, h6):
    """One RK4 step of ``(x, v, e)`` and its tangents ``(xm, vm, em)``, ``(xa, va, ea)``."""
    k1v, k1e, k1vm, k1em, k1va, k1ea = _gstage(x, v, xm, vm, xa, va, a, s1, pos, nm, im, ie)
    x2 = x + hh * v
    v2 = v + hh * k1v
    xm2 = xm + hh * vm
    vm2 = vm + hh * k1vm
    xa2 = xa + hh * va
    va2 = va + hh * k1va
    k2v, k2e, k2vm, k2em, k2va, k2ea = _gstage(x2, v2, xm2, vm2, xa2, va2, a, s2, pos, nm, im, ie)
    x3 = x + hh * v2
    v3 = v + hh * k2v
    xm3 = xm + hh * vm2
    vm3 = vm + hh * k2vm
    xa3 = xa + hh * va2
    va3 = va + hh * k2va
    k3v, k3e, k3vm, k3em, k3va, k3ea = _gstage(x3, v3, xm3, vm3, xa3, va3, a, s2, pos, nm, im, ie)
    x4 = x + h * v3
    v4 = v + h * k3v
    xm4 = xm + h * vm3
    vm4 = vm + h * k3vm
    xa4 = xa + h * va3
    va4 = va + h * k3va
    k4v, k4e, k4vm, k4em, k4va, k4ea = _gstage(x4, v4, xm4, vm4, xa4, va4, a, s4, pos, nm, im, ie)
    return (x + h6 * (v + 2.0 * v2 + 2.0 * v3 + v4),
            v + h6 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v),
            e - h6 * (k1e + 2.0 * k2e + 2.0 * k3e + k4e),
            xm + h6 * (vm + 2.0 * vm2 + 2.0 * vm3 + vm4),
            vm + h6 * (k1vm + 2.0 * k2vm + 2.0 * k3vm + k4vm),
            em - h6 * (k1em + 2.0 * k2em + 2.0 * k3em + k4em),
            xa + h6 * (va + 2.0 * va2 + 2.0 * va3 + va4),
            va + h6 * (k1va + 2.0 * k2va + 2.0 * k3va + k4va),
            ea - h6 * (k1ea + 2.0 * k2ea + 2.0 * k3ea + k4ea))


@njit(fastmath=FASTMATH)
def _grad_block(S, P, ie, tab, h):
    """``LANES_GRAD`` lanes through one segment; ``S`` (9, LANES_GRAD) states and tangents,
    ``P`` rows: alpha, mu N, -mu N, 1/(mu N)."""
    hh = 0.5 * h
    h6 = h / 6.0
    for k in range(tab.shape[0]):
        s1 = tab[k, 0]
        s2 = tab[k, 1]
        s4 = tab[k, 2]
        for j in range(LANES_GRAD):  # vectorized by LLVM (constant trip count)
            y = _grad_lane(S[0, j], S[1, j], S[2, j], S[3, j], S[4, j], S[5, j], S[6, j], S[7, j], S[8, j],
                           P[0, j], P[1, j] > 0.0, P[2, j], P[3, j], ie, s1, s2, s4, hh, h, h6)
            S[0, j], S[1, j], S[2, j], S[3, j], S[4, j], S[5, j], S[6, j], S[7, j], S[8, j] = y


@njit(fastmath=FASTMATH)
def _grad_scalar(y, a, m, ie, tab, h):
    hh = 0.5 * h
    h6 = h / 6.0
    im = 1.0 / m if m > 0 else 0.0
    x, v, e, xm, vm, em, xa, va, ea = y
    for k in range(tab.shape[0]):
        x, v, e, xm, vm, em, xa, va, ea = _grad_lane(x, v, e, xm, vm, em, xa, va, ea, a, m > 0.0, -m, im, ie,
                                                     tab[k, 0], tab[k, 1], tab[k, 2], hh, h, h6)
    return x, v, e, xm, vm, em, xa, va, ea


def _sweep_grad_py(mu, alpha, ie, tab1, h1, tab2, h2):
    batch = mu.shape[0]
    out = np.empty((3, batch))
    n_full = batch // LANES_GRAD
    n_blocks = n_full + (batch - n_full * LANES_GRAD)  # full blocks, then one task per leftover lane
    for b in prange(n_blocks):
        if b < n_full:
            lo = b * LANES_GRAD
            S = np.zeros((9, LANES_GRAD))
            P = np.zeros((4, LANES_GRAD))
            for j in range(LANES_GRAD):
                m = mu[lo + j]
                P[0, j] = alpha[lo + j]
                P[1, j] = m
                P[2, j] = -m
                P[3, j] = 1.0 / m if m > 0 else 0.0
            _grad_block(S, P, ie, tab1, h1)
            e0 = S[2].copy()
            em0 = S[5].copy()
            ea0 = S[8].copy()
            _grad_block(S, P, ie, tab2, h2)
            for j in range(LANES_GRAD):
                out[0, lo + j] = S[2, j] - e0[j]
                out[1, lo + j] = S[5, j] - em0[j]
                out[2, lo + j] = S[8, j] - ea0[j]
        else:
            i = n_full * LANES_GRAD + (b - n_full)
            y = _grad_scalar((0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), alpha[i], mu[i], ie, tab1, h1)
            y2 = _grad_scalar(y, alpha[i], mu[i], ie, tab2, h2)
            out[0, i] = y2[2] - y[2]
            out[1, i] = y2[5] - y[5]
            out[2, i] = y2[8] - y[8]
    return out


_sweep_grad_serial = njit(fastmath=FASTMATH)(_sweep_grad_py)
_sweep_grad_parallel = njit(parallel=True, fastmath=FASTMATH)(_sweep_grad_py)


def numba_sweep_grad(mu, alpha, *, omega, eps, segments, parallel=False, anchor=1):
    """Workload C with numba: ``(D, dD/d mu N, dD/d alpha)``, each ``(B,)``, by forward tangents."""
    tab1, h1, tab2, h2 = _tables(segments, omega, anchor, parallel)
    kernel = _sweep_grad_parallel if parallel and len(mu) >= 2 * LANES_GRAD else _sweep_grad_serial
    out = kernel(np.ascontiguousarray(mu, dtype=np.float64), np.ascontiguousarray(alpha, dtype=np.float64),
                 1.0 / eps, tab1, h1, tab2, h2)
    return out[0], out[1], out[2]


# --------------------------------------------------------------------------- numpy / scipy, workload A


def _numpy_rhs_factory(mu, alpha, omega, eps):
    """The library's formula (divisions, ``where`` for mu N = 0) vectorized over lanes."""
    mu = np.asarray(mu, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    pos = mu > 0
    mu_safe = np.where(pos, mu, 1.0)
    neg_mu = -mu

    def rhs(t, x, v):
        nonf = alpha * math.sin(omega * t) - x
        feq = -nonf
        zeta = np.where(pos, np.minimum(1.0, np.maximum(-1.0, feq / mu_safe)), np.sign(feq))
        f = neg_mu * np.minimum(1.0, np.maximum(-1.0, v / eps - zeta))
        return nonf + f, -f * v

    return rhs


def numpy_sweep(mu, alpha, *, omega, eps, segments):
    """Workload A in vectorized numpy (one array op per lane-vector per operation)."""
    rhs = _numpy_rhs_factory(mu, alpha, omega, eps)
    x = np.zeros(len(mu))
    v = np.zeros(len(mu))
    e = np.zeros(len(mu))
    e_start = None
    for t0, n, h in segments:
        e_start = e.copy()
        hh = 0.5 * h
        h6 = h / 6.0
        for k in range(n):
            t = t0 + k * h
            k1v, k1e = rhs(t, x, v)
            x2 = x + hh * v
            v2 = v + hh * k1v
            k2v, k2e = rhs(t + hh, x2, v2)
            x3 = x + hh * v2
            v3 = v + hh * k2v
            k3v, k3e = rhs(t + hh, x3, v3)
            x4 = x + h * v3
            v4 = v + h * k3v
            k4v, k4e = rhs(t + h, x4, v4)
            x = x + h6 * (v + 2.0 * v2 + 2.0 * v3 + v4)
            v = v + h6 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
            e = e + h6 * (k1e + 2.0 * k2e + 2.0 * k3e + k4e)
    return e - e_start


def _rk4_grid_solver():
    from scipy.integrate import OdeSolver
    from scipy.integrate._ivp.base import ConstantDenseOutput

    class RK4Grid(OdeSolver):
        """Classical RK4 on the grid ``t0 + k h`` (``n`` steps), as ``rk4_scan``: scipy has no
        fixed-step RK4, so this is what a ``solve_ivp`` user writes to get one."""

        def __init__(self, fun, t0, y0, t_bound, vectorized=False, *, h, n, **extraneous):
            super().__init__(fun, t0, y0, t_bound, vectorized)
            self._t_start = t0
            self._h = h
            self._n = n
            self._k = 0

        def _step_impl(self):
            h = self._h
            t = self._t_start + self._k * h
            y = self.y
            f = self.fun
            k1 = f(t, y)
            k2 = f(t + 0.5 * h, y + (0.5 * h) * k1)
            k3 = f(t + 0.5 * h, y + (0.5 * h) * k2)
            k4 = f(t + h, y + h * k3)
            self.y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            self._k += 1
            self.t = self.t_bound if self._k == self._n else self._t_start + self._k * h
            return True, None

        def _dense_output_impl(self):
            return ConstantDenseOutput(self.t_old, self.t, self.y)

    return RK4Grid


def scipy_sweep(mu, alpha, *, omega, eps, segments):
    """Workload A with ``scipy.integrate.solve_ivp`` (all lanes as one ODE of size 3B)."""
    from scipy.integrate import solve_ivp

    solver = _rk4_grid_solver()
    rhs = _numpy_rhs_factory(mu, alpha, omega, eps)
    batch = len(mu)

    def fun(t, y):
        x, v = y[:batch], y[batch : 2 * batch]
        kv, ke = rhs(t, x, v)
        return np.concatenate([v, kv, ke])

    y = np.zeros(3 * batch)
    e_start = None
    for t0, n, h in segments:
        e_start = y[2 * batch :].copy()
        sol = solve_ivp(fun, (t0, t0 + n * h), y, method=solver, h=h, n=n)
        if sol.status != 0 or sol.t.size != n + 1:
            raise RuntimeError(f"solve_ivp: {sol.message}, {sol.t.size - 1} steps instead of {n}")
        y = sol.y[:, -1]
    return y[2 * batch :] - e_start


# --------------------------------------------------------------------------- plain diffrax, workloads A and C


def diffrax_sweep_fns(*, omega, eps, segments):
    """Plain diffrax (no jaxfriction): jitted ``forward(mu, alpha) -> D``, ``jacfwd`` and ``grad``
    ``(mu, alpha) -> (dD/dmu, dD/dalpha)``, all ``vmap``-ed over lanes.

    RK4 is defined from its Butcher tableau (diffrax 0.7 ships none); every segment steps through
    ``StepTo(ts)`` with ``ts = t0 + h arange(n + 1)`` (the constant controller drifts the grid).
    ``jacfwd`` uses ``diffrax.ForwardMode()`` (forward mode needs it); ``grad`` the default adjoint,
    ``RecursiveCheckpointAdjoint``.
    """
    import diffrax
    import jax
    import jax.numpy as jnp

    class RK4(diffrax.AbstractERK):
        tableau: ClassVar[diffrax.ButcherTableau] = diffrax.ButcherTableau(
            c=np.array([0.5, 0.5, 1.0]),
            b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
            b_error=np.zeros(4),
            a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
        )
        interpolation_cls: ClassVar[Callable] = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

        def order(self, terms):
            return 4

    def vector_field(t, y, args):
        mu, alpha = args
        x, v = y[0], y[1]
        nonf = alpha * jnp.sin(omega * t) - x
        feq = -nonf
        pos = mu > 0
        zeta = jnp.where(pos, jnp.clip(feq / jnp.where(pos, mu, 1.0), -1.0, 1.0), jnp.sign(feq))
        f = -mu * jnp.clip(v / eps - zeta, -1.0, 1.0)
        return jnp.stack([v, nonf + f, -f * v])

    term = diffrax.ODETerm(vector_field)
    grids = [(t0 + h * np.arange(n + 1), n) for t0, n, h in segments]

    def dissipation(mu, alpha, adjoint):
        y = jnp.zeros(3, dtype=jnp.result_type(float))
        ends = []
        for ts, n in grids:
            sol = diffrax.diffeqsolve(term, RK4(), float(ts[0]), float(ts[-1]), None, y, args=(mu, alpha),
                                      saveat=diffrax.SaveAt(t1=True), stepsize_controller=diffrax.StepTo(ts=jnp.asarray(ts)),
                                      max_steps=n, adjoint=adjoint)
            y = sol.ys[-1]
            ends.append(y[2])
        return ends[1] - ends[0]

    default = diffrax.RecursiveCheckpointAdjoint()
    forward = jax.jit(jax.vmap(lambda mu, alpha: dissipation(mu, alpha, default)))
    jacfwd = jax.jit(jax.vmap(jax.jacfwd(lambda mu, alpha: dissipation(mu, alpha, diffrax.ForwardMode()), argnums=(0, 1))))
    grad = jax.jit(jax.vmap(jax.grad(lambda mu, alpha: dissipation(mu, alpha, default), argnums=(0, 1))))
    return forward, jacfwd, grad


# --------------------------------------------------------------------------- workload B: the chain


@njit(inline="always", fastmath=FASTMATH)
def _chain_contact(nonf, vj, inv_m, inv_dd, inv_lim, nlim, ie):
    """``acc`` and ``f v`` of one block; the library's divisions as products by reciprocals."""
    feq = -(nonf * inv_m) * inv_dd
    z = min(max(feq * inv_lim, -1.0), 1.0)
    c = min(max(vj * ie - z, -1.0), 1.0)
    f = nlim * c
    return (nonf + f) * inv_m, f * vj


@njit(fastmath=FASTMATH)
def _chain_eval(q, v, s, alpha, nf, two_n, inv_m, inv_dd, inv_lim, nlim, ie, cd, acc, fv):
    """Accelerations of the chain into ``acc``; returns ``sum f v`` (= -E_friction').

    Spring forces as the library's ``-grad V``: ``cd_j = n (q_{j+1} - q_j)``, interior
    ``cd_j - cd_{j-1}``, first ``cd_0 - alpha sin``, last ``-(cd_{n-2} + 2 n q_{n-1})``.
    """
    n = q.shape[0]
    for j in range(n - 1):
        cd[j] = nf * (q[j + 1] - q[j])
    a0, p0 = _chain_contact(cd[0] + (-alpha) * s, v[0], inv_m[0], inv_dd[0], inv_lim[0], nlim[0], ie)
    acc[0] = a0
    fv[0] = p0
    for j in range(1, n - 1):
        aj, pj = _chain_contact(cd[j] - cd[j - 1], v[j], inv_m[j], inv_dd[j], inv_lim[j], nlim[j], ie)
        acc[j] = aj
        fv[j] = pj
    al, pl = _chain_contact(-(cd[n - 2] + two_n * q[n - 1]), v[n - 1], inv_m[n - 1], inv_dd[n - 1],
                            inv_lim[n - 1], nlim[n - 1], ie)
    acc[n - 1] = al
    fv[n - 1] = pl
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    n4 = n - n % 4
    for j in range(0, n4, 4):
        s0 += fv[j]
        s1 += fv[j + 1]
        s2 += fv[j + 2]
        s3 += fv[j + 3]
    for j in range(n4, n):
        s0 += fv[j]
    return (s0 + s1) + (s2 + s3)


def _chain_py(alpha, n, steps, h, omega, eps, mu):
    batch = alpha.shape[0]
    out = np.empty((batch, 2 * n + 1))
    masses = np.ones(n) / n
    masses[n - 1] = 0.75 / n
    inv_m = 1.0 / masses
    inv_dd = 1.0 / inv_m  # 1 / (1 / m): the library divides by the Delassus diagonal 1 / m
    lim = mu * masses
    inv_lim = 1.0 / lim
    nlim = -lim
    nf = float(n)  # the library's (0.5 n)(2 d) is n d rounded once
    two_n = 2.0 * n  # and (0.5 (2 n))(2 q) is 2 n q rounded once
    ie = 1.0 / eps
    hh = 0.5 * h
    h6 = h / 6.0
    for b in prange(batch):
        q = np.zeros(n)
        v = np.zeros(n)
        qs = np.empty(n)
        vs = np.empty(n)
        acc = np.empty(n)
        sq = np.empty(n)
        sv = np.empty(n)
        cd = np.empty(n)
        fv = np.empty(n)
        e = 0.0
        a = alpha[b]
        for k in range(steps):
            t = k * h
            p1 = _chain_eval(q, v, math.sin(omega * t), a, nf, two_n, inv_m, inv_dd, inv_lim, nlim, ie, cd, acc, fv)
            for j in range(n):
                sq[j] = v[j]
                sv[j] = acc[j]
                qs[j] = q[j] + hh * v[j]
                vs[j] = v[j] + hh * acc[j]
            p2 = _chain_eval(qs, vs, math.sin(omega * (t + hh)), a, nf, two_n, inv_m, inv_dd, inv_lim, nlim, ie,
                             cd, acc, fv)
            for j in range(n):
                sq[j] = sq[j] + 2.0 * vs[j]
                sv[j] = sv[j] + 2.0 * acc[j]
                qs[j] = q[j] + hh * vs[j]
                vs[j] = v[j] + hh * acc[j]
            p3 = _chain_eval(qs, vs, math.sin(omega * (t + hh)), a, nf, two_n, inv_m, inv_dd, inv_lim, nlim, ie,
                             cd, acc, fv)
            for j in range(n):
                sq[j] = sq[j] + 2.0 * vs[j]
                sv[j] = sv[j] + 2.0 * acc[j]
                qs[j] = q[j] + h * vs[j]
                vs[j] = v[j] + h * acc[j]
            p4 = _chain_eval(qs, vs, math.sin(omega * (t + h)), a, nf, two_n, inv_m, inv_dd, inv_lim, nlim, ie,
                             cd, acc, fv)
            for j in range(n):
                q[j] = q[j] + h6 * (sq[j] + vs[j])
                v[j] = v[j] + h6 * (sv[j] + acc[j])
            e = e - h6 * (p1 + 2.0 * p2 + 2.0 * p3 + p4)
        for j in range(n):
            out[b, j] = q[j]
            out[b, n + j] = v[j]
        out[b, 2 * n] = e
    return out


_chain_serial = njit(fastmath=FASTMATH)(_chain_py)
_chain_parallel = njit(parallel=True, fastmath=FASTMATH)(_chain_py)


def numba_chain(alpha, *, n, steps, h, omega, eps, mu=1.0, parallel=False):
    """Workload B with numba: final ``[q (n), v (n), E_friction]`` per lane, ``(B, 2n + 1)``."""
    kernel = _chain_parallel if parallel and len(alpha) >= 2 else _chain_serial
    return kernel(np.ascontiguousarray(alpha, dtype=np.float64), n, steps, h, omega, eps, mu)


def numpy_chain(alpha, *, n, steps, h, omega, eps, mu=1.0):
    """Workload B in numpy, vectorized over the batch (arrays ``(B, n)``), the library's formula."""
    alpha = np.asarray(alpha, dtype=float)
    batch = alpha.size
    masses = np.ones(n) / n
    masses[-1] = 0.75 / n
    dd = 1.0 / masses
    lim = mu * masses

    def rhs(t, q, v):
        cd = (0.5 * n) * (2.0 * np.diff(q, axis=1))
        nonf = np.empty_like(q)
        nonf[:, 0] = cd[:, 0] + (-alpha) * math.sin(omega * t)
        nonf[:, 1:-1] = cd[:, 1:] - cd[:, :-1]
        nonf[:, -1] = -(cd[:, -1] + (0.5 * (2 * n) * 2.0) * q[:, -1])
        feq = -(nonf / masses) / dd
        zeta = np.minimum(1.0, np.maximum(-1.0, feq / lim))
        f = -lim * np.minimum(1.0, np.maximum(-1.0, v / eps - zeta))
        return (nonf + f) / masses, -np.sum(f * v, axis=1)

    q = np.zeros((batch, n))
    v = np.zeros((batch, n))
    e = np.zeros(batch)
    hh = 0.5 * h
    h6 = h / 6.0
    for k in range(steps):
        t = k * h
        a1, p1 = rhs(t, q, v)
        q2 = q + hh * v
        v2 = v + hh * a1
        a2, p2 = rhs(t + hh, q2, v2)
        q3 = q + hh * v2
        v3 = v + hh * a2
        a3, p3 = rhs(t + hh, q3, v3)
        q4 = q + h * v3
        v4 = v + h * a3
        a4, p4 = rhs(t + h, q4, v4)
        q = q + h6 * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v = v + h6 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        e = e + h6 * (p1 + 2.0 * p2 + 2.0 * p3 + p4)
    return np.concatenate([q, v, e[:, None]], axis=1)


# --------------------------------------------------------------------------- the Iwan joint


@njit(inline="always", fastmath=FASTMATH)
def _jenkins(elongation, limit):
    """A Jenkins element's elongation ``z + slip`` after a monotone slip, held to its limit
    ``phi / k``: ``clip(z + slip, -phi / k, phi / k)`` (:func:`jaxfriction._laws.iwan.jenkins_update`,
    exact within a step)."""
    return min(max(elongation, -limit), limit)


@njit(inline="always", fastmath=FASTMATH)
def _march(z, slip, limit, out):
    """Jenkins elements from ``z`` along the monotone slip ``slip`` into ``out`` (:func:`_jenkins`)."""
    for i in range(z.shape[0]):
        out[i] = _jenkins(z[i] + slip, limit[i])


@njit(fastmath=FASTMATH)
def _iwan_acceleration(x, v, z, k, force, spring, damping, inv_m):
    """The jointed oscillator's acceleration at ``(x, v, z)`` under the applied force ``force``:
    ``(force - spring x - damping v - sum k_i z_i) / m`` (the joint's force ``f = -sum k_i z_i``)."""
    n = z.shape[0]
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    f3 = 0.0
    n4 = n - n % 4
    for i in range(0, n4, 4):
        f0 += k[i] * z[i]
        f1 += k[i + 1] * z[i + 1]
        f2 += k[i + 2] * z[i + 2]
        f3 += k[i + 3] * z[i + 3]
    for i in range(n4, n):
        f0 += k[i] * z[i]
    f = -((f0 + f1) + (f2 + f3))
    nonf = force - spring * x
    if damping != 0.0:
        nonf = nonf - damping * v
    return (nonf + f) * inv_m


def _iwan_py(amplitude, k, limit, steps, h, omega, mass, spring, damping):
    batch = amplitude.shape[0]
    n = k.shape[0]
    out = np.empty((batch, n + 3))
    inv_m = 1.0 / mass
    hh = 0.5 * h
    h6 = h / 6.0
    for b in prange(batch):
        z = np.zeros(n)
        zs = np.empty(n)
        x = 0.0
        v = 0.0
        e = 0.0
        a = amplitude[b]
        for step in range(steps):
            t = step * h
            s2 = a * math.sin(omega * (t + hh))
            a1 = _iwan_acceleration(x, v, z, k, a * math.sin(omega * t), spring, damping, inv_m)
            _march(z, hh * v, limit, zs)
            x2 = x + hh * v
            v2 = v + hh * a1
            a2 = _iwan_acceleration(x2, v2, zs, k, s2, spring, damping, inv_m)
            _march(z, hh * v2, limit, zs)
            x3 = x + hh * v2
            v3 = v + hh * a2
            a3 = _iwan_acceleration(x3, v3, zs, k, s2, spring, damping, inv_m)
            _march(z, h * v3, limit, zs)
            x4 = x + h * v3
            v4 = v + h * a3
            a4 = _iwan_acceleration(x4, v4, zs, k, a * math.sin(omega * (t + h)), spring, damping, inv_m)
            slip = h6 * (v + 2.0 * v2 + 2.0 * v3 + v4)
            x = x + slip
            v = v + h6 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
            _march(z, slip, limit, zs)
            plastic = 0.0
            for i in range(n):
                plastic += 0.5 * (k[i] * z[i] + k[i] * zs[i]) * (z[i] + slip - zs[i])
                z[i] = zs[i]
            e = e + plastic
        out[b, 0] = x
        out[b, 1] = v
        for i in range(n):
            out[b, 2 + i] = z[i]
        out[b, n + 2] = e
    return out


_iwan_serial = njit(fastmath=FASTMATH)(_iwan_py)
_iwan_parallel = njit(parallel=True, fastmath=FASTMATH)(_iwan_py)


def _limits(stiffness, slip_force):
    """The Jenkins elements' elongation limits ``phi / k`` (0 where ``k = 0``), as the library's."""
    k = np.ravel(stiffness).astype(np.float64)
    phi = np.ravel(slip_force).astype(np.float64)
    return k, np.where(k > 0, phi / np.where(k > 0, k, 1.0), 0.0)


def numba_iwan(amplitude, *, stiffness, slip_force, steps, h, omega, mass=1.0, spring=1.0, damping=0.0,
               parallel=False):
    """The jointed oscillator with numba: ``m x'' + c x' + k x = F sin(omega t) - sum_i k_i z_i``,
    Jenkins sliders ``z_i`` (stiffness ``k_i``, slip force ``phi_i``), one lane per force amplitude ``F``.

    :class:`~jaxfriction.Oscillator` with an :class:`~jaxfriction.Iwan` or
    :class:`~jaxfriction.SegalmanIwan` law (its ``elements()`` are the tables) and a
    :class:`~jaxfriction.Harmonic` force, as :func:`~jaxfriction.jointed_oscillator` builds it:
    from rest with relaxed sliders, ``steps`` classical RK4 steps of ``h`` on ``t = k h``, the
    library's order of operations (stage inputs ``y + (h/2) k``, update ``y + h/6 (k1 + 2 k2 +
    2 k3 + k4)``) with the sliders marched as the library marches them
    (:func:`jaxfriction._integrate.marched.marched_rk4_step`): at each stage ``clip(z_n + slip,
    -phi / k, phi / k)`` along the stage's slip, at the step's end along RK4's slip, and the
    friction dissipation booked as the springs' slip past their elongation at their mean force.
    The lanes run in ``prange`` (``parallel``), the sliders in plain loops. ``E_damping`` and
    ``W_input`` are not integrated (they do not feed back).

    Returns:
        The final ``[x, v, z (n), E_friction]`` per lane, ``(B, n + 3)``.
    """
    kernel = _iwan_parallel if parallel and len(amplitude) >= 2 else _iwan_serial
    k, limit = _limits(stiffness, slip_force)
    return kernel(np.ascontiguousarray(amplitude, dtype=np.float64), k, limit, int(steps), float(h), float(omega),
                  float(mass), float(spring), float(damping))


@njit(inline="always", fastmath=FASTMATH)
def _modal_eval(q, p, z, omega2, c2, b, phi_modes, k, force, s, kz, acc):
    """The reduced-order structure's field at ``(q, p, z)`` under the drive ``force``: the
    modal accelerations into ``acc``, the contacts' slip velocities into ``s`` (``kz``: scratch
    for their spring forces).

    As :class:`~jaxfriction.ModalStructure` with one Jenkins element per contact:
    ``q'' = -c p - omega^2 q + b F + Phi^T f`` with ``f_j = -k_j z_j`` (``c = 2 zeta omega``),
    slip ``s = Phi p``.
    """
    c, m = phi_modes.shape
    for j in range(c):
        sj = 0.0
        for i in range(m):
            sj += phi_modes[j, i] * p[i]
        s[j] = sj
        kz[j] = k[j] * z[j]
    for i in range(m):
        a = b[i] * force - c2[i] * p[i] - omega2[i] * q[i]
        for j in range(c):
            a -= phi_modes[j, i] * kz[j]
        acc[i] = a


@njit(inline="always", fastmath=FASTMATH)
def _march_contacts(z, h, s, limit, out):
    """Each contact's Jenkins element from ``z`` along its slip ``h s_j`` into ``out`` (:func:`_march`)."""
    for j in range(z.shape[0]):
        out[j] = _jenkins(z[j] + h * s[j], limit[j])


def _modal_py(amplitude, omega2, c2, b, phi_modes, k, limit, steps, h, omega):
    batch = amplitude.shape[0]
    c, m = phi_modes.shape
    out = np.empty((batch, 2 * m + c + 1))
    hh = 0.5 * h
    h6 = h / 6.0
    for lane in prange(batch):
        q = np.zeros(m)
        p = np.zeros(m)
        z = np.zeros(c)
        qs = np.empty(m)
        ps = np.empty(m)
        zs = np.empty(c)
        k1 = np.empty((3, m))  # q', p' summed over the stages (weights 1, 2, 2, 1)
        slip = np.empty(c)  # the contacts' slip velocities summed over the stages
        s = np.empty(c)
        kz = np.empty(c)
        acc = np.empty(m)
        e = 0.0
        a = amplitude[lane]
        for step in range(steps):
            t = step * h
            _modal_eval(q, p, z, omega2, c2, b, phi_modes, k, a * math.sin(omega * t), s, kz, acc)
            for i in range(m):
                k1[0, i] = p[i]
                k1[1, i] = acc[i]
                qs[i] = q[i] + hh * p[i]
                ps[i] = p[i] + hh * acc[i]
            for j in range(c):
                slip[j] = s[j]
            _march_contacts(z, hh, s, limit, zs)
            _modal_eval(qs, ps, zs, omega2, c2, b, phi_modes, k, a * math.sin(omega * (t + hh)), s, kz, acc)
            for i in range(m):
                k1[0, i] += 2.0 * ps[i]
                k1[1, i] += 2.0 * acc[i]
                k1[2, i] = ps[i]
            for i in range(m):
                qs[i] = q[i] + hh * k1[2, i]
                ps[i] = p[i] + hh * acc[i]
            for j in range(c):
                slip[j] += 2.0 * s[j]
            _march_contacts(z, hh, s, limit, zs)
            _modal_eval(qs, ps, zs, omega2, c2, b, phi_modes, k, a * math.sin(omega * (t + hh)), s, kz, acc)
            for i in range(m):
                k1[0, i] += 2.0 * ps[i]
                k1[1, i] += 2.0 * acc[i]
                qs[i] = q[i] + h * ps[i]
                ps[i] = p[i] + h * acc[i]
            for j in range(c):
                slip[j] += 2.0 * s[j]
            _march_contacts(z, h, s, limit, zs)
            _modal_eval(qs, ps, zs, omega2, c2, b, phi_modes, k, a * math.sin(omega * (t + h)), s, kz, acc)
            for i in range(m):
                q[i] = q[i] + h6 * (k1[0, i] + ps[i])
                p[i] = p[i] + h6 * (k1[1, i] + acc[i])
            plastic = 0.0
            for j in range(c):
                sj = h6 * (slip[j] + s[j])
                zj = _jenkins(z[j] + sj, limit[j])
                plastic += 0.5 * (k[j] * z[j] + k[j] * zj) * (z[j] + sj - zj)
                z[j] = zj
            e = e + plastic
        for i in range(m):
            out[lane, i] = q[i]
            out[lane, m + i] = p[i]
        for j in range(c):
            out[lane, 2 * m + j] = z[j]
        out[lane, 2 * m + c] = e
    return out


_modal_serial = njit(fastmath=FASTMATH)(_modal_py)
_modal_parallel = njit(parallel=True, fastmath=FASTMATH)(_modal_py)


def numba_modal(amplitude, *, frequencies, damping_ratios, contact_modes, force_modes, stiffness, slip_force, steps,
                h, omega, parallel=False):
    """The jointed bar with numba: ``m`` modes, ``c`` Jenkins contacts (stiffness ``k_j``, slip
    force ``phi_j``), a drive ``F sin(omega t)`` through ``force_modes``, one lane per
    amplitude ``F``; from rest, ``steps`` classical RK4 steps of ``h`` on ``t = k h`` (stage
    inputs ``y + (h/2) k``, update ``y + h/6 (k1 + 2 k2 + 2 k3 + k4)``) with the contacts'
    elements marched along each stage's slip as the library marches them (:func:`numba_iwan`),
    the friction dissipation booked beside. The lanes run in ``prange`` (``parallel``).

    Returns:
        The final ``[q (m), q' (m), z (c), E_friction]`` per lane, ``(B, 2 m + c + 1)``.
    """
    kernel = _modal_parallel if parallel and len(amplitude) >= 2 else _modal_serial
    w = np.asarray(frequencies, dtype=np.float64)
    k, limit = _limits(stiffness, slip_force)
    arrays = (w * w, 2.0 * np.asarray(damping_ratios, dtype=np.float64) * w, np.asarray(force_modes, dtype=np.float64),
              np.asarray(contact_modes, dtype=np.float64), k, limit)
    return kernel(np.ascontiguousarray(amplitude, dtype=np.float64), *(np.ascontiguousarray(x) for x in arrays),
                  int(steps), float(h), float(omega))


# --------------------------------------------------------------------------- ceiling micro-benchmarks


def _fma_py(reps, m, c, threads):
    """``threads`` x 64 independent FMA chains (8 dependent FMAs per load/store), LLVM-vectorized."""
    total = 0.0
    for tid in prange(threads):
        acc = np.arange(64) * 1e-3 + tid
        for _ in range(reps):
            for i in range(64):
                u = acc[i]
                u = u * m + c
                u = u * m + c
                u = u * m + c
                u = u * m + c
                u = u * m + c
                u = u * m + c
                u = u * m + c
                u = u * m + c
                acc[i] = u
        total += acc.sum()
    return total


_fma_serial = njit(fastmath={"contract"})(_fma_py)
_fma_parallel = njit(parallel=True, fastmath={"contract"})(_fma_py)


def _div_py(reps, threads):
    """``threads`` x 8 independent chains of divisions ``y = x / y`` (bounded, no denormals)."""
    total = 0.0
    for tid in prange(threads):
        x = 1.3 + tid * 1e-3
        y0 = 1.1
        y1 = 1.2
        y2 = 1.3
        y3 = 1.4
        y4 = 1.5
        y5 = 1.6
        y6 = 1.7
        y7 = 1.8
        for _ in range(reps):
            y0 = x / y0
            y1 = x / y1
            y2 = x / y2
            y3 = x / y3
            y4 = x / y4
            y5 = x / y5
            y6 = x / y6
            y7 = x / y7
        total += y0 + y1 + y2 + y3 + y4 + y5 + y6 + y7
    return total


_div_serial = njit(_div_py)
_div_parallel = njit(parallel=True)(_div_py)


def _best_rate(fn, ops, repeats):
    fn()
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return ops / best


def fma_rate(threads, seconds=0.3, repeats=5):
    """Measured FMA rate (scalar FMA operations per second; 1 FMA = 2 flops), ``threads`` cores."""
    fn = _fma_parallel if threads > 1 else _fma_serial
    fn(10, 0.999999, 1e-6, threads)
    t = time.perf_counter()
    fn(20000, 0.999999, 1e-6, threads)
    reps = max(1000, int(20000 * seconds / max(time.perf_counter() - t, 1e-6)))
    return _best_rate(lambda: fn(reps, 0.999999, 1e-6, threads), reps * 64 * 8 * threads, repeats)


def div_rate_scalar(threads, seconds=0.3, repeats=5):
    """Measured rate of scalar double divisions (``vdivsd``, what LLVM emits for these loops)."""
    fn = _div_parallel if threads > 1 else _div_serial
    fn(10, threads)
    t = time.perf_counter()
    fn(200000, threads)
    reps = max(10000, int(200000 * seconds / max(time.perf_counter() - t, 1e-6)))
    return _best_rate(lambda: fn(reps, threads), reps * 8 * threads, repeats)


def div_rate_packed(threads, seconds=0.3, repeats=5):
    """Measured rate of packed (SIMD) double divisions: numpy's ``np.divide`` on L2-resident arrays,
    one Python thread per core (the ufunc loop releases the GIL)."""
    size = 4096
    xs = [1.0 + np.arange(size) * 1e-6 + i for i in range(threads)]
    ys = [np.full(size, 1.5) for _ in range(threads)]
    t = time.perf_counter()
    for _ in range(200):
        np.divide(xs[0], ys[0], out=ys[0])
    reps = max(200, int(200 * seconds / max(time.perf_counter() - t, 1e-6)))

    def work(i):
        x, y = xs[i], ys[i]
        for _ in range(reps):
            np.divide(x, y, out=y)

    def run():
        if threads == 1:
            work(0)
            return
        pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()

    return _best_rate(run, reps * size * threads, repeats)
