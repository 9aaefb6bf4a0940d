"""pyBasin's / bSTAB's friction-oscillator basin stability (scripts/studies/basin_friction.py).

The reference is pyBasin's own right-hand side (``case_studies/friction/friction_jax_ode.py``:
three branches, ``x' = v_d`` in stick, the transition force always positive), written here
from its description and integrated by scipy's RK45 at pyBasin's tolerances (rtol 1e-8, atol
1e-6); the library runs the script's user law in an Oscillator, RK4 in ``jf.sweep`` over
``y0`` paths. Lane by lane the classes (pyBasin's ``max |v| <= 0.2`` over the last 100 s and
``jf.attractor``) and the limit cycle's peak speed must agree.
"""

import os
import sys

import jax
import numpy as np
import pytest
from scipy.integrate import solve_ivp

jax.config.update("jax_enable_x64", True)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "studies"))
import basin_friction as bf


def pybasin_rhs(t, y, k=50.0):
    x, v = y
    vr = v - bf.V_D
    big = bf.MU_D * (1.0 + (bf.MU_SD - 1.0) * np.exp(-abs(vr) / bf.V_0))
    if abs(vr) > 1e-4:
        return [v, -x - 2 * bf.XI * v - np.tanh(k * vr) * big]
    if abs(x + 2 * bf.XI * v) > bf.MU_D * bf.MU_SD:
        return [v, -x - 2 * bf.XI * v + bf.MU_D * bf.MU_SD * np.tanh(k * big)]
    return [bf.V_D, -(v - bf.V_D)]


def reference_max_speed(x0, v0):
    sol = solve_ivp(pybasin_rhs, (0.0, 500.0), [x0, v0], method="RK45", rtol=1e-8, atol=1e-6,
                    t_eval=np.linspace(400.0, 500.0, 10001))
    assert sol.success
    return np.max(np.abs(sol.y[1]))


def test_classes_match_pybasins_right_hand_side_lane_by_lane():
    x0, v0 = bf.initial_conditions(16, seed=3)
    ds = bf.basins(y0=(x0, v0), dt=0.01)
    assert np.all(ds["status"].values == 0)
    ref = np.array([reference_max_speed(a, b) for a, b in zip(x0, v0, strict=True)])
    ref_fixed = ref <= 0.2
    assert 3 <= ref_fixed.sum() <= 13  # both attractors are sampled
    np.testing.assert_array_equal(ds["pybasin_fixed_point"].values, ref_fixed)
    np.testing.assert_array_equal(ds["attractor"].values == 0, ref_fixed)
    np.testing.assert_array_equal(ds["attractor"].values[~ref_fixed], 1)  # period-1 stick-slip
    # the stick-slip cycle's peak speed: the same cycle (RK4 at dt = 0.01 against RK45 at 1e-8)
    np.testing.assert_allclose(ds["max_abs_v"].values[~ref_fixed], ref[~ref_fixed], rtol=2e-3)
    frac = ds["basin_stability"].sel(basin="fixed point")
    assert float(frac) == pytest.approx(ref_fixed.mean())


@pytest.mark.slow
def test_basin_stability_reproduces_pybasin():
    """5,000 samples against pyBasin's published 0.3138 (its own 5,000): two independent samples."""
    ds = bf.basins(n=5000, dt=0.01, seed=0)
    p = float(ds["pybasin_fixed_point"].mean())
    se = np.sqrt(p * (1 - p) / 5000)
    pub = bf.PUBLISHED["fixed point"]
    assert abs(p - pub) < 2 * np.sqrt(se**2 + pub * (1 - pub) / 5000)
    assert float(ds["basin_stability_stderr"].sel(basin="fixed point")) == pytest.approx(se, rel=0.05)
    assert float(ds["basin_stability"].sel(basin="fixed point")) == pytest.approx(p, abs=0.003)
