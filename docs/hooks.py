"""mkdocs hooks of the documentation build (registered under ``hooks:`` in mkdocs.yml).

mkdocs-gallery runs every example with ``sys.stdout`` and ``sys.stderr`` replaced by its
``_LoggingTee``. A library that makes a ``logging`` handler while an example runs binds the
handler to that tee; absl's handler (``absl.logging``, imported through optax by the fit
example) closes its stream in ``logging.shutdown`` at interpreter exit, and the tee has no
``close``: "Exception ignored in atexit callback ... '_LoggingTee' object has no attribute
'close'" after a successful build. Importing ``absl.logging`` here, when mkdocs loads its
configuration and before the gallery runs, binds absl's handler to the real ``stderr``.
"""

from __future__ import annotations

import logging
import sys

try:
    import absl.logging  # noqa: F401  (imported for its side effect: the handler's stream)
except ImportError:  # absl comes with optax; without it there is nothing to bind
    pass


def on_post_build(config, **kwargs):
    """After the build: point any logging handler still bound to a stream without ``close``
    (a gallery tee, from a library imported during an example) back to ``sys.__stderr__``,
    so that ``logging.shutdown`` at exit does not fail on it."""
    for ref in list(getattr(logging, "_handlerList", [])):
        handler = ref()
        stream = getattr(handler, "stream", None)
        if stream is not None and not hasattr(stream, "close"):
            handler.setStream(sys.__stderr__)
