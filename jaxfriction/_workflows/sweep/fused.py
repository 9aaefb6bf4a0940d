"""A sweep's lanes through the fused kernel: the same outputs as the XLA lane program.

:class:`FusedLanes` takes a sweep's :class:`~jaxfriction._workflows.sweep.lane.Lane`
(template system, window, observables, gradient mode) and computes a whole chunk of lanes
with :class:`~jaxfriction._kernels.fused_rk4.FusedRK4`. The kernel returns each lane's
first and last window states (with tangents) and its reductions over the saved points; the
observables that depend on the end points only (``dissipation``, ``final_position``,
``energy_residual``) are then the library's own functions evaluated on that two-point
window; the run's status is formed as :class:`~jaxfriction.RK4` forms it and the lane's
result by :func:`~jaxfriction._workflows.sweep.lane.lane_result`, as on the XLA path. Values,
gradients and status codes agree with the XLA path to round-off.
"""

from __future__ import annotations

import collections
import functools
from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import constraints_hold
from ..._integrate.saveat import SaveAt
from ..._integrate.solvers import (
    RK4,
    finite_status,
    fixed_step_grid,
    transient_step,
    unstable_step_status,
)
from ..._integrate.stability import (
    saved_state_rate,
    stick_band_rate,
)
from ..._integrate.status import STATUS_NONFINITE, STATUS_OK, combine_status
from ..._integrate.trajectory import Trajectory
from ..._kernels.componentwise import Unsupported
from ..._kernels.fused_rk4 import FusedRK4, Reductions, WindowPlan, next_power_of_two
from ..._observables.stick import stick_fraction
from ..._observables.window import (
    final_position,
    peak_slip,
    window_dissipation,
    window_energy_residual,
)
from ..._paths import get_parameter, set_parameters
from ..gradient import ForwardMode
from .lane import Window, initial_index, lane_result

if TYPE_CHECKING:
    from ..._systems.base import AbstractFrictionSystem
    from .lane import Lane

#: Observables computed from the window's two end points (on a two-point Trajectory).
END_POINT = (window_dissipation, final_position, window_energy_residual)
#: Observables accumulated in the kernel over every saved point.
REDUCED = (stick_fraction, peak_slip)
#: The most numbers (state and tangents) one lane may carry through the kernel.
MAX_CARRIED = 1024

#: The most per-lane operations of one step (with tangents) that the GPU kernel takes on: its
#: time loop's body is one Triton program, whose compile time grows faster than the program
#: (the oscillator's few hundred operations compile in seconds, the n = 32 Burridge-Knopoff
#: chain's 4,311 did not compile in minutes: ``docs/performance.md``, "Numbers behind the
#: defaults"). The bound between is a choice, not a measurement:
#: :class:`~jaxfriction.AutoKernel` runs larger programs on the XLA path, with the reason
#: logged; ``kernel="fused"`` still runs the kernel.
MAX_GPU_OPERATIONS = 1000


def too_large_for_the_gpu(lane, paths: list[str]) -> str | None:
    """Why :class:`~jaxfriction.AutoKernel` leaves a supported sweep off the GPU kernel (a step
    of more than :data:`MAX_GPU_OPERATIONS` per-lane operations), or None."""
    names = list(paths) + [p for p in lane.wrt if p not in paths]
    operations = sum(FusedLanes(lane, 8, 4, True).build(names)[0].operations_per_step().values())
    if operations <= MAX_GPU_OPERATIONS:
        return None
    return (f"a step of the lane program has {operations} operations per lane, more than the "
            f"{MAX_GPU_OPERATIONS} the GPU kernel takes on: Triton would compile it for minutes (the n = 32 "
            f"chain's 4,311: over 230 s on an H200), where XLA takes seconds; kernel='fused' forces it")


class FusedLanes(eqx.Module):
    """A chunk of lanes of a sweep, computed by the fused kernel (``batched``: the engine
    passes whole chunks, ``{path: (B,)}``, instead of ``vmap``-ing one lane)."""

    lane: Lane
    block: int = eqx.field(static=True)
    num_warps: int = eqx.field(static=True)
    interpret: bool = eqx.field(static=True)
    batched = True

    def _names(self, points):
        return list(points) + [p for p in self.lane.wrt if p not in points]

    def _maker(self, names):
        """``make_system(shared, p)``: the lane's system from the template's arrays
        (``shared``, in the order of ``jax.tree.leaves``) and its values ``p``."""
        lane = self.lane
        dynamic, static = eqx.partition(lane.system, eqx.is_array)
        leaves, treedef = jax.tree.flatten(dynamic)

        def make_system(shared, p) -> AbstractFrictionSystem:
            template = eqx.combine(jax.tree.unflatten(treedef, list(shared[: len(leaves)])), static)
            system = set_parameters(template, {name: p[i] for i, name in enumerate(names)})
            return system if lane.derive is None else lane.derive(system)

        return make_system, leaves + [lane.measure.y0]

    def plan(self) -> WindowPlan:
        window, solver = self.lane.measure, self.lane.measure.solver
        n_pre, h_pre = 0, 0.0
        if window.t_measure > 0:
            step = transient_step(window.t_measure, window.t_end, window.dt, window.saveat, solver.rounding)  # type: ignore[arg-type, attr-defined]
            _, n_pre, h_pre = fixed_step_grid(0.0, window.t_measure, step, SaveAt(n=1), solver.rounding)  # type: ignore[attr-defined]  # a fixed-step solver here
        n_saves, every, h = fixed_step_grid(window.t_measure, window.t_end, window.dt, window.saveat, solver.rounding)  # type: ignore[arg-type, attr-defined]
        return WindowPlan(n_pre=n_pre, h_pre=h_pre, t_measure=window.t_measure, n_saves=n_saves, every=every, h=h)

    def build(self, names, analyse_live: bool = True) -> tuple:
        """The kernel for lanes whose values are ``names`` (raises Unsupported); see
        :class:`~jaxfriction._kernels.fused_rk4.FusedRK4` for ``analyse_live``."""
        lane, window = self.lane, self.lane.measure
        observables = {fn.fn for _, fn in window.observables}
        reductions = Reductions(stuck=stick_fraction in observables, peak=peak_slip in observables,
                                peak_tangent=any(fn.fn is peak_slip and name in lane.gradient_of
                                                 for name, fn in window.observables),
                                # abstractly: run eagerly, its operations cost an XLA compilation each
                                rate=jax.eval_shape(lambda: saved_state_rate(lane.system, jnp.zeros(1),
                                                                             lane.measure.y0[None])) is not None)
        make_system, shared = self._maker(names)
        wrt = [names.index(p) for p in lane.wrt]
        plan = self.plan()
        ts = np.asarray([plan.t_measure, plan.t_measure + plan.n_saves * plan.every * plan.h])  # not traced

        def observed(y_a, y_b, shared, p) -> list:
            """What :meth:`_lane_outputs` reads of the window's end states: the end-point
            observables, the step rule at the end points, and the motion (every component
            but the energy books), whose finiteness is the lane's status."""
            system, ys, times = make_system(shared, p), jnp.stack([y_a, y_b]), jnp.asarray(ts, y_a.dtype)
            traj = Trajectory(ts=times, ys=ys, system=system, status=jnp.zeros((), jnp.int32))
            rate = saved_state_rate(system, times, ys)
            return ([fn.fn(traj) for _, fn in window.observables if fn.fn in END_POINT] + [ys[:, : system.dynamical_size]]
                    + ([] if rate is None else [rate]))

        kernel = FusedRK4(make_system, lambda shared, p: shared[-1], shared, len(names), plan, wrt, reductions,
                          observed=observed, analyse_live=analyse_live)
        return kernel, shared

    def __call__(self, **points):
        lane = self.lane
        names = self._names(points)
        dtype = jnp.result_type(float)
        n = next(iter(points.values())).shape[0]
        columns = [points[k] if k in points else jnp.full((n,), get_parameter(lane.system, k)) for k in names]
        p = jnp.stack([jnp.asarray(c, dtype) for c in columns], axis=1)
        block = min(self.block, next_power_of_two(n))  # a device's share smaller than a block: no idle lanes
        padded = -(-n // block) * block
        p_run = jnp.concatenate([p, jnp.broadcast_to(p[-1:], (padded - n, p.shape[1]))]) if padded > n else p
        kernel, shared = self.build(names)
        raw = {k: v[:n] for k, v in kernel(shared, p_run, block=block, interpret=self.interpret,
                                           num_warps=self.num_warps).items()}
        return jax.vmap(lambda p, out: self._lane_outputs(names, kernel.plan, p, out))(p, raw)

    def _lane_outputs(self, names, plan, p, out):
        """One lane's observables, gradients and status from the kernel's outputs (as
        :class:`~jaxfriction._workflows.sweep.lane.Lane` forms them)."""
        lane, window = self.lane, self.lane.measure
        make_system = functools.partial(*self._maker(names))
        system = make_system(p)
        y0, y_a, y_b = window.y0, out["y_a"], out["y_b"]
        t_end = plan.t_measure + plan.n_saves * plan.every * plan.h
        ts = jnp.asarray([plan.t_measure, t_end], dtype=y_a.dtype)

        band_rate = stick_band_rate(system)
        status = STATUS_OK
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


def fused_support(lane: Lane, paths: list[str], triton: bool = False, numba: bool = False,
                  loops: bool = False) -> str | None:
    """Why the fused kernel cannot run ``lane`` (a sweep's ``Lane`` over the grid ``paths``),
    or None when it can.

    Checks the solver (RK4 with a step), the measure (a window, not a
    :func:`~jaxfriction.sensitivity_map` observable), the observables (the default window
    observables), the gradient mode (none or forward) and, by tracing the kernel once
    (abstractly, nothing runs), that the system's vector field evaluates component-wise;
    with ``triton=True`` also that the kernel lowers to valid Triton modules (every
    operation has a GPU lowering); with ``numba=True`` (the compiled loop on CPUs) instead
    that numba imports and that every operation of the traced step has a scalar form in the
    emitted program (``loops=True``: the program written as loops over each lane's arrays,
    :mod:`jaxfriction._kernels.looped`). The answer depends on the sweep's structure only,
    and is remembered for it.
    """
    dynamic, static = eqx.partition(lane, eqx.is_array)
    key = (static, jax.tree.structure(dynamic), tuple((jnp.shape(x), str(jnp.result_type(x)))
                                                      for x in jax.tree.leaves(dynamic)), tuple(paths), triton, numba, loops)
    try:
        if key in _SUPPORT:
            _SUPPORT.move_to_end(key)
            return _SUPPORT[key]
    except TypeError:  # unhashable static parts: not remembered
        return _fused_support(lane, paths, triton, numba, loops)
    _SUPPORT[key] = _fused_support(lane, paths, triton, numba, loops)
    while len(_SUPPORT) > 64:
        _SUPPORT.popitem(last=False)
    return _SUPPORT[key]


#: :func:`fused_support`'s latest answers by sweep structure.
_SUPPORT: collections.OrderedDict = collections.OrderedDict()


def _fused_support(lane, paths, triton, numba=False, loops=False):
    if numba:
        from ..._kernels.numba_program import numba_available

        missing = numba_available()
        if missing is not None:
            return missing
    swept_y0 = [p for p in [*paths, *lane.wrt] if initial_index(p) is not None]
    if swept_y0:
        return f"the initial conditions {swept_y0} are swept (the kernel starts every lane from one y0)"
    window = lane.measure
    if not isinstance(window, Window):
        return getattr(window, "fused_reason", "sensitivity_map's observable runs its own simulation")
    if type(window.solver) is not RK4 or window.dt is None:
        return f"the solver {type(window.solver).__name__} is not fixed-step RK4 with a dt"
    if lane.mode is not None and not isinstance(lane.mode, ForwardMode):
        return f"{type(lane.mode).__name__} gradients run on the XLA path (the kernel carries forward-mode tangents)"
    known = set(END_POINT) | set(REDUCED)
    custom = [name for name, fn in window.observables if fn.fn not in known]
    if custom:
        return f"the observables {custom} are not among the default window observables the kernel accumulates"
    carried = window.y0.size * (1 + len(lane.wrt))
    looped = bool(numba and loops)
    if carried > MAX_CARRIED and not looped:
        return f"a lane carries {carried} numbers (state and tangents), more than the kernel's {MAX_CARRIED}"
    names = list(paths) + [p for p in lane.wrt if p not in paths]
    block = 8
    p = jnp.zeros((block, len(names)), jnp.result_type(float))
    try:
        kernel, shared = FusedLanes(lane, block, 4, True).build(names, analyse_live=not looped)
        if looped:  # written as loops over the lane's arrays: its size does not grow with them
            from ..._kernels.compiled_loop import CompiledLoop

            CompiledLoop(kernel, compile=False, looped=True)
            return None
        if numba:  # the emitted program's source (its compilation waits for the sweep)
            from ..._kernels.compiled_loop import MAX_SOURCE_LINES, CompiledLoop

            lines = CompiledLoop(kernel, compile=False).source.count("\n")
            if lines > MAX_SOURCE_LINES:
                return (f"the emitted program has {lines} lines, more than the compiled loop's {MAX_SOURCE_LINES}: "
                        f"numba would compile it for minutes (the jointed template's 64 Segalman elements: "
                        f"22,497 lines, 630 s for a 3-lane sweep), where XLA takes seconds")
            return None
        jax.eval_shape(lambda shared, p: kernel(shared, p, block=block, interpret=True), shared, p)
    except Unsupported as exc:
        return f"the system's vector field cannot run component-wise in the kernel: {exc}"
    except Exception as exc:  # noqa: BLE001 - any failure to trace the kernel means the XLA path
        return f"tracing the kernel failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    if triton:
        from ..._kernels.lowering import triton_problems

        problems = triton_problems(lambda shared, p: kernel(shared, p, block=block), shared, p)
        if problems:
            return "; ".join(problems)
    return None
