import functools
import math

import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction import STATUS_EVENT_BUDGET, simulate_event_driven
from jaxfriction._reference import belt_limit_cycle, den_hartog_response

T = 4 * math.pi  # forcing period at omega = 0.5


@pytest.mark.parametrize("x0, v0", [(2.75, 0.0), (5.5, 0.0), (0.0, 2.0), (-8.45, 0.3)])
def test_unforced_rest_position_matches_closed_form(x0, v0):
    system = jf.Oscillator(law=jf.Coulomb(1.0))
    traj, log = simulate_event_driven(system, jnp.array([x0, v0]), 0.0, 40.0, n_save=4, max_events=16)
    exact = jf.unforced_rest_position(x0, v0, 1.0)
    assert traj.status == 0
    assert abs(float(traj.position[-1]) - exact) <= 1e-9 * abs(exact)
    assert float(traj.velocity[-1]) == 0.0
    assert float(jf.relative_energy_residual(traj)) < 1e-10


def test_den_hartog_steady_response():
    alpha, omega, mu_n = 2.0, 0.7, 0.5
    amplitude, phi = den_hartog_response(alpha, omega, mu_n)
    t0 = (phi + math.pi / 2) / omega  # alpha sin(omega t) = alpha cos(omega (t - t0) + phi)
    half = math.pi / omega
    system = jf.Oscillator(law=jf.Coulomb(mu_n), force=jf.Harmonic(alpha, omega))
    traj, log = simulate_event_driven(system, jnp.array([-amplitude, 0.0]), t0, t0 + 10.5 * half,
                                      ts=t0 + half * jnp.arange(11), max_events=16)
    expected = amplitude * (-1.0) ** (np.arange(11) + 1)
    np.testing.assert_allclose(traj.position, expected, rtol=1e-9)
    np.testing.assert_allclose(traj.velocity, 0.0, atol=1e-9)
    assert int(log.n_events) == 10  # one direct reversal per half period, no stick
    np.testing.assert_allclose(np.diff(log.times[:11]), half, rtol=1e-9)


def test_belt_limit_cycle():
    v0, mu_s, mu_k = 0.2, 1.0, 0.6
    cycle = belt_limit_cycle(v0, mu_s, mu_k)
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(mu_s, mu_k), surface=jf.Constant(v0))
    theta = math.atan2(v0, mu_s - mu_k)
    t_slip = 5.0 + cycle["period"]  # second slip onset: the block starts at rest on the belt
    t_peak = t_slip + theta  # omega_n = 1: the peak is theta after slip onset
    ts = jnp.array([0.0, t_peak, 40.0])
    traj, log = simulate_event_driven(system, jnp.array([0.0, v0]), 0.0, 40.0, ts=ts, max_events=32)
    times, regimes = np.asarray(log.times), np.asarray(log.regimes)
    assert list(regimes[:5]) == [0, -1, 0, -1, 0]
    np.testing.assert_allclose(np.diff(times[1:6:2]), cycle["period"], rtol=1e-9)
    np.testing.assert_allclose(times[2] - times[1], cycle["slip_duration"], rtol=1e-9)
    np.testing.assert_allclose(times[3] - times[2], cycle["stick_duration"], rtol=1e-9)
    np.testing.assert_allclose(log.states[2, 0], cycle["stick_start"], rtol=1e-9)
    np.testing.assert_allclose(log.states[3, 0], cycle["stick_end"], rtol=1e-9)
    np.testing.assert_allclose(traj.position[1], cycle["peak_spring_force"], rtol=1e-9)
    assert float(jf.relative_energy_residual(traj)) < 1e-10
    # mu_s = mu_k (paper 004's setup): the block grazes the belt speed once per cycle, no stick
    grazing = belt_limit_cycle(v0, 0.6, 0.6)
    assert grazing["stick_duration"] == 0.0 and grazing["period"] == pytest.approx(2 * math.pi, rel=1e-15)
    system = jf.Oscillator(law=jf.Coulomb(0.6), surface=jf.Constant(v0))
    run = jf.simulate(system, jnp.array([0.6 - 1e-9, v0]), 0.0, 3 * math.pi, solver=jf.EventDriven(max_events=16),
                      saveat=jf.SaveAt(n=600))
    np.testing.assert_allclose([run.position.max(), run.position.min()],
                               [grazing["peak_spring_force"], grazing["min_spring_force"]], atol=1e-6)


def stick_slip_dissipation(params, adjoint=None, rtol=1e-12, atol=1e-12):
    mu, alpha, omega = params
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(1.2 * mu, mu), force=jf.Harmonic(alpha, omega))
    traj, _ = simulate_event_driven(system, jnp.array([0.0, 0.3]), 0.0, 3 * T, ts=jnp.array([2 * T, 3 * T]),
                                    max_events=24, adjoint=adjoint, rtol=rtol, atol=atol)
    return traj.friction_dissipation[1] - traj.friction_dissipation[0]


#: The tight tolerance: one compiled event-driven program serves the tight run below, the
#: finite differences of the gradient test and the reference of the Moreau-Jean convergence test
#: (the same system structure, times and options; its parameters enter as arrays).
TIGHT = {"rtol": 1e-13, "atol": 1e-13}


def test_exact_dissipation_is_stable_under_tighter_tolerances():
    p = jnp.array([0.8, 1.2, 0.5])
    loose = stick_slip_dissipation(p, rtol=1e-10, atol=1e-10)
    tight = stick_slip_dissipation(p, **TIGHT)
    assert abs(float(loose / tight) - 1) < 1e-9


# slow: test_event_derivatives' breakaway test differentiates the same event-driven Coulomb
# oscillator in both modes through stick and slip, against a closed form
@pytest.mark.slow
def test_gradients_through_stick_slip_match_finite_differences():
    p = jnp.array([0.8, 1.2, 0.5])
    rev = jax.jit(jax.grad(stick_slip_dissipation))(p)
    fwd = jax.jit(jax.jacfwd(lambda q: stick_slip_dissipation(q, diffrax.ForwardMode())))(p)
    # finite differences of the tight-tolerance run (the program the tolerance test compiled; a
    # jit of its own took another compile): within 5.2e-8 of rev, 2.1e-8 at the default 1e-12
    h = 1e-6
    f = functools.partial(stick_slip_dissipation, **TIGHT)
    fd = np.array([(f(p.at[i].add(h)) - f(p.at[i].add(-h))) / (2 * h) for i in range(3)])
    np.testing.assert_allclose(rev, fd, rtol=1e-6)
    np.testing.assert_allclose(fwd, rev, rtol=1e-9)


def test_vmap_batch_and_event_budget_status():
    alphas = jnp.array([0.5, 1.2, 2.5])  # stuck forever, stick-slip, pure slip

    def run(alpha):
        system = jf.Oscillator(law=jf.Coulomb(1.0), force=jf.Harmonic(alpha, 0.5))
        traj, log = simulate_event_driven(system, jnp.zeros(2), 0.0, 4 * T, ts=jnp.array([3 * T, 4 * T]),
                                          max_events=6)
        return traj.status, log.n_events, traj.friction_dissipation[1] - traj.friction_dissipation[0]

    status, n_events, d = jax.jit(jax.vmap(run))(alphas)
    assert status[0] == 0 and n_events[0] == 0 and d[0] == 0.0
    assert status[1] == STATUS_EVENT_BUDGET and status[2] == STATUS_EVENT_BUDGET
    # with enough budget every lane is fine, and the batch equals single runs
    single = simulate_event_driven(jf.Oscillator(law=jf.Coulomb(1.0), force=jf.Harmonic(2.5, 0.5)), jnp.zeros(2),
                                   0.0, 4 * T, ts=jnp.array([3 * T, 4 * T]), max_events=6)[0]
    np.testing.assert_allclose(single.friction_dissipation[1] - single.friction_dissipation[0], d[2], rtol=1e-12)


def test_moreau_jean_converges_first_order_to_event_driven():
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(0.96, 0.8), force=jf.Harmonic(1.2, 0.5))
    y0 = jnp.array([0.0, 0.3])
    # stick_slip_dissipation's run at mu = 0.8 (14 events, a budget of 24) at the TIGHT tolerance:
    # the program compiled by the tests above
    exact, log = simulate_event_driven(system, y0, 0.0, 3 * T, ts=jnp.array([0.0, 3 * T]), max_events=24, **TIGHT)
    assert int(log.status) == 0
    errors = []
    dts = (0.01, 0.005, 0.0025, 0.00125)
    for dt in dts:
        mj = jf.simulate(system, y0, 0.0, 3 * T, dt, save_every=None, solver=jf.MoreauJean())
        assert mj.status == 0
        errors.append(abs(float(mj.friction_dissipation[-1] - exact.friction_dissipation[-1])))
    order = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert 0.85 < order < 1.3
    assert errors[-1] < 1e-3


def test_moreau_jean_holds_still_exactly():
    system = jf.Oscillator(law=jf.Coulomb(0.5), force=jf.Constant(0.49), stiffness=0.0)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 10.0, 0.01, solver=jf.MoreauJean())
    assert float(jnp.max(jnp.abs(traj.position))) == 0.0
    assert float(jf.stick_fraction(traj)) == 1.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: jf.Coulomb(-0.1), "mu"),
        (lambda: jf.StaticKineticCoulomb(0.5, 0.8), "mu_k"),
        (lambda: simulate_event_driven(jf.Oscillator(law=jf.Quinn()), jnp.zeros(2), 0.0, 1.0), "law"),
        (lambda: jf.simulate(jf.Oscillator(law=jf.Quinn()), jnp.zeros(2), 0.0, 1.0, 0.1, solver=jf.MoreauJean()), "law"),
        (lambda: simulate_event_driven(jf.Oscillator(law=jf.Coulomb()), jnp.zeros(2), 0.0, 1.0, max_events=0),
         "max_events"),
        (lambda: simulate_event_driven(jf.Oscillator(law=jf.Coulomb()), jnp.zeros(2), 0.0, 1.0,
                                       ts=jnp.array([0.5, 2.0])), "ts"),
        (lambda: simulate_event_driven(jf.Oscillator(law=jf.Coulomb()), jnp.zeros(2), 1.0, 1.0), "t1"),
        (lambda: jf.simulate(jf.Oscillator(law=jf.Coulomb()), jnp.zeros(2), 0.0, 1.0, -0.1, solver=jf.MoreauJean()), "dt"),
        (lambda: den_hartog_response(1.0, 1.0, 0.1), "resonance"),
        (lambda: den_hartog_response(1.0, 0.8, 5.0), "non-sticking"),
        (lambda: belt_limit_cycle(0.2, 0.5, 0.6), "mu_k_n"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_mass_under_force_exact_slip_and_stick():
    # constant push above the static limit: uniform acceleration (F - mu_k N) / m from rest
    m, n, force = 2.0, 3.0, 2.5
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(0.8, 0.5), force=jf.Constant(force), mass=m, normal=n, stiffness=0.0)
    traj, log = simulate_event_driven(system, jnp.zeros(2), 0.0, 4.0, n_save=8, max_events=4)
    t = np.asarray(traj.ts)
    np.testing.assert_allclose(traj.position, 0.5 * (force - 0.5 * n) / m * t**2, rtol=1e-10, atol=1e-14)
    # harmonic push: stick-slip, matches Moreau-Jean to first order and never moves backwards
    system = jf.Oscillator(law=jf.StaticKineticCoulomb(0.6, 0.4), force=jf.Harmonic(1.0, 1.0), stiffness=0.0)
    exact, log = simulate_event_driven(system, jnp.zeros(2), 0.0, 12.0, n_save=1200, max_events=32)
    mj = jf.simulate(system, jnp.zeros(2), 0.0, 12.0, 1e-4, save_every=100, solver=jf.MoreauJean())
    assert exact.status == 0 and int(log.n_events) >= 4
    np.testing.assert_allclose(mj.position, exact.position, atol=2e-3)
    assert 0.02 < float(jf.stick_fraction(exact, 1e-12)) < 0.9
    np.testing.assert_allclose(log.times[1], math.asin(0.6), rtol=1e-10)  # breakaway at F = mu_s N
    assert list(np.asarray(log.regimes[:2])) == [0, 1]


def test_event_driven_solver_is_compiled_once(monkeypatch):
    # the segment loop is traced (compiled) on the first call only; another value of a parameter
    # reuses it (it took seconds of tracing on every call before)
    import jaxfriction._exact.hybrid as ed

    traced = []
    solve = ed._solve
    monkeypatch.setattr(ed, "_solve", lambda *a, **k: traced.append(1) or solve(*a, **k))
    runs = [simulate_event_driven(jf.Oscillator(law=jf.Coulomb(mu), force=jf.Harmonic(1.2, 0.5)), jnp.zeros(2), 0.0,
                                  7.0, n_save=7, max_events=8)[1] for mu in (0.7, 0.8, 0.9)]
    assert len(traced) == 2  # the locating and the differentiable solve, traced once
    assert all(int(log.status) == 0 and int(log.n_events) > 0 for log in runs)
