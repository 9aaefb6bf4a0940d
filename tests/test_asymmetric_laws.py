"""Direction-dependent (AsymmetricFriction) and load-dependent (LoadDependent) friction laws."""

import jax

jax.config.update("jax_enable_x64", True)

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import jaxfriction as jf
from jaxfriction.testing import check_law, check_system

# EMPS direction-dependent reference model (Janot, Gautier & Brunot 2019), forces in N (normal = 1)
EMPS = dict(mu_c_pos=20.14, mu_c_neg=20.63, viscous_pos=166.71, viscous_neg=240.42)
STRIBECK = dict(mu_c_pos=0.3, mu_c_neg=0.5, viscous_pos=0.1, viscous_neg=0.4, mu_s_pos=0.6, mu_s_neg=0.45, v_s=0.05,
                eps=0.01)


def test_emps_published_direction_dependent_forces():
    """The benchmark's direction-dependent model: -(Fc+ + Fv+ v) at +0.1 m/s, +(Fc- + Fv- |v|) at -0.1 m/s,
    whatever the load (outside the band the force does not read f_eq)."""
    law = jf.AsymmetricFriction(**EMPS, eps=1e-3)
    for f_eq in (0.0, 15.0, -15.0, 300.0, -300.0):
        assert float(law(0.1, f_eq, 1.0)) == pytest.approx(-(20.14 + 16.671), abs=1e-12)
        assert float(law(-0.1, f_eq, 1.0)) == pytest.approx(20.63 + 24.042, abs=1e-12)
    # the numbers above are -36.811 and +44.672 N; the same through the pure function
    assert float(jf.asymmetric_friction(0.1, 0.0, 1.0, 20.14, 20.63, 166.71, 240.42, eps=1e-3)) == \
        pytest.approx(-36.811, abs=1e-12)


def test_stribeck_levels_per_direction():
    """Outside the band: -(N (mu_c + (mu_s - mu_c) exp(-(v/v_s)^2)) + F_v v) per direction, with N = 2."""
    law = jf.AsymmetricFriction(**STRIBECK)
    v = np.array([0.03, 0.08, 0.2, 1.0])
    pos = -(2.0 * (0.3 + 0.3 * np.exp(-(v / 0.05) ** 2)) + 0.1 * v)
    neg = 2.0 * (0.5 - 0.05 * np.exp(-(v / 0.05) ** 2)) + 0.4 * v
    np.testing.assert_allclose(np.asarray(law(jnp.asarray(v), 0.0, 2.0)), pos, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(law(-jnp.asarray(v), 0.0, 2.0)), neg, rtol=1e-13)


def test_stick_limit_per_direction_and_continuity_at_zero_slip():
    """At v = 0 the force balance is clipped to [-F_s+, F_s-]; near 0 the force moves by at most the band's
    slope times |v| (continuity), for loads below, at and beyond either limit."""
    law = jf.AsymmetricFriction(**STRIBECK)
    normal = 2.0
    f_eq = np.array([-5.0, -1.2, -1.2 + 1e-9, -0.4, 0.0, 0.3, 0.9 - 1e-9, 0.9, 4.0])
    held = np.asarray(law(0.0, jnp.asarray(f_eq), normal))
    np.testing.assert_allclose(held, np.clip(f_eq, -0.6 * normal, 0.45 * normal), rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.asarray(law.zero_slip_force(jnp.asarray(f_eq), normal)), held, atol=0)
    slope = 0.6 * normal / 0.01 + 0.4  # largest static level / eps + largest viscous coefficient
    for dv in (1e-9, 1e-6, 1e-4):
        for sign in (1.0, -1.0):
            near = np.asarray(law(sign * dv, jnp.asarray(f_eq), normal))
            stribeck = normal * 0.3 * (dv / 0.05) ** 2  # the Stribeck level moves by O((v / v_s)^2)
            assert np.all(np.abs(near - held) <= slope * dv * (1 + 1e-9) + stribeck)


def test_finite_gradients_at_zero_slip_match_finite_differences():
    """jax.grad with respect to v and every parameter is finite at v = 0 (loads inside, on and beyond each
    static limit), and matches central differences inside the band and in slip."""
    law = jf.AsymmetricFriction(**STRIBECK)
    names = ["mu_c_pos", "mu_c_neg", "viscous_pos", "viscous_neg", "mu_s_pos", "mu_s_neg", "v_s", "delta", "eps"]

    @jax.jit
    def force(p, v, f_eq):
        return jf.asymmetric_friction(v, f_eq, 1.0, *(p[n] for n in names))

    p0 = {n: jnp.asarray(float(getattr(law, n))) for n in names}
    grad = jax.jit(jax.grad(force, argnums=(0, 1, 2)))
    for f_eq in (0.0, 0.3, 0.45, -0.6, 2.0, -2.0):
        gp, gv, gf = grad(p0, 0.0, f_eq)
        assert all(np.isfinite(float(x)) for x in (*gp.values(), gv, gf)), f_eq
    for v, f_eq in ((0.004, 0.2), (-0.003, -0.1), (0.07, 0.0), (-0.12, 0.3)):
        gp, gv, _ = grad(p0, v, f_eq)
        h = 1e-6
        fd_v = (force(p0, v + h, f_eq) - force(p0, v - h, f_eq)) / (2 * h)
        assert float(gv) == pytest.approx(float(fd_v), rel=1e-6, abs=1e-8)
        for n in names:
            up = dict(p0, **{n: p0[n] + h})
            down = dict(p0, **{n: p0[n] - h})
            fd = (force(up, v, f_eq) - force(down, v, f_eq)) / (2 * h)
            assert float(gp[n]) == pytest.approx(float(fd), rel=1e-6, abs=1e-8), (n, v, f_eq)


@pytest.mark.parametrize("law", [
    jf.AsymmetricFriction(**EMPS, eps=1e-3),
    jf.AsymmetricFriction(**dict(STRIBECK, delta=0.7)),
    jf.AsymmetricFriction(mu_c_pos=0.0, mu_c_neg=0.4),  # one direction free
    jf.LoadDependent(jf.AsymmetricFriction(**STRIBECK), 0.3, rounding=0.0),
    jf.LoadDependent(jf.StaticKineticQuinn(0.6, 0.4, 0.02), 2.0),  # self-locking: mu_s c >= 1
], ids=["emps", "stribeck-delta0.7", "one-sided", "load-asym-exact-abs", "self-locking"])
def test_contract(law):
    report = check_law(law)
    assert "force balance at zero slip" in report.checks and "mirror symmetry" in report.checks


def test_contract_catches_a_wrong_direction():
    """A law that swaps its directions without saying so fails the mirror symmetry; one that clips the stick
    force to the wrong side's limit fails the force balance."""

    class Unmirrored(jf.AsymmetricFriction):
        def mirrored(self):
            return self

    with pytest.raises(AssertionError, match="mirror symmetry"):
        check_law(Unmirrored(**STRIBECK))

    class WrongSide(jf.AsymmetricFriction):
        def zero_slip_force(self, f_eq, normal):
            limit_pos, limit_neg = self.static_limits(normal)
            return jnp.clip(f_eq, -limit_neg, limit_pos)

    with pytest.raises(AssertionError, match="force balance at zero slip"):
        check_law(WrongSide(**STRIBECK))


def test_symmetric_defaults_are_quinn():
    v = jnp.linspace(-0.1, 0.1, 41)
    for f_eq in (0.0, 0.5, -2.0):
        np.testing.assert_allclose(np.asarray(jf.AsymmetricFriction()(v, f_eq, 1.3)),
                                   np.asarray(jf.Quinn(1.0, 0.02)(v, f_eq, 1.3)), atol=1e-15)


def test_bad_parameters_name_the_argument():
    for kwargs, name in ((dict(mu_c_pos=-1.0), "mu_c_pos"), (dict(viscous_neg=-0.1), "viscous_neg"),
                         (dict(mu_s_neg=-0.1), "mu_s_neg"), (dict(eps=0.0), "eps"), (dict(v_s=0.0), "v_s"),
                         (dict(mu_c_neg=float("nan")), "mu_c_neg")):
        with pytest.raises(ValueError, match=name):
            jf.AsymmetricFriction(**kwargs)
    with pytest.raises(ValueError, match="coefficient"):
        jf.LoadDependent(jf.Quinn(), -0.1)
    with pytest.raises(ValueError, match="rounding"):
        jf.LoadDependent(jf.Quinn(), 0.1, rounding=-1.0)
    with pytest.raises(ValueError, match="law must be a scalar law"):
        jf.LoadDependent(jf.VectorQuinn(0.3, 0.01), 0.1)
    with pytest.raises(ValueError, match="law must be a jaxfriction static friction law"):
        jf.LoadDependent(jf.LuGre(), 0.1)


def _asymmetric_numpy(v, f_eq, p):
    """The regularized asymmetric law written out in numpy (module docstring of asymmetric.py)."""
    zeta = np.clip(f_eq / p["Ln"], 0.0, 1.0) if f_eq >= 0 else np.clip(f_eq / p["Lp"], -1.0, 0.0)
    u = v / p["eps"] - zeta
    dry = p["Lp"] * min(u, 1.0) if u >= 0 else p["Ln"] * max(u, -1.0)
    return -dry - (p["Fvp"] * v if v > 0 else p["Fvn"] * v)


def test_mass_under_harmonic_force_matches_scipy():
    """EMPS-like axis, M x'' = F sin(w t) + f(x', -F sin(w t)) with the EMPS direction-dependent law: jf.simulate
    (RK4) against scipy's DOP853 on the same regularized law written in numpy (stick phases included)."""
    mass, amp, omega, eps = 95.1089, 60.0, 2 * np.pi * 0.5, 1e-3
    p = dict(Lp=20.14, Ln=20.63, Fvp=166.71, Fvn=240.42, eps=eps)
    system = jf.Oscillator(law=jf.AsymmetricFriction(**EMPS, eps=eps), force=jf.Harmonic(amp, omega), mass=mass,
                           stiffness=0.0)
    t1, dt = 4.0, 2.5e-4
    traj = jf.simulate(system, jnp.array([0.0, 0.0]), 0.0, t1, dt, save_every=40)
    assert int(traj.status) == 0

    def rhs(t, y):
        force = amp * np.sin(omega * t)
        return [y[1], (force + _asymmetric_numpy(y[1], -force, p)) / mass]

    ref = solve_ivp(rhs, (0.0, t1), [0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-14, t_eval=np.asarray(traj.ts))
    x, v = np.asarray(traj.ys[:, 0]), np.asarray(traj.ys[:, 1])
    # RK4 crosses the band's kinks at O(dt^2): 2.0e-7 m at dt = 1e-3, 7.6e-8 at 5e-4, 9.1e-9 at 2.5e-4 (measured)
    assert np.max(np.abs(x - ref.y[0])) < 2e-8  # m; the peak displacement is 8.2 cm
    assert np.max(np.abs(v - ref.y[1])) < 6e-8  # m/s; the peak velocity is 0.10 m/s
    assert np.max(np.abs(ref.y[0])) > 0.08
    # it sticks (4.8 % of the time): the force amplitude 60 N passes the static limits each half-cycle
    assert np.mean(np.abs(ref.y[1]) < eps) > 0.03


def test_load_dependent_forces_and_effective_normal():
    inner = jf.AsymmetricFriction(**EMPS, eps=1e-3)
    law = jf.LoadDependent(inner, 0.01, rounding=0.0)
    # slip: dry level (N + c |f_eq|) mu, viscous part unchanged
    assert float(law(0.1, -50.0, 1.0)) == pytest.approx(-(20.14 * 1.5 + 16.671), abs=1e-12)
    assert float(law(-0.1, 80.0, 1.0)) == pytest.approx(20.63 * 1.8 + 24.042, abs=1e-12)
    # the default rounding: |f_eq| -> sqrt(f_eq^2 + (1e-3 N)^2) - 1e-3 N
    rounded = jf.LoadDependent(inner, 0.01)
    n_eff = 1.0 + 0.01 * (np.sqrt(50.0**2 + 1e-6) - 1e-3)
    assert float(rounded(0.1, -50.0, 1.0)) == pytest.approx(-(20.14 * n_eff + 16.671), abs=1e-12)
    assert float(jf.smooth_abs(0.0, 0.0)) == 0.0 and float(jax.grad(jf.smooth_abs)(0.0, 0.0)) == 0.0
    # stick: the static limit grows with the load; the contact slips once |f_eq| > mu_s N / (1 - mu_s c)
    quinn = jf.LoadDependent(jf.Quinn(0.5, 0.02), 0.4, rounding=0.0)  # threshold 0.5 / 0.8 = 0.625
    assert float(quinn(0.0, 0.62, 1.0)) == pytest.approx(0.62, abs=1e-15)
    assert float(quinn(0.0, 0.7, 1.0)) == pytest.approx(0.5 * (1 + 0.4 * 0.7), abs=1e-15)
    locked = jf.LoadDependent(jf.Quinn(0.5, 0.02), 2.0)  # mu c = 1: self-locking
    assert float(locked(0.0, 1e4, 1.0)) == pytest.approx(1e4, rel=1e-12)
    # gradients finite at zero load with the exact |.|
    g = jax.grad(lambda c, f: jf.LoadDependent(jf.Quinn(0.5, 0.02), c, rounding=0.0)(0.0, f, 1.0), argnums=(0, 1))
    assert all(np.isfinite(float(x)) for x in g(0.3, 0.0))


def test_load_dependent_breakaway_in_simulation():
    """A body under a constant force F sticks while F < mu N / (1 - mu c) and otherwise accelerates at
    (F - mu (N + c F)) / m: simulated with the wrapper in an Oscillator."""
    mu, c, mass = 0.5, 0.4, 2.0
    law = jf.LoadDependent(jf.Quinn(mu, 1e-4), c, rounding=0.0)
    threshold = mu / (1 - mu * c)  # 0.625 N at N = 1
    for force, moves in ((0.6, False), (0.9, True)):
        system = jf.Oscillator(law=law, force=jf.Constant(force), mass=mass, stiffness=0.0)
        traj = jf.simulate(system, jnp.array([0.0, 0.0]), 0.0, 2.0, 1e-4, save_every=1000)
        v_end = float(traj.ys[-1, 1])
        if moves:
            accel = (force - mu * (1 + c * force)) / mass
            assert v_end == pytest.approx(accel * 2.0, rel=1e-3)  # minus the band's transient, O(eps)
        else:
            assert abs(v_end) < 1e-12 and force < threshold


@pytest.mark.slow  # 20 s of CPU (forward-mode derivatives of a run in 19 parameters); the laws' own derivatives
def test_system_contract_with_both_laws():  # are checked by check_law above
    """An oscillator with a load-dependent asymmetric Stribeck law: status 0, the energy balance to 1e-6, finite
    derivatives of the final state with respect to every parameter (law.law.mu_c_pos, ..., law.coefficient)."""
    law = jf.LoadDependent(jf.AsymmetricFriction(**STRIBECK), 0.2)
    report = check_system(jf.Oscillator(law=law, force=jf.Harmonic(0.8, 0.5), damping=0.05), t1=2.0, dt=1e-3)
    assert "finite parameter derivatives" in report.checks


EMPS_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "emps" / "DATA_EMPS.mat"


@pytest.mark.skipif(not EMPS_DATA.exists(), reason="EMPS data not in ../shared/data/emps")
def test_emps_inverse_model_residual_with_the_published_direction_dependent_values():
    """On the measured EMPS estimation record, the friction force M q'' - gtau vir (positions low-passed at 20 Hz,
    4th-order Butterworth forward-backward, central differences) against the law at the published values: the
    direction-dependent model explains it to 5.33 N RMS, better than the published symmetric model with its offset
    (5.48 N), while the same law with its directions swapped leaves 8.79 N. A sign convention that read the
    benchmark's Fc+/Fc- the wrong way round would swap these."""
    from scipy.io import loadmat
    from scipy.signal import butter, filtfilt

    data = loadmat(EMPS_DATA)
    t, q, vir = (np.ravel(data[k]) for k in ("t", "qm", "vir"))
    gtau, dt = float(np.ravel(data["gtau"])[0]), float(np.median(np.diff(t)))
    b, a = butter(4, 20.0 / 500.0)
    v = np.gradient(filtfilt(b, a, q), dt)
    acc = np.gradient(v, dt)
    tau = filtfilt(b, a, gtau * vir)
    measured = 95.1089 * acc - tau  # friction force on the body (N)

    def rms(law, offset=0.0):
        model = np.asarray(law(jnp.asarray(v), jnp.asarray(-tau), 1.0)) - offset
        return float(np.sqrt(np.mean((measured - model) ** 2)))

    law = jf.AsymmetricFriction(**EMPS, eps=1e-3)
    symmetric = jf.AsymmetricFriction(20.3935, 20.3935, 203.5034, 203.5034, eps=1e-3)
    assert rms(law) == pytest.approx(5.333, abs=5e-3)
    assert rms(law) < rms(symmetric, offset=-3.1648) < 5.5
    assert rms(law.mirrored()) > 8.5
