"""The fast batch path: component-wise RK4, checkpointed reverse mode, gradient modes, sharding."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
import jaxfriction._integrate.rk4 as rk4
from jaxfriction._workflows import SweepConfig, batch_dissipation, cycle_metrics, system_sweep
from jaxfriction._workflows.metrics import resolve_gradient, window_metrics


def oscillator(mu, alpha):
    return jf.ForcedOscillator(law=jf.Quinn(mu=mu, eps=0.02), alpha=alpha, omega=0.5)


def test_componentwise_rk4_equals_array_rk4(monkeypatch):
    def run(mu, alpha):
        return jf.simulate(oscillator(mu, alpha), jnp.zeros(2), 0.0, 40.0, 0.01, save_every=100).ys

    mu, alpha = jnp.linspace(0.2, 1.0, 4), jnp.linspace(0.5, 2.0, 4)
    rows = jax.jit(jax.vmap(run))(mu, alpha)
    monkeypatch.setattr(rk4, "ROW_STATE_LIMIT", 0)
    arrays = jax.jit(jax.vmap(run))(mu, alpha)
    assert rows.shape == arrays.shape == (4, 41, 5)
    np.testing.assert_allclose(rows, arrays, rtol=1e-13, atol=1e-15)


def test_checkpointed_scan_same_values_and_gradients():
    save_every = None
    def final(mu, checkpoint):
        traj = jf.simulate(oscillator(mu, 1.3), jnp.zeros(2), 0.0, 30.0, 0.01, save_every=save_every,
                           checkpoint=checkpoint)
        return traj.ys[-1, 2]

    mu = jnp.asarray(0.7)
    assert float(final(mu, True)) == float(final(mu, False))
    g_plain = jax.grad(final)(mu, False)
    g_ckpt = jax.grad(final)(mu, True)
    np.testing.assert_allclose(g_ckpt, g_plain, rtol=1e-12)
    assert np.isfinite(g_ckpt) and abs(float(g_ckpt)) > 1e-3


def test_gradient_modes_agree_with_each_other_and_finite_differences():
    mu, alpha = np.array([0.3, 0.8, 1.0]), np.array([1.6, 1.2, 0.4])
    out = {mode: batch_dissipation(mu, alpha, SweepConfig(cycles=4, gradient=mode, wrt=("mu", "alpha")))
           for mode in ("forward", "reverse")}
    plain = batch_dissipation(mu, alpha, SweepConfig(cycles=4, gradient=None))
    assert set(plain) == {"dissipation", "stick_fraction", "status"}
    for mode in out:
        np.testing.assert_array_equal(out[mode]["dissipation"], plain["dissipation"])
    for name in ("dD_dmu", "dD_dalpha"):
        np.testing.assert_allclose(out["reverse"][name], out["forward"][name], rtol=1e-10, atol=1e-13)
    h = 1e-6
    plain_config = SweepConfig(cycles=4, gradient=None)
    for name, step in (("alpha", (0.0, h)), ("mu", (h, 0.0))):
        up = batch_dissipation(mu + step[0], alpha + step[1], plain_config)["dissipation"]
        down = batch_dissipation(mu - step[0], alpha - step[1], plain_config)["dissipation"]
        np.testing.assert_allclose(out["forward"][f"dD_d{name}"], (up - down) / (2 * h), rtol=1e-5, atol=1e-8)
    # alpha < mu N: the block never leaves the stick band, D and its gradient vanish
    assert abs(plain["dissipation"][2]) < 1e-15 and plain["stick_fraction"][2] == 1.0
    assert abs(out["forward"]["dD_dmu"][2]) < 1e-12 and abs(out["forward"]["dD_dalpha"][2]) < 1e-12


def test_batch_matches_single_lane_and_pads_to_devices():
    config = SweepConfig(cycles=2)
    mu, alpha = np.array([0.25, 0.5, 0.9]), np.array([1.0, 1.5, 2.0])
    out = batch_dissipation(mu, alpha, config)
    assert out["dissipation"].shape == (3,)
    one = cycle_metrics(jnp.asarray(0.5), jnp.asarray(1.5), config)
    np.testing.assert_allclose(out["dissipation"][1], one["dissipation"], rtol=1e-13)
    np.testing.assert_allclose(out["dD_dmu"][1], one["dD_dmu"], rtol=1e-12)


def test_window_metrics_on_the_belt_steady_cycle():
    # belt at v0 with mu_s = mu_k = 1 (Quinn's law, eps = 2 dt: a narrower band makes RK4
    # unstable inside it, h mu N / (m eps) > 2.8, and the tangent grows without bound): after the first grazing stick the block
    # slips for good, oscillating as x = 1 + v0 sin(t) under the constant friction force
    # mu N = 1, so the slip v - v0 peaks at 2 v0 and the friction work over a window W is
    # the integral of -f (v - v0) = v0 W - (x_end - x_start), with |x_end - x_start| <= 2 v0.
    def build(v0):
        return jf.SpringMassOnBelt(law=jf.Quinn(mu=1.0, eps=0.004), belt_velocity=v0)  # eps = 2 dt

    def metrics(v0, wrt=("v0",)):
        return window_metrics(build, {"v0": jnp.asarray(v0)}, wrt, t_measure=40.0, window=20.0, dt=0.002)

    out = metrics(0.2)
    assert out["status"] == 0 and float(out["stick_fraction"]) < 0.01
    np.testing.assert_allclose(out["peak_slip"], 0.4, atol=2e-3)
    assert 0.8 - 1e-3 <= float(out["final_position"]) <= 1.2 + 1e-3
    assert abs(float(out["dissipation"]) - 0.2 * 20.0) <= 0.4 + 1e-3
    fd = (metrics(0.2 + 1e-6, ())["dissipation"] - metrics(0.2 - 1e-6, ())["dissipation"]) / 2e-6
    np.testing.assert_allclose(out["dD_dv0"], fd, rtol=1e-5)


def test_left_out_zero_terms_change_nothing():
    # a literal 0 damping and a fixed floor drop exactly-zero terms from the vector field; an
    # array damping of 0 and an overridden (zero) surface velocity/acceleration keep them
    class Floor(jf.ForcedOscillator):
        def surface_velocity(self, t):
            return 0.0 * t

        def surface_acceleration(self, t):
            return 0.0 * t

    law = jf.Quinn(mu=0.6, eps=0.02)
    y = jnp.array([0.3, -0.2, 0.0, 0.0, 0.0])
    lean = jf.ForcedOscillator(law=law, alpha=1.1, omega=0.5)
    full = Floor(law=law, alpha=1.1, omega=0.5, damping=jnp.asarray(0.0))
    for t in (0.0, 0.7, 2.3):
        np.testing.assert_array_equal(lean.vector_field(t, y), full.vector_field(t, y))
    # a moving, accelerating surface keeps its terms: f_eq = m a_s + k x - F(t)
    class Shaken(jf.ForcedOscillator):
        def surface_acceleration(self, t):
            return 0.5 * jnp.cos(t)

    shaken = Shaken(law=law, alpha=1.1, omega=0.5, mass=2.0)
    expected = 2.0 * 0.5 * jnp.cos(0.7) + 0.3 - 1.1 * jnp.sin(0.35)
    np.testing.assert_allclose(shaken.f_eq(0.7, y), expected, rtol=1e-15)


def test_system_sweep_without_gradient_and_all_defaults():
    ds = system_sweep("oscillator", {"alpha": np.array([0.5, 2.0])}, cycles=2, wrt=["muN"], gradient=None,
                      progress=False)
    assert "dD_dmuN" not in ds and ds.attrs["gradient"] == "None"
    with pytest.raises(ValueError, match="not both"):
        system_sweep("oscillator", {"alpha": np.array([0.5])}, cycles=2, duration=10.0, window=2.0)
    with pytest.raises(ValueError, match="law"):
        system_sweep("oscillator", {"alpha": np.array([0.5])}, cycles=2, wrt=["law"])
    # a wrt parameter left at its default is differentiated too
    ds = system_sweep("oscillator", {"alpha": np.array([2.0])}, cycles=2, wrt=["k"], progress=False)
    assert np.isfinite(ds["dD_dk"]).all() and float(abs(ds["dD_dk"]).max()) > 0


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="gradient"):
        SweepConfig(gradient="sideways")
    with pytest.raises(ValueError, match="wrt"):
        SweepConfig(wrt=("omega",))
    with pytest.raises(ValueError, match="gradient"):
        resolve_gradient("both", 2)
    assert resolve_gradient("auto", 2) == "forward" and resolve_gradient("auto", 9) == "reverse"
    with pytest.raises(ValueError, match="mu and alpha"):
        batch_dissipation(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="mu"):
        batch_dissipation(-np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="wrt"):
        window_metrics(lambda mu: oscillator(mu, 1.0), {"mu": 0.5}, ("alpha",), t_measure=1.0, window=1.0, dt=0.1)
