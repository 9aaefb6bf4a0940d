"""The XLA option that ``import jaxfriction`` sets (``jaxfriction._xla_flags``)."""

import os
import subprocess
import sys

import pytest

from jaxfriction._xla_flags import LOOP_KERNEL_BYTES, OPT_IN, OPTION, with_loop_kernels

ENTRY = f"{OPTION}={LOOP_KERNEL_BYTES}"


@pytest.mark.parametrize("flags, expected", [
    ("", f"--xla_backend_extra_options={ENTRY}"),
    ("--xla_force_host_platform_device_count=2",
     f"--xla_force_host_platform_device_count=2 --xla_backend_extra_options={ENTRY}"),
    ("--xla_backend_extra_options=xla_cpu_enable_fast_math=false",
     f"--xla_backend_extra_options=xla_cpu_enable_fast_math=false,{ENTRY}"),
    (f"--xla_backend_extra_options={OPTION}=0", f"--xla_backend_extra_options={OPTION}=0"),  # the user's own
])
def test_flag_is_merged_into_existing_flags(flags, expected):
    assert with_loop_kernels(flags) == expected


def _flags_after_import(code: str, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", OPT_IN)} | env
    out = subprocess.run([sys.executable, "-c", code + "\nimport os; print(repr(os.environ.get('XLA_FLAGS')))"],
                         env=environ, capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_opt_in_sets_the_option_before_jax_starts():
    code = "import jax\njax.config.update('jax_enable_x64', True)\nimport jaxfriction\nimport jax.numpy as jnp; jnp.ones(2)"
    assert ENTRY in _flags_after_import(code, **{OPT_IN: "1"})


def test_default_and_started_backends_leave_xla_flags_alone():
    assert _flags_after_import("import jaxfriction") == "None"  # opt-in only
    # JAX's backends already started: the variable is read no more, so it is not touched
    assert _flags_after_import("import jax.numpy as jnp\njnp.ones(1)\nimport jaxfriction", **{OPT_IN: "1"}) == "None"


def test_westermo_udwadia_finishes_its_steps_under_loop_kernels():
    # the loop kernels contract t + h into a fused multiply-add in some copies of the step's end
    # and not in others; the solver once compared a phase's end with such a copy and flagged
    # every other step of paper 003's floor block as failed after t = 1 (status 2)
    code = """
import math, jax
jax.config.update('jax_enable_x64', True)
import jax.numpy as jnp, jaxfriction as jf
block = jf.Oscillator(law=jf.Coulomb(0.3), force=jf.Harmonic(-4.0, 2 * math.pi), stiffness=0.0, normal=9.81)
traj = jf.simulate(block, jnp.zeros(2), 0.0, 1.2, 1e-3, solver=jf.WestermoUdwadia(), save_every=100)
print(int(traj.status), float(jnp.max(jnp.abs(traj.velocity))))
"""
    environ = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", OPT_IN)} | {OPT_IN: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True)
    status, peak = out.stdout.split()
    assert int(status) == 0 and float(peak) > 0.15  # it slid in the first period, and finished every step
