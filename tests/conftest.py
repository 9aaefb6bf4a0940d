# Enable float64 before any test module imports jaxfriction: pytest imports conftest.py first, and
# module-level constants of the library (e.g. Threlfall's 1 - e^-3) take the precision that is
# active when the library is imported. Test modules flip the flag too, but only when they are
# collected, which may be after another test module has already imported jaxfriction.
import atexit
import os
import shutil
import tempfile

import jax
import pytest

jax.config.update("jax_enable_x64", True)

# One compilation cache per test process for the whole run, shared with the subprocesses it
# starts (they inherit the environment): JAX's persistent cache with every program stored, and
# the compiled loop's numba programs. A program compiled by one test module is then read back by
# a later module (each module drops the in-memory programs: _free_compiled_programs) or by a
# command-line subprocess. One folder per xdist worker: JAX writes its entries without a lock,
# and a worker could read the other's half-written file. The folders live in one temporary folder
# that the first process (the controller under xdist) makes and removes when it ends; the user's
# own cache folder is never touched. The cache's own tests point it at their temporary folders.
if "JAXFRICTION_TEST_CACHE" not in os.environ:
    os.environ["JAXFRICTION_TEST_CACHE"] = tempfile.mkdtemp(prefix="jaxfriction-tests-")
    atexit.register(shutil.rmtree, os.environ["JAXFRICTION_TEST_CACHE"], ignore_errors=True)
_RUN_CACHE = os.path.join(os.environ["JAXFRICTION_TEST_CACHE"], os.environ.get("PYTEST_XDIST_WORKER", "main"))
os.environ["JAXFRICTION_CACHE_DIR"] = os.environ["JAX_COMPILATION_CACHE_DIR"] = _RUN_CACHE
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
os.environ.pop("JAXFRICTION_NO_CACHE", None)
jax.config.update("jax_compilation_cache_dir", _RUN_CACHE)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
_CACHE_ENV = ("JAXFRICTION_CACHE_DIR", "JAXFRICTION_NO_CACHE", "JAX_COMPILATION_CACHE_DIR",
              "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS")
_CACHE_CONFIG = ("jax_enable_compilation_cache", "jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")


@pytest.fixture(autouse=True)
def _restore_the_run_cache():
    """The command line run in this process (click's test runner) points the caches where its
    options say (``--cache-dir``, ``--no-cache``, an unusable folder), and what it sets outlives
    the test: put the run's shared cache back after each test."""
    env = {name: os.environ.get(name) for name in _CACHE_ENV}
    config = {name: getattr(jax.config, name) for name in _CACHE_CONFIG}
    yield
    for name, value in env.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    for name, value in config.items():
        if getattr(jax.config, name) != value:
            jax.config.update(name, value)


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
