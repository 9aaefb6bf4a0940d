"""The event-driven solver as a solver object of :func:`~jaxfriction.simulate` (diffrax loaded when used)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import equinox as eqx
import jax.numpy as jnp
from jax import Array

from .._checks import check_int, check_real
from .._integrate.solvers import AbstractSolver

if TYPE_CHECKING:
    from .._integrate.saveat import SaveAt
    from .._systems.base import AbstractFrictionSystem


class EventDriven(AbstractSolver):
    """Exact Coulomb friction by event-driven regime switching (slip+, slip-, stick).

    A solver object for :func:`~jaxfriction.simulate`; see
    :func:`~jaxfriction.simulate_event_driven` (which also returns the event log) for the
    method, the differentiable event times and the options. Single-contact
    :class:`~jaxfriction.Oscillator` systems with ``Coulomb`` or ``StaticKineticCoulomb``
    friction. Saves at ``SaveAt(ts=...)`` or ``SaveAt(n=...)`` (default ``n=1000``); ``dt`` is
    not used (the step is adaptive, at most ``dtmax``).

    Args:
        max_events: event budget (static int >= 1).
        rtol: relative tolerance.
        atol: absolute tolerance.
        dtmax: largest step.
        max_steps: step budget.
        adjoint: a diffrax adjoint; ``diffrax.ForwardMode()`` for ``jax.jvp``.
    """

    max_events: int = eqx.field(default=256, static=True)
    rtol: float = 1e-12
    atol: float = 1e-12
    dtmax: float = 0.1
    max_steps: int = eqx.field(default=100_000, static=True)
    adjoint: object = None

    def __check_init__(self) -> None:
        check_int("max_events", self.max_events, minimum=1)
        check_int("max_steps", self.max_steps, minimum=1)
        for name in ("rtol", "atol", "dtmax"):
            check_real(name, getattr(self, name), positive=True)

    def steps_with_dt(self) -> bool:
        return False  # transitions located to round-off between steps the solver chooses

    def for_forward_mode(self) -> EventDriven:
        import diffrax

        return dataclasses.replace(self, adjoint=diffrax.ForwardMode())

    def integrate(self, system: AbstractFrictionSystem, y0: Array, t0: float, t1: float, dt: float,
                  saveat: SaveAt, args) -> tuple[Array, Array, Array]:
        del dt, args
        from .event_driven import simulate_event_driven

        if saveat.every is not None:
            raise ValueError("SaveAt(every=...) needs a fixed-step solver; use SaveAt(n=...) or SaveAt(ts=...)")
        ts = saveat.ts if saveat.ts is not None else jnp.linspace(t0, t1, (saveat.n or 1000) + 1)
        traj, _ = simulate_event_driven(system, y0, t0, t1, ts, max_events=self.max_events, rtol=self.rtol,  # type: ignore[arg-type]  # simulate_event_driven rejects other systems
                                        atol=self.atol, dtmax=self.dtmax, max_steps=self.max_steps,
                                        adjoint=self.adjoint)
        return traj.ts, traj.ys, traj.status
