"""No silently wrong number for fixed-step RK4 (issue 25): a lane is flagged or it is right.

The probe's three dynamic-law cases, ``mu_s = 0`` for LuGre and Maxwell-slip, and a
property-based test over the library's catalogue of laws (``scripts/studies/step_honesty.py``):
for random parameters, either the lane is flagged at ``dt`` or its window dissipation
agrees with a 10x finer step to 5 % + 1e-5 J.
"""

import os
import sys

import equinox as eqx
import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxfriction as jf
from jaxfriction._integrate import stability
from jaxfriction._paths import traced_parameters

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "studies"))
import step_honesty

UNSTABLE = jf.STATUS_UNSTABLE_STEP


def _status(system, grid, dt, **kw):
    ds = jf.sweep(system, grid, dt=dt, progress=False, gradient="none", kernel="vmap", **kw)
    return np.asarray(ds["status"]), np.asarray(ds["dissipation"])


def test_maxwell_slip_fast_attraction_is_exact_under_the_march():
    # C = 1e7: a slipping element relaxes at C / (alpha g) = 2e7 /s. Integrated through its state
    # rate at dt 1e-4, D was 2.6e17 with status 0 (later flagged: every lane of it at this step);
    # marched (its interval update relaxes exactly), both lanes run at status 0, D equal to the
    # dt / 10 run's to 1e-6 (measured 1.7e-8), the energy balance's residual 5e-15
    law = jf.MaxwellSlip(jnp.array([100.0, 300.0]), jnp.array([0.5, 0.5]), C=1e7)
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.8, 2.0))
    status, d = _status(system, {"force.amplitude": [0.8, 2.0]}, 1e-4, t1=0.4, window=0.2)
    _, d_fine = _status(system, {"force.amplitude": [0.8, 2.0]}, 1e-5, t1=0.4, window=0.2)
    assert np.all(status == jf.STATUS_OK)
    assert d[1] == pytest.approx(5.2527e-3, rel=1e-4) and d[1] == pytest.approx(d_fine[1], rel=1e-6)
    assert abs(d[0]) < 1e-12  # 0.8 N stays below the static level alpha_i mu_s N: no slip
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 0.4, dt=1e-4, save_every=100)
    assert int(traj.status) == jf.STATUS_OK and float(jf.relative_energy_residual(traj)) < 1e-12


def test_iwan_stiff_element_is_exact_under_the_march():
    # an element of stiffness 1e5 and slip force 0.3: one step's slip at dt 1e-3 loads it far past
    # its limit. Integrated through its state rate, D was 4 % off (1.937 against 1.854 at dt 1e-5)
    # with status 0, later flagged. Marched (its clip to the limit is exact within a step), it runs
    # at status 0 and D agrees with dt / 10 to 1e-5 (measured 9.9e-6; with dt 1e-5, 1.0e-5)
    law = jf.Iwan(jnp.array([1e5, 1e3]), jnp.array([0.3, 0.5]))
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.8, 2.0))
    status, d = _status(system, {"force.amplitude": [2.0]}, 1e-3, t1=4.0)
    _, d_fine = _status(system, {"force.amplitude": [2.0]}, 1e-4, t1=4.0)
    assert status[0] == jf.STATUS_OK
    assert d[0] == pytest.approx(1.85227, rel=1e-5) and d[0] == pytest.approx(d_fine[0], rel=2e-5)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 4.0, dt=1e-3, save_every=10)
    assert int(traj.status) == jf.STATUS_OK and float(jf.relative_energy_residual(traj)) < 2e-6


def test_rate_and_state_stick_slip_is_flagged():
    # a soft spring slider (k = 100) in stick-slip: D was proportional to dt (4.9e-4, 5.0e-5 at
    # dt 1e-3, 1e-4) with status 0. Near rest the regularized law's slip-rate stiffness
    # N a / (m |v|) is far beyond any of these steps
    system = jf.SpringSlider(law=jf.RateState(), load=jf.Constant(1e-3), stiffness=1e2)
    for dt in (1e-2, 1e-3, 1e-4):
        status, _ = _status(system, {"stiffness": [1e2]}, dt, t1=4.0)
        assert status[0] == UNSTABLE, dt
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 4.0, dt=1e-3, save_every=10)
    assert int(traj.status) == UNSTABLE


def test_the_implicit_solver_is_the_way_out():
    """The flagged rate-and-state run, by Kvaerno5: status 0 (its dissipation is the one
    the RK4 runs converge to only at steps the rule accepts)."""
    diffrax = pytest.importorskip("diffrax")
    system = jf.SpringSlider(law=jf.RateState(), load=jf.Constant(1e-3), stiffness=1e2)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 4.0, solver=jf.Diffrax(diffrax.Kvaerno5(), rtol=1e-8, atol=1e-12),
                       dt=1e-4, saveat=jf.SaveAt(n=10))
    assert int(traj.status) == jf.STATUS_OK


@pytest.mark.parametrize("law", [
    lambda mu_s: jf.LuGre(mu_s=mu_s),
    lambda mu_s: jf.MaxwellSlip(jnp.array([1e3, 1e2]), jnp.array([0.5, 0.5]), mu_s=mu_s),
], ids=["LuGre", "MaxwellSlip"])
def test_mu_s_zero_is_invalid_in_simulate_and_sweep(law):
    # g(0) = mu_s N = 0: the state rate (sigma0 |v| / g, C / (alpha g)) is unbounded at rest;
    # simulate refuses the law at construction, the sweep flags the lane invalid (not 5)
    with pytest.raises(ValueError, match="mu_s"):
        law(0.0)
    system = jf.Oscillator(law=law(1.5), force=jf.Harmonic(0.8, 2.0))
    status, d = _status(system, {"law.mu_s": [0.0, 1.5]}, 1e-5, t1=0.02)
    assert status[0] == jf.STATUS_INVALID_PARAMETER and np.isnan(d[0])
    assert status[1] != jf.STATUS_INVALID_PARAMETER


def test_static_laws_pay_nothing():
    """The dynamic rule is None for a static law: its status is the stick-band rule's alone."""
    from jaxfriction._integrate.stability import internal_state_rate

    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 2.0))
    assert internal_state_rate(system, jnp.zeros(2), jnp.zeros((2, system.state_size))) is None


_compiled_secant_rate = eqx.filter_jit(stability.secant_rate)


class _Undeclared(jf.Quinn):
    """Quinn's law without its declaration (one class for every example: a class made in each
    example was another static structure, and the secant rule was compiled again)."""

    slope_bounded = False


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mu=st.floats(0.0, 3.0), eps=st.floats(1e-4, 1.0), mass=st.floats(0.05, 20.0), amplitude=st.floats(0.0, 4.0))
def test_a_slope_bounded_law_skips_a_secant_rule_that_could_not_fire(mu, eps, mass, amplitude):
    """Quinn declares ``slope_bounded``: the secant rule is None (not evaluated at every step of
    a sweep's transient). Evaluated as for an undeclared law (the same force), it is exactly 0
    at every state of a run through stick and slip, so no status changes."""
    def oscillator(law):
        return jf.Oscillator(law=law, force=jf.Harmonic(amplitude, 1.3), mass=mass)

    system = oscillator(jf.Quinn(mu, eps))
    # 20,000 steps of the law's stable step, at most 1e-2 (200 s; down to 0.34 s at eps = 1e-4,
    # m = 0.05, mu = 3, still through slip into the band: the slip of 0.2 m/s stops within
    # m |v| / (mu N) = 3.3 ms). One step count for every example, so the run and the secant rule
    # are compiled once (per structure: a literal zero mu or amplitude is another), where
    # min(12 s, 20,000 steps), as long as this or shorter, compiled them once per example
    dt = min(1e-2, 0.5 * eps * mass / max(mu, 1e-9))
    traj = jf.simulate(system, jnp.array([0.3, -0.2]), 0.0, 20_000 * dt, dt=dt)
    assert traj.ts.shape == (20_001,)
    assert stability.secant_rate(system, traj.ts, traj.ys) is None
    # compiled once per run length (the parameters as arrays): evaluated op by op it took 6 s
    undeclared = traced_parameters(oscillator(_Undeclared(mu, eps)), keep_zeros=True)
    assert float(_compiled_secant_rate(undeclared, traj.ts, traj.ys)) == 0.0


def test_exact_coulomb_stick_is_flagged_true_stick_and_regularized_laws_are_not():
    """Exact Coulomb under RK4 chatters across zero in stick (Quinn 2004 Fig. 5a): the
    window's dissipation was 0.0092 against 0.0013 at dt / 10 with status 0. Flagged now;
    the same drive from exact rest (v = 0 all along: force balance) and Quinn's law are not."""
    force = jf.Harmonic(0.68, 3.98)
    coulomb = jf.Oscillator(law=jf.Coulomb(0.85), force=force, damping=0.05)
    status, _ = _status(coulomb, {"force.amplitude": [0.68]}, 1e-2, y0=jnp.array([0.2, 0.0]), t1=6.0, window=3.0)
    assert status[0] == UNSTABLE
    assert int(jf.simulate(coulomb, jnp.array([0.2, 0.0]), 0.0, 6.0, dt=1e-2).status) == UNSTABLE
    assert int(jf.simulate(coulomb, jnp.zeros(2), 0.0, 6.0, dt=1e-2).status) == jf.STATUS_OK
    quinn = jf.Oscillator(law=jf.Quinn(0.85, 0.02), force=force, damping=0.05)
    status, _ = _status(quinn, {"force.amplitude": [0.68]}, 1e-2, y0=jnp.array([0.2, 0.0]), t1=6.0, window=3.0)
    assert status[0] == jf.STATUS_OK


def test_rate_and_state_acting_as_a_switch_is_flagged():
    # mu_0 / a = 373: the regularization width 2 V_0 exp(-mu / a) is ~1e-162 m/s. A block
    # decelerated by mu N = 3.7 N from 1 cm/s crosses zero inside one step of 0.01 s, the
    # stages' forces cancel and it keeps its speed; the run's final state changed by orders
    # with every tenfold refinement (v 4.3e-4, 1.8e-3, 5.1e-5 m/s at t = 10 s), status 0.
    # Its slip-rate stiffness N a / (m |v|) at the saved states was at most 0.12 / h.
    law = jf.RateState(a=0.00994, b=0.00245, D_c=0.00159, mu_0=3.706, V_0=0.0015)
    system = jf.SpringSlider(law=law, load=jf.Constant(0.01396), stiffness=2.0)
    for dt in (1e-2, 1e-3):
        assert int(jf.simulate(system, jnp.array([0.0, 1e-2]), 0.0, 10.0, dt=dt).status) == UNSTABLE, dt
    status, _ = _status(system, {"stiffness": [2.0]}, 1e-2, y0=jnp.array([0.0, 1e-2]), t1=10.0, window=5.0)
    assert status[0] == UNSTABLE


def test_the_transient_is_judged_at_the_windows_cadence():
    """rk4_legs' monitor sees every marked point of a leg it does not store (a sweep's
    transient), as rk4_scan's saved states at that cadence show them."""
    from jaxfriction._integrate.rk4 import rk4_legs

    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 2.0))
    y0 = system.as_state(jnp.array([0.1, 0.0]))
    ys, peaks = rk4_legs(system.vector_field, y0, [(0.0, 1e-2, 105, 10, False), (1.05, 1e-2, 20, 10, True)],
                         monitor=lambda t, y: jnp.abs(y[1]) + 0.0 * t)
    ts, ref = jf.rk4_scan(system.vector_field, y0, 0.0, 1e-2, 125, 1)
    assert ys.shape == (1 + 1 + 2,) + y0.shape
    np.testing.assert_allclose(ys[1], ref[105], rtol=1e-13)
    np.testing.assert_allclose(ys[-1], ref[125], rtol=1e-12)
    marks = list(range(10, 105, 10)) + [105]
    np.testing.assert_allclose(peaks[0], np.max(np.abs(ref[marks, 1])), rtol=1e-13)
    np.testing.assert_allclose(peaks[1], np.max(np.abs(ref[[115, 125], 1])), rtol=1e-12)
    with pytest.raises(ValueError, match="multiple"):
        rk4_legs(system.vector_field, y0, [(0.0, 1e-2, 15, 10, True)])
    # with nothing to judge, a transient marked at every step runs as one loop, value for value
    plain = rk4_legs(system.vector_field, y0, [(0.0, 1e-2, 105, 1, False), (1.05, 1e-2, 20, 10, True)])
    np.testing.assert_array_equal(plain, ys)


def test_bouc_wen_needs_n_at_least_one():
    with pytest.raises(ValueError, match="n must be >= 1"):
        jf.BoucWen(n=0.5)
    system = jf.Oscillator(law=jf.BoucWen(n=2.0), force=jf.Harmonic(0.8, 2.0))
    status, d = _status(system, {"law.n": [0.1, 2.0]}, 1e-3, t1=0.02)
    assert status[0] == jf.STATUS_INVALID_PARAMETER and np.isnan(d[0]) and status[1] == jf.STATUS_OK


#: One case of each kind runs in the fast suite (Quinn, LuGre, the rate-and-state slider; exact Coulomb,
#: Iwan and the stiff Maxwell-slip have tests of their own above, against a finer step and stricter).
FAST = {"Quinn", "LuGre", "RateState-slider"}
#: Known wrong-but-unflagged, reported by scripts/studies/step_honesty.py and not held to the
#: property here: none. Maxwell-slip was (its exact switch integrated through the state rate
#: had a first-order error per switch that no rule at the saved states bounded: 2 % of 256
#: lanes wrong at status 0, 44 % flagged); RK4 now marches its elements
#: (jaxfriction/_integrate/marched.py), and its rule is the motion of the slip limits.
KNOWN: set[str] = set()
LANES = 4


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow)
                                  for n in step_honesty.CASES if n not in KNOWN])
def test_flagged_or_agrees_with_a_ten_times_finer_step(name):
    system = step_honesty.CASES[name][0]
    k = step_honesty.n_paths(system)
    unit = st.floats(0.0, 1.0, allow_nan=False)

    @settings(max_examples=3, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.lists(st.lists(unit, min_size=k, max_size=k), min_size=LANES, max_size=LANES))
    def check(u):
        labels, coarse, fine = step_honesty.classify(name, np.asarray(u))
        wrong = labels == "wrong"
        assert not wrong.any(), (f"{name}: status 0 but D = {np.asarray(coarse['dissipation'])[wrong]} against "
                                 f"{np.asarray(fine['dissipation'])[wrong]} at dt / 10")

    check()
