"""A sweep's lane program in the traced form that the compiled executors run.

:class:`~jaxfriction._lanes.program.Lane` is one lane as JAX code: the XLA executor
(:mod:`.vmap`) ``vmap`` s it as it is. The compiled executors (the Pallas kernel,
:mod:`.fused`; the numba loop, :mod:`.compiled`) run the same lane as
:class:`~jaxfriction._lanes.pieces.LanePieces` instead: the RK4 step with its forward-mode
tangents, the saved-point measures and the output layout, traced from the system's own
``vector_field``. :class:`LaneProgram` builds those pieces for a chunk's lane values and,
after an executor has run them, forms each lane's observables, gradients and status exactly
as the XLA path does (:func:`~jaxfriction._lanes.program.lane_result`), so every executor
returns the same dict. :func:`support` holds the checks common to the compiled executors
(solver, measure, observables, gradient mode, component-wise tracing); each executor's own
restrictions are in its option's ``why_not``.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import constraints_hold
from .._integrate.saveat import SaveAt
from .._integrate.solvers import RK4, finite_status, fixed_step_grid, transient_step, unstable_step_status
from .._integrate.stability import saved_state_rate, stick_band_rate
from .._integrate.status import STATUS_NONFINITE, STATUS_OK, combine_status
from .._integrate.trajectory import Trajectory
from .._observables.stick import stick_fraction
from .._observables.window import final_position, peak_slip, window_dissipation, window_energy_residual
from .._paths import get_parameter, set_parameters
from .componentwise import Unsupported
from .pieces import LanePieces, Reductions, WindowPlan
from .program import Window, initial_index, lane_result
from .structure import remembered, structure

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem
    from .program import Lane

#: Observables computed from the window's two end points (on a two-point Trajectory).
END_POINT = (window_dissipation, final_position, window_energy_residual)
#: Observables accumulated by the executors over every saved point.
REDUCED = (stick_fraction, peak_slip)
#: The most numbers (state and tangents) one lane may carry through a program written one
#: expression per component.
MAX_CARRIED = 1024


class LaneProgram(eqx.Module):
    """A sweep's lane in the traced form of the compiled executors.

    Args:
        lane: the sweep's :class:`~jaxfriction._lanes.program.Lane` (template system, window,
            observables, gradient mode).
    """

    lane: Lane

    def names(self, points: dict) -> list[str]:
        """The lane values of a chunk: its swept paths, then the differentiated ones not swept."""
        return list(points) + [p for p in self.lane.wrt if p not in points]

    def values(self, points: dict, names: list[str]) -> jax.Array:
        """The chunk's lane values ``(B, P)`` in the order of ``names`` (a differentiated path
        that is not swept takes the template's value)."""
        dtype = jnp.result_type(float)
        n = next(iter(points.values())).shape[0]
        columns = [points[k] if k in points else jnp.full((n,), get_parameter(self.lane.system, k)) for k in names]
        return jnp.stack([jnp.asarray(c, dtype) for c in columns], axis=1)

    def maker(self, names: list[str]) -> tuple[Callable, list]:
        """``(make_system, shared)``: ``make_system(shared, p)`` is the lane's system from the
        template's arrays (``shared``, in the order of ``jax.tree.leaves``, then ``y0``) and
        its values ``p``."""
        lane = self.lane
        dynamic, static = eqx.partition(lane.system, eqx.is_array)
        leaves, treedef = jax.tree.flatten(dynamic)

        def make_system(shared, p) -> AbstractFrictionSystem:
            template = eqx.combine(jax.tree.unflatten(treedef, list(shared[: len(leaves)])), static)
            system = set_parameters(template, {name: p[i] for i, name in enumerate(names)})
            return system if lane.derive is None else lane.derive(system)

        return make_system, leaves + [lane.measure.y0]

    def plan(self) -> WindowPlan:
        """The fixed-step grids of the transient and the window (as :class:`~jaxfriction.RK4` forms them)."""
        window, solver = self.lane.measure, self.lane.measure.solver
        n_pre, h_pre = 0, 0.0
        if window.t_measure > 0:
            step = transient_step(window.t_measure, window.t_end, window.dt, window.saveat, solver.rounding)  # type: ignore[arg-type, attr-defined]
            _, n_pre, h_pre = fixed_step_grid(0.0, window.t_measure, step, SaveAt(n=1), solver.rounding)  # type: ignore[attr-defined]  # a fixed-step solver here
        n_saves, every, h = fixed_step_grid(window.t_measure, window.t_end, window.dt, window.saveat, solver.rounding)  # type: ignore[arg-type, attr-defined]
        return WindowPlan(n_pre=n_pre, h_pre=h_pre, t_measure=window.t_measure, n_saves=n_saves, every=every, h=h)

    def pieces(self, names: list[str], analyse_live: bool = True) -> tuple[LanePieces, list]:
        """The traced pieces for lanes whose values are ``names``, and the shared arrays
        (raises :class:`~jaxfriction._lanes.componentwise.Unsupported`); see
        :class:`~jaxfriction._lanes.pieces.LanePieces` for ``analyse_live``. The pieces depend
        on the sweep's structure only (the arrays are their arguments): they are traced once
        for it, and an executor's check and its run share them."""
        key = structure(self.lane) + (tuple(names), analyse_live)
        pieces = remembered(_PIECES, key, lambda: self._pieces(names, analyse_live)[0], size=8)
        return pieces, self.maker(names)[1]

    def _pieces(self, names: list[str], analyse_live: bool) -> tuple[LanePieces, list]:
        lane, window = self.lane, self.lane.measure
        observables = {fn.fn for _, fn in window.observables}
        reductions = Reductions(stuck=stick_fraction in observables, peak=peak_slip in observables,
                                peak_tangent=any(fn.fn is peak_slip and name in lane.gradient_of
                                                 for name, fn in window.observables),
                                # abstractly: run eagerly, its operations cost an XLA compilation each
                                rate=jax.eval_shape(lambda: saved_state_rate(lane.system, jnp.zeros(1),
                                                                             lane.measure.y0[None])) is not None)
        make_system, shared = self.maker(names)
        wrt = [names.index(p) for p in lane.wrt]
        plan = self.plan()
        ts = np.asarray([plan.t_measure, plan.t_measure + plan.n_saves * plan.every * plan.h])  # not traced

        def observed(y_a, y_b, shared, p) -> list:
            """What :meth:`outputs` reads of the window's end states: the end-point
            observables, the step rule at the end points, and the motion (every component
            but the energy books), whose finiteness is the lane's status."""
            system, ys, times = make_system(shared, p), jnp.stack([y_a, y_b]), jnp.asarray(ts, y_a.dtype)
            traj = Trajectory(ts=times, ys=ys, system=system, status=jnp.zeros((), jnp.int32))
            rate = saved_state_rate(system, times, ys)
            return ([fn.fn(traj) for _, fn in window.observables if fn.fn in END_POINT] + [ys[:, : system.dynamical_size]]
                    + ([] if rate is None else [rate]))

        pieces = LanePieces(make_system, lambda shared, p: shared[-1], shared, len(names), plan, wrt, reductions,
                            observed=observed, analyse_live=analyse_live)
        return pieces, shared

    def outputs(self, names: list[str], plan: WindowPlan, p: jax.Array, out: dict) -> dict:
        """One lane's observables, gradients and status from an executor's outputs ``out``
        (name -> one lane's row of the :attr:`~jaxfriction._lanes.pieces.LanePieces.outputs`
        layout), as :class:`~jaxfriction._lanes.program.Lane` forms them on the XLA path."""
        lane, window = self.lane, self.lane.measure
        make, shared = self.maker(names)
        make_system = functools.partial(make, shared)
        system = make_system(p)
        y0, y_a, y_b = window.y0, out["y_a"], out["y_b"]
        t_end = plan.t_measure + plan.n_saves * plan.every * plan.h
        ts = jnp.asarray([plan.t_measure, t_end], dtype=y_a.dtype)

        band_rate = stick_band_rate(system)
        status: Any = STATUS_OK
        if plan.n_pre:  # the transient: its two end points and its rate at the window's cadence
            ends = jnp.stack([y0, y_a])
            rate = saved_state_rate(system, jnp.asarray([0.0, plan.t_measure], y_a.dtype), ends)
            status = unstable_step_status(finite_status(ends), plan.h_pre, (band_rate, rate, out.get("rate_pre")))
        win = jnp.where(out["finite"] > 0.5, STATUS_OK, STATUS_NONFINITE)
        win = unstable_step_status(win, plan.h, (band_rate, out.get("rate")))
        status = combine_status(status, win)

        def end_points(y_a, y_b, p) -> dict:
            traj = Trajectory(ts=ts, ys=jnp.stack([y_a, y_b]), system=make_system(p), status=status)
            return {name: jnp.asarray(fn.fn(traj)) for name, fn in window.observables if fn.fn in END_POINT}

        outputs = end_points(y_a, y_b, p)
        for name, fn in window.observables:
            if fn.fn is stick_fraction:
                outputs[name] = out["stuck"]
            elif fn.fn is peak_slip:
                outputs[name] = out["peak"]

        grads = {}
        if lane.wrt:
            basis = jnp.eye(p.shape[0], dtype=p.dtype)[jnp.asarray([names.index(w) for w in lane.wrt])]
            tangents = jax.vmap(lambda ya, yb, e: jax.jvp(end_points, (y_a, y_b, p), (ya, yb, e))[1])(
                out["ya_dot"], out["yb_dot"], basis)
            for name, fn in window.observables:
                if name not in lane.gradient_of:
                    continue
                if fn.fn is stick_fraction:
                    grads[f"grad_{name}"] = jnp.zeros(len(lane.wrt), p.dtype)
                elif fn.fn is peak_slip:
                    grads[f"grad_{name}"] = out["peak_dot"]
                else:
                    grads[f"grad_{name}"] = tangents[name]
        return lane_result(constraints_hold(system), status, outputs, grads)

    def lane_outputs(self, names: list[str], plan: WindowPlan, p: jax.Array, raw: dict) -> dict:
        """:meth:`outputs` of every lane of a chunk (``p`` ``(B, P)``, ``raw`` name -> ``(B, ...)``)."""
        return jax.vmap(lambda p, out: self.outputs(names, plan, p, out))(p, raw)


def support(lane: Lane, paths: list[str], executor: tuple, check: Callable | None = None, *,
            carried_limit: int | None = MAX_CARRIED, analyse_live: bool = True) -> str | None:
    """Why a compiled executor cannot run ``lane`` (a sweep's lane over the grid ``paths``),
    or None when it can.

    Checks what every compiled executor needs: the initial state not swept, the solver (RK4
    with a step), the measure (a window, not a :func:`~jaxfriction.sensitivity_map`
    observable), the observables (the default window observables), the gradient mode (none
    or forward), at most ``carried_limit`` carried numbers (None: no limit), and, by tracing
    the pieces once (abstractly, nothing runs), that the system's vector field evaluates
    component-wise; then ``check(pieces, shared, names)``, the executor's own restrictions
    (a string, or None). The answer depends on the sweep's structure only and is remembered
    for it under ``executor`` (a hashable name of the executor and its options).
    """
    key = structure(lane) + (tuple(paths), executor)
    return remembered(_SUPPORT, key, functools.partial(_support, lane, paths, check, carried_limit, analyse_live))


#: :func:`support`'s latest answers by sweep structure and executor.
_SUPPORT: collections.OrderedDict = collections.OrderedDict()
#: The latest traced pieces by sweep structure (:meth:`LaneProgram.pieces`).
_PIECES: collections.OrderedDict = collections.OrderedDict()


def _support(lane, paths, check, carried_limit, analyse_live):
    swept_y0 = [p for p in [*paths, *lane.wrt] if initial_index(p) is not None]
    if swept_y0:
        return f"the initial conditions {swept_y0} are swept (the kernel starts every lane from one y0)"
    window = lane.measure
    if not isinstance(window, Window):
        return getattr(window, "fused_reason", "sensitivity_map's observable runs its own simulation")
    if type(window.solver) is not RK4 or window.dt is None:
        return f"the solver {type(window.solver).__name__} is not fixed-step RK4 with a dt"
    if lane.mode is not None and lane.mode.kind != "forward":
        return f"{type(lane.mode).__name__} gradients run on the XLA path (the kernel carries forward-mode tangents)"
    known = set(END_POINT) | set(REDUCED)
    custom = [name for name, fn in window.observables if fn.fn not in known]
    if custom:
        return f"the observables {custom} are not among the default window observables the kernel accumulates"
    carried = window.y0.size * (1 + len(lane.wrt))
    if carried_limit is not None and carried > carried_limit:
        return f"a lane carries {carried} numbers (state and tangents), more than the kernel's {carried_limit}"
    names = list(paths) + [p for p in lane.wrt if p not in paths]
    try:
        pieces, shared = LaneProgram(lane).pieces(names, analyse_live=analyse_live)
        return None if check is None else check(pieces, shared, names)
    except Unsupported as exc:
        return f"the system's vector field cannot run component-wise in the kernel: {exc}"
    except Exception as exc:  # noqa: BLE001 - any failure to trace the kernel means the XLA path
        return f"tracing the kernel failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
