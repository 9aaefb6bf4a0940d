"""What a record's channels are computed from: the system's own outputs or a user's functions.

A :class:`~jaxfriction.Measurement` channel names a quantity the model computes from
``(t, y)``: an internal variable or a quantity its law derives (``"mu"``, ``"psi"``,
``"theta"``), a force the system reports (``"friction_force"``, ``"f_eq"``,
``"slip_velocity"``; :meth:`~jaxfriction.AbstractFrictionSystem.output`), or a user's function
given to :func:`~jaxfriction.fit` / :func:`~jaxfriction.predict` as ``outputs={name: fn}``
with ``fn(system, t, y) -> scalar`` (a spring force, a controller force, a strain gauge).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def check_outputs(outputs) -> tuple:
    """``outputs`` (dict name -> function, or None) as a sorted tuple of pairs (ValueError
    naming ``outputs``)."""
    if outputs is None:
        return ()
    if not isinstance(outputs, dict) or not all(isinstance(k, str) and callable(f) for k, f in outputs.items()):
        raise ValueError(f"outputs must be a dict name -> function(system, t, y) returning a scalar, got {outputs!r}")
    return tuple(sorted(outputs.items()))


def channel_names(system, outputs: tuple) -> list[str]:
    """Every channel name a record may measure for ``system`` with the user ``outputs``."""
    return [name for name, _ in outputs] + system.output_names()


def check_channel(system, outputs: tuple, name: str) -> None:
    """Raise ValueError unless ``name`` is a channel of ``system`` (the message lists the
    accepted names and says how to declare an input column instead)."""
    if name in dict(outputs):
        return
    try:
        system.output(jnp.zeros((1,)), jnp.zeros((1, system.state_size)), name)
    except ValueError:
        raise ValueError(f"name must be one of {channel_names(system, outputs)} for {type(system).__name__} (a "
                         f"quantity it computes from (t, y); declare your own with outputs={{name: fn}}), or an "
                         f"input that drove the rig (Measurement(inputs={{path: samples}}), load_measurement(..., "
                         f"inputs={{{name!r}: 'force'}}), --input {name}=force), got {name!r}") from None


def channel_values(system, outputs: tuple, ts, ys, name: str):
    """The channel ``name`` at every saved point ``(n,)`` from times ``(n,)`` and states
    ``(n, state_size)``."""
    own = dict(outputs)
    if name in own:
        fn = own[name]
        return jax.vmap(lambda t, y: jnp.reshape(fn(system, t, y), ()))(ts, ys)
    return system.output(ts, ys, name)
