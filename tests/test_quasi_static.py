"""The quasi-static and quasi-dynamic rate-and-state slider against rsfmodel's published values
and independent scipy Radau solves written here (rsfmodel's formulation: friction and theta)."""

import time

import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import jaxfriction as jf

# rsfmodel's velocity-step test (github jrleeman/rsfmodel, tests/rsf_tests.py at ec8b8f8..0869d89:
# aging law, mu_0 0.6, a 0.005, b 0.01, D_c 10 um, k 1e-3 /um, V_ref 1 um/s, load point 1 -> 10 um/s
# at t = 10 s, saved every 0.01 s to 40 s): the four extremes it publishes (and their sample index)
RSF_EXTREMES = {"mu_max": (0.60784356, 1129), "mu_min": (0.58362349, 1322), "theta_min": (0.51710192, 1282),
                "v_max": (35.26869330, 1231)}
# its later tests (tests/rsf_tests.py at HEAD) on a 1-s grid: the friction, 8 decimals
RSF_FRICTION_1S = {
    "aging": (0.005, 0.01, [0.60720485, 0.60186637, 0.5840091, 0.58563096, 0.58899543, 0.58998186, 0.58879751]),
    "slip": (0.01, 0.005, [0.60839299, 0.6146288, 0.61663335, 0.61451424, 0.61239234, 0.61152559, 0.61133979]),
    "perrin": (0.01, 0.005, [0.60839207, 0.61456074, 0.61610039, 0.61386731, 0.61210792, 0.61145825, 0.61134801]),
}


def lab_slider(evolution="aging", a=0.005, b=0.01, form="log", damping=0.0, load=None):
    """rsfmodel's units: um, s; the normal force 1, so the stiffness is rsfmodel's k (1/um)."""
    law = jf.RateState(a=a, b=b, D_c=10.0, mu_0=0.6, V_0=1.0, evolution=evolution, form=form)
    load = jf.Steps((1.0, 10.0), (10.0,)) if load is None else load
    return jf.QuasiStaticSlider(law=law, load=load, stiffness=1e-3, normal=1.0, damping=damping)


def scipy_slider(evolution, a, b, ts, damping=0.0, D_c=10.0, k=1e-3, mu_0=0.6, V_0=1.0, t_steps=(10.0,), V=(1.0, 10.0)):
    """The same experiment by scipy's Radau in rsfmodel's variables, written from the equations:
    quasi-static, ``mu' = k (V - v)`` with ``v = V_0 exp((mu - mu_0 - b ln(V_0 theta / D_c')) / a)``;
    quasi-dynamic (``damping`` eta > 0), the stretch ``delta`` and ``theta`` with ``v`` from the
    force balance ``k delta = mu(v, theta) + eta v`` by Brent's method on ``ln v``. Perrin:
    ``D_c' = 2 D_c``. The load ``V[i]`` from ``t_steps[i - 1]`` on, one leg per value."""
    Dc_mu = 2 * D_c if evolution == "perrin" else D_c

    def mu_of(v, theta):
        return mu_0 + a * np.log(v / V_0) + b * np.log(V_0 * theta / Dc_mu)

    def theta_rate(v, theta):
        if evolution == "aging":
            return 1.0 - v * theta / D_c
        if evolution == "slip":
            return -(v * theta / D_c) * np.log(v * theta / D_c)
        return 1.0 - (v * theta / (2 * D_c)) ** 2

    def velocity(x, theta):
        if damping == 0.0:
            return V_0 * np.exp((x - mu_0 - b * np.log(V_0 * theta / Dc_mu)) / a)
        return np.exp(brentq(lambda s: mu_of(np.exp(s), theta) + damping * np.exp(s) - k * x, -50.0, 50.0,
                             xtol=1e-15, rtol=1e-15))

    def rhs(V_load):
        def f(t, y):
            v = velocity(y[0], y[1])
            return [k * (V_load - v) if damping == 0.0 else V_load - v, theta_rate(v, y[1])]
        return f

    theta0 = (2 * D_c if evolution == "perrin" else D_c) / V[0]
    x0 = mu_of(V[0], theta0) + damping * V[0]
    y = [x0 if damping == 0.0 else x0 / k, theta0]
    edges = [ts[0], *t_steps, ts[-1]]
    kw = dict(method="Radau", rtol=1e-12, atol=1e-13)
    xs = np.zeros((2, len(ts)))
    for V_load, lo, hi in zip(V, edges[:-1], edges[1:]):
        inside = (ts >= lo) & (ts <= hi)
        leg = solve_ivp(rhs(V_load), (lo, hi), y, t_eval=ts[inside], dense_output=True, **kw)
        xs[:, inside] = leg.y
        y = leg.sol(hi)
    v = np.array([velocity(x, th) for x, th in xs.T])
    mu = xs[0] if damping == 0.0 else np.array([mu_of(vi, th) for vi, th in zip(v, xs[1])])
    return mu, xs[1], v


@pytest.fixture(scope="module")
def rsf_run():
    slider = lab_slider()
    ts = jnp.asarray(np.arange(0.0, 40.01, 0.01))
    start = time.perf_counter()
    traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 40.0, saveat=jf.SaveAt(ts=ts))
    mu = np.asarray(-traj.friction_force)  # normal 1: the friction coefficient
    wall = time.perf_counter() - start
    return traj, mu, wall


def test_rsfmodel_velocity_step_extremes(rsf_run):
    traj, mu, wall = rsf_run
    assert int(traj.status) == 0
    theta, v = np.asarray(traj.internal("theta")), np.asarray(traj.velocity)
    got = {"mu_max": (mu.max(), mu.argmax()), "mu_min": (mu.min(), mu.argmin()),
           "theta_min": (theta.min(), theta.argmin()), "v_max": (v.max(), v.argmax())}
    for name, (value, index) in RSF_EXTREMES.items():
        assert got[name][1] == index, name
        assert got[name][0] == pytest.approx(value, rel=1e-7), name  # measured: 5e-9 (8 published decimals)
    # the energy books: W_input = Delta(k delta^2 / 2) + E_friction
    assert float(jf.relative_energy_residual(traj)) < 1e-9
    print(f"rsfmodel velocity step: {wall:.2f} s (compile included)")


def test_rsfmodel_against_scipy_radau(rsf_run):
    traj, mu, _ = rsf_run
    ts = np.asarray(traj.ts)[::50]
    mu_ref, theta_ref, v_ref = scipy_slider("aging", 0.005, 0.01, ts)
    np.testing.assert_allclose(mu[::50], mu_ref, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(traj.internal("theta"))[::50], theta_ref, rtol=1e-7)
    np.testing.assert_allclose(np.asarray(traj.velocity)[::50], v_ref, rtol=1e-7)


@pytest.mark.parametrize("evolution", ["slip", "perrin"])
def test_rsfmodel_other_evolution_laws(evolution):
    # rsfmodel's later tests for the Ruina (slip) and Perrin-Rice-Zheng laws (a 0.01, b 0.005):
    # its 1-s friction samples after the step (8 decimals), and the scipy solve at every sample
    a, b, published = RSF_FRICTION_1S[evolution]
    slider = lab_slider(evolution, a=a, b=b, form="regularized")  # asinh = log here to 1e-100
    ts = np.arange(0.0, 41.0)
    traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 40.0, saveat=jf.SaveAt(ts=jnp.asarray(ts)))
    mu = np.asarray(-traj.friction_force)
    assert int(traj.status) == 0
    np.testing.assert_allclose(mu[11:18], published, atol=1e-8)
    mu_ref, theta_ref, _ = scipy_slider(evolution, a, b, ts)
    np.testing.assert_allclose(mu, mu_ref, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(traj.internal("theta")), theta_ref, rtol=1e-7)


def test_quasi_dynamic_against_scipy_and_books():
    # radiation damping eta = 2e-3 (friction per um/s: comparable to a = 0.005 at v ~ 1-30 um/s)
    slider = lab_slider(damping=2e-3)
    ts = np.linspace(0.0, 40.0, 81)
    traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 40.0, saveat=jf.SaveAt(ts=jnp.asarray(ts)))
    assert int(traj.status) == 0
    mu_ref, theta_ref, v_ref = scipy_slider("aging", 0.005, 0.01, ts, damping=2e-3)
    np.testing.assert_allclose(np.asarray(-traj.friction_force), mu_ref, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(traj.velocity), v_ref, rtol=1e-7)
    # the damping slows the peak slip rate (35.3 um/s without)
    assert 10.0 < float(np.max(v_ref)) < 30.0
    e_damp = float(traj.damping_dissipation[-1])
    assert e_damp > 0.0 and float(jf.relative_energy_residual(traj)) < 1e-9


def test_linear_stability_and_period():
    # k_c = (N (b - a) - eta V) / D_c; Jacobian of the vector field at steady sliding by jax
    # against the closed-form eigenvalues; at k_c a pure oscillation of period 2 pi / omega_c
    jacobian = jax.jit(lambda slider, y: jax.jacobian(slider.vector_field, argnums=1)(0.0, y)[:2, :2])
    for damping in (0.0, 1e-4):
        base = lab_slider(load=jf.Constant(1.0), damping=damping)
        kc = float(base.critical_stiffness())
        assert kc == pytest.approx((0.01 - 0.005 - damping * 1.0) / 10.0, rel=1e-15)
        for ratio in (0.8, 1.0, 1.3):
            slider = jf.set_parameters(base, {"stiffness": ratio * kc})
            y = slider.as_state(slider.steady_sliding())
            jac = jacobian(slider, y)
            eig = np.sort_complex(np.linalg.eigvals(np.asarray(jac)))
            np.testing.assert_allclose(eig, np.sort_complex(slider.linear_eigenvalues()), rtol=1e-10)
            if ratio == 1.0:
                assert abs(eig.real).max() < 1e-12 * abs(eig.imag).max()
                assert abs(eig.imag).max() == pytest.approx(float(slider.critical_frequency()), rel=1e-10)
    base = lab_slider(load=jf.Constant(1.0))
    slider = jf.set_parameters(base, {"stiffness": float(base.critical_stiffness())})  # 5e-4
    period = 2 * np.pi / float(slider.critical_frequency())  # 2 pi (D_c / V) sqrt(a / (b - a)) = 62.8 s
    y0 = slider.steady_sliding().at[0].add(1e-3)  # well above atol = 1e-10, a weak nonlinearity
    ts = np.linspace(0.0, 6 * period, 3001)
    traj = jf.simulate(slider, y0, 0.0, float(ts[-1]), saveat=jf.SaveAt(ts=jnp.asarray(ts)))
    x = np.asarray(traj.ys[:, 0])
    up = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    crossings = ts[up] - x[up] * (ts[up + 1] - ts[up]) / (x[up + 1] - x[up])
    assert np.mean(np.diff(crossings)) == pytest.approx(period, rel=1e-5)


def test_jump_breakpoints_and_holds():
    slider = lab_slider(load=jf.Steps((1.0, 0.0, 1.0), (10.0, 110.0)))  # slide-hold-slide, 100 s
    assert slider.jump_times() == (10.0, 110.0)
    ts = np.linspace(0.0, 200.0, 401)
    traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 200.0, saveat=jf.SaveAt(ts=jnp.asarray(ts)))
    assert int(traj.status) == 0
    v = np.asarray(traj.velocity)
    assert 0.0 < v[219] < 0.05  # the hold: the slip rate decays but stays positive (log form)
    mu_ref, _, _ = scipy_slider("aging", 0.005, 0.01, ts, t_steps=(10.0, 110.0), V=(1.0, 0.0, 1.0))
    np.testing.assert_allclose(np.asarray(-traj.friction_force), mu_ref, rtol=1e-9)


def test_healing_against_scipy():
    # the reproduction's slide-hold-slide peaks (vmap over holds with traced jump times)
    from jaxfriction._reproduce.rate_state import healing

    holds = (10.0, 100.0)
    rises = healing(holds, reslide=40.0)
    for hold, rise in zip(holds, rises):
        ts = np.linspace(10.0 + hold, 50.0 + hold, 4001)
        mu_ref, _, _ = scipy_slider("aging", 0.005, 0.01, np.concatenate([[0.0], ts]), t_steps=(10.0, 10.0 + hold),
                                    V=(1.0, 0.0, 1.0))
        assert rise == pytest.approx(np.max(mu_ref[1:]) - 0.6, rel=1e-4)  # peak sampled on different grids


def test_small_sweep_over_a_b():
    # 16 lanes of the velocity step over (a, b), all status 0 (the 1,000-lane sweep:
    # scripts/studies/sweep_quasi_static.py)
    base = lab_slider()
    # k = 1e-3 > k_c = (b - a) / D_c on the grid (a quasi-static slider below k_c may blow up in
    # finite time after the step, an honest status 2; radiation damping bounds it)
    a, b = np.meshgrid(np.linspace(0.003, 0.012, 4), np.linspace(0.004, 0.012, 4))

    def run(a, b):
        slider = jf.set_parameters(base, {"law.a": a, "law.b": b})
        traj = jf.simulate(slider, slider.steady_sliding(), 0.0, 40.0, saveat=jf.SaveAt(n=40))
        return traj.status, -traj.friction_force[-1]

    status, mu_end = jax.jit(jax.vmap(run))(jnp.asarray(a.ravel()), jnp.asarray(b.ravel()))
    assert np.all(np.asarray(status) == 0)
    mu_ss = 0.6 + (a.ravel() - b.ravel()) * np.log(10.0)
    stable = base.stiffness > 1.5 * (b.ravel() - a.ravel()) / 10.0  # near k_c the decay is slow
    np.testing.assert_allclose(np.asarray(mu_end)[stable], mu_ss[stable], atol=2e-4)


def test_gradient_is_finite():
    slider = lab_slider()
    y0 = slider.steady_sliding()

    solver = jf.Diffrax(diffrax.Tsit5(), rtol=1e-10, atol=1e-10, adjoint=diffrax.ForwardMode())

    @jax.jit
    def peak(b):
        s = jf.set_parameters(slider, {"law.b": b})
        return jnp.max(-jf.simulate(s, y0, 0.0, 15.0, solver=solver, saveat=jf.SaveAt(n=50)).friction_force)

    g = jax.jit(lambda b: jax.jvp(peak, (b,), (1.0,))[1])(0.01)  # forward mode through the jump
    h = 1e-6
    fd = (peak(0.01 + h) - peak(0.01 - h)) / (2 * h)
    assert np.isfinite(float(g)) and float(g) == pytest.approx(float(fd), rel=1e-4)


def test_bad_input(rsf_run):
    with pytest.raises(ValueError, match="a"):
        jf.RateState(a=0.0)
    with pytest.raises(ValueError, match="D_c"):
        jf.RateState(D_c=-1.0)
    with pytest.raises(ValueError, match="form"):
        jf.RateState(form="linear")
    with pytest.raises(ValueError, match="evolution"):
        jf.RateState(evolution="kato-tullis")
    slider = lab_slider()
    with pytest.raises(ValueError, match="slip rate"):
        slider.state(-1.0)
    with pytest.raises(ValueError, match="slip rate"):
        lab_slider(load=jf.Constant(0.0)).steady_sliding()
    with pytest.raises(ValueError, match="law"):
        jf.QuasiStaticSlider(law=jf.Quinn(0.5, 0.01))
    with pytest.raises(ValueError, match="damping"):
        lab_slider(damping=-1.0)
    with pytest.raises(ValueError, match="normal"):
        jf.QuasiStaticSlider(law=jf.RateState(), normal=0.0)
    with pytest.raises(ValueError, match="values"):
        jf.Steps((1.0, 2.0), (1.0, 2.0))
    with pytest.raises(ValueError, match="increase"):
        jf.Steps((1.0, 2.0, 3.0), (2.0, 1.0))
    with pytest.raises(ValueError, match="name"):  # a trajectory of this slider (simulated above)
        rsf_run[0].internal("phi")


def test_named_state_of_the_inertial_slider():
    law = jf.RateState(a=0.01, b=0.015, D_c=1e-2, mu_0=0.6, V_0=1e-3)
    slider = jf.SpringSlider(law=law, load=jf.Constant(1e-2), mass=1.0, stiffness=2.0, normal=1.0)
    ys = jnp.stack([slider.as_state(slider.steady_sliding(v)) for v in (1e-2, 1e-1)])
    np.testing.assert_allclose(np.asarray(slider.internal(ys, "psi")), np.asarray(ys[:, 2]), rtol=0)
    np.testing.assert_allclose(np.asarray(slider.internal(ys, "theta")), [1.0, 0.1], rtol=1e-12)  # D_c / V
    assert slider.internal_names() == ["psi"]


def test_contract():
    from jaxfriction.testing import check_system

    law = jf.RateState(a=0.01, b=0.015, D_c=1e-5, mu_0=0.6, V_0=1e-6)
    check_system(jf.QuasiStaticSlider(law=law, load=jf.Constant(2e-6), stiffness=1e3, normal=1e3, damping=10.0),
                 jnp.zeros(0), t1=0.1, dt=1e-3)


@pytest.mark.slow  # 9 s
def test_fit_a_b_dc_from_a_scipy_record():
    # the record is not jaxfriction's: scipy Radau of rsfmodel's velocity step, 0.1-s samples, noise
    # 1e-4; Levenberg-Marquardt (optimistix) in log-parameters from a guess with b < a, D_c x 2
    import optimistix as optx

    ts = np.linspace(0.0, 40.0, 401)
    mu_true, _, _ = scipy_slider("aging", 0.005, 0.01, ts)
    record = jnp.asarray(mu_true + 1e-4 * np.random.default_rng(0).standard_normal(ts.size))
    slider = lab_slider(a=0.008, b=0.006)
    slider = jf.set_parameters(slider, {"law.D_c": 20.0})
    solver = jf.Diffrax(diffrax.Tsit5(), rtol=1e-10, atol=1e-10, adjoint=diffrax.ForwardMode())
    paths = ["law.a", "law.b", "law.D_c"]

    def residuals(log_p, record):
        s = jf.set_parameters(slider, dict(zip(paths, jnp.exp(log_p))))
        traj = jf.simulate(s, s.steady_sliding(), 0.0, 40.0, solver=solver, saveat=jf.SaveAt(ts=jnp.asarray(ts)))
        return -traj.friction_force - record

    sol = optx.least_squares(residuals, optx.LevenbergMarquardt(rtol=1e-10, atol=1e-10),
                             jnp.log(jnp.array([0.008, 0.006, 20.0])), args=record, max_steps=100)
    p = np.exp(np.asarray(sol.value))
    jac = np.asarray(jax.jacfwd(residuals)(sol.value, record)) / p
    r = np.asarray(residuals(sol.value, record))
    noise = np.sqrt(r @ r / (r.size - 3))
    stderr = np.sqrt(np.diag(np.linalg.inv(jac.T @ jac))) * noise
    assert noise == pytest.approx(1e-4, rel=0.1)
    # measured: (5.0029e-3, 1.00064e-2, 9.9985) +- (7.0e-6, 7.1e-6, 1.0e-2): 0.4, 0.9, 0.1 stderr
    assert np.all(np.abs(p - [0.005, 0.01, 10.0]) < 3 * stderr)
    assert np.all(stderr / p < [2e-3, 1e-3, 2e-3])
