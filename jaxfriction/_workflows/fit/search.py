"""The global phase of :func:`~jaxfriction.fit`: a quasi-random design over a box of plausible
values, evaluated as lanes of one batched sweep, and the best candidates refined in parallel.

A stick-slip record's misfit has many local minima: the stick-slip period, and so the phase
of every later cycle, moves with the friction levels, so a start a quarter off can be closer
to a record shifted by one cycle than to the truth. Measured on the LuGre belt record of
``scripts/bench_identification.py`` (six parameters, 20 s, 2,001 samples), Levenberg-Marquardt
from a start 27 % below the truth stops at a minimum with ``sigma0`` 131 instead of 200 and a
loss 6 % above the global one, reporting small standard errors. The global phase evaluates
the misfit at ``candidates`` points of a scrambled Sobol (or Halton) design over the box
(``scipy.stats.qmc``; log-scaled for positive parameters), with the free segment states at
their data-based starts, as lanes of :func:`~jaxfriction.run_sweep` (the sweep engine:
chunked, ``vmap``-ed and sharded over the local devices), and refines the ``refine`` best,
distinct candidates by Levenberg-Marquardt (optimistix) ``vmap``-ed over the starts: one
compiled program advances all of them at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from ..._checks import check_int
from ..sweep.engine import run_sweep
from .problem import _ls_fn, _stacked, _to_natural, to_unconstrained

if TYPE_CHECKING:
    from .problem import Problem


class GlobalSearch(eqx.Module):
    """Options of :func:`~jaxfriction.fit`'s global phase (``search=GlobalSearch(...)``).

    Args:
        candidates: points of the design (default 256; rounded up to a power of two for
            Sobol's balance).
        refine: the best candidates refined by Levenberg-Marquardt in parallel (default 8).
        steps: maximum Levenberg-Marquardt steps of each refinement (default 60).
        design: ``"sobol"`` (scrambled, default) or ``"halton"`` (``scipy.stats.qmc``).
        seed: the design's scrambling seed (default 0).
        chunk_size: lanes per compiled call of the design's sweep (default 256).

    Raises:
        ValueError: naming the argument, for values out of range.
    """

    candidates: int = eqx.field(default=256, static=True)
    refine: int = eqx.field(default=8, static=True)
    steps: int = eqx.field(default=60, static=True)
    design: str = eqx.field(default="sobol", static=True)
    seed: int = eqx.field(default=0, static=True)
    chunk_size: int = eqx.field(default=256, static=True)

    def __check_init__(self):
        for name in ("candidates", "refine", "steps", "seed", "chunk_size"):
            check_int(f"GlobalSearch {name}", getattr(self, name), minimum=0 if name == "seed" else 1)
        if self.refine > self.candidates:
            raise ValueError(f"GlobalSearch refine = {self.refine} must not exceed candidates = {self.candidates}")
        if self.design not in ("sobol", "halton"):
            raise ValueError(f"GlobalSearch design must be 'sobol' or 'halton', got {self.design!r}")


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
    segment states at their data-based starts."""

    problem: object

    def __call__(self, **point):
        params = jnp.stack([jnp.asarray(point[n], dtype=self.problem.p0.dtype) for n in self.problem.names])
        theta = jnp.concatenate([params, self.problem.state0])
        r = _stacked(theta, self.problem)
        return {"loss": jnp.sum(r * r) / self.problem.n_data}


def evaluate_design(problem: Problem, points: np.ndarray, search: GlobalSearch, devices=None) -> np.ndarray:
    """Misfit ``(candidates,)`` at every design point (NaN where the simulation failed)."""
    grid = {name: points[:, i] for i, name in enumerate(problem.names)}
    ds = run_sweep(_DesignLane(problem), grid, samples=True, chunk_size=search.chunk_size, devices=devices,
                   progress=False)
    loss = np.asarray(ds["loss"].values, dtype=float)
    return np.where(np.asarray(ds["status"].values) == 0, loss, np.nan)


def pick_starts(points: np.ndarray, loss: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` design points of lowest finite misfit (a low-discrepancy design
    has no duplicates to skip)."""
    order = [i for i in np.argsort(loss) if np.isfinite(loss[i])]
    return np.asarray(order[:k], dtype=int)


@eqx.filter_jit
def _refine(u0s, problem, solver, steps):
    import optimistix as optx

    def one(u0) -> tuple[Array, Array, Array]:
        sol = optx.least_squares(_ls_fn, solver, u0, args=problem, has_aux=True, max_steps=steps, throw=False)
        r = _stacked(_to_natural(sol.value, problem), problem)
        return sol.value, jnp.sum(r * r) / problem.n_data, sol.stats["num_steps"]

    return jax.vmap(one)(u0s)


def refine_starts(problem: Problem, starts: np.ndarray,
                  search: GlobalSearch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Levenberg-Marquardt from every start at once.

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
    solver = optx.LevenbergMarquardt(rtol=1e-7, atol=1e-9)
    u, loss, steps = _refine(u0s, problem, solver, search.steps)
    loss = np.asarray(loss, dtype=float)
    return np.asarray(u), np.where(np.isfinite(loss), loss, np.nan), np.asarray(steps)


def distinct_optima(params: np.ndarray, loss: np.ndarray, rtol: float = 1e-2) -> list[dict]:
    """Group refined end points into distinct local optima.

    Two end points are the same optimum when every parameter agrees to ``rtol`` (relative to
    the larger magnitude). Returns a list of dicts ``{"params": (p,) array, "loss": float,
    "count": int}``, lowest misfit first; end points with a non-finite misfit are left out.
    """
    optima = []
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


def global_phase(problem: Problem, parsed: list, search: GlobalSearch, devices) -> tuple[Array, dict, int]:
    """The global phase of a fit: design, batched misfit, parallel refinement.

    Args:
        problem: the fit's problem.
        parsed: the parameters' ``(kind, lo, hi)`` (finite boxes).
        search: the :class:`GlobalSearch`.
        devices: the devices the design is sharded over (None: all local).

    Returns:
        ``(u, report, evaluations)``: the start of the local optimiser (unconstrained), the
            report dict of ``FitResult.search`` and the misfit evaluations spent.

    Raises:
        ValueError: naming ``bounds`` when the simulation fails at every design point.
    """
    points = design_points([(lo, hi) for _, lo, hi in parsed], search)
    loss = evaluate_design(problem, points, search, devices)
    if not np.any(np.isfinite(loss)):
        raise ValueError("bounds: the simulation failed (non-finite misfit) at every point of the design; narrow "
                         "the box or reduce dt")
    starts = pick_starts(points, loss, search.refine)
    u, refined_loss, steps = refine_starts(problem, points[starts], search)
    theta = np.asarray(jax.vmap(lambda x: _to_natural(x, problem))(jnp.asarray(u)))[:, : problem.n_params]
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
        "optima": [{"params": dict(zip(problem.names, o["params"].tolist())), "loss": o["loss"], "count": o["count"]}
                   for o in optima],
    }
    return jnp.asarray(start), report, int(points.shape[0] + np.sum(steps))
