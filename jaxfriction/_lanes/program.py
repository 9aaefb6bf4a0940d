"""One lane of a sweep: what it computes, and its status, in one place.

A lane is the template system with the lane's values set at the swept paths
(``equinox.tree_at``), measured by a *measure* (:class:`Window`: run to ``t1`` and evaluate
the observables on the final window; :class:`ScalarObservable`: a user's scalar function of
the system) and differentiated with respect to ``wrt`` by a gradient mode. Every kernel (the
XLA path here, the fused Pallas kernel in :mod:`.fused`) returns exactly the dict that
:func:`lane_result` forms, so the status rules live here alone:

1. ``STATUS_INVALID_PARAMETER`` when a ``constraints()`` of the lane's system fails (its
   values are NaN, whatever they were);
2. the run's own status (non-finite state, solver failure, a step unstable for a stick band
   or an internal state; :mod:`jaxfriction._integrate.status`);
3. ``STATUS_NONFINITE_GRADIENT`` when a derivative is not finite.

The first non-OK code in that order wins (:func:`~jaxfriction._integrate.status.combine_status`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp

from .._checks import constraints_hold
from .._integrate.saveat import SaveAt
from .._integrate.simulate import simulate
from .._integrate.solvers import RK4, transient_step
from .._integrate.status import (
    STATUS_INVALID_PARAMETER,
    STATUS_NONFINITE,
    STATUS_NONFINITE_GRADIENT,
    STATUS_OK,
    combine_status,
)
from .._integrate.trajectory import Trajectory
from .._paths import get_parameter, set_parameters
from .._systems.base import AbstractFrictionSystem

#: a swept initial condition: ``"y0[i]"``, element ``i`` of the measure's initial state
_Y0_PATH = re.compile(r"^y0\[(\d+)\]$")


def initial_index(path: str) -> int | None:
    """``i`` for an initial-condition path ``"y0[i]"``, None for a parameter path."""
    m = _Y0_PATH.match(path) if isinstance(path, str) else None
    return int(m.group(1)) if m else None


def check_initial_paths(measure, paths, what: str = "grid") -> None:
    """Refuse ``"y0[i]"`` paths the measure cannot vary (a measure without ``y0``, an index
    out of its state), naming ``what``."""
    for path in paths:
        i = initial_index(path)
        if i is None:
            continue
        y0 = getattr(measure, "y0", None)
        if y0 is None:
            raise ValueError(f"{what}: {path!r} is an initial condition, but this sweep's measure has no y0")
        if i >= y0.shape[0]:
            raise ValueError(f"{what}: {path!r} is out of the initial state (size {y0.shape[0]}: positions, "
                             f"velocities, internal variables, integrals)")


def with_initial(measure, values: dict):
    """``measure`` with the ``"y0[i]"`` entries of ``values`` set in its ``y0``."""
    items = [(initial_index(p), v) for p, v in values.items()]
    items = [(i, v) for i, v in items if i is not None]
    if not items:
        return measure
    y0 = measure.y0
    for i, v in items:
        y0 = y0.at[i].set(jnp.asarray(v, dtype=y0.dtype))
    return eqx.tree_at(lambda m: m.y0, measure, y0)


def grads_of(names) -> set[str]:
    """Dataset names of the gradients of ``names`` (``grad_<name>``)."""
    return {f"grad_{k}" for k in names}


def lane_result(valid, status, outputs: dict, grads: dict) -> dict:
    """The dict one lane returns: ``outputs`` and ``grads`` (NaN where the parameters are
    invalid) and ``status`` (int8), assembled by the rules of the module docstring.

    Args:
        valid: boolean scalar, the lane's ``constraints_hold``.
        status: the run's status code (int scalar).
        outputs: name -> value of each observable.
        grads: ``grad_<name>`` -> derivatives (``(len(wrt), ...)``).
    """
    finite_grads = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in grads.values()])) if grads else True
    status = combine_status(jnp.where(valid, STATUS_OK, STATUS_INVALID_PARAMETER), status,
                            jnp.where(finite_grads, STATUS_OK, STATUS_NONFINITE_GRADIENT))
    nan = jnp.asarray(jnp.nan, dtype=jnp.result_type(float))
    values = {k: jnp.where(valid, v, nan) if jnp.issubdtype(v.dtype, jnp.floating) else v
              for k, v in {**outputs, **grads}.items()}
    return {**values, "status": status.astype(jnp.int8)}


class Window(eqx.Module):
    """Run a lane's system from ``y0`` to ``t_end``, save the window after ``t_measure`` and
    evaluate the observables on it (the measure of :func:`~jaxfriction.sweep`)."""

    y0: jax.Array
    solver: object
    saveat: SaveAt
    t_measure: float = eqx.field(static=True)
    t_end: float = eqx.field(static=True)
    dt: float | None = eqx.field(static=True)
    observables: tuple = eqx.field(static=True)  # ((name, ByCode(function of a Trajectory)), ...)

    def __call__(self, system, kind):
        """``(outputs, status)``. ``kind``: the gradient mode, None, ``"forward"`` or
        ``"reverse"``. Reverse mode runs an RK4 transient checkpointed (memory
        O(sqrt(steps))); forward mode runs diffrax-based solvers with
        ``diffrax.ForwardMode()`` (their default adjoint is reverse only)."""
        solver = self.solver.for_forward_mode() if kind == "forward" else self.solver
        if type(solver) is RK4 and not solver.checkpoint and kind != "reverse" and self.t_measure > 0:
            # the transient and the window in one loop: the RK4 step is compiled once
            status, ts, ys = solver.transient_and_window(system, self.y0, self.t_measure, self.t_end, self.dt,
                                                         self.saveat)
            win = Trajectory(ts=ts, ys=ys, system=system, status=status)
        else:
            transient = dataclasses.replace(solver, checkpoint=True) if kind == "reverse" and isinstance(solver, RK4) \
                else solver
            state, status = self.y0, STATUS_OK
            if self.t_measure > 0:
                # RK4's transient on the window's step where it is whole windows (as transient_and_window)
                dt = transient_step(self.t_measure, self.t_end, self.dt, self.saveat, solver.rounding) \
                    if isinstance(solver, RK4) else self.dt
                pre = simulate(system, self.y0, 0.0, self.t_measure, dt, solver=transient, saveat=SaveAt(n=1))
                state, status = pre.ys[-1], pre.status
            win = simulate(system, state, self.t_measure, self.t_end, self.dt, solver=solver, saveat=self.saveat)
            status = combine_status(status, win.status)
        return {name: jnp.asarray(fn(win)) for name, fn in self.observables}, status


class ScalarObservable(eqx.Module):
    """A scalar function of the lane's system (the measure of
    :func:`~jaxfriction.sensitivity_map`); a non-finite value is ``STATUS_NONFINITE``."""

    observable: object = eqx.field(static=True)

    def __call__(self, system, kind):
        value = jnp.asarray(self.observable(system))
        return {"value": value}, jnp.where(jnp.isfinite(value), STATUS_OK, STATUS_NONFINITE)


class Lane(eqx.Module):
    """One lane: the template system with the lane's values set, measured, differentiated.

    A callable pytree, ``lane(**point) -> dict`` (:func:`lane_result`): the system's arrays
    are arguments of the compiled program, the rest (paths, observables, times, solver
    options) part of its cache key, so a second sweep of the same structure reuses the
    compiled program.

    Fields: ``system`` (the template), ``measure`` (:class:`Window` or
    :class:`ScalarObservable`), ``wrt`` (paths differentiated), ``mode`` (the resolved
    gradient mode or None), ``gradient_of`` (the outputs differentiated) and ``derive``
    (None or ``derive(system) -> system``, applied after the values are set).
    """

    system: AbstractFrictionSystem
    measure: Window
    wrt: tuple = eqx.field(static=True)
    mode: object = eqx.field(static=True)
    gradient_of: tuple = eqx.field(static=True)
    derive: Callable[[AbstractFrictionSystem], AbstractFrictionSystem] | None = eqx.field(static=True)

    def lane_system(self, values: dict) -> AbstractFrictionSystem:
        """The template with ``values`` (path -> value) set and ``derive`` applied (initial
        conditions ``"y0[i]"`` are the measure's, not the system's: left out here)."""
        system = set_parameters(self.system, {p: v for p, v in values.items() if initial_index(p) is None})
        return system if self.derive is None else self.derive(system)

    def __call__(self, **point):
        wrt, mode = self.wrt, self.mode
        fixed = {p: v for p, v in point.items() if p not in wrt}
        varied = {p: point[p] if p in point else jnp.asarray(
            self.measure.y0[initial_index(p)] if initial_index(p) is not None else get_parameter(self.system, p),
            dtype=float) for p in wrt}
        kind = None if mode is None else mode.kind

        def run(values) -> tuple:
            system = self.lane_system({**fixed, **values})
            outputs, status = with_initial(self.measure, {**fixed, **values})(system, kind)
            return {k: outputs[k] for k in self.gradient_of}, (outputs, status, constraints_hold(system))

        if mode is None:
            _, (outputs, status, valid) = run(varied)
            grads = {}
        else:
            _, jac, (outputs, status, valid) = mode.value_and_jacobian(run, varied)
            grads = {f"grad_{k}": jnp.stack([jac[p][k] for p in wrt]) for k in self.gradient_of}
        return lane_result(valid, status, outputs, grads)
