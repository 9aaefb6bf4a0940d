"""The generalized Maxwell-slip model (issue 13): steady state, virgin curve, energy, gradients."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf

K = jnp.array([1e3, 3e2, 1e2])
ALPHA = jnp.array([0.5, 0.3, 0.2])
GMS = jf.MaxwellSlip(K, ALPHA, C=20.0, sigma2=0.4, mu_c=1.0, mu_s=1.5, v_s=1e-3, delta=2.0)


def test_steady_state_is_the_stribeck_curve_plus_viscous_friction():
    normal, errors = 2.0, []
    for v in (-0.02, -1e-3, 3e-4, 1e-3, 5e-3, 0.05):
        g = float(GMS.steady_level(v, normal))
        # stick until the softest element's limit (x = alpha g / k), then 40 attraction times alpha g / C
        t1 = float(np.max(ALPHA * g / K)) / abs(v) + 40 * g / GMS.C
        ts = jnp.linspace(0.0, t1, 20001)
        f = jf.drive_law(GMS, lambda t, v=v: v + 0.0 * t, ts, normal=normal)[1][-1]
        stribeck = normal * (1.0 + 0.5 * np.exp(-((v / 1e-3) ** 2)))
        expected = -(np.sign(v) * stribeck + 0.4 * v)
        errors.append(abs(float(f) - expected) / abs(expected))
    assert max(errors) < 1e-12  # measured 2.0e-14 (the attraction's exp(-40) = 4e-18)


def test_presliding_virgin_curve_is_piecewise_linear():
    # monotonic displacement at v = 1e-6 m/s from rest: F(x) = sum_i min(k_i x, alpha_i g(v)) + sigma2 v,
    # breakpoints x_i = alpha_i g / k_i = 0.75, 1.5, 3 mm
    v, normal = 1e-6, 1.0
    g = float(GMS.steady_level(v, normal))
    ts = jnp.linspace(0.0, 4000.0, 40001)  # x up to 4 mm, dx = 1e-7 m
    _, f = jf.drive_law(GMS, lambda t: v + 0.0 * t, ts, normal=normal)
    x = v * np.asarray(ts)
    closed = np.sum(np.minimum(np.asarray(K)[None] * x[:, None], np.asarray(ALPHA) * g), axis=1) + 0.4 * v
    error = np.max(np.abs(-np.asarray(f) - closed))
    assert error < 2e-4 * g  # measured 4.5e-5 g: a step's overshoot k_i v dt at a breakpoint, then attracted
    breaks = np.asarray(ALPHA) * g / np.asarray(K)
    assert np.allclose(breaks, [7.5e-4, 1.5e-3, 3e-3], rtol=1e-6)
    mid = (x > 1e-5) & (x < breaks[0] - 1e-5)  # all sticking: slope sum k_i
    slope = np.polyfit(x[mid], -np.asarray(f)[mid], 1)[0]
    assert slope == pytest.approx(float(jnp.sum(K)), rel=1e-10)


def test_energy_balance_and_finite_gradients_at_rest():
    law = jf.MaxwellSlip(jnp.array([50.0, 20.0]), jnp.array([0.6, 0.4]), C=5.0, sigma2=0.1, mu_c=0.3, mu_s=0.5,
                         v_s=0.1)
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.6, 1.3), damping=0.05)
    traj = jf.simulate(system, jnp.array([0.2, 0.0]), 0.0, 10.0, dt=1e-4, save_every=100)
    assert int(traj.status) == 0
    # the exact stick/slip switch makes the balance first order: measured 1.9e-5 at dt = 1e-3, 1.3e-6 at 1e-4
    assert float(jf.relative_energy_residual(traj)) < 3e-6
    assert float(traj.friction_dissipation[-1]) > 0.0

    rest = jf.Oscillator(law=law, stiffness=0.0)  # v = 0 and z = 0 throughout: every switch on its edge

    def final(p):
        s = jf.set_parameters(rest, {"law.C": p[0], "law.mu_s": p[1], "law.alpha[0]": p[2]})
        return jf.simulate(s, jnp.zeros(2), 0.0, 1.0, dt=1e-2, save_every=None).ys[-1, 0]

    grad = jax.grad(final)(jnp.array([5.0, 0.5, 0.6]))
    assert np.all(np.isfinite(grad))
    d_v = jax.jacfwd(lambda v: law.state_rate(v, jnp.zeros(2), 1.0))(0.0)
    assert np.allclose(d_v, 1.0)  # sticking at rest: z' = v
