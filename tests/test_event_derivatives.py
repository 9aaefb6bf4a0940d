"""Exact event-time derivatives, on the cases where peers' gradients are wrong, and on stick-slip.

Every expected value is a closed form (or the implicit-function derivative of a closed form,
taken here by autodiff of that formula, never of jaxfriction's solver):

- a reset at a parameter-dependent event (SciML/DiffEqGPU.jl#533: ``u' = 1``, reset to 0 at
  ``u = p``, ``d u(1)/dp = -1``, where Enzyme's gradient is wrong);
- a terminating event inside a step (SciML/OrdinaryDiffEq.jl#4388: the ForwardDiff event-time
  derivative is wrong by up to 1e-5 relative);
- the time a falling body with linear drag lands (patrick-kidger/diffrax#451: the derivative
  of a terminating event's time is zero);
- breakaway of a forced Coulomb oscillator from rest and its first stick entry.

Each is checked in forward and reverse mode, batched by ``vmap`` over 10^4 lanes for the
hybrid cases, to 1e-12 relative or better.
"""


import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

import jaxfriction as jf

#: lanes of the batched checks: a few in the fast suite, 10^4 in the slow one
LANES = [64, pytest.param(10_000, marks=pytest.mark.slow)]
TIGHT = {"rtol": 1e-14, "atol": 1e-14}  # the solver tolerance, below the 1e-12 asked of the derivatives


class Reset(jf.AbstractHybridField):
    """``u' = 1``; at ``u = p`` the state is reset to 0 (regime counts the resets)."""

    p: jax.Array

    def __call__(self, t, y, regime):
        return jnp.ones_like(y)

    def event(self, t, y, regime):
        return self.p - y[0]

    def next_regime(self, t, y, regime):
        return regime + 1

    def enter(self, t, y, regime):
        return jnp.where(regime > 0, jnp.zeros_like(y), y)


class GrowthToThreshold(jf.AbstractHybridField):
    """``u' = r u`` until ``u = q``, then stop (regime 1: zero field, no further event)."""

    r: jax.Array
    q: jax.Array

    def __call__(self, t, y, regime):
        return jnp.where(regime == 0, self.r * y, 0.0)

    def event(self, t, y, regime):
        return jnp.where(regime == 0, self.q - y[0], 1.0)

    def next_regime(self, t, y, regime):
        return jnp.ones_like(regime)


class FallWithDrag(jf.AbstractHybridField):
    """Height and velocity ``(h, v)`` under gravity ``g`` and linear drag ``c``; stops at ``h = 0``."""

    g: jax.Array
    c: jax.Array

    def __call__(self, t, y, regime):
        moving = regime == 0
        return jnp.where(moving, jnp.stack([y[1], -self.g - self.c * y[1]]), 0.0)

    def event(self, t, y, regime):
        return jnp.where(regime == 0, y[0], 1.0)

    def next_regime(self, t, y, regime):
        return jnp.ones_like(regime)


def _fwd_and_rev(f, x):
    """``f``'s value and its derivative by ``jvp`` and by ``grad``, each vmapped over ``x``."""
    value, forward = jax.vmap(lambda s: jax.jvp(f["fwd"], (s,), (jnp.ones_like(s),)))(x)
    reverse = jax.vmap(jax.grad(f["rev"]))(x)
    return value, forward, reverse


def _modes(build):
    """The same scalar function with the reverse-mode and the forward-mode adjoint."""
    return {"rev": build(diffrax.RecursiveCheckpointAdjoint()), "fwd": build(diffrax.ForwardMode())}


@pytest.mark.parametrize("lanes", LANES)
def test_reset_at_a_parameter_dependent_event(lanes):
    # DiffEqGPU.jl#533: u(1) = 1 - p for 0.5 < p < 1, so every derivative is -1
    def build(adjoint):
        def u_at_1(p):
            _, ys, _ = jf.simulate_hybrid(Reset(p), jnp.zeros(1), 0.0, 1.0, jnp.array([1.0]), max_events=2,
                                          adjoint=adjoint)
            return ys[-1, 0]
        return u_at_1

    p = jnp.linspace(0.51, 0.99, lanes)
    value, forward, reverse = _fwd_and_rev(_modes(build), p)
    np.testing.assert_allclose(value, 1.0 - p, rtol=0, atol=1e-13)
    np.testing.assert_allclose(forward, -1.0, rtol=1e-12)
    np.testing.assert_allclose(reverse, -1.0, rtol=1e-12)


@pytest.mark.slow  # the landing-time test below checks a terminating event in the fast suite
@pytest.mark.parametrize("lanes", [64, 10_000])
def test_terminating_event_inside_a_step(lanes):
    # OrdinaryDiffEq.jl#4388 in its harder form: u' = r u, u(0) = 1 stops at u = q, T = ln(q) / r;
    # the root lies inside a step, where the peer's derivative came from the interpolant. The
    # step cap keeps the sensitivity du/dq, which the step-size control does not watch, as
    # accurate as the state (dtmax = 0.1 leaves 6e-12 relative error in dT/dr at r = 1.2)
    def build(adjoint):
        def stop_time(q):
            _, _, log = jf.simulate_hybrid(GrowthToThreshold(0.7, q), jnp.ones(1), 0.0, 5.0, jnp.array([5.0]),
                                           max_events=1, adjoint=adjoint, dtmax=0.02, **TIGHT)
            return log.times[1]
        return stop_time

    q = jnp.linspace(1.5, 4.0, lanes)
    value, forward, reverse = _fwd_and_rev(_modes(build), q)
    np.testing.assert_allclose(value, jnp.log(q) / 0.7, rtol=1e-13)
    np.testing.assert_allclose(forward, 1.0 / (0.7 * q), rtol=1e-12)
    np.testing.assert_allclose(reverse, 1.0 / (0.7 * q), rtol=1e-12)


def _drag_height(t, g, c, h0=100.0, v0=5.0):
    """Closed-form height of a body thrown up at ``v0`` from ``h0`` under gravity and drag ``c v``."""
    return h0 + (v0 + g / c) * (1.0 - jnp.exp(-c * t)) / c - g * t / c


def test_landing_time_of_a_body_with_drag():
    # diffrax#451: the derivative of a terminating event's time must not be zero
    g, c = 9.80665, 0.3
    landing = brentq(lambda t: float(_drag_height(t, g, c)), 0.1, 20.0, xtol=1e-15, rtol=1e-15)
    # the implicit-function derivative of the closed form's root: dT/dp = -(dh/dp) / (dh/dt)
    h_t = float(jax.grad(_drag_height, 0)(landing, g, c))
    expected = {"g": -float(jax.grad(_drag_height, 1)(landing, g, c)) / h_t,
                "c": -float(jax.grad(_drag_height, 2)(landing, g, c)) / h_t}

    def build(adjoint):
        def landing_time(params):
            _, _, log = jf.simulate_hybrid(FallWithDrag(params[0], params[1]), jnp.array([100.0, 5.0]), 0.0, 20.0,
                                           jnp.array([20.0]), max_events=1, dtmax=1.0, adjoint=adjoint,
                                           **TIGHT)
            return log.times[1]
        return landing_time

    x = jnp.array([g, c])
    modes = _modes(build)
    # the value from the reverse pass's own program (a separate value call compiled another)
    value, reverse = jax.value_and_grad(modes["rev"])(x)
    assert float(value) == pytest.approx(landing, rel=1e-13)
    forward = jax.jacfwd(modes["fwd"])(x)
    for grad in (reverse, forward):
        np.testing.assert_allclose(grad, [expected["g"], expected["c"]], rtol=1e-12)
    assert abs(expected["c"]) > 0.1  # far from the zero diffrax returns


# A forced Coulomb oscillator (m = k = N = 1) starts at rest, x = 0, under F0 sin(W t): it sticks
# until F0 sin(W t_b) = mu_s (breakaway), then slips forward until its velocity returns to zero
# (the first stick entry, t_s).
F0, W, MU_S, MU_K = 2.0, 0.5, 1.0, 0.6


def _breakaway(mu_s, f0, w):
    return jnp.arcsin(mu_s / f0) / w


def _slip_velocity(t, mu_s, mu_k, f0, w):
    """Closed-form velocity in slip+ after breakaway: x'' + x = f0 sin(w t) - mu_k, x = v = 0 at t_b."""
    t_b = _breakaway(mu_s, f0, w)
    xp = lambda s: f0 * jnp.sin(w * s) / (1.0 - w**2) - mu_k
    vp = lambda s: f0 * w * jnp.cos(w * s) / (1.0 - w**2)
    a, b = -xp(t_b), -vp(t_b)
    return vp(t) - a * jnp.sin(t - t_b) + b * jnp.cos(t - t_b)


def _event_times(params, adjoint):
    mu_s, mu_k, f0, w = params
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(mu_s, mu_k), force=jf.Harmonic(f0, w))
    _, log = jf.simulate_event_driven(system, jnp.zeros(2), 0.0, 6.0, jnp.array([6.0]), max_events=3,
                                      adjoint=adjoint)
    return log.times[1:3], log


def test_breakaway_and_first_stick_entry_of_a_forced_coulomb_oscillator():
    params = jnp.array([MU_S, MU_K, F0, W])
    def times_and_log(p):
        times, log = _event_times(p, None)
        return times, (times, log)

    # the times and the log from the reverse pass's own program, as aux (a separate value call
    # compiled another program of the solver)
    reverse, (times, log) = jax.jacrev(times_and_log, has_aux=True)(params)
    assert list(np.asarray(log.regimes[:3])) == [0, 1, 0]  # stick, slip forward, stick again
    t_b = float(_breakaway(MU_S, F0, W))
    t_s = brentq(lambda t: float(_slip_velocity(t, MU_S, MU_K, F0, W)), t_b + 0.1, 6.0, xtol=1e-15, rtol=1e-15)
    np.testing.assert_allclose(times, [t_b, t_s], rtol=1e-12)
    # closed-form derivatives: t_b = asin(mu_s / F0) / W directly; t_s by the implicit function theorem
    d_tb = jax.grad(lambda p: _breakaway(p[0], p[2], p[3]))(params)
    v_p = jax.grad(lambda p: _slip_velocity(t_s, *p))(params)
    v_t = jax.grad(_slip_velocity)(t_s, *params)
    expected = jnp.stack([d_tb, -v_p / v_t])
    forward = jax.jacfwd(lambda p: _event_times(p, diffrax.ForwardMode())[0])(params)
    for jac in (reverse, forward):
        np.testing.assert_allclose(jac, expected, rtol=1e-11, atol=1e-13)
    assert abs(float(expected[1, 1])) > 0.1  # the stick entry does depend on mu_k


@pytest.mark.slow
def test_breakaway_derivatives_batched_over_lanes(lanes=10_000):
    # d t_b / d mu_s = 1 / (W sqrt(F0^2 - mu_s^2)) on 10^4 lanes, forward and reverse (the fast
    # suite checks the same derivatives on one lane, in the test above)
    def build(adjoint):
        def t_b(mu_s):
            return _event_times(jnp.stack([mu_s, 0.5 * mu_s, F0, W]), adjoint)[0][0]
        return t_b

    mu_s = jnp.linspace(0.2, 1.6, lanes)
    value, forward, reverse = _fwd_and_rev(_modes(build), mu_s)
    expected = 1.0 / (W * jnp.sqrt(F0**2 - mu_s**2))
    np.testing.assert_allclose(value, _breakaway(mu_s, F0, W), rtol=1e-12)
    np.testing.assert_allclose(forward, expected, rtol=1e-12)
    np.testing.assert_allclose(reverse, expected, rtol=1e-12)


def test_simulate_hybrid_refuses_bad_input():
    field = Reset(jnp.asarray(0.7))
    with pytest.raises(TypeError, match="field"):
        jf.simulate_hybrid(lambda t, y: y, jnp.zeros(1), 0.0, 1.0)
    with pytest.raises(ValueError, match="y0"):
        jf.simulate_hybrid(field, jnp.zeros((1, 1)), 0.0, 1.0)
    with pytest.raises(ValueError, match="t1"):
        jf.simulate_hybrid(field, jnp.zeros(1), 1.0, 0.5)
    with pytest.raises(ValueError, match="max_events"):
        jf.simulate_hybrid(field, jnp.zeros(1), 0.0, 1.0, max_events=0)
    with pytest.raises(ValueError, match="ts"):
        jf.simulate_hybrid(field, jnp.zeros(1), 0.0, 1.0, jnp.array([2.0]))
    _, _, log = jf.simulate_hybrid(field, jnp.zeros(1), 0.0, 3.0, max_events=2)
    assert int(log.status) == jf.STATUS_EVENT_BUDGET  # four resets needed, two allowed


def _rest_position(mu, x0, adjoint=None):
    system = jf.Oscillator(law=jf.Coulomb(mu))
    traj, _ = jf.simulate_event_driven(system, jnp.stack([x0, 0.0]), 0.0, 20.0, jnp.array([20.0]), max_events=8,
                                       adjoint=adjoint)
    return traj.position[-1]


def test_rest_position_derivative_of_a_body_that_stays_stuck():
    # Quinn's case x0 = 2.75, mu N = k = 1: one half cycle, rest at -(x0 - 2 mu), so d/dmu = 2 and
    # d/dx0 = -1. The body then sticks for good (its stick event never comes: dg/dt = 0), which
    # once sent NaN into every derivative
    reverse = jax.grad(_rest_position, argnums=(0, 1))(1.0, 2.75)
    forward = jax.jacfwd(lambda p: _rest_position(p[0], p[1], diffrax.ForwardMode()))(jnp.array([1.0, 2.75]))
    for grad in (np.array(reverse), forward):
        np.testing.assert_allclose(grad, [2.0, -1.0], rtol=1e-12)


def test_regularized_derivative_approaches_the_exact_one_at_second_order():
    # Quinn's law keeps the rest position to O(eps^2) (Quinn 2004 eq. 6); its derivative in mu
    # follows at the same order (measured 2.4e-4 at eps = 1e-2, 2.3e-6 at 1e-3 with dt = eps / 2;
    # docs/howto/sensitivity.md). Both run at dt = 5e-4 (eps / 2 of the smaller eps): one step
    # count, so one compiled program instead of one per eps; measured 2.25e-4 and 2.27e-6 (ratio 99)
    def rest(mu, eps):
        traj = jf.simulate(jf.Oscillator(law=jf.Quinn(mu, eps)), jnp.array([2.75, 0.0]), 0.0, 20.0, 5e-4,
                           saveat=jf.SaveAt(n=1))
        return traj.position[-1]

    errors = [abs(float(jax.grad(rest)(1.0, eps)) - 2.0) for eps in (1e-2, 1e-3)]
    assert 1e-4 < errors[0] < 5e-4
    assert 80 < errors[0] / errors[1] < 120  # ten times smaller eps, a hundred times smaller error
