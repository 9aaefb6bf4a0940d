"""Every executor of the lane program against the XLA path, one matrix parametrized by executor.

The fused Pallas kernel (``fused``, in interpret mode off a GPU, and lowered for an NVIDIA
GPU through Triton), the compiled loop written one expression per component as
:class:`~jaxfriction.CompiledLoopKernel` chooses it (``compiled``) and written as loops over
each lane's arrays (``looped``, the form many contacts take) give the XLA path's
observables, forward-mode gradients and status codes to round-off
(:func:`jaxfriction.testing.check_fused`): every scalar law in the forced oscillator, every
vector law in the block on a shaking floor, the dynamic laws in the oscillator, the contract
systems, and float32. What is particular to one executor (its choice by AutoKernel, its
program's form, its cache) stays in that executor's own test module.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np
import pytest
from test_contracts import DYNAMIC_LAWS, LAWS, SHAKE, SYSTEMS

import jaxfriction as jf
from jaxfriction.testing import check_fused

SHORT = {"t1": 0.6, "window": 0.3, "dt": 0.01}

#: Per executor: the cases in the fast suite (the rest of its matrix is marked slow: interpret
#: mode traces and compiles each system, ~5-25 s apiece on one core; a numba program 3-15 s)
#: and the contract systems it does not run (the two-block belt's contact forces come from a
#: linear solve; the compiled loop's jointed oscillator, 16 elements with a tangent, is past
#: the line limit one expression per component; the reduced-order bar's dense contact
#: Jacobian reduces values shared by every lane, which the looped program refuses).
EXECUTORS = {
    "fused": {"fast": {"VectorQuinn"}, "skip": {"two-blocks"}},
    "compiled": {"fast": {"Quinn", "VectorQuinn", "LuGre"}, "skip": {"two-blocks", "jointed-oscillator"}},
    "looped": {"fast": {"block"}, "skip": {"two-blocks"}},
}


def _cases(items, name, executors=tuple(EXECUTORS), skip=lambda executor, x: False):
    return [pytest.param(executor, x, id=f"{executor}-{name(x)}",
                         marks=() if name(x) in EXECUTORS[executor]["fast"] else pytest.mark.slow)
            for executor in executors for x in items if not skip(executor, x)]


def _first_parameter(law):
    return "law." + jf.scalar_parameter_paths(law)[0]


def _name(law):
    return type(law).__name__


@pytest.mark.parametrize("executor,law", _cases([law for law in LAWS if not law.vector], _name))
def test_scalar_laws_in_the_oscillator(executor, law):
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.8, 2.0), damping=0.05)
    check_fused(system, {"force.amplitude": [0.3, 0.9, 1.5]}, kernel=executor, wrt=(_first_parameter(law),),
                y0=jnp.array([0.2, 0.0]), **SHORT)


@pytest.mark.parametrize("executor,law", _cases([law for law in LAWS if law.vector], _name, ("fused", "compiled")))
def test_vector_laws_in_the_block(executor, law):
    """In slip: exact Coulomb switches on ``|v| > 0``, a test that round-off can flip at rest."""
    system = jf.BlockOnShakingFloor(law=law, ground=SHAKE)
    check_fused(system, {"ground.omega": [4.0, 6.0]}, kernel=executor, wrt=(_first_parameter(law),), dt=5e-4,
                t1=0.06, window=0.03, y0=jnp.array([0.0, 0.0, 0.5, 0.3]))


@pytest.mark.parametrize("executor,law", _cases([law for law, _ in DYNAMIC_LAWS[:1] + DYNAMIC_LAWS[2:]], _name,
                                                ("fused", "compiled")))
def test_dynamic_laws_in_the_oscillator(executor, law):
    if executor == "compiled" and isinstance(law, jf.SegalmanIwan):
        # 16 elements emit 5,602 lines one expression per component: past MAX_SOURCE_LINES
        law = jf.SegalmanIwan(F_S=law.F_S, K_T=law.K_T, n_elements=8)
    system = jf.Oscillator(law=law, force=jf.Harmonic(0.8, 2.0))
    check_fused(system, {"force.amplitude": [0.4, 1.2]}, kernel=executor, wrt=("force.amplitude",), dt=1e-3,
                t1=0.2, window=0.1)


@pytest.mark.parametrize("executor,name", _cases(list(SYSTEMS), str,
                                                 skip=lambda executor, name: name in EXECUTORS[executor]["skip"]))
def test_contract_systems(executor, name):
    system = SYSTEMS[name][0]
    path = jf.scalar_parameter_paths(system)[0]
    value = float(jf.get_parameter(system, path))
    dt = 1e-3 if "block" in name or "griffin" in name or "iwan" in name or "jointed" in name else 0.01
    check_fused(system, {path: [value, 1.1 * value + 0.01]}, kernel=executor, wrt=(path,), dt=dt, t1=40 * dt,
                window=20 * dt, y0=jnp.concatenate([jnp.full(system.n_dof, 0.05), jnp.full(system.n_dof, 0.1)]))


@pytest.mark.parametrize("executor", ["fused", "compiled"])
def test_float32_agrees_with_the_xla_path(executor):
    with jax.enable_x64(False):
        xla, other = check_fused(jf.template("oscillator"), {"law.mu": [0.3, 0.9]}, kernel=executor, cycles=1,
                                 wrt=("law.mu",), rtol=1e-5, atol=1e-6)
        assert other["dissipation"].dtype == np.float32 and other.attrs["kernel"] == executor
