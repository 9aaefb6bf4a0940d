import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf


def frictionless(alpha=0.3, omega=0.5):
    return jf.Oscillator(law=jf.Coulomb(0.0), force=jf.Harmonic(alpha, omega))


def exact_frictionless(t, alpha=0.3, omega=0.5):
    # x'' + x = alpha sin(omega t), x(0) = x'(0) = 0
    return alpha / (1 - omega**2) * (np.sin(omega * t) - omega * np.sin(t))


def test_rk4_is_fourth_order_on_a_smooth_problem():
    errors = []
    dts = (0.1, 0.05, 0.025)
    for dt in dts:
        traj = jf.simulate(frictionless(), jnp.zeros(2), 0.0, 20.0, dt, save_every=None)
        errors.append(abs(float(traj.position[-1]) - exact_frictionless(20.0)))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    np.testing.assert_allclose(orders, 4.0, atol=0.15)  # 4.14, 4.07


def test_another_span_of_the_same_step_count_compiles_nothing_and_steps_its_own_grid():
    """A frequency sweep at 1,000 steps per period: each frequency's run is the same program
    (``t0`` and the step are arrays), and each lands on its own closed form (the frictionless
    forced response: RK4 within 6.3e-9 at this step, measured) from its own ``t0``."""
    from jaxfriction._integrate.simulate import _compiled_run

    def run(omega, t0):
        period = 2 * np.pi / omega
        velocity = 0.3 * omega / (1 - omega**2) * (np.cos(omega * t0) - np.cos(t0))
        y0 = jnp.array([exact_frictionless(t0, omega=omega), velocity])
        return jf.simulate(frictionless(omega=omega), y0, t0, t0 + 3 * period, period / 1000, save_every=500)

    run(0.5, 0.0)
    compiled = _compiled_run._cached._cache_size()
    for omega, t0 in ((0.45, 0.0), (0.6, 1.3), (0.3, 5.0)):
        traj = run(omega, t0)
        np.testing.assert_allclose(traj.ts, t0 + np.arange(7) * np.pi / omega, rtol=1e-14)
        np.testing.assert_allclose(traj.position, exact_frictionless(np.asarray(traj.ts), omega=omega), atol=2e-8)
    assert _compiled_run._cached._cache_size() == compiled


def test_scan_rk4_and_diffrax_rk4_agree_to_round_off():
    system = jf.Oscillator(law=jf.Quinn(1.0, 0.02), force=jf.Harmonic(0.8, 0.5))
    a = jf.simulate(system, jnp.zeros(2), 0.0, 30.0, 0.01, save_every=50)
    b = jf.simulate(system, jnp.zeros(2), 0.0, 30.0, 0.01, save_every=50, solver=jf.ClassicRK4())
    assert b.status == jf.STATUS_OK
    np.testing.assert_allclose(a.ts, b.ts, atol=1e-12)
    np.testing.assert_allclose(a.ys, b.ys, rtol=0, atol=1e-11)


@pytest.mark.parametrize("solver", [diffrax.Tsit5(), diffrax.Dopri8(), diffrax.Kvaerno5()], ids=lambda s: type(s).__name__)
def test_adaptive_diffrax_solvers_match_fine_rk4(solver):
    system = jf.Oscillator(law=jf.Quinn(1.0, 0.05), force=jf.Harmonic(1.5, 0.5))
    ref = jf.simulate(system, jnp.zeros(2), 0.0, 20.0, 1e-3, save_every=None)
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 20.0, solver=jf.Diffrax(solver, rtol=1e-10, atol=1e-12),
                       saveat=jf.SaveAt(n=10))
    assert traj.ts.shape == (11,)
    assert traj.status == jf.STATUS_OK
    np.testing.assert_allclose(traj.ys[-1], ref.ys[-1], atol=1e-6)
    assert float(jf.relative_energy_residual(traj)) < 1e-7


def test_step_aligned_grid():
    n_saves, every, h = jf.fixed_grid(0.0, 2 * np.pi / 0.5, 0.01, 1)
    assert n_saves * every * h == pytest.approx(4 * np.pi, rel=1e-15) and h <= 0.01 and n_saves == 1257
    assert jf.fixed_grid(0.0, 20.0, 0.01, 1) == (2000, 1, 0.01)
    assert jf.fixed_grid(0.0, 1.0, 0.3, None) == (1, 4, 0.25)
    assert jf.fixed_grid(0.0, 1.0, 0.1, 3)[:2] == (4, 3)  # 12 steps: a multiple of save_every


def test_trajectory_saves_and_end_time():
    traj = jf.simulate(frictionless(), jnp.zeros(2), 1.0, 3.0, 0.1, save_every=5)
    np.testing.assert_allclose(traj.ts, [1.0, 1.5, 2.0, 2.5, 3.0], atol=1e-14)
    assert traj.ys.shape == (5, 5)
    # SaveAt(n=k): k + 1 equally spaced saves, the step aligned to them (7 steps of 3/21 <= 0.15)
    n = jf.simulate(frictionless(), jnp.zeros(2), 0.0, 3.0, 0.15, saveat=jf.SaveAt(n=3))
    np.testing.assert_allclose(n.ts, [0.0, 1.0, 2.0, 3.0], atol=1e-14)
    every = jf.simulate(frictionless(), jnp.zeros(2), 0.0, 3.0, 3.0 / 21, save_every=7)
    np.testing.assert_array_equal(n.ys, every.ys)  # the same 21 steps


def test_vmap_batch_with_per_lane_status():
    alphas = jnp.array([0.5, jnp.nan, 1.0])

    def run(alpha):
        traj = jf.simulate(jf.Oscillator(law=jf.Quinn(1.0, 0.02), force=jf.Harmonic(alpha, 0.5)), jnp.zeros(2),
                           0.0, 10.0, 0.01, save_every=None)
        return traj.status, traj.position[-1]

    status, x = jax.jit(jax.vmap(run))(alphas)
    np.testing.assert_array_equal(status, [0, jf.STATUS_NONFINITE, 0])
    assert np.isfinite(x[0]) and np.isfinite(x[2])


def test_solver_failure_is_reported_not_raised():
    system = jf.Oscillator(law=jf.Coulomb(1.0), force=jf.Harmonic(1.5, 0.5))
    traj = jf.simulate(system, jnp.zeros(2), 0.0, 50.0, solver=jf.Diffrax(diffrax.Tsit5(), max_steps=20))
    assert traj.status == jf.STATUS_SOLVER_FAILED


def dissipation(params, n_cycles=4, dt=0.01):
    mu, alpha, omega = params
    system = jf.Oscillator(law=jf.Quinn(mu, 2 * dt), force=jf.Harmonic(alpha, omega))
    period = 2 * np.pi / 0.5  # fixed window so omega's FD does not move the grid
    traj = jf.simulate(system, jnp.zeros(2), 0.0, n_cycles * period, dt, save_every=None)
    return traj.friction_dissipation[-1]


@pytest.mark.parametrize("point", [(0.5, 0.8, 0.5), (0.3, 1.5, 0.7), (1.0, 0.6, 0.5)])
def test_gradient_of_dissipation_matches_finite_differences(point):
    p = jnp.array(point)
    grad = jax.grad(dissipation)(p)
    fwd = jax.jacfwd(dissipation)(p)
    h = 1e-6
    fd = np.array([(dissipation(p.at[i].add(h)) - dissipation(p.at[i].add(-h))) / (2 * h) for i in range(3)])
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fwd, grad, rtol=1e-10, atol=1e-12)


def test_float32_runs_and_reaches_rest():
    with jax.enable_x64(False):
        traj = jf.simulate(jf.Oscillator(law=jf.Quinn(1.0, 0.01)), jnp.array([2.75, 0.0]), 0.0, 20.0, 0.01,
                           save_every=None)
        assert traj.ys.dtype == jnp.float32
        assert abs(float(jf.rest_position(traj)) + 0.75009) < 1e-4


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"dt": 0.0}, "dt"),
        ({"dt": -0.1}, "dt"),
        ({"dt": None}, "dt"),
        ({"t1": 0.0}, "t1"),
        ({"t1": -1.0}, "t1"),
        ({"t1": float("nan")}, "t1"),
        ({"y0": jnp.zeros(3)}, "y0"),
        ({"y0": jnp.array([jnp.nan, 0.0])}, "y0"),
        ({"save_every": 0}, "every"),
        ({"saveat": jf.SaveAt(ts=jnp.linspace(0.0, 1.0, 3))}, "SaveAt\\(ts"),
        ({"saveat": jf.SaveAt(n=2), "save_every": 2}, "not both"),
        ({"solver": "euler"}, "solver"),
        ({"system": "oscillator"}, "system"),
    ],
)
def test_simulate_bad_input(kwargs, match):
    args = {"system": frictionless(), "y0": jnp.zeros(2), "t0": 0.0, "t1": 1.0, "dt": 0.1, **kwargs}
    with pytest.raises(ValueError, match=match):
        jf.simulate(**args)


def test_the_papers_rounding_of_the_step_count():
    # T / dt = 1256.64 steps per forcing period: the library rounds up (h <= dt), the papers round
    period = 4 * np.pi
    assert jf.fixed_grid(0.0, 2.5, 0.3, None) == (1, 9, 2.5 / 9)
    assert jf.fixed_grid(0.0, 2.5, 0.3, None, "round") == (1, 8, 2.5 / 8)
    ceil_run = jf.simulate(frictionless(), jnp.zeros(2), 0.0, 2.5, 0.3, save_every=None)
    round_run = jf.simulate(frictionless(), jnp.zeros(2), 0.0, 2.5, 0.3, save_every=None,
                            solver=jf.RK4(rounding="round"))
    assert float(ceil_run.ts[-1]) == float(round_run.ts[-1]) == 2.5
    assert jf.fixed_grid(0.0, period, 0.01, 1, "round")[0] == 1257
    with pytest.raises(ValueError, match="rounding"):
        jf.RK4(rounding="floor")


def test_absurd_saved_sizes_are_refused_with_the_figures():
    with pytest.raises(ValueError, match=r"dt/saveat: the run would save 60,000,000,001 states of 5 numbers, 2235.2 GiB"):
        jf.simulate(frictionless(), jnp.zeros(2), 0.0, 60.0, 1e-9)
    with pytest.raises(ValueError, match="window/saveat/chunk_size: a chunk of 1024 lanes"):
        jf.sweep(frictionless(), {"force.amplitude": np.linspace(0.1, 1.0, 2048)}, t1=1000.0, dt=1e-3, progress=False,
                 kernel="vmap")  # the compiled loop and the fused kernel save no window
    # issue 38: the chunk holds the grid's 16 lanes, not chunk_size's 1024
    with pytest.raises(ValueError, match="window/saveat/chunk_size: a chunk of 16 lanes"):
        jf.sweep(frictionless(), {"force.amplitude": np.linspace(0.1, 1.0, 16)}, t1=1e5, dt=1e-3, progress=False,
                 kernel="vmap")


def test_issue_25_a_step_that_does_not_resolve_the_run_the_forcing_or_the_record_is_refused():
    forced = frictionless(0.3, 0.5)  # period 4 pi: at least 20 steps, dt <= 0.628
    # a step longer than the run is shortened to it (the grid lands on t1): checked as that step
    assert int(jf.simulate(forced, jnp.zeros(2), 0.0, 0.5, 5.0).status) == 0
    with pytest.raises(ValueError, match="dt = 5 does not resolve the forcing: 2.51 steps per period"):
        jf.simulate(forced, jnp.zeros(2), 0.0, 5.0, 5.0)
    with pytest.raises(ValueError, match=r"dt = 1 does not resolve the forcing: 12.6 steps per period of force.omega"):
        jf.simulate(forced, jnp.zeros(2), 0.0, 100.0, 1.0)
    with pytest.raises(ValueError, match="does not resolve the forcing"):
        jf.simulate(forced, jnp.zeros(2), 0.0, 100.0, 1.0, solver=jf.Diffrax(jf.ClassicRK4()))
    assert int(jf.simulate(forced, jnp.zeros(2), 0.0, 100.0, 0.6).status) == 0
    # an adaptive solver's dt is only its first step
    assert int(jf.simulate(forced, jnp.zeros(2), 0.0, 10.0, 1.0, solver=diffrax.Tsit5()).status) == 0
    # unforced (amplitude 0): nothing to resolve
    assert int(jf.simulate(frictionless(0.0, 0.5), jnp.array([1.0, 0.0]), 0.0, 10.0, 1.0).status) == 0
    ground = jf.GroundMotion(values=jnp.zeros((100, 2)), dt=0.01, name="zeros")
    block = jf.BlockOnShakingFloor(law=jf.VectorQuinn(0.3, 0.05), ground=ground)
    with pytest.raises(ValueError, match="dt = 0.02 is longer than the sample interval 0.01 s of the record 'zeros'"):
        jf.simulate(block, jnp.zeros(4), 0.0, 1.0, 0.02)


def test_issue_25_saveat_y0_max_steps_and_scalar_parameters_are_checked_by_name():
    system = frictionless()
    for ts in ([0.5, 2.0], [-1.0, 0.5]):
        with pytest.raises(ValueError, match=r"saveat: SaveAt\(ts=...\) must lie in \[t0, t1\]"):
            jf.simulate(system, jnp.zeros(2), 0.0, 1.0, 0.01, solver=diffrax.Tsit5(), saveat=jf.SaveAt(ts=jnp.array(ts)))
    for y0 in ("0,0", None, ["a", "b"]):
        with pytest.raises(ValueError, match="y0 must be an array of numbers"):
            jf.simulate(system, y0, 0.0, 1.0, 0.01)
    with pytest.raises(ValueError, match="max_steps must be an integer >= 1"):
        jf.Diffrax(diffrax.Tsit5(), max_steps=0)
    with pytest.raises(ValueError, match="max_steps must be an integer >= 1"):
        jf.EventDriven(max_steps=0)
    with pytest.raises(ValueError, match=r"law parameters must be scalars .* mu of shape \(2,\)"):
        jf.Oscillator(law=jf.Quinn(mu=jnp.array([0.5, 0.3])))
    with pytest.raises(ValueError, match="law parameters must be scalars"):
        jf.SpringSlider(law=jf.Quinn(mu=[0.5, 0.3]))
    with pytest.raises(ValueError, match=r"'law.mu' is a scalar parameter, got an array of shape \(2,\)"):
        jf.set_parameters(system, {"law.mu": jnp.array([0.5, 0.3])})
    for value in ("0.5", None, True):
        with pytest.raises(ValueError, match="'law.mu' must be a number"):
            jf.set_parameters(system, {"law.mu": value})
    two = jf.TwoBlocksOnBelt(law=jf.Quinn(jnp.array([0.5, 0.25]), 0.02))  # arrays where they belong
    assert float(jf.set_parameters(two, {"law.mu": jnp.array([0.4, 0.2])}).law.mu[1]) == 0.2
    assert float(jf.set_parameters(two, {"law.mu[1]": 0.1}).law.mu[1]) == 0.1
