"""Passivity of the dynamic laws: the LuGre margin, the numerical energy test, the contract report."""

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import jaxfriction as jf
from jaxfriction.testing import check_dynamic_law

# Canudas de Wit et al. 1995's bristles and Stribeck curve; sigma1 is varied around the bound
# sigma1* = sigma2 F_c / (F_s - F_c) = 0.4 * 1 / 0.5 = 0.8 N s/m
BASE = dict(sigma0=1e5, sigma2=0.4, mu_c=1.0, mu_s=1.5, v_s=1e-3)
BOUND = 0.8


def test_lugre_margin_closed_form_over_a_box_and_its_gradient():
    """For constant sigma1 and mu_s >= mu_c the margin is sigma2 - sigma1 (mu_s - mu_c) / mu_c, across a box of
    parameters (vmapped, as a fit would evaluate it), with the analytic gradient; the penalty
    min(margin, 0)^2 vanishes exactly on the passive side."""
    rng = np.random.default_rng(1)
    sigma1, sigma2 = rng.uniform(0.0, 10.0, 64), rng.uniform(0.0, 2.0, 64)
    mu_s, mu_c = rng.uniform(1.0, 2.0, 64), rng.uniform(0.5, 1.0, 64)

    def margin(s1, s2, ms, mc):
        return jf.passivity_margin(jf.LuGre(sigma0=1e5, sigma1=s1, sigma2=s2, mu_c=mc, mu_s=ms, v_s=1e-3))

    values = np.asarray(jax.vmap(margin)(sigma1, sigma2, mu_s, mu_c))
    np.testing.assert_allclose(values, sigma2 - sigma1 * (mu_s - mu_c) / mu_c, rtol=1e-12, atol=1e-12)
    grads = jax.vmap(jax.grad(margin, argnums=(0, 1, 2, 3)))(sigma1, sigma2, mu_s, mu_c)
    np.testing.assert_allclose(np.asarray(grads[0]), -(mu_s - mu_c) / mu_c, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grads[1]), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grads[2]), -sigma1 / mu_c, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grads[3]), sigma1 * mu_s / mu_c**2, rtol=1e-12)
    penalty = np.asarray(jax.vmap(lambda *p: jnp.minimum(margin(*p), 0.0) ** 2)(sigma1, sigma2, mu_s, mu_c))
    passive = sigma1 * (mu_s - mu_c) <= sigma2 * mu_c
    assert 5 < passive.sum() < 59  # the box straddles the bound
    assert np.all(penalty[passive] == 0.0) and np.all(penalty[~passive] > 0.0)
    # the class defaults (the 1995 paper's values) are not passive
    assert float(jf.passivity_margin(jf.LuGre())) == pytest.approx(0.4 - 316.2 * 0.5, rel=1e-12)


def _lugre_power_over_v2(v, w, p):
    """P / v^2 of LuGre at slip speed v > 0 and relative deflection w = sigma0 z / g(v), from the model's
    equations (Canudas de Wit et al. 1995): F v - d/dt (sigma0 z^2 / 2)."""
    g = p["Fc"] + (p["Fs"] - p["Fc"]) * np.exp(-((v / p["vs"]) ** 2))
    s1 = p["s1"] * np.exp(-((v / p["vd"]) ** 2)) if p["vd"] else p["s1"]
    z = w * g / p["s0"]
    z_dot = v - p["s0"] * v * z / g
    force = p["s0"] * z + s1 * z_dot + p["s2"] * v
    return (force * v - p["s0"] * z * z_dot) / v**2


@pytest.mark.parametrize("v_d", [None, 1e-3, 3e-2])
def test_lugre_margin_is_the_infimum_over_the_invariant_set(v_d):
    """Brute force over slip speeds and deflections |z| <= F_s / sigma0 (numpy, from the model's equations) against
    the margin, with and without the decaying micro-damping."""
    law = jf.LuGre(sigma0=1e5, sigma1=50.0, sigma2=0.4, mu_c=1.0, mu_s=1.5, v_s=1e-3, v_d=v_d)
    p = dict(s0=1e5, s1=50.0, s2=0.4, Fc=1.0, Fs=1.5, vs=1e-3, vd=v_d)
    v = np.geomspace(1e-9, 1e3, 3001)[:, None]
    g = p["Fc"] + (p["Fs"] - p["Fc"]) * np.exp(-((v / p["vs"]) ** 2))
    w = np.linspace(-1.0, 1.0, 4001)[None, :] * (p["Fs"] / g)
    brute = np.min(_lugre_power_over_v2(v, w, p))
    margin = float(jf.passivity_margin(law))
    if v_d is None:  # the infimum is the limit v -> inf: sigma2 - sigma1 (F_s - F_c) / F_c
        assert margin == pytest.approx(0.4 - 50.0 * 0.5, rel=1e-12)
        assert brute == pytest.approx(margin, rel=1e-3)  # approached from above as v grows
        assert brute >= margin
    else:  # the grid minimum: within the brute force's resolution, never above it by more
        assert margin == pytest.approx(brute, rel=2e-3, abs=1e-3)


def _scipy_burst_cycle_work(sigma1, slow, fast, cycles=10):
    """Work done on a LuGre contact over the last of ``cycles`` unidirectional bursts (slow slide for 4 relaxation
    lengths, jump to ``fast`` for 2), by Radau on the model's equations written here."""
    s0, s2, fc, fs, vs = 1e5, 0.4, 1.0, 1.5, 1e-3

    def g(v):
        return fc + (fs - fc) * np.exp(-((v / vs) ** 2))

    def rhs(t, y, v):
        z = y[0]
        z_dot = v - s0 * abs(v) * z / g(v)
        return [z_dot, (s0 * z + sigma1 * z_dot + s2 * v) * v]

    y = np.array([0.0, 0.0])
    start = 0.0
    for i in range(cycles):
        if i == cycles - 1:
            start = y[1]
        for v, lengths in ((slow, 4.0), (fast, 2.0)):
            duration = lengths * g(v) / (s0 * v)
            y = solve_ivp(rhs, (0.0, duration), y, args=(v,), method="Radau", rtol=1e-11, atol=1e-18).y[:, -1]
    return y[1] - start


def test_lugre_bound_against_the_energy_test_on_both_sides():
    """Below the bound (sigma1 = 0.4) every history dissipates; above it (sigma1 = 3.2) the burst history returns
    energy each cycle. The library's RK4 test and an independent Radau solve of the same burst agree."""
    speeds = (1e-5, 100.0)
    below = jf.passivity(jf.LuGre(sigma1=0.5 * BOUND, **BASE), speeds=speeds)
    above = jf.passivity(jf.LuGre(sigma1=4.0 * BOUND, **BASE), speeds=speeds)
    assert below.passive and below.margin == pytest.approx(0.2, rel=1e-12)
    assert below.work_min >= 0.0 and min(below.cycle_work.values()) > 0.0
    assert not above.passive and above.margin == pytest.approx(-1.2, rel=1e-12)
    assert above.cycle_work["burst"] < 0.0 and above.work_min < 0.0
    refs = [_scipy_burst_cycle_work(sigma1, *speeds) for sigma1 in (0.5 * BOUND, 4.0 * BOUND)]
    assert below.cycle_work["burst"] == pytest.approx(refs[0], rel=2e-3)
    assert above.cycle_work["burst"] == pytest.approx(refs[1], rel=2e-3)
    assert refs[0] > 0.0 and refs[1] < -1e-4  # J per cycle: energy out of the contact above the bound


def test_check_dynamic_law_reports_passivity():
    """check_dynamic_law lists 'passive' for passive laws, notes a law that is not, and fails it on request."""
    assert "passive" in check_dynamic_law(jf.LuGre(sigma1=0.5 * BOUND, **BASE)).checks
    report = check_dynamic_law(jf.LuGre())  # the 1995 paper's values: reported, not failed
    assert "passive" not in report.checks and "not passive" in report.notes[0] and "-157.7" in repr(report)
    with pytest.raises(AssertionError, match="not passive"):
        check_dynamic_law(jf.LuGre(sigma1=1e3, **BASE), require_passive=True)
    # the margins of the other closed forms
    assert float(jf.passivity_margin(jf.LuGre(v_d=1e-4))) > 0.0  # decaying micro-damping
    assert float(jf.passivity_margin(jf.BoucWen(n=2.5, gamma=-0.2))) == pytest.approx(0.3)
    assert float(jf.passivity_margin(jf.BoucWen(beta=0.1, gamma=-0.5))) == pytest.approx(-0.4)
    # a law with no closed form gets the numerical test
    assert "passive" in check_dynamic_law(jf.RateState(), speeds=(1e-6, 1.0)).checks
    with pytest.raises(ValueError, match="passivity"):
        check_dynamic_law(jf.Dahl(), passivity="yes")


def test_numerical_test_catches_an_active_law_without_a_closed_form():
    """A Dahl law that pushes along the slip (negative damping) is not passive: no closed form, the histories show it."""

    class Pushing(jf.Dahl):
        def force(self, v, z, normal):
            return super().force(v, z, normal) + 0.5 * v

    report = jf.passivity(Pushing())
    assert report.margin is None and not report.passive and report.work_min < 0.0
    assert "passive" in check_dynamic_law(jf.Dahl(), passivity="numerical").checks
    with pytest.raises(AssertionError, match="not passive"):
        check_dynamic_law(Pushing(), require_passive=True)


def test_spring_slider_laws_are_passive():
    for law in (jf.Iwan(jnp.array([1.0, 2.0]), jnp.array([0.1, 0.3])),
                jf.MaxwellSlip(jnp.array([1e3, 3e2, 1e2]), jnp.array([0.5, 0.3, 0.2]), sigma2=0.4)):
        report = jf.passivity(law)
        assert report.passive and report.margin == np.inf and report.dissipation_min >= -1e-15


def test_bad_input():
    with pytest.raises(ValueError, match="law"):
        jf.passivity(jf.Quinn())
    with pytest.raises(ValueError, match="speeds"):
        jf.passivity(jf.Dahl(), speeds=(1.0, 0.1))
    with pytest.raises(ValueError, match="normal"):
        jf.passivity(jf.Dahl(), normal=0.0)
    with pytest.raises(ValueError, match="law: no closed-form"):
        jf.passivity_margin(jf.RateState())
    margin = eqx.filter_jit(jf.passivity_margin)(jf.BoucWen(beta=0.5, gamma=-0.2))
    assert float(margin) == pytest.approx(0.3)
