# Enable float64 before any test module imports jaxfriction: pytest imports conftest.py first, and
# module-level constants of the library (e.g. Threlfall's 1 - e^-3) take the precision that is
# active when the library is imported. Test modules flip the flag too, but only when they are
# collected, which may be after another test module has already imported jaxfriction.
import os

import jax
import pytest

jax.config.update("jax_enable_x64", True)

# the command line keeps JAX's persistent compilation cache in the user's cache folder: tests
# that run it (in this process or in subprocesses, which inherit this) leave it alone; the
# cache's own tests point it at a temporary folder
os.environ["JAXFRICTION_NO_CACHE"] = "1"


def pytest_runtest_teardown(item):
    """With ``JAXFRICTION_TEST_RSS=<file>``, append each test's name and its process's peak
    resident memory so far (MB) to the file: where a worker's memory grows."""
    path = os.environ.get("JAXFRICTION_TEST_RSS")
    if path:
        import resource

        with open(path, "a") as fh:
            fh.write(f"{os.getpid()} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} {item.nodeid}\n")



@pytest.fixture(autouse=True, scope="module")
def _free_compiled_programs():
    """Drop JAX's compiled programs after each test module: a worker kept every program of every
    module it ran (6.4 GB resident at the end of the fast suite); programs are rarely shared
    between modules, so the suite's time is unchanged (measured on five modules: 2.4 GB
    instead of 3.9 GB, 98 s instead of 105 s)."""
    yield
    jax.clear_caches()
