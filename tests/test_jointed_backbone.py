"""The jointed oscillator's amplitude-dependent frequency and damping (scripts/studies/jointed_backbone.py).

References, none computed by jaxfriction: the Jenkins element's first harmonic, integrated here
over a closed Masing loop by brute force; the harmonic-balance backbone of the discrete joint
(closed forms per element); Segalman's exponents ``1 + chi`` (damping ratio) and ``3 + chi``
(dissipation per cycle).
"""

import math
import os
import sys

import jax
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "studies"))
import jointed_backbone as jb


def test_describing_function_is_the_loop_first_harmonic():
    """g(s) and 4 phi (a - p) against the Fourier coefficients of the closed loop (unit element)."""
    th = np.linspace(0.0, 2 * np.pi, 200001)[:-1]
    for p in (0.05, 0.3, 0.7, 1.2):
        x = np.cos(th)
        top = min(1.0, p)
        f = np.where(th < np.pi, np.maximum(top - (1.0 - x), -p), np.minimum(-top + (x + 1.0), p))
        k1 = 2 * np.mean(f * np.cos(th))
        d = -2 * np.pi * np.mean(f * np.sin(th))  # loop area: -int f dx over the cycle
        np.testing.assert_allclose(jb.jenkins_in_phase(p), k1, rtol=1e-8, atol=1e-12)
        _, _, d_bb = jb.masing_backbone([1.0], [p], [1.0], k=0.0)
        np.testing.assert_allclose(d_bb[0], d, rtol=1e-6, atol=1e-9)
    # the continuous model's constant, by a second quadrature rule
    s = (np.arange(200000) + 0.5) / 200000
    u = s**2  # s^-1/2 ds = 2 du with s = u^2 removes the singularity
    np.testing.assert_allclose(jb.chi_constant(-0.5), np.mean(2 * (1 - jb.jenkins_in_phase(u))), rtol=1e-6)


@pytest.fixture(scope="module")
def ring():
    return jb.ring_down(n_elements=256, steps=400, cycles=150)


@pytest.mark.slow
def test_ring_down_follows_the_backbone_and_segalman(ring):
    a, zeta, omega = ring["a"], ring["zeta"], ring["omega"]
    phi_max = ring["phi_max"]
    assert ring["status"] == 0 and a.min() < 3e-3 * phi_max
    k, phi = (np.asarray(v) for v in ring["law"].elements())
    w_bb, z_bb, d_bb = jb.masing_backbone(k, phi, a)
    sel = (a > 2e-3 * phi_max) & (a < 0.3 * phi_max)
    # measured with the elements marched: zeta 0.13 %, omega 7.5e-4 at the largest amplitudes (0.3
    # phi_max; 1e-5 median), the same at 400 and 1,600 steps a period: the backbone's averaging, not
    # the step (integrated through the rate: zeta 0.9 % at 400 steps, 0.2 % at 1,600; omega 1.6e-4,
    # 6.0e-4, an error of the step that cancelled part of the averaging's)
    np.testing.assert_allclose(zeta[sel], z_bb[sel], rtol=3e-3)
    np.testing.assert_allclose(omega[sel], w_bb[sel], rtol=1e-3)
    # Segalman's power laws at small amplitude
    lo, hi = 2e-3 * phi_max, 2e-2 * phi_max
    d = zeta * 2 * math.pi * omega**2 * a**2
    assert abs(jb.slope(a, d, lo, hi) - 2.5) < 0.02
    assert abs(jb.slope(a, d, lo, hi) - jb.slope(a, d_bb, lo, hi)) < 0.01
    assert abs(jb.slope(a, zeta, lo, hi) - 0.5) < 0.03
    assert abs(jb.slope(a, 2.0 - omega, lo, hi) - 0.5) < 0.03


@pytest.mark.slow
def test_frequency_response_peaks_lie_on_the_backbone():
    ring64 = jb.ring_down(n_elements=64, steps=400, cycles=150)
    curve = jb.frequency_response(0.01, np.linspace(1.80, 1.95, 41), t1=600.0)
    assert np.all(curve["status"] == 0)
    checks = jb.peak_checks(curve, 0.01, ring64)
    assert abs(checks["peak_vs_backbone"]) < 3e-3  # grid spacing 2e-3 relative
    assert abs(checks["energy_balance_ratio"] - 1) < 0.015  # measured 0.994
