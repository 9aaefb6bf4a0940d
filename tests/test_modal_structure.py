"""The reduced-order jointed structure (issue 37, item 6): closed forms and an independent
time stepping written here, not by jaxfriction."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxfriction as jf  # noqa: E402


def march_numpy(system, periods, steps_per_period):
    """The bar's modal equations with Jenkins contacts, stepped from rest by an independent
    second-order scheme (Verlet positions, trapezoidal velocities with a predicted velocity in
    the damper) and each contact's exact return map along the step's slip ``Phi dq``; returns
    the modal coordinates over the last period ``(steps_per_period, m)`` and which elements
    reached their slip limit in it."""
    w, zeta = np.asarray(system.frequencies), np.asarray(system.damping_ratios)
    phi, b = np.asarray(system.contact_modes), np.asarray(system.force_modes)
    k, limit = np.asarray(system.law.stiffness), np.asarray(system.law.slip_force / system.law.stiffness)
    amplitude, omega = float(system.force.amplitude), float(system.force.omega)
    dt = 2 * np.pi / omega / steps_per_period

    def acceleration(t, q, v, z):
        return -w**2 * q - 2 * zeta * w * v + b * amplitude * np.sin(omega * t) - phi.T @ np.sum(k * z, axis=1)

    q, v, z = np.zeros_like(w), np.zeros_like(w), np.zeros_like(k)
    a = acceleration(0.0, q, v, z)
    last, slid = np.empty((steps_per_period, len(w))), np.zeros(k.shape, bool)
    start = (periods - 1) * steps_per_period
    for n in range(periods * steps_per_period):
        dq = dt * v + 0.5 * dt * dt * a
        q = q + dq
        z = np.clip(z + (phi @ dq)[:, None], -limit, limit)
        t = (n + 1) * dt
        a_next = acceleration(t, q, v + dt * a, z)
        v = v + 0.5 * dt * (a + a_next)
        a = a_next
        if n >= start:
            last[n - start] = q
            slid |= np.abs(z) >= limit * (1 - 1e-12)
    return last, slid


def test_bar_modes_are_the_clamped_free_bar():
    """``omega_k = (2k - 1) pi / 2``, unit modal mass (``int_0^1 phi^2 dx = 1``), zero at the
    clamp and extremal at the free end."""
    omega, phi = jf.bar_modes(3, np.linspace(0.0, 1.0, 20001))
    np.testing.assert_allclose(omega, [np.pi / 2, 3 * np.pi / 2, 5 * np.pi / 2])
    np.testing.assert_allclose(np.trapezoid(phi**2, dx=1 / 20000, axis=0), 1.0, rtol=1e-8)
    np.testing.assert_allclose(phi[0], 0.0, atol=1e-15)
    np.testing.assert_allclose(np.abs(phi[-1]), np.sqrt(2.0))


def test_stuck_joint_is_the_linear_closed_form():
    """Below the first contact's slip limit the joint is a set of springs: the steady state
    is the linear response ``(K + Phi^T K_t Phi - omega^2 + i omega C)^-1 b F``, and the
    natural frequencies are :meth:`~jaxfriction.ModalStructure.stuck_frequencies`. The bar, the
    harmonics and the samples of the microslip test below (their floats enter the programs as
    arrays): the compiled transient, solve and measure serve both (measured: amplitudes 2e-15
    off, the multipliers 2.3e-9)."""
    system = jf.jointed_bar(n_contacts=10, n_modes=3, force_amplitude=1e-3, omega=2.0)
    hb = jf.harmonic_balance(system, harmonics=8, estimate=False)
    w, phi = np.asarray(system.frequencies), np.asarray(system.contact_modes)
    k_t = np.sum(np.asarray(system.law.stiffness), axis=1)
    stiffness = np.diag(w**2) + phi.T @ (k_t[:, None] * phi)
    dynamic = stiffness - 2.0**2 * np.eye(3) + 2.0j * np.diag(2 * np.asarray(system.damping_ratios) * w)
    response = np.linalg.solve(dynamic, np.asarray(system.force_modes) * 1e-3)
    assert hb.internal == "marched" and hb.converged
    np.testing.assert_allclose(hb.amplitude, np.abs(response), rtol=1e-9)
    np.testing.assert_allclose(system.stuck_frequencies(), np.sqrt(np.linalg.eigvalsh(stiffness)), rtol=1e-12)
    assert hb.dissipation == pytest.approx(0.0, abs=1e-12)  # no element slides
    # the period map that clips the elements' states: the linear system's multipliers exp(lambda T)
    # and one multiplier 1 per element (a stuck element's offset is free)
    state = np.block([[np.zeros((3, 3)), np.eye(3)], [-stiffness, -np.diag(2 * np.asarray(system.damping_ratios) * w)]])
    exact = np.exp(np.linalg.eigvals(state) * 2 * np.pi / 2.0)
    mu = hb.multipliers[np.argsort(np.abs(hb.multipliers - 1.0))]
    np.testing.assert_allclose(np.abs(mu[:10]), 1.0, atol=1e-9)
    np.testing.assert_allclose(np.sort(np.abs(mu[10:])), np.sort(np.abs(exact)), rtol=1e-8)
    assert hb.stable


def test_microslip_curve_against_independent_time_stepping():
    """Seven of ten contacts slide every cycle (the slip front halfway into the lap):
    harmonic balance converges to the steady state of the independent time stepping above
    as the harmonics grow, to 1e-5 of the response at 32 harmonics."""
    system = jf.jointed_bar(n_contacts=10, n_modes=3, damping_ratio=0.05, force_amplitude=0.1, omega=2.0)
    last, slid = march_numpy(system, periods=40, steps_per_period=2000)
    reference = 0.5 * (last.max(axis=0) - last.min(axis=0))
    assert 3 <= np.sum(slid) <= 8  # microslip: some contacts slide, not all
    errors, guess = [], None
    for harmonics in (8, 32):  # measured 2.1e-4 and 1.2e-6 (3.0e-5 at 16 harmonics)
        # 32 harmonics from the 8-harmonic solution: no second transient to compile
        hb = jf.harmonic_balance(system, harmonics=harmonics, guess=guess, estimate=False)
        assert hb.converged
        errors.append(np.max(np.abs(hb.amplitude - reference)) / reference[0])
        guess = hb.coefficients
    assert errors[1] < 1e-5 < errors[0]


def test_backbone_leaves_the_stuck_frequency_towards_the_free_bar():
    """The first nonlinear mode (EPMC): below the first slip every contact sticks, so the
    frequency is the stuck joint's and the damping zero (closed form: the stuck linear mode
    first loads a contact to its slip force at the modal amplitude ``A_slip``); above it the
    slip front enters the lap, the frequency falls towards the free bar's ``pi / 2`` and the
    friction damping rises (it falls again in macroslip, where the dissipation grows like the
    amplitude and the energy like its square). The test asserted a falling frequency at 0.05
    once, below the first slip, where the two stuck frequencies differ by round-off only."""
    system = jf.jointed_bar(n_contacts=10, n_modes=3, damping_ratio=0.0)
    phi, k_t = np.asarray(system.contact_modes), np.asarray(system.law.stiffness).ravel()
    _, modes = np.linalg.eigh(np.diag(np.asarray(system.frequencies) ** 2) + phi.T @ (k_t[:, None] * phi))
    mode = modes[:, 0] / modes[0, 0]  # unit first modal coordinate, as nonlinear_mode's amplitude
    a_slip = np.min(np.asarray(system.law.slip_force).ravel() / np.abs(k_t * (phi @ mode)))
    assert a_slip == pytest.approx(0.07542, rel=1e-4)
    amplitudes = np.array([1e-3, 0.98 * a_slip, 1.02 * a_slip, 0.1, 0.2])
    backbone = jf.nonlinear_mode(system, amplitudes, harmonics=8)
    frequency, damping = backbone["frequency"].values, backbone["damping_ratio"].values
    stuck = system.stuck_frequencies()[0]
    np.testing.assert_allclose(frequency[:2], stuck, rtol=1e-9)
    np.testing.assert_allclose(damping[:2], 0.0, atol=1e-9)
    assert stuck - 1e-6 > frequency[2] > frequency[3] > frequency[4] > np.pi / 2
    assert 1e-6 < damping[2] < damping[3] < damping[4]


@pytest.mark.parametrize("changes, name", [
    ({"lap": 1.5}, "lap"), ({"n_contacts": 0}, "n_contacts"), ({"law": "coulomb"}, "law"),
    ({"stiffness": -1.0}, "stiffness"), ({"damping_ratio": float("nan")}, "damping_ratio"),
])
def test_jointed_bar_refuses_bad_input(changes, name):
    with pytest.raises(ValueError, match=name):
        jf.jointed_bar(**changes)


def test_modal_structure_refuses_mismatched_shapes():
    system = jf.jointed_bar(n_contacts=4, n_modes=2)
    with pytest.raises(ValueError, match="contact_modes"):
        jf.ModalStructure(law=system.law, frequencies=system.frequencies, damping_ratios=system.damping_ratios,
                          contact_modes=system.contact_modes[:, :1], force_modes=system.force_modes,
                          normal=system.normal)
    with pytest.raises(ValueError, match="law: a static law"):  # 4 Coulomb contacts on 2 modes
        jf.ModalStructure(law=jf.Quinn(0.3, 0.01), frequencies=system.frequencies,
                          damping_ratios=system.damping_ratios, contact_modes=system.contact_modes,
                          force_modes=system.force_modes, normal=system.normal)
    with pytest.raises(ValueError, match="frequencies"):
        jf.ModalStructure(law=system.law, frequencies=-system.frequencies, damping_ratios=system.damping_ratios,
                          contact_modes=system.contact_modes, force_modes=system.force_modes, normal=system.normal)


def _jenkins_describing_function(k0, k, phi, a):
    """The first-harmonic (describing-function) backbone of ``x'' + k0 x + f_J = 0`` with a
    Jenkins element (stiffness ``k``, slip force ``phi``), written here from Caughey 1960:
    ``omega^2 = k0 + k_eq(a)``, ``k_eq = (k / pi)(beta - sin(2 beta) / 2)``, ``cos(beta) = 1 -
    2 phi / (k a)``, and the damping ratio from the dissipation ``D = 4 phi (a - phi / k)`` per
    cycle balanced by the extended periodic motion concept's ``xi pi omega a^2``."""
    beta = np.arccos(1 - 2 * phi / (k * a))
    omega = np.sqrt(k0 + k / np.pi * (beta - np.sin(2 * beta) / 2))
    dissipation = 4 * phi * (a - phi / k)
    return omega, dissipation / (2 * np.pi * omega**2 * a**2)


def test_fit_backbone_recovers_jenkins_parameters_from_the_describing_function():
    """A measured backbone made by the closed form above (not by jaxfriction), fitted from a
    guess 30 % off: with one harmonic the model is the describing function, so the truth comes
    back to the AFT sampling's aliasing; the standard errors are finite and small, and a box
    that excludes the truth puts the estimate at its edge with a FitWarning. The slip force is
    boxed in every fit (a wide box around the truth in the first two: the same estimates to
    5e-11 as the unboxed fit, 20 steps either way), the stiffness free: both transforms in one
    compiled program, which the three fits share."""
    a = np.geomspace(0.15, 2.0, 6)
    f_data, z_data = _jenkins_describing_function(1.0, 1.0, 0.1, a)
    system = jf.Oscillator(law=jf.Iwan(np.array([0.7]), np.array([0.13])), stiffness=1.0)
    guess, wide = {"law.stiffness[0]": 0.7, "law.slip_force[0]": 0.13}, {"law.slip_force[0]": (0.05, 0.2)}
    fit = jf.fit_backbone(system, guess, a, frequency=f_data, damping_ratio=z_data, harmonics=1, samples=128,
                          bounds=wide)
    assert fit.converged, fit.summary()
    assert fit.params["law.stiffness[0]"] == pytest.approx(1.0, rel=1e-3)
    assert fit.params["law.slip_force[0]"] == pytest.approx(0.1, rel=1e-3)
    assert all(0 < e < 1e-2 for e in fit.stderr.values())
    np.testing.assert_allclose(fit.frequency, f_data, rtol=1e-4)
    assert "converged" in fit.summary()
    from jaxfriction._workflows.harmonic.backbone_fit import _fit

    compiled = _fit._cached._cache_size()
    # another guess on the same oscillator with another (fixed) base stiffness: the same program
    stiffer = jf.set_parameters(system, {"stiffness": 1.05})
    other = jf.fit_backbone(stiffer, {"law.stiffness[0]": 0.8, "law.slip_force[0]": 0.12}, a, frequency=f_data,
                            damping_ratio=z_data, harmonics=1, samples=128, bounds=wide, warn=False)
    assert np.all(np.isfinite(list(other.params.values()))) and _fit._cached._cache_size() == compiled
    with pytest.warns(jf.FitWarning, match="bound"):  # another box (arrays): the same program
        boxed = jf.fit_backbone(system, guess, a, frequency=f_data, damping_ratio=z_data, harmonics=1, samples=128,
                                bounds={"law.slip_force[0]": (0.11, 0.2)})
    assert boxed.bound_edges == {"law.slip_force[0]": "lower"} and "AT LOWER BOUND" in boxed.summary()
    assert not boxed.converged and _fit._cached._cache_size() == compiled


def test_fit_backbone_refuses_bad_input():
    system = jf.Oscillator(law=jf.Iwan(np.array([1.0]), np.array([0.1])), stiffness=1.0)
    a = np.array([0.2, 0.4])
    for kwargs, name in (({"guess": {}}, "guess"), ({"guess": {"law.nope": 1.0}}, "guess"),
                         ({"frequency": None}, "frequency"), ({"frequency": [1.0]}, "frequency"),
                         ({"amplitudes": [0.4, 0.2]}, "amplitudes"), ({"noise": (1.0,)}, "noise"),
                         ({"bounds": {"law.stiffness[0]": (2.0, 3.0)}}, "bounds")):
        args = {"guess": {"law.stiffness[0]": 1.0}, "amplitudes": a, "frequency": [1.2, 1.1]} | kwargs
        with pytest.raises(ValueError, match=name):
            jf.fit_backbone(system, args.pop("guess"), args.pop("amplitudes"), **args)


def test_stuck_frequencies_of_any_joint_law_with_a_closed_form_update():
    """A Segalman joint on every contact stiffens the modes by its ``K_T`` (closed form), and a
    Maxwell-slip joint (rate-dependent, marched by ``interval_update``) by the sum of its
    element stiffnesses; a law with no closed-form update (LuGre) is refused, naming ``law``."""
    shapes = np.array([[1.0, 0.5], [0.8, -0.2], [0.3, 1.0]])
    kwargs = {"frequencies": [1.0, 3.0], "damping_ratios": [0.0, 0.0], "contact_modes": shapes,
              "force_modes": [1.0, 1.0], "normal": np.ones(3)}
    joint = jf.ModalStructure(law=jf.SegalmanIwan(F_S=0.1, K_T=2.0, n_elements=8), **kwargs)
    exact = np.sqrt(np.linalg.eigvalsh(np.diag([1.0, 9.0]) + 2.0 * shapes.T @ shapes))
    np.testing.assert_allclose(joint.stuck_frequencies(), exact, rtol=1e-12)
    gms = jf.MaxwellSlip(jnp.array([1.5, 0.5]), jnp.array([0.6, 0.4]), mu_c=0.1, mu_s=0.15, v_s=1e-2)
    np.testing.assert_allclose(jf.ModalStructure(law=gms, **kwargs).stuck_frequencies(), exact, rtol=1e-12)
    with pytest.raises(ValueError, match="law"):
        jf.ModalStructure(law=jf.LuGre(), **kwargs).stuck_frequencies()
