"""The ``jaxfriction`` command: ``sweep`` (the main job), ``fit``, ``quake`` and ``reproduce``.

It only parses options and calls the library: templates, their defaults (steps, cycles,
``eps = 2 dt``) and every check live there.
"""

import sys

from ._cli import fit, quake, reproduce, sweep  # noqa: F401  (each registers its subcommand)
from ._cli.common import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
