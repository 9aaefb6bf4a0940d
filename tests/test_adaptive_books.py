"""Adaptive diffrax solvers leave the energy books out of the step-size control (issue 24)."""

import jax

jax.config.update("jax_enable_x64", True)

import diffrax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest

import jaxfriction as jf

RTOL, ATOL, T1 = 1e-8, 1e-10, 20.0

SYSTEMS = {
    "quinn": jf.Oscillator(law=jf.Quinn(1.0, 0.05), force=jf.Harmonic(1.5, 0.5)),
    # a dynamic law: its internal state z is dynamical and must stay in the norm
    "lugre": jf.Oscillator(law=jf.LuGre(sigma0=100.0, sigma1=10.0, sigma2=0.4, v_s=0.1), force=jf.Harmonic(2.0, 1.0)),
}


def plain_steps(system, n_keep, y0, controller):
    """A plain diffrax call of ``system``'s first ``n_keep`` state entries (the energy books
    dropped when ``n_keep = dynamical_size``), as a tuple of components: the layout in which
    jaxfriction hands small states to explicit solvers, so the arithmetic is the same."""

    def field(t, y, args):
        full = jnp.concatenate([jnp.stack(y), jnp.zeros(system.state_size - n_keep)])
        return tuple(system.vector_field(t, full, args)[:n_keep])

    sol = diffrax.diffeqsolve(diffrax.ODETerm(field), diffrax.Dopri5(), 0.0, T1, None, tuple(y0[:n_keep]),
                              saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, T1, 21)), stepsize_controller=controller,
                              max_steps=100_000)
    return int(sol.stats["num_accepted_steps"]), int(sol.stats["num_rejected_steps"]), jnp.stack(sol.ys, axis=-1)


@pytest.mark.parametrize("name", SYSTEMS)
def test_books_do_not_change_the_steps_and_the_balance_closes(name):
    system = SYSTEMS[name]
    y0 = system.as_state(jnp.array([0.5, 0.0]))
    solver = jf.Diffrax(diffrax.Dopri5(), rtol=RTOL, atol=ATOL)
    _, sol = solver.solution(system, y0, 0.0, T1, saveat=jf.SaveAt(n=20))
    n = system.dynamical_size
    accepted, rejected, ys = plain_steps(system, n, y0, diffrax.PIDController(rtol=RTOL, atol=ATOL))
    # the same steps as the equations without the books (hundreds of steps: quinn 284 + 101)
    assert (int(sol.stats["num_accepted_steps"]), int(sol.stats["num_rejected_steps"])) == (accepted, rejected)
    np.testing.assert_allclose(sol.ys[:, :n], ys, rtol=0, atol=1e-12)
    # The books are quadratures of the motion at the same stages, so their error is the
    # motion's: the balance closes to the order of rtol (measured 3.3e-9 quinn, 2.5e-10
    # lugre; 4.8e-9 and 3.5e-10 with the books in the norm, which takes 4-10% fewer steps
    # here: diffrax's RMS over 5 or 6 entries dilutes the dynamics' error).
    traj = jf.simulate(system, y0, 0.0, T1, solver=solver, saveat=jf.SaveAt(n=20))  # the same compiled solve
    assert int(traj.status) == jf.STATUS_OK
    assert float(jf.relative_energy_residual(traj)) < 10 * RTOL


def test_own_controller_is_used_as_given():
    system = SYSTEMS["quinn"]
    y0 = system.as_state(jnp.array([0.5, 0.0]))
    default = jf.Diffrax(diffrax.Dopri5(), rtol=RTOL, atol=ATOL).solution(system, y0, 0.0, T1, saveat=jf.SaveAt(n=20))[1]

    # diffrax's default norm: the books are back in the control, exactly as in a plain call of the full state
    own = diffrax.PIDController(rtol=RTOL, atol=ATOL)
    sol = jf.Diffrax(diffrax.Dopri5(), stepsize_controller=own).solution(system, y0, 0.0, T1, saveat=jf.SaveAt(n=20))[1]
    accepted, rejected, ys = plain_steps(system, system.state_size, y0, own)
    assert (int(sol.stats["num_accepted_steps"]), int(sol.stats["num_rejected_steps"])) == (accepted, rejected)
    np.testing.assert_allclose(sol.ys, ys, rtol=0, atol=1e-12)

    # with the library's norm it is the default controller
    keep_out = diffrax.PIDController(rtol=RTOL, atol=ATOL, norm=jf.dynamics_rms_norm)
    sol = jf.Diffrax(diffrax.Dopri5(), stepsize_controller=keep_out).solution(system, y0, 0.0, T1,
                                                                               saveat=jf.SaveAt(n=20))[1]
    assert sol.stats["num_accepted_steps"] == default.stats["num_accepted_steps"]
    np.testing.assert_array_equal(sol.ys, default.ys)

    # its other options hold too: a step cap of 0.05 takes at least T1 / 0.05 steps
    capped = diffrax.PIDController(rtol=RTOL, atol=ATOL, dtmax=0.05, norm=jf.dynamics_rms_norm)
    traj = jf.simulate(system, y0, 0.0, T1, solver=jf.Diffrax(diffrax.Dopri5(), stepsize_controller=capped),
                       saveat=jf.SaveAt(n=20))
    assert int(traj.status) == jf.STATUS_OK
    np.testing.assert_allclose(traj.ys, default.ys, atol=1e-6)


def test_dynamics_rms_norm_and_layout():
    e = jnp.array([3.0, 4.0, 1e6, -1e6, 1e6])  # the books (last three) never count
    assert float(jf.dynamics_rms_norm(e)) == pytest.approx(float(optx.rms_norm(e[:2])), rel=1e-15)
    assert float(jf.dynamics_rms_norm(tuple(e))) == pytest.approx(float(optx.rms_norm(e[:2])), rel=1e-15)
    assert float(jax.grad(jf.dynamics_rms_norm)(jnp.zeros(5))[0]) == 0.0  # finite at 0, as diffrax's norm
    with pytest.raises(ValueError, match="more than 3 entries"):
        jf.dynamics_rms_norm(jnp.zeros(3))
    with pytest.raises(ValueError, match="flat or as a tuple"):
        jf.dynamics_rms_norm(jnp.zeros((2, 5)))
    assert SYSTEMS["quinn"].dynamical_size == 2 and SYSTEMS["lugre"].dynamical_size == 3
    assert SYSTEMS["lugre"].state_size == SYSTEMS["lugre"].dynamical_size + 3


def test_bad_controller():
    with pytest.raises(ValueError, match="step-size controller"):
        jf.Diffrax(diffrax.Dopri5(), stepsize_controller="pid")
    with pytest.raises(ValueError, match="needs an adaptive solver"):
        jf.Diffrax(jf.ClassicRK4(), stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-6))


def test_implicit_solvers_converge_newton_on_the_whole_state():
    # With the default controller the step control leaves the books out, but the Newton
    # iterations keep them: out of Newton's norm the books carry the last iteration's change
    # times the powers' sensitivity (stiff LuGre, rtol 1e-8: energy residual 1.6e-6 against
    # 2.6e-8, for 9% fewer steps; scripts/benchmarks/bench_adaptive.py --implicit). No solve here: the
    # solver handed to diffrax is checked.
    from jaxfriction._integrate.diffrax_solvers import newton_on_whole_state

    finder = newton_on_whole_state(diffrax.Kvaerno5(), 1e-7, 1e-9).root_finder
    assert (finder.rtol, finder.atol, finder.norm) == (1e-7, 1e-9, optx.rms_norm)
    own = diffrax.Kvaerno5(root_finder=diffrax.VeryChord(rtol=1e-5, atol=1e-6, norm=jf.dynamics_rms_norm))
    assert newton_on_whole_state(own, 1e-7, 1e-9) is own  # tolerances given to the root finder are kept
    explicit = diffrax.Dopri5()
    assert newton_on_whole_state(explicit, 1e-7, 1e-9) is explicit
