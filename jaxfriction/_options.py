"""Options are small objects, with strings as shortcuts (``"forward"``, ``"fused"``, ...)."""

from __future__ import annotations

from typing import Any


def as_option(value, base, shortcuts: dict, argument: str) -> Any:
    """``value`` if it is a ``base`` instance, else the default object its shortcut names.

    Args:
        value: an option object or a shortcut string.
        base: the option family's abstract class.
        shortcuts: dict string -> option class (built with its defaults).
        argument: the argument's name, for the error message.

    Raises:
        ValueError: naming ``argument``, the choices and the value, for anything else.
    """
    if isinstance(value, base):
        return value
    if isinstance(value, str) and value in shortcuts:
        return shortcuts[value]()
    objects = ", ".join(f"{cls.__name__}()" for cls in shortcuts.values())
    raise ValueError(f"{argument} must be {objects} or one of {sorted(shortcuts)}, got {value!r}")
