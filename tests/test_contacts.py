import math

import equinox as eqx
import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest

import jaxfriction as jf
from jaxfriction._reproduce import quinn_fig11

OMEGA = 0.5
T = 2 * math.pi / OMEGA


def test_coupled_force_balance_matches_direct_solves():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3))
    d = a @ a.T + 3 * np.eye(3)
    b = rng.normal(size=3)
    slide = rng.normal(size=3)
    balance = jax.jit(jf.coupled_force_balance)  # one program for both calls, not one per operation
    # all sticking: z'' = D f + b = 0
    f = balance(jnp.asarray(d), jnp.asarray(b), jnp.asarray(slide), jnp.array([True, True, True]))
    np.testing.assert_allclose(f, -np.linalg.solve(d, b), rtol=1e-12)
    # contact 1 slips: the others balance with f_1 at its sliding value
    stick = np.array([True, False, True])
    f = balance(jnp.asarray(d), jnp.asarray(b), jnp.asarray(slide), jnp.asarray(stick))
    s = np.ix_(stick, stick)
    direct = -np.linalg.solve(d[s], b[stick] + d[stick][:, ~stick] @ slide[~stick])
    np.testing.assert_allclose(f[stick], direct, rtol=1e-12)
    own = -(b[1] + d[1, 0] * direct[0] + d[1, 2] * direct[1]) / d[1, 1]
    np.testing.assert_allclose(f[1], own, rtol=1e-12)


#: a system's force balance compiled as one program for every case below (op by op, each
#: operation compiled a program of its own)
_f_eq = eqx.filter_jit(lambda system, t, y: system.f_eq(t, y))


@pytest.mark.parametrize("stick", [(True, True), (True, False), (False, True)])
def test_two_blocks_force_balance_is_quinns_sec_3_3(stick):
    # Quinn: f1_eq = (u'' + x1) + f2 and f2_eq = (f1 + kappa x2 - x1) / 2, with f2 (f1) the
    # other contact's actual force: its f_eq when it sticks too, its sliding value otherwise.
    eps = 0.05
    system = jf.TwoBlocksOnBelt(law=jf.Quinn(jnp.array([0.5, 0.25]), eps))
    t, x1, x2 = 0.9, 0.3, -0.2
    ud, udd = math.cos(0.5 * t) * 0.5, -0.25 * math.sin(0.5 * t)
    z = [0.0 if stick[0] else 0.3, 0.0 if stick[1] else -0.4]  # slip velocities
    v1 = ud + z[0]
    y = jnp.array([x1, x2, v1, v1 + z[1], 0.0, 0.0, 0.0])
    f_eq = np.asarray(_f_eq(system, t, y))
    c1, c2 = udd + x1, 2.0 * x2 - x1
    if all(stick):
        # both rows at once: f1 = c1 + f2, f2 = (f1 + c2) / 2
        f2 = (c1 + c2) / (2 - 1)
        np.testing.assert_allclose(f_eq, [c1 + f2, f2], rtol=1e-12)
    elif stick[0]:
        f2 = -0.25 * np.sign(z[1])
        np.testing.assert_allclose(f_eq[0], c1 + f2, rtol=1e-12)
    else:
        f1 = -0.5 * np.sign(z[0])
        np.testing.assert_allclose(f_eq[1], (f1 + c2) / 2, rtol=1e-12)


def test_chain_rows_are_quinns_printed_equations():
    n, alpha, t = 7, 0.3, 0.7
    chain = jf.BurridgeKnopoffChain(law=jf.Coulomb(0.0), n=n, alpha=alpha, omega=OMEGA)
    q = np.random.default_rng(1).normal(size=n)
    # the field compiled as one program (op by op, each operation compiled its own); the rest in NumPy
    field = eqx.filter_jit(lambda c, y: c.vector_field(t, y))
    acc = np.asarray(field(chain, jnp.asarray(np.concatenate([q, np.zeros(n + 3)]))))[n : 2 * n]
    g = alpha * math.sin(OMEGA * t)
    printed = n * (-n * (np.asarray(chain.stiffness_rows()) @ q) - np.eye(n)[0] * g)
    np.testing.assert_allclose(acc, printed, atol=1e-12)
    np.testing.assert_allclose(chain.stiffness_rows()[-1, -2:], [-4 / 3, 4.0])


def test_chain_boundary_row_is_second_order_fixed_end():
    # lowest frequency of (1/n) u'' + n K u = 0 tends to the fixed-free rod's pi/2 at order 2
    errors = []
    for n in (8, 16, 32, 64):
        k = np.asarray(jf.BurridgeKnopoffChain(law=jf.Coulomb(), n=n).stiffness_rows()) * n * n
        errors.append(abs(np.sqrt(np.min(np.linalg.eigvals(k).real)) - math.pi / 2))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8) and errors[-1] < 1e-4


def chain_d(law, dt, n=32, alpha=0.25, exact=False):
    per = math.ceil(T / dt)
    system = jf.BurridgeKnopoffChain(law=law, n=n, alpha=alpha, omega=OMEGA)
    traj = jf.simulate(system, jnp.zeros(2 * n), 0.0, 4 * T, T / per, save_every=per,
                       solver=jf.MoreauJean() if exact else None)
    return jf.dissipation_per_cycle(traj, T, 4)[-1], traj


def test_chain_d0_against_moreau_jean_and_paper():
    d_mj, traj = chain_d(jf.Coulomb(1.0), 1e-3, exact=True)
    d_quinn, traj_q = chain_d(jf.Quinn(1.0, 10 * OMEGA * 0.01), 0.01)
    assert round(float(d_mj), 4) == 0.0105  # Quinn 2004: D0 = 0.0105
    assert abs(float(d_quinn / d_mj) - 1) < 5e-3  # Quinn's law at dt = 0.01 (paper: still accurate)
    d_classical, _ = chain_d(jf.Coulomb(1.0), 0.01)
    assert float(d_classical / d_mj) > 2  # the classical law is far off at dt = 0.01
    assert float(jnp.max(jnp.abs(traj_q.velocity[:, -1]))) == 0.0  # far end sticks: D = Quinn's D
    assert float(jf.relative_energy_residual(traj)) < 1e-3  # Moreau-Jean: first-order energy error


def test_energy_balance_of_both_systems():
    chain = jf.BurridgeKnopoffChain(law=jf.Quinn(1.0, 10 * OMEGA * 1e-3), n=16, alpha=0.5)
    traj = jf.simulate(chain, jnp.zeros(32), 0.0, 2 * T, 1e-3, save_every=100)
    assert float(traj.friction_dissipation[-1]) > 0.01
    assert float(jf.relative_energy_residual(traj)) < 1e-8
    blocks = jf.TwoBlocksOnBelt(law=jf.Quinn(jnp.array([0.5, 0.25]), 2e-3))
    traj = jf.simulate(blocks, jnp.zeros(4), 0.0, 40.0, 1e-3, save_every=100)
    assert float(traj.friction_dissipation[-1]) > 1.0
    # the coupled f_eq switches when a contact crosses its band: a little more than 1e-8
    assert float(jf.relative_energy_residual(traj)) < 1e-7


def test_two_blocks_quinn_matches_moreau_jean():
    numbers, _ = quinn_fig11(dt=2e-3, t1=25.0)
    assert max(numbers["max_deviation_x"]) < 3e-3
    np.testing.assert_allclose(numbers["stick_fraction_quinn"], numbers["stick_fraction_moreau_jean"], atol=0.02)
    assert min(numbers["stick_fraction_moreau_jean"]) > 0.2


def test_gradients_of_chain_dissipation():
    def d(params):
        alpha, mu = params
        system = jf.BurridgeKnopoffChain(law=jf.Quinn(mu, 0.05), n=8, alpha=alpha, omega=OMEGA)
        traj = jf.simulate(system, jnp.zeros(16), 0.0, T, 0.01, save_every=None)
        return traj.friction_dissipation[-1]

    p = jnp.array([0.5, 1.0])
    grad = jax.grad(d)(p)
    h = 1e-6
    fd = [(d(p.at[i].add(h)) - d(p.at[i].add(-h))) / (2 * h) for i in range(2)]
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def test_large_chain_vmapped_over_loads():
    def run(alpha):
        system = jf.BurridgeKnopoffChain(law=jf.Quinn(1.0, 0.05), n=1024, alpha=alpha)
        return jf.simulate(system, jnp.zeros(2048), 0.0, 0.5, 0.01, save_every=None).ys[-1]

    ys = jax.jit(jax.vmap(run))(jnp.array([0.2, 0.8]))
    assert ys.shape == (2, 2051) and np.all(np.isfinite(ys))
    assert float(jnp.abs(ys[1, 0])) > float(jnp.abs(ys[0, 0])) > 0


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: jf.BurridgeKnopoffChain(law=jf.Quinn(), n=1), "n must"),
        (lambda: jf.BurridgeKnopoffChain(law=jf.Quinn(), n=4.0), "n must"),
        (lambda: jf.BurridgeKnopoffChain(law=jf.Quinn(jnp.ones(3)), n=4), "law parameters"),
        (lambda: jf.TwoBlocksOnBelt(law=jf.Quinn(jnp.array([0.5, 0.2, 0.1]))), "law parameters"),
        (lambda: jf.TwoBlocksOnBelt(law=jf.Quinn(), kappa=-1.0), "kappa"),
        (lambda: jf.BurridgeKnopoffChain(law=jf.Quinn(), n=4, alpha=float("nan")), "alpha"),
    ],
)
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.slow  # moved out of the fast default (suite time); the chain's D: the Moreau-Jean checks
def test_quinn_chain_dissipation_weights_the_last_block_like_the_others():
    # the physical dissipation weights the last block by its normal force (3/4 of the others');
    # Quinn's D weights all blocks alike: the two agree while the last block sticks
    def run(alpha):
        chain = jf.BurridgeKnopoffChain(law=jf.Quinn(1.0, 0.05), n=4, alpha=alpha, omega=OMEGA)
        traj = jf.simulate(chain, jnp.zeros(8), 0.0, 2 * T, T / 2000, save_every=1)
        physical = jf.dissipation_per_cycle(traj, T, 2)
        quadrature = jf.dissipation_per_cycle(traj, T, 2, weights=jnp.ones(4))
        quinn = jf.dissipation_per_cycle(traj, T, 2, weights=chain.quinn_weights())
        last = jf.dissipation_per_cycle(traj, T, 2, weights=jnp.array([0.0, 0.0, 0.0, 1.0]))
        np.testing.assert_allclose(quadrature, physical, rtol=1e-5)  # the trapezoid rule, O(h^2): 1.1e-6
        np.testing.assert_allclose(quinn, quadrature + last / 3, rtol=1e-10)
        return physical, last

    physical, last = run(0.5)
    assert float(physical[-1]) > 0.05 and float(jnp.max(jnp.abs(last))) == 0.0  # the last block sticks: D agree
    physical, last = run(3.0)
    assert float(last[-1]) > 0.03 * float(physical[-1])  # it slips (4.6 %): Quinn's D is larger by last / 3
    with pytest.raises(ValueError, match="weights must have shape"):
        jf.dissipation_per_cycle(jf.simulate(jf.BurridgeKnopoffChain(law=jf.Quinn(), n=4), jnp.zeros(8), 0.0, 1.0, 0.01),
                                 0.5, weights=jnp.ones(3))
