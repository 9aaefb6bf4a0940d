"""Rate-and-state laws and protocols beyond one state (issue 26): Ruina's two-state law in the
quasi-static slider, against rsfmodel's published values and scipy Radau solves written here."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import jaxfriction as jf

# rsfmodel (github jrleeman/rsfmodel, tests/rsf_tests.py at 8b1c9dd): TestDeiterichTwoStateVar and
# TestRuinaTwoStateVar, a 0.012, b1 0.0185, Dc1 5 um, b2 0.0088, Dc2 50 um, load 1 -> 10 um/s at 10 s;
# the friction at t = 11..24 s (8 decimals)
RSF_TWO_STATE = {
    "aging": (3e-3, [0.61777816, 0.56719338, 0.57926411, 0.58134415, 0.5741353, 0.57495495, 0.57393578,
                     0.57211002, 0.5714098, 0.57046462, 0.56953958, 0.56884951, 0.56819716, 0.56762505]),
    "slip": (8e-3, [0.57317487, 0.57620828, 0.57423257, 0.57241419, 0.57098114, 0.56981792, 0.56887496,
                    0.56810967, 0.56748807, 0.56698283, 0.56657196, 0.56623767, 0.56596561, 0.56574412]),
}


def scipy_quasi_static(ts, a, bs, dcs, evolutions, k, t_steps=(10.0,), V=(1.0, 10.0), mu_0=0.6, V_0=1.0):
    """rsfmodel's equations by scipy's Radau, one leg per load value: ``mu' = k (V - v)``,
    ``theta_i' = 1 - v theta_i / Dc_i`` (aging) or ``-(v theta_i / Dc_i) ln(v theta_i / Dc_i)``
    (slip), ``v = V_0 exp((mu - mu_0 - sum_i b_i ln(V_0 theta_i / Dc_i)) / a)``."""
    bs, dcs = np.asarray(bs), np.asarray(dcs)

    def velocity(mu, theta):
        return V_0 * np.exp((mu - mu_0 - np.sum(bs * np.log(V_0 * theta / dcs))) / a)

    def rhs(V_load):
        def f(t, y):
            v, theta = velocity(y[0], y[1:]), y[1:]
            x = v * theta / dcs
            rate = [1.0 - xi if e == "aging" else -xi * np.log(xi) for xi, e in zip(x, evolutions)]
            return [k * (V_load - v), *rate]
        return f

    y = [mu_0 + np.sum(bs * np.log(V_0 * (dcs / V[0]) / dcs)) + a * np.log(V[0] / V_0), *(dcs / V[0])]
    edges = [ts[0], *t_steps, ts[-1]]
    out = np.zeros((1 + len(bs), len(ts)))
    for V_load, lo, hi in zip(V, edges[:-1], edges[1:]):
        inside = (ts >= lo) & (ts <= hi)
        leg = solve_ivp(rhs(V_load), (lo, hi), y, method="Radau", rtol=1e-12, atol=1e-13, t_eval=ts[inside],
                        dense_output=True)
        out[:, inside] = leg.y
        y = leg.sol(hi)
    return out[0], out[1:]


def two_state_slider(evolution, k, form="log"):
    law = jf.TwoStateRateState(a=0.012, b1=0.0185, D_c1=5.0, b2=0.0088, D_c2=50.0, mu_0=0.6, V_0=1.0,
                               evolution=evolution, form=form)
    return jf.QuasiStaticSlider(law=law, load=jf.Steps((1.0, 10.0), (10.0,)), stiffness=k, normal=1.0)


@pytest.mark.parametrize("evolution", ["aging", "slip"])
def test_two_state_against_rsfmodel_and_scipy(evolution):
    k, published = RSF_TWO_STATE[evolution]
    slider = two_state_slider(evolution, k)
    ts = np.arange(41.0)
    traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 40.0, saveat=jf.SaveAt(ts=jnp.asarray(ts)))
    assert int(traj.status) == 0
    mu = np.asarray(-traj.friction_force)
    np.testing.assert_allclose(mu[11:25], published, atol=1e-8)  # measured: 4.9e-9 (8 decimals published)
    mu_ref, theta_ref = scipy_quasi_static(ts, 0.012, (0.0185, 0.0088), (5.0, 50.0), (evolution,) * 2, k)
    np.testing.assert_allclose(mu, mu_ref, rtol=1e-9)  # measured: ~1e-11
    thetas = np.stack([np.asarray(traj.internal(name)) for name in ("theta1", "theta2")])
    np.testing.assert_allclose(thetas, theta_ref, rtol=1e-8)
    assert slider.internal_names() == ["ln_v", "psi1", "psi2"]
    assert float(jf.relative_energy_residual(traj)) < 1e-9


def test_two_state_mixed_laws_and_bad_input():
    # one slip-law state and one aging-law state, the regularized form (= log to round-off here)
    law = jf.TwoStateRateState(a=0.012, b1=0.0185, D_c1=5.0, b2=-0.004, D_c2=50.0, mu_0=0.6, V_0=1.0,
                               evolution=("slip", "aging"))
    slider = jf.QuasiStaticSlider(law=law, load=jf.Steps((1.0, 10.0), (10.0,)), stiffness=8e-3, normal=1.0)
    ts = np.linspace(0.0, 40.0, 81)
    traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 40.0, saveat=jf.SaveAt(ts=jnp.asarray(ts)))
    mu_ref, _ = scipy_quasi_static(ts, 0.012, (0.0185, -0.004), (5.0, 50.0), ("slip", "aging"), 8e-3)
    np.testing.assert_allclose(np.asarray(-traj.friction_force), mu_ref, rtol=1e-9)
    with pytest.raises(ValueError, match="D_c2"):
        jf.TwoStateRateState(D_c2=0.0)
    with pytest.raises(ValueError, match="a"):
        jf.TwoStateRateState(a=-1.0)
    with pytest.raises(ValueError, match="evolution"):
        jf.TwoStateRateState(evolution="perrin")
    with pytest.raises(TypeError, match="critical_stiffness"):
        slider.critical_stiffness()
    with pytest.raises(ValueError, match="name"):
        law.named_state(jnp.zeros(2), "theta")
