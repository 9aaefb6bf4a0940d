"""A template named on the command line or in a file: a key of :data:`TEMPLATES`, or a
user's own as ``package.module:attribute`` or ``path/to/file.py:attribute``."""

from __future__ import annotations

from .._systems.base import AbstractFrictionSystem
from .base import Template
from .builtin import TEMPLATES, template


def load_template(spec, *, dt=None, law=None) -> Template:
    """The template named by ``spec``: a key of :data:`TEMPLATES`, or a user's own as
    ``package.module:attribute`` or ``path/to/file.py:attribute``.

    The attribute may be a :class:`Template`, a function returning one (called with ``dt``
    and ``law`` where it accepts them), or a bare system (then ``dt`` is required and the
    run length comes from the caller). ``dt`` replaces the template's step; ``law`` selects
    a named law of a library template.

    Raises:
        ValueError: naming ``system`` (unknown name, module or attribute, or not a
            template), ``law`` (a law for a template that takes none) or ``dt``.
    """
    import importlib
    import importlib.util
    import inspect
    import sys
    from pathlib import Path

    options = {k: v for k, v in (("dt", dt), ("law", law)) if v is not None}
    if spec in TEMPLATES:
        return template(spec, **options)
    module_name, sep, attr = str(spec).rpartition(":")
    if not sep or not module_name or not attr:
        import difflib

        close = difflib.get_close_matches(str(spec), list(TEMPLATES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"system must be one of {sorted(TEMPLATES)} or module:attribute of your own, got "
                         f"{spec!r}{hint}")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            # a name of its own, so that a user's file never shadows an installed module
            loader = importlib.util.spec_from_file_location(f"jaxfriction_user_{path.stem}", path)
            if loader is None or not path.is_file():
                raise ImportError(f"no file {path}")
            module = importlib.util.module_from_spec(loader)
            # registered while it runs: dataclasses (equinox modules) with ``from __future__ import
            # annotations`` look their module up in sys.modules to resolve the annotations
            sys.modules[loader.name] = module
            try:
                loader.loader.exec_module(module)  # type: ignore[union-attr]
            except BaseException:
                sys.modules.pop(loader.name, None)
                raise
        else:
            module = importlib.import_module(module_name)
        obj = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"system {spec!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while it was loaded
        raise ValueError(f"system {spec!r}: loading {module_name} raised {type(exc).__name__}: {exc}") from None
    if callable(obj) and not isinstance(obj, (Template, AbstractFrictionSystem)):
        try:
            accepted = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            raise ValueError(f"system {spec!r}: {attr} is not a Template, a system or a function returning one "
                             f"(got {type(obj).__name__} {obj!r})") from None
        unknown = [k for k in options if k not in accepted]
        if "law" in unknown:
            raise ValueError(f"law: {spec} takes no law argument")
        given = {k: v for k, v in options.items() if k in accepted}
        needed = [name for name, p in accepted.items() if p.default is p.empty and name not in given
                  and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if needed:
            raise ValueError(f"system {spec!r}: a template function is called with dt and law only, but {attr} "
                             f"needs {needed}")
        try:
            obj = obj(**given)
        except Exception as exc:  # noqa: BLE001 - the user's function failed
            raise ValueError(f"system {spec!r}: {attr}({', '.join(f'{k}={v!r}' for k, v in given.items())}) raised "
                             f"{type(exc).__name__}: {exc}") from None
        options = {k: v for k, v in options.items() if k in unknown}
    if isinstance(obj, AbstractFrictionSystem):
        if dt is None:
            raise ValueError(f"dt: {spec} is a bare system; give its step (--dt) and run length")
        obj = Template(obj, dt=dt)  # the caller gives the run length
    if not isinstance(obj, Template):
        raise ValueError(f"system {spec!r} must be a Template, a function returning one, or a system; got "
                         f"{type(obj).__name__}")
    if "law" in options:
        raise ValueError(f"law: {spec} takes no law argument")
    return obj.replace(dt=dt) if "dt" in options else obj
