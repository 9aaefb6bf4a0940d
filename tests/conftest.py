# Enable float64 before any test module imports jaxfriction: pytest imports conftest.py first, and
# module-level constants of the library (e.g. Threlfall's 1 - e^-3) take the precision that is
# active when the library is imported. Test modules flip the flag too, but only when they are
# collected, which may be after another test module has already imported jaxfriction.
import os

import jax

jax.config.update("jax_enable_x64", True)

# the command line keeps JAX's persistent compilation cache in the user's cache folder: tests
# that run it (in this process or in subprocesses, which inherit this) leave it alone; the
# cache's own tests point it at a temporary folder
os.environ["JAXFRICTION_NO_CACHE"] = "1"


def pytest_configure(config):
    """The fast suite compiles far more than it runs: there XLA's CPU backend and numba compile
    without LLVM's optimization passes (about 20 % off the suite on the 2-core machine). Results
    change only at round-off (the contraction of ``a * b + c`` into one instruction), which the
    fast tests' tolerances hold; the slow set, with the how-to pages' printed numbers, runs at
    the defaults, as benchmarks, examples and users do. Set before JAX starts its backend
    (importing JAX starts nothing) and numba is imported (the compiled loop imports it when it
    first compiles); the workers and the CLI's subprocesses inherit both."""
    if config.option.markexpr != "not slow":
        return
    if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0").strip()
    os.environ.setdefault("NUMBA_OPT", "0")
