"""The global phase of :func:`~jaxfriction.fit`: a quasi-random design over a box of plausible
values, evaluated as lanes of one batched sweep, and the best candidates refined in parallel.

A stick-slip record's misfit has many local minima: the stick-slip period, and so the phase
of every later cycle, moves with the friction levels, so a start a quarter off can be closer
to a record shifted by one cycle than to the truth. Measured on the LuGre belt record of
``scripts/benchmarks/bench_identification.py`` (six parameters, 20 s, 2,001 samples), Levenberg-Marquardt
from a start 27 % below the truth stops at a minimum with ``sigma0`` 131 instead of 200 and a
loss 6 % above the global one, reporting small standard errors. The global phase evaluates
the misfit at ``candidates`` points of a scrambled Sobol (or Halton) design over the box
(``scipy.stats.qmc``; log-scaled for positive parameters), with the free segment states at
their data-based starts, as lanes of :func:`~jaxfriction.run_sweep` (the sweep engine:
chunked, ``vmap``-ed and sharded over the local devices), and refines the ``refine`` best,
distinct candidates by Levenberg-Marquardt (optimistix) ``vmap``-ed over the starts: one
compiled program advances all of them at once. A candidate whose run has a non-zero status is
a failed candidate (counted in the report, never ranked): a non-finite state, a failed
adaptive solve, and an RK4 step too long for the candidate's stick band or internal states
(``STATUS_UNSTABLE_STEP``: a Dahl box reaching sigma = 3e4 N/m at a 6.7 ms step flags 22 of
64 candidates, which were ranked with the honest ones before).

Systems integrated by an adaptive solver (a :class:`~jaxfriction.QuasiStaticSlider`, fitted
with its ``default_solver()``) get a cheaper design phase, the screen: the candidates are
integrated at a loose tolerance (``screen_rtol``, default 1e-3 against the slider's 1e-10) with
a bounded step budget (``screen_max_steps``), and only the refinement and the local optimiser
run at the system's own tolerance (the polish). In a decade-wide box of a velocity step, about
40 % of the candidates have a spring softer than the critical stiffness ``k_c = N (b - a) /
D_c``: their quasi-static slip rate runs away in finite time (no inertia stops it), and the
adaptive solver shrinks its steps until its budget (a million steps) is spent; under ``vmap``
the whole batch waits for them (``scripts/benchmarks/bench_rate_state_fit.py`` measures both; numbers in
the rate-and-state how-to). In the screen such a candidate fails after
``screen_max_steps`` and is left out (its misfit is NaN), while a stable one needs at most
about a hundred steps at ``rtol = 1e-3`` (720 at 1e-10), with misfits that rank the
candidates as the tight solve does (the screen's error on the friction is ``a`` times the
tolerance, far below the noise of a lab record). The refinement then runs one start after
another with the local optimiser's compiled Levenberg-Marquardt step: its batched form would
compile the adaptive solve's forward-mode Jacobian a second time, which costs several times
what running it does.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from ..._checks import check_choice, check_int, check_real
from ..._integrate.solvers import Diffrax
from ..._integrate.status import STATUS_NONFINITE, STATUS_OK, STATUS_UNSTABLE_STEP
from ..._xla_flags import loop_kernels_active
from ..sweep.engine import run_sweep
from .problem import _ls_fn, _stacked, _to_natural, to_unconstrained

if TYPE_CHECKING:
    from .problem import Problem


class GlobalSearch(eqx.Module):
    """Options of :func:`~jaxfriction.fit`'s global phase (``search=GlobalSearch(...)``).

    Args:
        candidates: points of the design (default 256; rounded up to a power of two for
            Sobol's balance).
        refine: the best candidates refined by Levenberg-Marquardt in parallel (default 8;
            one after another for records integrated by an adaptive solver, sharing the
            local optimiser's compiled step).
        steps: maximum Levenberg-Marquardt steps of each refinement (default 60).
        design: ``"sobol"`` (scrambled, default) or ``"halton"`` (``scipy.stats.qmc``).
        seed: the design's scrambling seed (default 0).
        chunk_size: lanes per compiled call of the design's sweep (default 256).
        screen_rtol: for a system integrated by an adaptive solver (one with a
            ``default_solver()``, fitted without ``dt``), the relative tolerance of the
            design's solves (default 1e-3; its absolute tolerance is scaled by the same
            factor); the refinement and the local optimiser keep the system's own. None: the
            design at the system's tolerance and step budget (no screen). Ignored for
            fixed-step (RK4) fits and where the system's own tolerance is looser.
        screen_max_steps: the step budget of each screened candidate (default 10,000); a
            candidate that needs more (a quasi-static slider softer than its critical
            stiffness, whose slip rate runs away) is counted as failed and left out.

    Raises:
        ValueError: naming the argument, for values out of range.
    """

    candidates: int = eqx.field(default=256, static=True)
    refine: int = eqx.field(default=8, static=True)
    steps: int = eqx.field(default=60, static=True)
    design: str = eqx.field(default="sobol", static=True)
    seed: int = eqx.field(default=0, static=True)
    chunk_size: int = eqx.field(default=256, static=True)
    screen_rtol: float | None = eqx.field(default=1e-3, static=True)
    screen_max_steps: int = eqx.field(default=10_000, static=True)

    def __check_init__(self):
        for name in ("candidates", "refine", "steps", "seed", "chunk_size", "screen_max_steps"):
            check_int(f"GlobalSearch {name}", getattr(self, name), minimum=0 if name == "seed" else 1)
        if self.screen_rtol is not None:
            check_real("GlobalSearch screen_rtol", self.screen_rtol, positive=True, scalar=True)
            if not self.screen_rtol < 1:
                raise ValueError(f"GlobalSearch screen_rtol must be < 1 (or None), got {self.screen_rtol!r}")
        if self.refine > self.candidates:
            raise ValueError(f"GlobalSearch refine = {self.refine} must not exceed candidates = {self.candidates}")
        check_choice("GlobalSearch design", self.design, ("sobol", "halton"))


def design_points(boxes, search: GlobalSearch) -> np.ndarray:
    """``(candidates, p)`` natural parameter values of the design over ``boxes``.

    Args:
        boxes: list of ``(lo, hi)`` finite intervals, one per parameter.
        search: the :class:`GlobalSearch`.

    A parameter with ``lo > 0`` is sampled uniformly in ``log p`` (boxes spanning decades
    get every decade alike), any other uniformly in ``p``.
    """
    from scipy.stats import qmc

    d = len(boxes)
    if search.design == "sobol":
        m = max(int(np.ceil(np.log2(search.candidates))), 0)
        unit = qmc.Sobol(d, scramble=True, seed=search.seed).random_base2(m)
    else:
        unit = qmc.Halton(d, scramble=True, seed=search.seed).random(search.candidates)
    out = np.empty_like(unit)
    for i, (lo, hi) in enumerate(boxes):
        if lo > 0:
            out[:, i] = np.exp(np.log(lo) + unit[:, i] * (np.log(hi) - np.log(lo)))
        else:
            out[:, i] = lo + unit[:, i] * (hi - lo)
    return out


class _DesignLane(eqx.Module):
    """One lane of the design's sweep: the misfit at natural parameter values, the free
    segment states at their data-based starts, and the runs' status: a candidate whose RK4
    run breaks a step rule (``STATUS_UNSTABLE_STEP``: a Dahl or LuGre law stiffer than the
    fit's step allows) is a failed candidate, never ranked, however small its misfit."""

    problem: object

    def __call__(self, **point):
        params = jnp.stack([jnp.asarray(point[n], dtype=self.problem.p0.dtype) for n in self.problem.names])
        theta = jnp.concatenate([params, self.problem.state0])
        r, status = _stacked(theta, self.problem, with_status=True)
        return {"loss": jnp.sum(r * r) / self.problem.n_data, "status": status}


class _FailedAsNaN(Diffrax):
    """A :class:`~jaxfriction.Diffrax` run whose states are NaN when it failed (its step budget
    spent): a screened candidate that fails then has a NaN misfit and is left out."""

    def integrate(self, system, y0, t0, t1, dt, saveat, args):
        ts, ys, status = super().integrate(system, y0, t0, t1, dt, saveat, args)
        return ts, jnp.where(status == STATUS_OK, ys, jnp.nan), status


def screened(problem: Problem, search: GlobalSearch) -> tuple[Problem, dict | None]:
    """The problem the design is evaluated on, and the screen's report entry.

    Records integrated by an adaptive :class:`~jaxfriction.Diffrax` run (a system's
    ``default_solver()``) get that run at ``search.screen_rtol`` (the absolute tolerance
    scaled alike) with ``search.screen_max_steps`` steps, failing as NaN; others are
    unchanged. Returns ``(problem, None)`` when nothing is screened."""
    if search.screen_rtol is None:
        return problem, None
    records, tolerances = [], None
    for rec in problem.records:
        solver = rec.solver
        if isinstance(solver, Diffrax) and solver.stepsize_controller is None:
            factor = max(float(search.screen_rtol) / float(solver.rtol), 1.0)
            rtol, atol = float(solver.rtol) * factor, float(solver.atol) * factor
            solver = _FailedAsNaN(solver.solver, rtol=rtol, atol=atol, max_steps=search.screen_max_steps,
                                  adjoint=solver.adjoint)
            tolerances = {"rtol": rtol, "atol": atol, "max_steps": search.screen_max_steps,
                          "polish_rtol": float(rec.solver.rtol)}
            rec = dataclasses.replace(rec, solver=solver)
        records.append(rec)
    if tolerances is None:
        return problem, None
    return dataclasses.replace(problem, records=tuple(records)), tolerances


def evaluate_design(problem: Problem, points: np.ndarray, search: GlobalSearch, devices=None,
                    with_status: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Misfit ``(candidates,)`` at every design point (NaN where the run's status is not 0:
    a non-finite or failed run, or an RK4 step its stability rules flag); with
    ``with_status`` also the ``(candidates,)`` statuses."""
    grid = {name: points[:, i] for i, name in enumerate(problem.names)}
    ds = run_sweep(_DesignLane(problem), grid, samples=True, chunk_size=search.chunk_size, devices=devices,
                   progress=False)
    status = np.asarray(ds["status"].values)
    loss = np.where(status == 0, np.asarray(ds["loss"].values, dtype=float), np.nan)
    return (loss, status) if with_status else loss


#: Corners of the box checked against the step rules: all of them up to this many, else
#: this many drawn at random (seeded) with the all-low and all-high corners among them.
MAX_CORNERS = 64
#: A fit whose step is the default halves it at most this many times (to 1/32) to satisfy
#: the step rules at every checked corner of the box (a Dahl box reaching sigma = 3e3 N/m
#: needed 1/32 of a 0.02 s sample interval).
STEP_HALVINGS = 5


def box_corners(boxes: list[tuple[float, float]]) -> np.ndarray:
    """``(c, k)`` corners of the box ``[(lo, hi), ...]`` (see :data:`MAX_CORNERS`)."""
    k = len(boxes)
    lo, hi = np.array(boxes, dtype=float).T
    if 2**k <= MAX_CORNERS:
        bits = (np.arange(2**k)[:, None] >> np.arange(k)) & 1
    else:
        rng = np.random.default_rng(0)
        bits = np.vstack([np.zeros(k, int), np.ones(k, int), rng.integers(0, 2, (MAX_CORNERS - 2, k))])
    return np.where(bits == 1, hi, lo)


def _step(problem: Problem) -> float:
    return min(rec.h for rec in problem.records)


def _checked_step(problem, points, corners, search, devices, rebuild):
    """Evaluate the design and the box's corners; where a corner's RK4 run is flagged (an
    unstable step, or a run blown up to non-finite values) and the step is the fit's default
    (``rebuild`` given), halve the step and try again.

    Returns ``(problem, screen, loss of the design points, step report)``.

    Raises:
        ValueError: naming ``dt``, when a corner is still flagged after :data:`STEP_HALVINGS`.
    """
    n, default = points.shape[0], _step(problem)
    for halvings in range(STEP_HALVINGS + 1):
        screen_problem, screen = screened(problem, search)
        loss, status = evaluate_design(screen_problem, np.vstack([points, corners]), search, devices, with_status=True)
        flagged = np.flatnonzero(np.isin(status[n:], (STATUS_UNSTABLE_STEP, STATUS_NONFINITE)))
        if flagged.size == 0 or rebuild is None:
            break
        if halvings == STEP_HALVINGS:
            corner = dict(zip(problem.names, corners[flagged[0]].tolist()))
            raise ValueError(f"dt: RK4's step rules flag the run (an unstable step, or non-finite) at "
                             f"{flagged.size} of the box's {len(corners)} "
                             f"corners (e.g. {corner}) at the default step {default:.4g} and still at "
                             f"{_step(problem):.4g}, 1/{2**STEP_HALVINGS} of it; give dt (a search then counts the "
                             f"flagged candidates as failed) or narrow the box")
        problem = rebuild(0.5 * _step(problem))
    step = {"dt": _step(problem), "default_dt": default, "halvings": halvings,
            "corners": len(corners), "flagged_corners": int(flagged.size)}
    return problem, screen, loss[:n], step


def pick_starts(points: np.ndarray, loss: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` design points of lowest finite misfit (a low-discrepancy design
    has no duplicates to skip)."""
    order = [i for i in np.argsort(loss) if np.isfinite(loss[i])]
    return np.asarray(order[:k], dtype=int)


@eqx.filter_jit
def _refine(u0s, problem, solver, steps):
    import optimistix as optx

    def one(u0) -> tuple[Array, Array, Array]:
        sol: optx.Solution = optx.least_squares(_ls_fn, solver, u0, args=problem, has_aux=True, max_steps=steps, throw=False)
        r = _stacked(_to_natural(sol.value, problem), problem)
        return sol.value, jnp.sum(r * r) / problem.n_data, sol.stats["num_steps"]

    return jax.vmap(one)(u0s)


#: The refinement's stopping tolerance on the loss (relative) for the one-by-one path: the
#: local optimiser then polishes the best end point to the fit's own ``tol``.
REFINE_TOL = 1e-8


def _refine_one_by_one(u0s, problem: Problem, search: GlobalSearch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Levenberg-Marquardt from each start in turn, with the compiled step of the fit's local
    optimiser (:func:`~.local_phase.run_least_squares` and the ``"lm"`` shortcut's solver).

    For records integrated by an adaptive solver: under ``vmap`` its steps run in lockstep
    until the slowest start's solve ends, and the batched Levenberg-Marquardt program is a
    second compilation of the adaptive solve's forward-mode Jacobian (on the velocity step of
    ``scripts/benchmarks/bench_rate_state_fit.py``, ten times longer than running it); one by one, the
    refinement shares its compiled step with the local optimiser that follows."""
    from .fit import _levenberg_marquardt
    from .local_phase import negligible_decrease, run_least_squares

    solver, negligible = _levenberg_marquardt(), negligible_decrease(problem)
    ends, losses, steps = [], [], []
    for u0 in u0s:
        u, history, taken, _, _ = run_least_squares(u0, problem, solver, search.steps, REFINE_TOL, lambda _: None,
                                                    negligible)
        ends.append(np.asarray(u))
        losses.append(history[-1])
        steps.append(taken)
    loss = np.asarray(losses, dtype=float)
    return np.stack(ends), np.where(np.isfinite(loss), loss, np.nan), np.asarray(steps)


def refine_starts(problem: Problem, starts: np.ndarray,
                  search: GlobalSearch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Levenberg-Marquardt from every start at once (``vmap``), or one by one
    (:func:`_refine_one_by_one`) for records integrated by an adaptive solver, and on a CPU
    whose XLA loops run as single kernels (``JAXFRICTION_XLA_LOOP_KERNELS=1``,
    :func:`~jaxfriction._xla_flags.loop_kernels_active`).

    One by one, the refinement shares its compiled step with the local optimiser and each
    start ends by the local optimiser's stopping rules; batched, the starts advance in
    lockstep for ``search.steps`` in a second program. Which is cheaper depends on what an
    evaluation costs against what compiling costs: on the EMPS single-shooting box search the
    batched program compiles for about 8 s, while a Jacobian evaluation costs 23 ms with loop
    kernels and about 200 ms without them (``docs/performance.md``, "Identification on real
    records"), so with loop kernels one by one is cheaper and without them it is not.

    Args:
        problem: the fit's problem.
        starts: ``(k, p)`` natural parameter values.
        search: the :class:`GlobalSearch`.

    Returns:
        ``(u, loss, steps)``: ``(k, n_variables)`` end points (unconstrained), their misfits
            ``(k,)`` (NaN where not finite) and the steps each took ``(k,)``.
    """
    import optimistix as optx

    n_states = problem.state0.shape[0]
    u_params = to_unconstrained(starts, problem)
    u0s = jnp.asarray(np.concatenate([u_params, np.zeros((len(starts), n_states))], axis=1))
    if any(rec.solver is not None for rec in problem.records) or (
            jax.default_backend() == "cpu" and loop_kernels_active()):
        return _refine_one_by_one(u0s, problem, search)
    solver: optx.LevenbergMarquardt = optx.LevenbergMarquardt(rtol=1e-7, atol=1e-9)
    u, loss, steps = _refine(u0s, problem, solver, search.steps)
    loss = np.asarray(loss, dtype=float)
    return np.asarray(u), np.where(np.isfinite(loss), loss, np.nan), np.asarray(steps)


@eqx.filter_jit
def _naturals(u, problem):
    """``_to_natural`` of every row of ``u``: one compiled program, not one per operation."""
    return jax.vmap(lambda x: _to_natural(x, problem))(u)


def distinct_optima(params: np.ndarray, loss: np.ndarray, rtol: float = 1e-2) -> list[dict]:
    """Group refined end points into distinct local optima.

    Two end points are the same optimum when every parameter agrees to ``rtol`` (relative to
    the larger magnitude). Returns a list of dicts ``{"params": (p,) array, "loss": float,
    "count": int}``, lowest misfit first; end points with a non-finite misfit are left out.
    """
    optima: list[dict] = []
    for i in np.argsort(loss):
        if not np.isfinite(loss[i]):
            continue
        for opt in optima:
            scale = np.maximum(np.abs(opt["params"]), np.abs(params[i]))
            if np.all(np.abs(opt["params"] - params[i]) <= rtol * np.where(scale > 0, scale, 1.0)):
                opt["count"] += 1
                break
        else:
            optima.append({"params": np.asarray(params[i], dtype=float), "loss": float(loss[i]), "count": 1})
    return optima


def check_search_boxes(names: tuple[str, ...], parsed: list) -> None:
    """Every parameter of a global search needs a finite box (ValueError naming ``bounds``)."""
    open_ = [n for n, (kind, _, _) in zip(names, parsed) if kind != "interval"]
    if open_:
        raise ValueError(f"bounds: a global search needs a finite (lo, hi) box for every estimated parameter; "
                         f"{open_} have none")


def global_phase(problem: Problem, parsed: list, search: GlobalSearch, devices,
                 rebuild=None) -> tuple[Array, dict, int, Problem]:
    """The global phase of a fit: design, batched misfit, parallel refinement.

    The box's corners (:func:`box_corners`) are run with the design. Where the step is the
    fit's default and a corner's run is flagged (``STATUS_UNSTABLE_STEP`` or
    ``STATUS_NONFINITE``: a stiff corner, such as a Dahl law's largest ``sigma``), the step is
    halved, up to :data:`STEP_HALVINGS` times, until no corner is flagged.

    Args:
        problem: the fit's problem.
        parsed: the parameters' ``(kind, lo, hi)`` (finite boxes).
        search: the :class:`GlobalSearch`.
        devices: the devices the design is sharded over (None: all local).
        rebuild: ``rebuild(dt) -> Problem``, the problem at a smaller step, where the step is
            the default (None: ``dt`` was given, and flagged candidates just fail).

    Returns:
        ``(u, report, evaluations, problem)``: the start of the local optimiser
            (unconstrained), the report dict of ``FitResult.search`` (its ``"step"`` entry
            says which step was used and why), the misfit evaluations spent and the problem
            (at the step used).

    Raises:
        ValueError: naming ``bounds`` when the simulation fails at every design point;
            naming ``dt`` when a corner is still flagged at 1/32 of the default step.
    """
    boxes = [(lo, hi) for _, lo, hi in parsed]
    points = design_points(boxes, search)
    # the step rules are RK4's: an adaptive solve (the screen below) has none to check
    rk4 = all(rec.solver is None for rec in problem.records)
    corners = box_corners(boxes) if rk4 else np.empty((0, len(boxes)))
    problem, screen, loss, step = _checked_step(problem, points, corners, search, devices, rebuild if rk4 else None)
    if not np.any(np.isfinite(loss)):
        more = (f" (screened at rtol = {screen['rtol']:.3g} with {screen['max_steps']} steps each: raise "
                f"GlobalSearch screen_max_steps, or screen_rtol=None)" if screen else "")
        raise ValueError(f"bounds: the simulation failed (non-finite misfit or an unstable RK4 step) at every "
                         f"point of the design{more}; "
                         f"narrow the box or reduce dt")
    starts = pick_starts(points, loss, search.refine)
    u, refined_loss, steps = refine_starts(problem, points[starts], search)
    theta = np.asarray(_naturals(jnp.asarray(u), problem))[:, : problem.n_params]
    optima = distinct_optima(theta, refined_loss)
    if np.any(np.isfinite(refined_loss)):
        start = u[int(np.nanargmin(refined_loss))]
    else:  # every refinement failed: the local optimiser starts from the best design point
        start = np.concatenate([to_unconstrained(points[starts[0]], problem), np.zeros(u.shape[1] - problem.n_params)])
    report = {
        "design": search.design,
        "candidates": int(points.shape[0]),
        "failed_candidates": int(np.sum(~np.isfinite(loss))),
        "refined": int(len(starts)),
        "best_design_loss": float(np.nanmin(loss)),
        "screen": screen,
        "step": step,
        "optima": [{"params": dict(zip(problem.names, o["params"].tolist())), "loss": o["loss"], "count": o["count"]}
                   for o in optima],
    }
    designs = (points.shape[0] + corners.shape[0]) * (step["halvings"] + 1)
    return jnp.asarray(start), report, int(designs + np.sum(steps)), problem
