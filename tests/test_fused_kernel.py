"""The fused Pallas kernel (FusedKernel) against the XLA path, on CPU in Pallas' interpret mode.

The oscillator, belt, disc and chain templates give the XLA path's observables, forward-mode
gradients and status codes to round-off, and every kernel lowers for an NVIDIA GPU through
Triton (no GPU needed); AutoKernel's choice on GPUs, branches as Triton selects, reductions
over nothing. The laws and contract systems through the kernel are in ``test_executors.py``
(executor ``fused``).
"""

import logging
import types

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from test_contracts import SYSTEMS

import jaxfriction as jf
from jaxfriction._lanes.componentwise import Componentwise, Unsupported, traced_cells
from jaxfriction._lanes.traced import LaneProgram
from jaxfriction.testing import check_fused

SHORT = {"t1": 0.6, "window": 0.3, "dt": 0.01}


# slow: the default sweep test below runs the oscillator template over the same paths with a
# gradient, and the peak-slip test lowers a Quinn oscillator for Triton; the other templates'
# systems are in the compiled loop's contract-system checks too
@pytest.mark.slow
@pytest.mark.parametrize("name", ["oscillator", "belt", "disc", "chain"])
def test_templates(name):
    """The templates' own systems and settings, shortened, over two swept paths and gradients."""
    tpl = jf.template(name, **({"n": 4} if name == "chain" else {}))
    paths = list(tpl.grid)[:2]
    grid = {p: np.linspace(*(float(x) for x in tpl.grid[p].split(":")[:2]), 3) if isinstance(tpl.grid[p], str)
            else np.asarray(tpl.grid[p])[:3] for p in paths}
    check_fused(tpl, grid, wrt=tuple(tpl.wrt), t1=40 * tpl.dt, window=20 * tpl.dt)


def test_the_default_sweep_with_transient_and_cycles():
    """Quinn's oscillator template as ``jaxfriction sweep`` runs it (cycles, transient, D and dD/dmu)."""
    tpl = jf.template("oscillator")
    grid = {"law.mu": [0.2, 0.7, 1.2], "force.amplitude": [0.5, 2.0]}
    xla, fused = check_fused(tpl, grid, cycles=2, wrt=("law.mu",), lower=False)
    assert fused.attrs["kernel"] == "fused" and xla.attrs["kernel"] == "vmap"
    assert np.all(fused["status"] == 0)
    # round-off apart (the XLA path runs transient and window in one loop, the kernel in two):
    # 1e-12 relative where the lane slips, round-off itself (1e-18 .. 1e-20) where it sticks
    np.testing.assert_allclose(fused["dissipation"], xla["dissipation"], rtol=1e-12, atol=1e-15)


def test_bad_and_unstable_lanes_get_the_same_status():
    """A negative mu (invalid parameter) and an eps far below the step (RK4 unstable in the
    stick band) are flagged as on the XLA path, with NaN values for the invalid lane."""
    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 0.5))
    xla, fused = check_fused(system, {"law.mu": [-0.5, 0.5], "law.eps": [0.02, 1e-4]}, wrt=("law.mu",),
                             t1=1.0, window=0.5, dt=0.01, lower=False)
    status = fused["status"].values
    assert status[0, 0] == jf.STATUS_INVALID_PARAMETER and status[1, 1] == jf.STATUS_UNSTABLE_STEP
    assert status[1, 0] == jf.STATUS_OK and np.isnan(fused["dissipation"].values[0, 0])


def test_peak_slip_gradient_and_observable_subsets():
    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(1.5, 1.0))
    observables = {"peak": jf.peak_slip, "D": jf.window_dissipation}
    check_fused(system, {"force.amplitude": [1.0, 2.0]}, observables=observables, wrt=("law.mu", "force.amplitude"),
                gradient_of=("peak", "D"), t1=2.0, window=1.0, dt=0.01)  # lowered too: the unread books are left out


def test_auto_picks_the_xla_path_off_gpus_and_cpus_and_says_why():
    tpu = [types.SimpleNamespace(platform="tpu")]
    lane = jf.plan_sweep(jf.template("oscillator"), {"law.mu": [0.5]}, cycles=1).lane
    _, name, reason = jf.AutoKernel().program(lane, ["law.mu"], tpu)
    assert name == "vmap" and "tpu" in reason


def test_unsupported_sweeps_name_the_reason():
    tpl = jf.template("oscillator")
    grid = {"law.mu": [0.5]}
    cases = [({"observables": {"x": lambda traj: traj.position[-1]}}, "observables"),
             ({"wrt": ("law.mu",), "gradient": "reverse"}, "ReverseMode"),
             ({"solver": jf.MoreauJean()}, "MoreauJean")]
    for options, words in cases:
        with pytest.raises(ValueError, match=f"kernel: .*{words}"):
            jf.sweep(tpl, grid, cycles=1, progress=False, kernel="fused", **options)
    with pytest.raises(ValueError, match="kernel: .*component-wise.*"):
        jf.sweep(SYSTEMS["two-blocks"][0], {"law.mu[0]": [0.5]}, t1=0.1, dt=0.01, kernel="fused", progress=False)
    record = jf.GroundMotion(jnp.sin(jnp.linspace(0.0, 6.0, 50))[:, None] * jnp.array([[1.0, 0.5]]), dt=0.02)
    with pytest.raises(ValueError, match="kernel: .*component-wise.*index"):  # the record is looked up at t
        jf.sweep(jf.BlockOnShakingFloor(law=jf.VectorQuinn(0.3, 0.01), ground=record), {"law.mu": [0.3]},
                 t1=0.1, dt=1e-3, kernel="fused", progress=False)
    with pytest.raises(ValueError, match="kernel must be"):
        jf.sweep(tpl, grid, cycles=1, kernel="triton")
    with pytest.raises(ValueError, match="block must be a power of two"):
        jf.FusedKernel(block=100)


def test_auto_falls_back_on_a_gpu_with_a_logged_warning(caplog):
    """On a GPU, AutoKernel takes the fused kernel when it can and logs why it cannot."""
    gpu = [types.SimpleNamespace(platform="gpu")]
    ok = jf.plan_sweep(jf.template("oscillator"), {"law.mu": [0.5]}, cycles=1).lane
    assert jf.AutoKernel().program(ok, ["law.mu"], gpu, dry=True)[1] == "fused"
    custom = jf.plan_sweep(jf.template("oscillator"), {"law.mu": [0.5]}, cycles=1,
                           observables={"x": lambda traj: traj.position[-1]}).lane
    with caplog.at_level(logging.WARNING, logger="jaxfriction"):
        _, name, reason = jf.AutoKernel().program(custom, ["law.mu"], gpu)
    assert name == "vmap" and "observables" in reason and "falls back" in caplog.text
    # the n = 32 chain's step (4,311 operations per lane) did not compile in 230 s on an H200
    chain = jf.template("chain", n=32)
    path = next(iter(chain.grid))
    big = jf.plan_sweep(chain, {path: [0.3]}, cycles=1).lane
    _, name, reason = jf.AutoKernel().program(big, [path], gpu, dry=True)
    assert name == "vmap" and "operations per lane" in reason and "kernel='fused' forces it" in reason


def test_componentwise_evaluation_folds_constants_and_refuses_state_dependent_indices():
    def field(y, k):
        return jnp.stack([y[1], -k * y[0] - 2.0 * 0.5 * y[1]])  # 2.0 * 0.5 is folded at trace time

    cw = Componentwise(field, jnp.zeros(2), jnp.zeros(()))
    y = traced_cells([jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])], (2,))
    out = cw(y, np.asarray(2.0))
    np.testing.assert_allclose(np.stack([np.asarray(c) for c in out]), [[3.0, 4.0], [-5.0, -8.0]])
    with pytest.raises(Unsupported, match="index"):
        Componentwise(lambda y: y[(y[0] > 0).astype(jnp.int32)], jnp.zeros(3))(traced_cells([jnp.ones(2)] * 3, (3,)))


def test_a_shared_forcing_is_computed_once_per_block_a_swept_one_per_lane():
    """The forcing's sine depends on the time and omega only: shared by every lane unless omega is
    swept. Likewise 1 / (mu N) is a scalar of the block while mu is fixed, and one per-lane
    division per step once mu is swept (the same in all four stages, traced once)."""

    def per_lane_operations(grid):
        program = jf.plan_sweep(jf.template("oscillator"), grid, t1=1.0, window=0.5,
                                kernel=jf.FusedKernel(), observables={"D": jf.window_dissipation}).program
        return LaneProgram(program.lane).pieces(list(grid))[0].operations_per_step()

    shared = per_lane_operations({"force.amplitude": [1.0, 2.0]})
    swept = per_lane_operations({"force.omega": [0.5, 0.6]})
    assert "sin" not in shared and swept["sin"] == 3  # one per stage time: t, t + h/2 (stages 2, 3), t + h
    assert per_lane_operations({"law.mu": [0.5, 0.6]})["div"] == shared["div"] + 1


def test_a_sweep_begun_on_one_kernel_resumes_on_the_other(tmp_path):
    tpl = jf.template("oscillator")
    grid = {"law.mu": [0.3, 0.6, 0.9, 1.2]}
    options = {"cycles": 1, "wrt": ("law.mu",), "chunk_size": 2, "out_dir": tmp_path, "progress": False,
               "devices": jax.local_devices()[:1]}
    whole = jf.sweep(tpl, grid, kernel="vmap", **options)
    (tmp_path / "chunk_000001.npz").unlink()  # as if killed before the second chunk was saved
    resumed = jf.sweep(tpl, grid, kernel="fused", **options)
    assert (resumed.attrs["chunks_loaded"], resumed.attrs["chunks_computed"]) == (1, 1)
    for name in ("dissipation", "grad_dissipation", "stick_fraction"):
        np.testing.assert_allclose(resumed[name], whole[name], rtol=1e-12, atol=1e-15)


class _Branchy(jf.AbstractFrictionLaw):
    """A user's law written with lax.cond (two branches) or lax.switch (three) on the slip."""

    keeps_coulomb_structure = False
    mu: float = 0.3
    eps: float = 0.05
    branches: int = 2

    def __call__(self, v, f_eq, normal):
        limit = self.mu * normal + 0.0 * f_eq
        if self.branches == 2:
            return jax.lax.cond(v > 0, lambda v: -limit * jnp.tanh(v / self.eps), lambda v: -limit * v / self.eps, v)
        index = jnp.clip(jnp.floor(v / self.eps).astype(jnp.int32) + 1, 0, 2)
        return jax.lax.switch(index, [lambda v: limit + 0.0 * v, lambda v: -limit * v / self.eps,
                                      lambda v: -limit + 0.0 * v], v)

    def bound(self, v, normal):
        return self.mu * normal * jnp.maximum(1.0, jnp.abs(v) / self.eps)

    def static_limit(self, normal):
        return self.mu * normal

    def stick_band(self):
        return self.eps


class _Erf(_Branchy):
    def __call__(self, v, f_eq, normal):
        return -self.mu * normal * jax.scipy.special.erf(v / self.eps) + 0.0 * f_eq


@pytest.mark.parametrize("branches", [2, 3])
def test_branches_on_the_lane_state_become_valid_triton_selects(branches):
    """cond and switch on a per-lane value are evaluated as two-way selects on a boolean, which
    Triton verifies (a select on an integer index, or of three cases, it refuses)."""
    system = jf.Oscillator(law=_Branchy(branches=branches), force=jf.Harmonic(0.8, 2.0))
    check_fused(system, {"force.amplitude": [0.3, 1.5]}, wrt=("law.mu",), y0=jnp.array([0.1, 0.02]), **SHORT)


def test_an_operation_without_a_gpu_lowering_falls_back_on_a_gpu():
    """erf runs in interpret mode, but Triton has no lowering for it: on a GPU, AutoKernel takes
    the XLA path and says so; check_fused reports it."""
    system = jf.Oscillator(law=_Erf(), force=jf.Harmonic(0.8, 2.0))
    lane = jf.plan_sweep(system, {"force.amplitude": [1.0]}, **SHORT).lane
    _, name, reason = jf.AutoKernel().program(lane, ["force.amplitude"], [types.SimpleNamespace(platform="gpu")])
    assert name == "vmap" and "erf" in reason
    with pytest.raises(AssertionError, match="erf"):
        check_fused(system, {"force.amplitude": [0.5, 1.0]}, **SHORT)
    with pytest.raises(ValueError, match="interpret=False"):
        jf.sweep(system, {"force.amplitude": [1.0]}, kernel=jf.FusedKernel(interpret=False), progress=False, **SHORT)


def test_a_lane_that_blows_up_has_the_xla_paths_nan_peak_slip():
    system = jf.Oscillator(law=jf.Quinn(0.5, 0.02), force=jf.Harmonic(0.8, 0.5))
    options = {"wrt": ("law.mu",), "gradient_of": ("peak_slip", "dissipation"), "t1": 2.0, "dt": 0.01,
               "y0": jnp.array([0.3, 0.2]), "progress": False}
    grid = {"stiffness": [1.0, 2e6]}
    xla = jf.sweep(system, grid, kernel="vmap", **options)
    fused = jf.sweep(system, grid, kernel=jf.FusedKernel(block=8), **options)
    np.testing.assert_array_equal(fused["status"], xla["status"])
    assert xla["status"].values[1] == jf.STATUS_NONFINITE
    for name in ("peak_slip", "grad_peak_slip", "dissipation"):
        np.testing.assert_array_equal(np.isnan(fused[name].values), np.isnan(xla[name].values))
    np.testing.assert_allclose(fused["peak_slip"].values[0], xla["peak_slip"].values[0], rtol=1e-12)


def test_a_reduction_over_nothing_gives_its_identity():
    def field(y):
        return jnp.stack([jnp.sum(y[:0]), jax.lax.reduce_max(y[:0], (0,)), jnp.prod(y[:0])])

    out = Componentwise(field, jnp.zeros(2))(traced_cells([jnp.ones(2), jnp.ones(2)], (2,)))
    assert [float(np.asarray(c)) for c in out] == [0.0, -np.inf, 1.0]
