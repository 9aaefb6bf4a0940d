import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf

CONTINUOUS_LAWS = [jf.Quinn(0.5, 0.02), jf.VelocityLimited(0.5, 0.02), jf.Awrejcewicz(0.5, 3.0, 0.02),
                   jf.Threlfall(0.5, 0.05, 0.1)]


def systems(law):
    return [
        jf.Oscillator(law=law, force=jf.Harmonic(0.8, 0.5), damping=0.05),
        jf.Oscillator(law=law, force=jf.Harmonic(0.8, 0.7), stiffness=0.3),
        jf.Oscillator(law=law, surface=jf.Constant(0.3), damping=0.05),
    ]


@pytest.mark.parametrize("law", CONTINUOUS_LAWS, ids=lambda l: type(l).__name__)
def test_energy_balance_every_system(law):
    for system in systems(law):
        traj = jf.simulate(system, jnp.array([0.1, 0.0]), 0.0, 40.0, 1e-3, save_every=100)
        assert traj.status == jf.STATUS_OK
        assert float(traj.friction_dissipation[-1]) > 0.1  # the run really dissipates
        assert float(jf.relative_energy_residual(traj)) < 1e-8


def test_energy_balance_of_discontinuous_law_converges_first_order():
    # The classical law's jump falls between RK4 stages: an O(dt) energy error per crossing.
    res = []
    for dt in (4e-3, 1e-3):
        traj = jf.simulate(jf.Oscillator(law=jf.Coulomb(0.5), force=jf.Harmonic(0.8, 0.5)), jnp.zeros(2), 0.0, 40.0, dt)
        res.append(float(jf.relative_energy_residual(traj)))
    assert res[1] < res[0] / 2.5
    assert res[1] < 1e-4


def test_forced_oscillator_force_balance_matches_quinn_eq5():
    system = jf.Oscillator(law=jf.Quinn(1.0, 0.02), force=jf.Harmonic(0.7, 0.5))
    y = system.initial_state(0.3, 0.0)
    t = 1.3
    assert np.isclose(system.f_eq(t, y), 0.3 - 0.7 * np.sin(0.5 * t), atol=1e-15)
    # at rest with |f_eq| < mu N the force balance holds: zero acceleration
    assert abs(float(system.vector_field(t, y)[1])) < 1e-15


def test_belt_sticks_then_slips_at_static_limit():
    # Spring-mass on a belt with Quinn's law: the block rides the belt (slip ~ 0) until the
    # spring force reaches mu N, then slips back.
    system = jf.Oscillator(law=jf.Quinn(1.0, 1e-3), surface=jf.Constant(0.2))
    traj = jf.simulate(system, jnp.array([0.0, 0.2]), 0.0, 30.0, 1e-3, save_every=10)
    stuck = np.asarray(jf.stick_mask(traj, 1e-6))
    x = np.asarray(traj.position)
    assert stuck[:100].all()  # starts riding the belt
    first_slip = np.argmin(stuck)
    assert abs(x[first_slip] - 1.0) < 5e-3  # breaks away at k x = mu N
    assert 0.05 < float(jf.stick_fraction(traj, 1e-6)) < 0.95
    # after breakaway the block slips about x = mu N / k with speed v0: peak 1 + v0 sqrt(m/k)
    assert abs(x.max() - 1.2) < 1e-3


@pytest.mark.parametrize(
    "law",
    [jf.Coulomb(0.6), jf.StaticKineticCoulomb(0.6, 0.4), jf.ViscousCoulomb(0.6, 0.3), jf.Karnopp(0.6, 1e-3),
     jf.Quinn(0.6, 0.02), jf.Awrejcewicz(0.6, 3.0, 1e-3), jf.Stribeck(0.6, 0.4, 0.1, 2.0)],
    ids=lambda l: type(l).__name__,
)
def test_hold_still_under_half_static_load(law):
    normal = 2.0
    load = 0.5 * float(law.static_limit(normal))
    system = jf.Oscillator(law=law, force=jf.Constant(load), normal=normal, mass=1.5, stiffness=0.0)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 20.0, 0.01, save_every=100)
    assert np.max(np.abs(traj.position)) <= 1e-14
    assert np.max(np.abs(traj.velocity)) <= 1e-14
    assert float(jf.stick_fraction(traj)) == 1.0


@pytest.mark.parametrize("law", [jf.VelocityLimited(0.6, 0.02), jf.Threlfall(0.6, 0.05)], ids=lambda l: type(l).__name__)
def test_creep_of_laws_without_coulomb_structure(law):
    normal, mass = 2.0, 1.5
    load = 0.5 * float(law.static_limit(normal))
    system = jf.Oscillator(law=law, force=jf.Constant(load), normal=normal, mass=mass, stiffness=0.0)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 20.0, 0.001, save_every=1000)
    creep = float(law.creep_velocity(-load, normal))  # f_eq = -load
    assert creep > 0
    np.testing.assert_allclose(traj.velocity[-1], creep, rtol=1e-9)
    if isinstance(law, jf.VelocityLimited):  # closed form v(t) = v_c (1 - exp(-mu N t / (m eps)))
        rate = 0.6 * normal / (mass * 0.02)
        t = np.asarray(traj.ts)
        np.testing.assert_allclose(traj.velocity, creep * (1 - np.exp(-rate * t)), rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("x0", [2.75, -3.3, 5.1, 1.6, -8.45])
def test_unforced_rest_position_converges_to_exact_coulomb(x0):
    exact = jf.unforced_rest_position(x0, 0.0, 1.0)
    errors = []
    for eps in (0.02, 0.01):
        traj = jf.simulate(jf.Oscillator(law=jf.Quinn(1.0, eps)), jnp.array([x0, 0.0]), 0.0, 40.0, eps / 2,
                           save_every=None)
        errors.append(abs(float(jf.rest_position(traj)) - exact))
    assert errors[1] < 1.2 * 0.01**2  # O(eps^2), Quinn eq. 6
    assert errors[1] < errors[0] / 3


def test_quinn_fig5_published_rest_position():
    traj = jf.simulate(jf.Oscillator(law=jf.Quinn(1.0, 0.01)), jnp.array([2.75, 0.0]), 0.0, 20.0, 0.01)
    assert round(float(jf.rest_position(traj)), 6) == -0.750090
    assert jf.unforced_rest_position(2.75, 0.0, 1.0) == -0.75


def test_closed_form_rest_position_cases():
    rest = jf.unforced_rest_position
    assert rest(0.5, 0.0, 1.0) == 0.5  # inside the static band: no motion
    assert np.isclose(rest(5.5, 0.0, 1.0), 0.5)  # turning points 5.5 -> -3.5 -> 1.5 -> 0.5
    assert np.isclose(rest(0.0, 2.0, 1.0), 3.0 - np.sqrt(5.0))  # -1 + sqrt(5), then 1 - (sqrt(5) - 2)
    with pytest.raises(ValueError, match="mu_n"):
        rest(1.0, 0.0, -1.0)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: jf.Oscillator(law=jf.Quinn(), mass=0.0), "mass"),
        (lambda: jf.Oscillator(law=jf.Quinn(), normal=-1.0), "normal"),
        (lambda: jf.Oscillator(law=jf.Quinn(), force=jf.Harmonic(float("nan"), 1.0)), "amplitude"),
        (lambda: jf.Oscillator(law=jf.Quinn(), stiffness=-1.0), "stiffness"),
        (lambda: jf.Oscillator(law=lambda v, f, n: 0.0), "law"),
        (lambda: jf.Oscillator(law=jf.VectorQuinn()), "scalar law"),
        (lambda: jf.BlockOnShakingFloor(law=jf.Quinn(), ground=jf.Constant(jnp.zeros(2))), "vector"),
        (lambda: jf.Oscillator(law=jf.Quinn(), force=3.0, stiffness=0.0), "force"),
        (lambda: jf.Oscillator(law=jf.Quinn(), surface=jf.Constant(float("inf"))), "value"),
        (lambda: jf.Quinn(mu="0.5"), "mu must be a real number"),
        (lambda: jf.Quinn(mu=None), "mu must be a real number"),
        (lambda: jf.Harmonic(amplitude=float("nan")), "amplitude"),
    ],
)
def test_bad_system_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("system", [
    jf.BurridgeKnopoffChain(law=jf.LuGre(), n=3),
    jf.Oscillator(law=jf.RateState(a=0.01, b=0.015, D_c=0.01, mu_0=0.3, V_0=1.0), force=jf.Harmonic(1.0, 0.8)),
    jf.Oscillator(law=jf.Quinn(mu=0.3, eps=1e-3)),
], ids=["lugre-chain", "rate-state", "quinn"])
def test_a_concrete_start_state_is_the_traced_ones_numbers(system):
    """``as_state`` assembles a concrete ``y0`` on the host (a plan dispatches no XLA op for
    it) and a traced one in the trace: the same numbers, positions, velocities, the law's
    initial internal state (rate-state: the steady state at ``V_0``) and zero integrals."""
    n, m = system.n_dof, system.n_internal
    for y0 in (np.arange(1.0, 2 * n + 1), np.arange(1.0, 2 * n + m + 1), np.arange(1.0, system.state_size + 1)):
        host = system.as_state(y0)
        traced = jax.jit(system.as_state)(jnp.asarray(y0))
        assert isinstance(host, jax.Array) and host.dtype == jnp.float64 and host.shape == (system.state_size,)
        np.testing.assert_array_equal(host, traced)
        np.testing.assert_array_equal(host[: y0.size], y0)
    assert np.all(np.asarray(system.as_state(jnp.zeros(2 * n)))[2 * n + m:] == 0)
    with pytest.raises(ValueError, match="y0"):
        system.as_state(np.zeros(2 * n + 1) if m != 1 else np.zeros(2 * n + 2))
