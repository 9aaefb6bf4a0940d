"""The library's own laws and systems pass the public contract checks (jaxfriction.testing)."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction.testing import check_dynamic_law, check_law, check_system

LAWS = [jf.Coulomb(0.5), jf.StaticKineticCoulomb(0.6, 0.4), jf.ViscousCoulomb(0.5, 0.2), jf.Karnopp(0.6, 0.01, 0.4),
        jf.VelocityLimited(0.5, 0.02), jf.Quinn(0.5, 0.02), jf.StaticKineticQuinn(0.6, 0.4, 0.02),
        jf.Threlfall(0.5, 0.05, 0.1), jf.Awrejcewicz(0.5, 3.0, 0.02), jf.Stribeck(0.6, 0.4, 0.1, 2.0),
        jf.VectorCoulomb(0.3, 0.1), jf.VectorQuinn(0.3, 1e-3), jf.VectorThrelfall()]

_SEGALMAN = jf.SegalmanIwan(F_S=0.5, K_T=10.0, n_elements=16)
_ELEMENTS = _SEGALMAN.elements()
DYNAMIC_LAWS = [  # law, extra states (springs on their limits, bristles beyond steady state)
    (jf.LuGre(), [[1.5e-5], [-2e-5]]),
    (jf.LuGre(v_d=1e-3), [[1.5e-5], [-2e-5]]),
    (jf.Dahl(alpha=0.5), [[1e-3], [-1e-3]]),
    (jf.Dahl(alpha=2.0), [[1e-3], [-1e-3]]),
    (jf.BoucWen(n=1.0), [[0.5], [-0.5]]),
    (jf.BoucWen(n=2.5, gamma=-0.2), [[0.9], [-0.3]]),
    (jf.Iwan(jnp.array([1.0, 2.0]), jnp.array([0.1, 0.3])), [[0.1, 0.15], [-0.1, -0.15]]),
    (_SEGALMAN, [_ELEMENTS[1] / _ELEMENTS[0], -_ELEMENTS[1] / _ELEMENTS[0]]),
    (jf.MaxwellSlip(jnp.array([1e3, 3e2, 1e2]), jnp.array([0.5, 0.3, 0.2]), sigma2=0.4),
     [[7.5e-4, 1.5e-3, 3e-3], [-7.5e-4, -1.6e-3, -2e-3]]),  # springs on and beyond their limits
    (jf.RateState(), [[5.0], [-5.0]]),
    (jf.RateState(evolution="slip"), [[5.0], [-5.0]]),
    (jf.TwoStateRateState(evolution=("aging", "slip")), [[5.0, 3.0], [-5.0, 2.0]]),
]

SHAKE = jf.Harmonic(jnp.array([3.0, 2.0]), 6.0)
SYSTEMS = {  # system, energy tolerance (switch models and discontinuous springs are O(dt))
    "oscillator": (jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 0.5), damping=0.05), 1e-6),
    "belt": (jf.Oscillator(law=jf.StaticKineticQuinn(0.6, 0.4, 0.02), surface=jf.Constant(0.5)), 1e-6),
    "disc": (jf.disc_on_driving_disc(), 1e-6),
    "chain": (jf.BurridgeKnopoffChain(law=jf.Quinn(1.0, 0.05), n=4), 1e-6),
    "two-blocks": (jf.TwoBlocksOnBelt(law=jf.Quinn(jnp.array([0.5, 0.25]), 0.02)), 1e-6),
    "block": (jf.BlockOnShakingFloor(law=jf.VectorQuinn(0.3, 0.01), ground=SHAKE), 1e-6),
    # the spring acts through its elongation projected onto the friction disc (a kink that
    # keeps |f| <= mu N under RK4 overshoot): RK4's energy balance is first order there
    "griffin": (jf.GriffinSpringBlock(ground=SHAKE, k_t=4000.0), 1e-3),
    "leine": (jf.LeineSwitchDisc(), 1e-3),
    "lugre-oscillator": (jf.Oscillator(law=jf.LuGre(sigma0=200.0, sigma1=5.0, mu_c=0.3, mu_s=0.5, v_s=0.1),
                                       force=jf.Harmonic(0.8, 0.5)), 1e-6),
    "iwan-oscillator": (jf.Oscillator(law=jf.SegalmanIwan(F_S=0.5, K_T=10.0, n_elements=8),
                                      force=jf.Harmonic(0.8, 0.5)), 1e-5),
    "jointed-oscillator": (jf.jointed_oscillator(jf.SegalmanIwan(F_S=0.5, K_T=10.0, n_elements=8, smoothing=0.1),
                                                 force_amplitude=0.8, damping=0.05), 1e-5),
    "rate-state-slider": (jf.Oscillator(law=jf.RateState(a=0.01, b=0.015, D_c=0.01, mu_0=0.3, V_0=1.0),
                                        surface=jf.Constant(1.0)), 1e-6),
    # mu_0 / a = 5 keeps the regularized law's slope at zero slip (the run starts at rest) in RK4's reach
    "rate-state-spring-slider": (jf.SpringSlider(law=jf.RateState(a=0.01, b=0.015, D_c=0.01, mu_0=0.05, V_0=1.0,
                                                                   evolution="slip"),
                                                 load=jf.Step(1.0, 2.0, 1.0, 0.05), stiffness=2.0), 1e-6),
    "jointed-bar": (jf.jointed_bar(n_contacts=3, n_modes=2, force_amplitude=0.3, damping_ratio=0.02), 1e-5),
    "quinn-spring-slider": (jf.SpringSlider(law=jf.Quinn(0.3, 0.02), load=jf.Constant(0.5)), 1e-6),
}


@pytest.mark.parametrize("law", LAWS, ids=lambda law: type(law).__name__)
def test_every_law_passes(law):
    check_law(law)


def test_a_false_slope_bounded_claim_is_caught():
    """A law whose secant exceeds its slope at zero slip (Stribeck's jump: slope 0 there)
    fails ``check_law`` when it declares ``slope_bounded``; Quinn's claim holds."""

    class Claims(jf.Stribeck):
        slope_bounded = True

    with pytest.raises(AssertionError, match="slope bounded"):
        check_law(Claims())
    assert "slope bounded" in str(check_law(jf.Quinn(0.4, 1e-3)))


def test_a_wrong_slip_update_is_caught():
    """A return map that forgets the sliders' limits (the springs load on without bound)
    disagrees with the integrated state equation; the Iwan model's own passes."""

    class Unbounded(jf.Iwan):
        def slip_update(self, z, slip, normal):
            return z + jnp.asarray(slip)[..., None]

    k, phi = jnp.array([2.0, 1.0]), jnp.array([0.2, 0.3])
    with pytest.raises(AssertionError, match="slip_update"):
        check_dynamic_law(Unbounded(k, phi))
    assert "interval update" in str(check_dynamic_law(jf.Iwan(k, phi)))


def test_a_viscous_force_that_is_not_the_forces_rest_is_caught():
    """``viscous_force`` is ``force + sum d stored / dz``: marched RK4 books its power by the
    quadrature (the springs' by the march). Jenkins elements declare zeros, Maxwell-slip its
    ``-sigma2 v`` (checked against the definition); a law that claims a viscous part it does
    not have fails its contract."""

    class Claims(jf.Iwan):
        def viscous_force(self, v, z, normal):
            return -0.1 * jnp.asarray(v) + 0.0 * z[..., 0]

    k, phi = jnp.array([2.0, 1.0]), jnp.array([0.2, 0.3])
    with pytest.raises(AssertionError, match="viscous_force"):
        check_dynamic_law(Claims(k, phi))
    viscous = jf.MaxwellSlip(k, phi, C=2.0, mu_c=0.2, mu_s=0.3, v_s=0.3, sigma2=0.2)
    assert "viscous force" in str(check_dynamic_law(viscous)) and "viscous force" in str(check_dynamic_law(jf.Iwan(k, phi)))
    np.testing.assert_allclose(viscous.viscous_force(jnp.array([0.5, -2.0]), jnp.zeros((2, 2)), 1.0), [-0.1, 0.4])


@pytest.mark.parametrize("law, states", DYNAMIC_LAWS, ids=lambda x: type(x).__name__ if not isinstance(x, list) else "")
def test_every_dynamic_law_passes(law, states):
    check_dynamic_law(law, states=states, speeds=(1e-6, 1e-3, 1.0))


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_system_passes(name):
    system, energy_rtol = SYSTEMS[name]
    check_system(system, t1=2.0, dt=1e-3, energy_rtol=energy_rtol)


def test_the_checks_catch_broken_code():
    class Leaky(jf.Quinn):  # slips harder than its bound says
        def __call__(self, v, f_eq, normal):
            return 1.5 * jf.quinn(v, f_eq, normal, self.mu, self.eps)

    with pytest.raises(AssertionError, match="bound"):
        check_law(Leaky(0.5, 0.02))

    class NoBalance(jf.Quinn):  # forgets the force balance at zero slip
        def __call__(self, v, f_eq, normal):
            return jf.quinn(v, 0.0 * f_eq, normal, self.mu, self.eps)

    with pytest.raises(AssertionError, match="force balance at zero slip"):
        check_law(NoBalance(0.5, 0.02))

    class Kinked(jf.Quinn):  # sqrt(|v|): infinite slope at zero slip
        def __call__(self, v, f_eq, normal):
            return -self.mu * normal * jnp.sign(v) * jnp.sqrt(jnp.abs(v)) + 0.0 * f_eq

    with pytest.raises(AssertionError, match="non-finite derivative"):
        check_law(Kinked(0.5, 0.02))

    class Unbounded(jf.Dahl):  # its derivative in v is infinite at zero slip
        def state_rate(self, v, z, normal):
            return (jnp.sqrt(jnp.abs(v)) + 0.0 * z[..., 0])[..., None]

    with pytest.raises(AssertionError, match="non-finite derivative with respect to v or z"):
        check_dynamic_law(Unbounded())

    class Creator(jf.Oscillator):  # its work integral misses the drive's power
        def rates(self, t, y):
            return super().rates(t, y)._replace(input_power=0.0)

    with pytest.raises(AssertionError, match="energy balance"):
        check_system(Creator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 0.5)), t1=2.0)

    class RootViscous(jf.Quinn):  # a viscous term sqrt(mu - 0.5) v: infinite derivative in mu at 0.5
        def __call__(self, v, f_eq, normal):
            return jf.quinn(v, f_eq, normal, self.mu, self.eps) - jnp.sqrt(self.mu - 0.5) * v

    with pytest.raises(AssertionError, match=r"non-finite derivative of the final state with respect to law\.mu"):
        check_system(jf.Oscillator(law=RootViscous(0.5, 0.02), force=jf.Harmonic(0.8, 0.5)), t1=0.5)
