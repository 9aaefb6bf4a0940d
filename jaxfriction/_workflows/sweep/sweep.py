"""``jaxfriction.sweep``: any system, any law, over a grid of leaf paths, on the sweep engine.

One lane of a sweep is the template system with the lane's values set at the swept paths
(``equinox.tree_at``), run from its initial state to ``t1`` and measured over the final
window ``[t1 - window, t1]``: the transient is integrated without saving, the window is
saved (every step by default) and every observable is a function of the window's
:class:`~jaxfriction.Trajectory`. Lanes run in ``vmap``-ed chunks sharded over the local
devices (and processes), saved chunk by chunk and resumable
(:func:`~jaxfriction._workflows.sweep.engine.run_sweep`).

Two stages: :func:`plan_sweep` checks the arguments, builds the lane
(:mod:`~jaxfriction._lanes.program`) and asks the kernel option for its program
(:mod:`~jaxfriction._lanes.kernels`); :meth:`SweepPlan.run` runs it on the engine.

Trust: a lane whose parameters are out of range (the ``constraints()`` of every module in
its system, e.g. a negative ``mu`` or a NaN forcing scale) gets ``STATUS_INVALID_PARAMETER``
and NaN observables; a lane whose RK4 step is unstable in a stick band gets
``STATUS_UNSTABLE_STEP``; a lane whose gradient is not finite ``STATUS_NONFINITE_GRADIENT``;
non-finite states and solver failures keep their codes
(:mod:`jaxfriction._integrate.status`). No lane returns a silently wrong number.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np

from ..._checks import check_real
from ..._integrate.grid import fixed_grid
from ..._integrate.resolution import check_step_resolution
from ..._integrate.saveat import SaveAt
from ..._integrate.simulate import as_solver
from ..._integrate.solvers import MAX_SAVED_BYTES, RK4, check_saved_size
from ..._integrate.status import STATUS_MEANINGS, STATUS_OK
from ..._lanes.kernels import as_kernel
from ..._lanes.program import Lane, ScalarObservable, Window, check_initial_paths, grads_of, initial_index
from ..._observables.window import WINDOW_OBSERVABLES
from ..._paths import check_paths, get_parameter, parameter_leaves
from ..._systems.base import AbstractFrictionSystem
from ..._templates import Template, run_times, split_template
from ..gradient import as_gradient_mode
from ..identity import ByCode, function_digest, sweep_digest
from .engine import run_sweep
from .folder import saved_chunk_size
from .sharding import lane_devices

if TYPE_CHECKING:
    import xarray as xr
    from jax.typing import ArrayLike


#: Lanes per chunk on the XLA path when ``chunk_size`` is not given: one chunk's saved windows and
#: ``vmap``-ed intermediates are held in memory.
CHUNK_SIZE = 1024

#: The most lanes per chunk on a compiled kernel (the compiled loop, the fused kernel) when
#: ``chunk_size`` is not given: their lanes save no window, and a chunk of 1,024 lanes is two
#: blocks of the compiled loop on two threads, which cannot even out a slower core (8,192 lanes
#: of the default oscillator: 0.92x numba ``prange`` in chunks of 1,024, 0.97x in one chunk;
#: ``docs/performance.md``).
COMPILED_CHUNK_SIZE = 8192

#: The most state-component steps (lanes x steps x state size) of one chunk for which a
#: compiled kernel's default chunk grows past :data:`CHUNK_SIZE` (on a 2-core CPU from about
#: 2 s of the oscillator to 12 s of a long chain): a sweep resumes from whole chunks, so an
#: expensive lane keeps its chunks small.
CHUNK_WORK = 2**33


def default_chunk_size(kernel: str, steps_per_lane: int | None, state_size: int) -> int:
    """Lanes per chunk of a sweep whose ``chunk_size`` is not given.

    :data:`CHUNK_SIZE` on the XLA path (``kernel == "vmap"``) and where the steps of a lane are
    not known in advance (adaptive solvers); on a compiled kernel, :data:`CHUNK_SIZE` doubled
    while the chunk has at most :data:`COMPILED_CHUNK_SIZE` lanes and :data:`CHUNK_WORK`
    state-component steps. It depends on the sweep only, not on the machine, so that a sweep
    saved on one machine resumes on another.

    Args:
        kernel: the executor's shortcut (``"vmap"``, ``"compiled"``, ``"fused"``).
        steps_per_lane: the fixed steps of one lane, or None.
        state_size: numbers in one lane's state.

    Returns:
        The number of lanes (a power of two, at least :data:`CHUNK_SIZE`).
    """
    chunk = CHUNK_SIZE
    if kernel == "vmap" or steps_per_lane is None:
        return chunk
    while 2 * chunk <= COMPILED_CHUNK_SIZE and 2 * chunk * steps_per_lane * max(1, state_size) <= CHUNK_WORK:
        chunk *= 2
    return chunk


def _lane_count(grid, samples):
    sizes = [np.size(v) for v in grid.values()]
    return sizes[0] if samples else math.prod(sizes)


def _scalar_parameters(system, exclude):
    """JSON of the scalar parameters of ``system`` not in ``exclude`` (provenance)."""
    out = {}
    for path, leaf in parameter_leaves(system).items():
        value = np.asarray(leaf)
        if path not in exclude and value.size == 1:
            out[path] = float(value)
    return json.dumps(out)


@dataclasses.dataclass(frozen=True, eq=False)
class SweepPlan:
    """A sweep checked and built, not yet run (:func:`plan_sweep`); :meth:`run` runs it.

    Attributes:
        program: the lane program the engine runs (``program(**{path: value})`` for one lane,
            or a ``batched`` program for a chunk): a
            :class:`~jaxfriction._lanes.program.Lane` on the XLA path, a
            :class:`~jaxfriction._lanes.fused.FusedLanes` on the fused kernel, a
            :class:`~jaxfriction._lanes.compiled.CompiledLoopLanes` on the compiled loop.
        kernel: ``"vmap"`` or ``"fused"``; ``kernel_reason``: why.
        grid: dict path -> 1-D array; ``samples``: points rather than an outer product.
        n_lanes: the number of lanes.
        engine: the keyword arguments of
            :func:`~jaxfriction._workflows.sweep.engine.run_sweep` (``chunk_size``,
            ``devices``, ``out_dir``, ``progress``, ``tag``: the resume identity).
        attrs: the dataset attributes the workflow adds (settings, provenance).
        steps_per_lane: RK4 steps of one lane (fixed-step solvers), for the throughput.
        chunk_from_folder: ``chunk_size`` was not given, so :meth:`run` takes the chunk size of
            a sweep already saved in ``out_dir`` (resumed by a later version of the library, or
            on another kernel) over :func:`default_chunk_size`'s.
    """

    program: object
    kernel: str
    kernel_reason: str
    lane: Lane
    grid: dict
    samples: bool
    n_lanes: int
    engine: dict
    attrs: dict
    steps_per_lane: int | None = None
    chunk_from_folder: bool = False

    def _output_dims(self, name, ndim):
        """Names of the per-lane axes of an output: ``wrt`` for gradients, ``dof`` for positions."""
        base = name[len("grad_"):] if name in grads_of(self.lane.gradient_of) else name
        own_ndim = ndim - (base != name)
        own = ("dof",) if base == "final_position" and own_ndim == 1 else tuple(
            f"{base}_dim{i}" for i in range(own_ndim))
        return ("wrt",) + own if base != name else own

    def _finalize(self, ds):
        """Status labels, the flagged counts, provenance and the throughput."""
        lane, system = self.lane, self.lane.system
        ds["status"].attrs.update(flag_values=np.array(sorted(STATUS_MEANINGS), dtype=np.int8),
                                  flag_meanings=" ".join(STATUS_MEANINGS[k].replace(" ", "_")
                                                         for k in sorted(STATUS_MEANINGS)))
        counts = {STATUS_MEANINGS[int(k)]: int(n) for k, n in zip(*np.unique(ds["status"].values, return_counts=True))
                  if int(k) != STATUS_OK}
        ds.attrs = {**ds.attrs, **self.attrs, "system_type": type(system).__name__, "n_dof": system.n_dof,
                    "fixed": _scalar_parameters(system, set(self.grid)), "wrt": ",".join(lane.wrt),
                    "gradient": type(lane.mode).__name__ if lane.mode else "none",
                    "gradient_of": ",".join(lane.gradient_of), "dtype": str(jnp.result_type(float)),
                    "flagged": json.dumps(counts), "kernel": self.kernel, "kernel_reason": self.kernel_reason}
        if self.steps_per_lane is not None:  # throughput of the lanes this call computed, compile excluded
            computed = min(int(ds["status"].size), ds.attrs["chunks_computed"] * ds.attrs["chunk_size"])
            seconds = ds.attrs["run_seconds"]
            ds.attrs["steps_per_lane"] = self.steps_per_lane
            ds.attrs["steps_per_second"] = (computed * self.steps_per_lane / seconds if seconds > 0 and computed
                                            else math.nan)
        return ds

    def run(self) -> xr.Dataset:
        """Run the sweep on the engine (chunked, sharded, saved and resumable with ``out_dir``).

        Returns:
            The ``xarray.Dataset`` described in :func:`sweep`.
        """
        wrt, engine = list(self.lane.wrt), dict(self.engine)
        if self.chunk_from_folder and engine["out_dir"] is not None:
            engine["chunk_size"] = saved_chunk_size(engine["out_dir"]) or engine["chunk_size"]
        return run_sweep(self.program, self.grid, samples=self.samples, finalize=self._finalize,
                         output_dims=self._output_dims, coords={"wrt": wrt} if wrt else None, **engine)


def _plan(system, grid, measure, *, wrt, gradient, gradient_of, derive, samples, chunk_size, devices, out_dir,
          progress, settings, attrs, kernel, steps_per_lane=None, check_memory=None) -> SweepPlan:
    """The plan of lanes of ``system`` over ``grid`` measured by ``measure`` (a
    :class:`~.lane.Window` or :class:`~.lane.ScalarObservable`), differentiated with respect
    to ``wrt``."""
    paths = list(grid)
    check_paths(system, [p for p in paths if initial_index(p) is None], "grid")
    check_paths(system, [p for p in wrt if initial_index(p) is None], "wrt")
    check_initial_paths(measure, paths, "grid")
    check_initial_paths(measure, wrt, "wrt")
    if len(set(wrt)) != len(wrt):
        raise ValueError(f"wrt names a path twice: {list(wrt)}")
    for path in wrt:  # a derivative of an array leaf needs an element: refused early
        if initial_index(path) is None and np.ndim(get_parameter(system, path)) != 0:
            raise ValueError(f"wrt: {path!r} is an array; name its elements, e.g. {path}[0]")
    mode = gradient.resolve(len(wrt)) if wrt else None
    lane = Lane(system, measure, tuple(wrt), mode, tuple(gradient_of), None if derive is None else ByCode(derive))
    n_lanes = _lane_count(grid, samples)
    per_lane = 8 * (len(paths) + 1 + len(getattr(measure, "observables", ("value",))) * (1 + len(wrt)))
    if n_lanes * per_lane > MAX_SAVED_BYTES:  # the grid's points and results are held in memory
        raise ValueError(f"grid: {n_lanes:,} lanes would hold {n_lanes * per_lane / 1024**3:,.1f} GiB of points and "
                         f"results (more than {MAX_SAVED_BYTES / 1024**3:.0f} GiB): use fewer values per axis")
    if devices is not None:
        devices = lane_devices(devices)
    program, kernel_name, kernel_reason = kernel.program(lane, paths, lane_devices(devices))
    chunk_from_folder = chunk_size is None
    if chunk_size is None:
        chunk_size = default_chunk_size(kernel_name, steps_per_lane, system.state_size)
    if kernel_name == "vmap" and check_memory is not None:
        check_memory(chunk_size)
    tag = sweep_digest(system, {**settings, "grid_paths": paths, "wrt": list(wrt), "mode": repr(mode),
                                "dtype": str(jnp.result_type(float))})
    return SweepPlan(program=program, kernel=kernel_name, kernel_reason=kernel_reason, lane=lane, grid=grid,
                     samples=samples, n_lanes=n_lanes, attrs=attrs, steps_per_lane=steps_per_lane,
                     chunk_from_folder=chunk_from_folder,
                     engine=dict(chunk_size=chunk_size, devices=devices, out_dir=out_dir, progress=progress, tag=tag))


def sweep(
    system: AbstractFrictionSystem | Template, grid: dict, *, t1: float | None = None, window=None,
    cycles: int | None = None, frequency: str | None = None, dt: float | None = None,
    y0: ArrayLike | None = None, solver=None, saveat=None, observables=None, wrt=(), gradient="auto",
    gradient_of="dissipation", derive=None, samples: bool = False, chunk_size: int | None = None,
    devices=None, out_dir=None, progress: bool = True, kernel="auto", steady_state=None,
) -> xr.Dataset:
    """Run a system over a grid of parameter values and measure a final window of every run.

    ``sweep(...)`` is ``plan_sweep(...).run()``: :func:`plan_sweep` checks the arguments and
    builds the lane program (and picks the kernel) without running anything.

    Args:
        system: the template system (any :class:`~jaxfriction.AbstractFrictionSystem`, any
            law, a user's own subclasses included), or a :class:`~jaxfriction.Template`,
            whose ``dt``, run length, window, cycles and ``y0`` are the defaults of the
            arguments below.
        grid: dict leaf path -> 1-D array of values, e.g. ``{"law.mu": mus,
            "force.amplitude": alphas}``. The outer product is run (one dataset dimension per
            path, named by the path), or with ``samples=True`` the arrays are equal-length
            lists of points (a ``sample`` dimension, e.g. a Latin hypercube).
        t1: run length from ``t = 0`` (time units of the system); with ``window``, the
            measured window ``[t1 - window, t1]`` (default: the whole run).
        cycles, frequency: instead of ``t1``: run ``cycles`` forcing periods ``2 pi /
            frequency`` and measure the last (Quinn 2004 Sec. 3.1.2); ``frequency`` is the
            path of the forcing frequency (``"force.omega"``), which must not be swept nor in
            ``wrt`` (the window moves with it).
        dt: step bound (fixed-step solvers; required unless a template gives it). With
            RK4, a transient that is a whole number of windows (``cycles``) takes the
            window's step, so a transient that has died out leaves the window on the
            periodic orbit of the same RK4 map (``steady_state``'s D);
            :func:`~jaxfriction._integrate.solvers.transient_step`.
        y0: initial positions and velocities ``(2 n_dof,)`` (default: the template's, or
            rest at the origin).
        solver: a solver object of :func:`~jaxfriction.simulate` (default RK4).
        saveat: what the window saves (default the solver's: every step for fixed-step
            solvers, 1001 times for adaptive and event-driven ones).
        observables: dict name -> function of the window's :class:`~jaxfriction.Trajectory`
            returning a scalar or a fixed-shape array (the lane's system is ``traj.system``);
            default :data:`~jaxfriction.WINDOW_OBSERVABLES` (``dissipation``,
            ``stick_fraction``, ``peak_slip``, ``final_position``, ``energy_residual``).
        wrt: paths to differentiate with respect to (swept or not).
        gradient: a gradient mode (:class:`~jaxfriction.ForwardMode`,
            :class:`~jaxfriction.ReverseMode`, :class:`~jaxfriction.AutoMode`) or its name,
            or ``"none"`` (no gradients: ``wrt`` is ignored, as the CLI's ``--gradient none``).
        gradient_of: the observable(s) to differentiate (default ``"dissipation"``).
        derive: optional ``derive(lane_system) -> system`` applied after the lane's values
            are set, for parameters tied to others (e.g. ``eps = 2 mu g dt``).
        samples, chunk_size, devices, out_dir, progress: see the engine
            (:func:`~jaxfriction._workflows.sweep.engine.run_sweep`): ``out_dir`` saves every
            chunk and makes the sweep resumable after an interruption (the same call
            continues); several processes share a sweep after ``jax.distributed.initialize()``.
            ``chunk_size`` (lanes per compiled call) defaults to :func:`default_chunk_size`:
            1,024 on the XLA path, up to 8,192 on the compiled loop and the fused kernel; a
            sweep resumed from ``out_dir`` without it keeps the chunk size it was saved with.
        kernel: how the lanes are computed: :class:`~jaxfriction.AutoKernel` (``"auto"``,
            default: the fused Pallas kernel on GPUs when the sweep is one it supports, else
            the XLA path, the reason logged), :class:`~jaxfriction.VmapKernel` (``"vmap"``:
            ``vmap`` of ``lax.scan``) or :class:`~jaxfriction.FusedKernel` (``"fused"``; on
            a CPU it runs in Pallas' interpret mode, for tests). The dataset's ``kernel`` and
            ``kernel_reason`` attributes say which ran and why.
        steady_state: measure every lane on its periodic steady state instead of a final
            window (``True`` or a :class:`~jaxfriction.SteadyState` with options): a few
            transient cycles, a Newton solve of ``phi_T(x) = x`` on the RK4 period map and the
            observables over the orbit's period (plus ``residual`` and ``period``); lanes
            that do not converge get ``STATUS_NOT_PERIODIC``. Forced systems only (the
            period is the forcing's, ``frequency`` or the Harmonic drives'; it may be
            swept); ``t1``, ``window``, ``cycles`` and ``saveat`` are not used. Gradients
            come from the implicit function theorem at the orbit
            (:mod:`jaxfriction._workflows.periodic.measure`).

    The lane program is compiled once per structure (system layout, paths, observables and
    ``derive`` by their code and closure values, times, solver options, shapes, devices)
    and reused by later calls, also when a call writes the same ``lambda`` again. Like ``jax.jit``, a function that reads a global variable sees its value
    when it was first compiled: pass such values through the system or a closure. Resume
    identifies user functions by their code and closure values, not by their globals.

    Returns:
        ``xarray.Dataset`` with one dimension per swept path (or ``sample``): every
            observable, ``grad_<name>`` per ``gradient_of`` name over a ``wrt`` dimension
            (coordinates: the paths), and ``status`` (codes of
            :mod:`jaxfriction._integrate.status`, with ``flag_values``/``flag_meanings``;
            invalid lanes hold NaN). Attributes: the run settings (``t1``, ``window``,
            ``t_measure``, ``dt``; ``cycles`` and ``frequency`` when the window is the last
            forcing cycle), the template's ``template``, ``description`` and ``source``, the
            fixed scalar parameters (``fixed``, JSON), ``flagged`` (counts of non-zero statuses), timings
            (``compile_seconds``, ``run_seconds``) and ``steps_per_second`` (fixed-step
            solvers).

    Raises:
        ValueError: naming the argument: an unknown path (with close matches), a swept
            frequency with ``cycles``, missing or invalid times, an unknown observable in
            ``gradient_of``, a bad gradient mode, solver, grid or kernel (a
            :class:`~jaxfriction.FusedKernel` for a sweep it does not support, with the reason),
            a grid whose points and results would exceed 2 GiB, ``devices`` that is not a list
            of devices or a count of them, and naming ``dt`` a fixed step longer than the run
            or the window or with fewer than 20 steps per forcing period
            (:mod:`jaxfriction._integrate.resolution`).
    """
    return plan_sweep(system, grid, t1=t1, window=window, cycles=cycles, frequency=frequency, dt=dt, y0=y0,
                      solver=solver, saveat=saveat, observables=observables, wrt=wrt, gradient=gradient,
                      gradient_of=gradient_of, derive=derive, samples=samples, chunk_size=chunk_size,
                      devices=devices, out_dir=out_dir, progress=progress, kernel=kernel,
                      steady_state=steady_state).run()


def plan_sweep(
    system: AbstractFrictionSystem | Template, grid: dict, *, t1: float | None = None, window=None,
    cycles: int | None = None, frequency: str | None = None, dt: float | None = None,
    y0: ArrayLike | None = None, solver=None, saveat=None, observables=None, wrt=(), gradient="auto",
    gradient_of="dissipation", derive=None, samples: bool = False, chunk_size: int | None = None,
    devices=None, out_dir=None, progress: bool = True, kernel="auto", steady_state=None,
) -> SweepPlan:
    """What :func:`sweep` would run, checked and built, without running it.

    Every argument as in :func:`sweep`. Use it to see which kernel a sweep takes and why, how
    many lanes it has, or to inspect or lower its lane program; ``plan.run()`` runs it.

    Returns:
        A :class:`SweepPlan`.

    Raises:
        ValueError: as :func:`sweep`, before anything is computed.
    """
    system, tpl = split_template(system)
    if not isinstance(grid, dict) or not grid:
        raise ValueError("grid must be a non-empty dict path -> 1-D array of values")
    if tpl is not None:
        dt = tpl.dt if dt is None else dt
        y0 = tpl.y0 if y0 is None else y0
        if t1 is None and cycles is None:
            if window is not None and tpl.cycles is not None:
                raise ValueError(f"window needs t1: the template {tpl.name or ''} measures the last of its cycles; "
                                 f"give t1 and window, or cycles")
            t1, cycles, window = tpl.t1, tpl.cycles, tpl.window if window is None else window
        if cycles is not None and frequency is None:
            frequency = tpl.frequency
    from ..periodic.measure import as_steady_state

    steady = as_steady_state(steady_state)
    if steady is not None:
        return _plan_steady(system, grid, steady, frequency=frequency, dt=dt, y0=y0, solver=solver,
                            observables=observables, wrt=wrt, gradient=gradient, gradient_of=gradient_of,
                            derive=derive, samples=samples, chunk_size=chunk_size, devices=devices,
                            out_dir=out_dir, progress=progress, kernel=kernel, tpl=tpl)
    if cycles is not None and frequency is not None and frequency in grid:
        raise ValueError(f"cycles needs a fixed forcing frequency, but {frequency!r} is swept: give t1 and window")
    if cycles is not None and frequency is not None and frequency in ((wrt,) if isinstance(wrt, str) else wrt):
        raise ValueError(f"wrt: with cycles the measured window moves with {frequency!r}, which the derivative "
                         f"would miss; give t1 and window to differentiate with respect to it")
    t_measure, t_end = run_times(system, t1, window, cycles, frequency)
    if dt is not None:
        check_real("dt", dt, positive=True)
    solver = as_solver(solver)
    if dt is not None and solver.steps_with_dt():
        check_step_resolution(system, dt, run=t_end, window=t_end - t_measure, swept=grid,
                              frequency=frequency if frequency is not None else tpl.frequency if tpl else None)
    saveat = SaveAt() if saveat is None else saveat
    observables, gradient_of, wrt, gradient = _measured(observables, gradient_of, wrt, gradient, ())
    gradient = as_gradient_mode(gradient)
    kernel = as_kernel(kernel)
    y0 = np.zeros(2 * system.n_dof) if y0 is None else jnp.asarray(y0, dtype=float)

    measure = Window(y0=system.as_state(y0), solver=solver, saveat=saveat, t_measure=t_measure, t_end=t_end,
                     dt=None if dt is None else float(dt),
                     observables=tuple((k, ByCode(f)) for k, f in observables.items()))

    # the window's fixed step grid, or None for a solver that chooses its own steps
    window_grid = None if dt is None else solver.step_grid(t_measure, t_end, dt, saveat)

    def check_memory(chunk: int) -> None:  # one chunk's saved windows, on the XLA path (compiled kernels save none)
        if window_grid is not None:
            saves = window_grid[0] + 1
            lanes = min(chunk, _lane_count(grid, samples))
            check_saved_size(saves * lanes, system.state_size,
                             jnp.result_type(float), what=f"window/saveat/chunk_size: a chunk of {lanes} lanes",
                             remedy="measure a shorter window, save it less often (saveat) or use a smaller "
                                    "chunk_size")

    steps = None
    if dt is not None and window_grid is not None:
        steps = (fixed_grid(0.0, t_measure, dt, None)[1] if t_measure > 0 else 0) + math.prod(window_grid[:2])
    settings = {"t1": t_end, "window": t_end - t_measure, "t_measure": t_measure, "dt": dt, "solver": repr(solver),
                "saveat": (saveat.every, saveat.n, None if saveat.ts is None else np.asarray(saveat.ts).tolist()),
                "y0": np.asarray(y0).tolist(), "gradient_of": list(gradient_of),
                "observables": sorted((k, function_digest(f)) for k, f in observables.items()),
                "derive": None if derive is None else function_digest(derive)}
    attrs = {k: v for k, v in settings.items() if k in ("t1", "window", "t_measure") or (k == "dt" and v is not None)}
    attrs.update(solver=type(solver).__name__, observables=",".join(observables),
                 template=tpl.name if tpl else "", source=tpl.source if tpl else "",
                 description=tpl.description if tpl else "")
    if cycles is not None:  # the window is the last of these forcing periods (the figure says so)
        attrs.update(cycles=int(cycles), **({"frequency": str(frequency)} if frequency is not None else {}))
    return _plan(system, grid, measure, wrt=wrt, gradient=gradient, gradient_of=gradient_of, derive=derive,
                 samples=samples, chunk_size=chunk_size, devices=devices, out_dir=out_dir, progress=progress,
                 settings=settings, attrs=attrs, steps_per_lane=steps, kernel=kernel, check_memory=check_memory)


def _measured(observables, gradient_of, wrt, gradient, extra) -> tuple:
    """The window's observables (default :data:`WINDOW_OBSERVABLES`), ``gradient_of`` and
    ``wrt`` as tuples, and the gradient mode (``"none"``: no ``wrt``); ``extra`` names outputs
    besides the observables that ``gradient_of`` may name."""
    observables = dict(WINDOW_OBSERVABLES if observables is None else observables)
    if not observables or not all(callable(f) for f in observables.values()):
        raise ValueError("observables must be a non-empty dict name -> function of a Trajectory")
    gradient_of = (gradient_of,) if isinstance(gradient_of, str) else tuple(gradient_of)
    wrt = (wrt,) if isinstance(wrt, str) else tuple(wrt)
    if isinstance(gradient, str) and gradient == "none":
        wrt, gradient = (), "auto"
    known = [*observables, *extra]
    unknown = [k for k in gradient_of if k not in known]
    if wrt and unknown:
        raise ValueError(f"gradient_of: {unknown} are not observables ({sorted(known)})")
    return observables, gradient_of if wrt else (), wrt, gradient


def _plan_steady(system, grid, steady, *, frequency, dt, y0, solver, observables, wrt, gradient, gradient_of,
                 derive, samples, chunk_size, devices, out_dir, progress, kernel, tpl) -> SweepPlan:
    """The plan of a steady-state sweep (:mod:`jaxfriction._workflows.periodic.measure`)."""
    from ..periodic.measure import steady_state_parts

    if solver is not None and type(as_solver(solver)) is not RK4:
        raise ValueError(f"solver: a steady-state sweep shoots on the fixed-step RK4 period map, got {solver!r}")
    if frequency is None and tpl is not None:
        frequency = tpl.frequency
    observables, gradient_of, wrt, gradient = _measured(observables, gradient_of, wrt, gradient,
                                                        ("residual", "period"))
    y0 = system.as_state(jnp.zeros(2 * system.n_dof) if y0 is None else jnp.asarray(y0, dtype=float))
    measure, settings, attrs, steps = steady_state_parts(system, grid, steady, frequency=frequency, dt=dt, y0=y0,
                                                         observables=observables)
    settings.update(gradient_of=list(gradient_of), derive=None if derive is None else function_digest(derive))
    attrs.update(solver="RK4", template=tpl.name if tpl else "", source=tpl.source if tpl else "",
                 description=tpl.description if tpl else "")
    return _plan(system, grid, measure, wrt=wrt, gradient=as_gradient_mode(gradient), gradient_of=gradient_of,
                 derive=derive, samples=samples, chunk_size=chunk_size, devices=devices, out_dir=out_dir,
                 progress=progress, settings=settings, attrs=attrs, steps_per_lane=steps, kernel=as_kernel(kernel))


def sensitivity_map(observable, system: AbstractFrictionSystem | Template, grid: dict, wrt, *,
                    gradient="auto", samples: bool = False, chunk_size: int = 1024, devices=None,
                    out_dir=None, progress: bool = True) -> xr.Dataset:
    """Gradients of a scalar ``observable(system)`` over a grid of parameter values.

    The same lanes, engine and dataset as :func:`sweep`, for an observable that runs its
    own simulation (or none): each lane sets the grid values in ``system`` and evaluates
    ``observable`` and its derivatives with respect to ``wrt``.

    Args:
        observable: scalar function of a system.
        system: the template system (or a :class:`~jaxfriction.Template`).
        grid: dict path -> 1-D array (outer product, or ``samples=True``).
        wrt: paths to differentiate with respect to.
        gradient: gradient mode (object or name), as :func:`sweep`.
        samples, chunk_size, devices, out_dir, progress: as :func:`sweep`.

    Returns:
        ``xarray.Dataset`` with ``value``, ``grad_value`` over ``wrt`` and ``status``
            (invalid lanes NaN with ``STATUS_INVALID_PARAMETER``).

    Raises:
        ValueError: naming an unknown path or a bad gradient mode.
    """
    system, _ = split_template(system)
    wrt = (wrt,) if isinstance(wrt, str) else tuple(wrt)
    if not wrt:
        raise ValueError("wrt must name at least one path")

    name = getattr(observable, "__qualname__", repr(observable))
    return _plan(system, grid, ScalarObservable(ByCode(observable)), wrt=wrt, gradient=as_gradient_mode(gradient),
                 gradient_of=("value",), derive=None, samples=samples, chunk_size=chunk_size, devices=devices,
                 out_dir=out_dir, progress=progress, settings={"observable": function_digest(observable)},
                 attrs={"observable": name}, kernel=as_kernel("vmap")).run()
