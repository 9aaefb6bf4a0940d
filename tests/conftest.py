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
