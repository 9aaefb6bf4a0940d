"""The least-squares problem of :func:`~jaxfriction.fit` and its optimizer loops.

The template system, records, parameter paths and transforms as one equinox pytree (data
arrays are dynamic leaves, the grid structure static, so a second fit of the same shapes
reuses the compiled code); the residuals, the loss and its gradient in forward or reverse
mode; the optimizer loops (any optax ``GradientTransformation``, any optimistix
least-squares solver) that record the loss history.
"""

from __future__ import annotations

import math
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array

from ..._forcing.sampled import with_inputs
from ..._integrate.rk4 import rk4_scan
from ..._integrate.saveat import SaveAt
from ..._integrate.simulate import simulate
from ..._integrate.solvers import rk4_status
from ..._paths import set_parameters
from ..._systems.base import AbstractFrictionSystem
from .outputs import channel_values


class Record(eqx.Module):
    q: jax.Array | None  # (n, kq) measured positions
    v: jax.Array | None  # (n, kv) measured velocities
    channels: jax.Array | None  # (n, kc) measured channels, system.internal(ys, name)
    y0: jax.Array | None  # (2 n_dof + n_internal,) known initial state (q, v, z)
    weight: jax.Array
    channel_names: tuple = eqx.field(static=True)
    q_dofs: tuple = eqx.field(static=True)
    v_dofs: tuple = eqx.field(static=True)
    t_bounds: tuple = eqx.field(static=True)  # segment start times (S Python floats) and the end time
    i_bounds: tuple = eqx.field(static=True)  # segment boundary sample indices, S + 1 ints
    h: float = eqx.field(static=True)  # RK4 step
    n_sub: int = eqx.field(static=True)  # RK4 steps per sample interval
    solver: object = None  # an adaptive Diffrax run (one segment) instead of RK4, or None
    inputs: tuple = ()  # Sampled drives: the record's measured inputs, at input_paths
    input_paths: tuple = eqx.field(static=True, default=())

    def system(self, system):
        """``system`` driven by this record's measured inputs."""
        return with_inputs(system, dict(zip(self.input_paths, self.inputs)))

    def times(self, dtype):
        """``(n,)`` sample times of the record."""
        return self.t_bounds[0] + self.h * self.n_sub * jnp.arange(self.i_bounds[-1] + 1, dtype=dtype)

    @property
    def n_segments(self) -> int:
        return len(self.i_bounds) - 1

    @property
    def n_free_states(self) -> int:
        return self.n_segments - (self.y0 is not None)


class Problem(eqx.Module):
    system: AbstractFrictionSystem  # the template system; the fitted paths are set in it
    names: tuple = eqx.field(static=True)  # the fitted paths
    kinds: tuple = eqx.field(static=True)  # per parameter: "free", "lower", "upper", "interval"
    n_data: int = eqx.field(static=True)
    lo: jax.Array
    hi: jax.Array
    p0: jax.Array
    state0: jax.Array  # natural initial values of the free segment states, flat
    state_scale: jax.Array
    defect_weight: jax.Array  # per continuity defect: 1 for q and v, std(q) / std(z) for internal variables
    records: tuple
    velocity_weight: jax.Array
    continuity_weight: jax.Array
    outputs: tuple = eqx.field(static=True, default=())  # user channels: (name, fn(system, t, y)) pairs
    constraints: tuple = eqx.field(static=True, default=())  # (name, margin(system) >= 0 when satisfied) pairs
    constraint_weight: float = eqx.field(static=True, default=1e4)

    @property
    def n_params(self) -> int:
        return len(self.names)


def natural_parameters(u, kinds: tuple, lo, hi, p0):
    """Parameters ``(p,)`` from unconstrained ``u`` (its first ``p`` entries; ``u = 0`` is the
    guess ``p0``), per ``kinds``: ``"lower"`` ``lo + (p0 - lo) e^u``, ``"upper"`` ``hi - (hi -
    p0) e^u``, ``"interval"`` a logistic map into ``(lo, hi)``, ``"free"`` ``p0 + |p0| u``."""
    out = []
    for i, kind in enumerate(kinds):
        low, high, start, x = lo[i], hi[i], p0[i], u[i]
        if kind == "lower":
            out.append(low + (start - low) * jnp.exp(x))
        elif kind == "upper":
            out.append(high - (high - start) * jnp.exp(x))
        elif kind == "interval":
            out.append(low + (high - low) * jax.nn.sigmoid(x + jnp.log((start - low) / (high - start))))
        else:
            out.append(start + jnp.where(start != 0, jnp.abs(start), 1.0) * x)
    return jnp.stack(out)


def _to_natural(u, problem):
    """Natural variables ``theta`` (parameters, then segment states) from unconstrained ``u``."""
    params = natural_parameters(u, problem.kinds, problem.lo, problem.hi, problem.p0)
    states = problem.state0 + problem.state_scale * u[problem.n_params :]
    return jnp.concatenate([params, states])


def to_unconstrained(params, problem: Problem) -> Array:
    """The inverse of the parameter transforms: ``u`` ``(..., p)`` of natural parameter
    values ``(..., p)`` (NumPy; the segment states are not included)."""
    params = np.asarray(params, dtype=float)
    lo, hi, p0 = (np.asarray(x, dtype=float) for x in (problem.lo, problem.hi, problem.p0))
    out = np.empty_like(params)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, kind in enumerate(problem.kinds):
            x = params[..., i]
            if kind == "lower":
                out[..., i] = np.log((x - lo[i]) / (p0[i] - lo[i]))
            elif kind == "upper":
                out[..., i] = np.log((hi[i] - x) / (hi[i] - p0[i]))
            elif kind == "interval":
                out[..., i] = np.log((x - lo[i]) / (hi[i] - x)) - np.log((p0[i] - lo[i]) / (hi[i] - p0[i]))
            else:
                out[..., i] = (x - p0[i]) / (abs(p0[i]) if p0[i] != 0 else 1.0)
    return out


def _simulate_record(system, rec, starts):
    """Predicted states ``(n, state_size)`` at every sample of ``rec``, the continuity
    defects and the run's status (``simulate``'s; for segments RK4's at the samples,
    :func:`~jaxfriction._integrate.solvers.rk4_status`).

    One segment: :func:`~jaxfriction.simulate` (RK4 in ``lax.scan``; with ``rec.solver``, that
    adaptive run saved at the sample times, its steps ending at the drive's jumps). Several: the same RK4
    scan (:func:`~jaxfriction.rk4_scan`, which ``simulate`` runs) vmapped over the segments
    (``simulate`` needs concrete start times; one vmapped scan keeps the compiled program, and
    its compile time, independent of the number of segments); every segment runs the longest
    segment's length and the surplus samples are dropped.
    """
    n, width = system.n_dof, 2 * system.n_dof + system.n_internal
    if rec.n_segments == 1:
        if rec.solver is not None:
            ts = rec.times(starts.dtype)
            traj = simulate(system, starts[0], rec.t_bounds[0], rec.t_bounds[1], solver=rec.solver,
                            saveat=SaveAt(ts=jnp.minimum(ts, rec.t_bounds[1])))
        else:
            traj = simulate(system, starts[0], rec.t_bounds[0], rec.t_bounds[1], rec.h, save_every=rec.n_sub)
        return traj.ys, jnp.zeros((0,), dtype=traj.ys.dtype), traj.status
    lengths = np.diff(rec.i_bounds)
    y0s = jax.vmap(system.initial_state)(starts[:, :n], starts[:, n : 2 * n], starts[:, 2 * n :])
    t0s = jnp.asarray(rec.t_bounds[:-1], dtype=y0s.dtype)
    _, ys = jax.vmap(
        lambda y0, t0: rk4_scan(system.vector_field, y0, t0, rec.h, int(lengths.max()), rec.n_sub)
    )(y0s, t0s)
    seg = np.concatenate([np.full(n, s) for s, n in enumerate(lengths)] + [[len(lengths) - 1]])
    step = np.concatenate([np.arange(n) for n in lengths] + [[lengths[-1]]])
    ends = ys[np.arange(len(lengths) - 1), lengths[:-1], :width]
    ys = ys[seg, step]
    return ys, (ends - starts[1:]).ravel(), rk4_status(system, rec.times(ys.dtype), ys, rec.h)


def predicted(system, rec, ys, outputs=()) -> tuple:
    """What record ``rec`` measures, as the model predicts it from the states ``ys`` ``(n,
    state_size)``: ``(q (n, kq) or None, v (n, kv) or None, channels (n, kc) or None)``."""
    q = None if rec.q is None else ys[:, list(rec.q_dofs)]
    v = None if rec.v is None else ys[:, [system.n_dof + d for d in rec.v_dofs]]
    channels = None
    if rec.channels is not None:
        ts = rec.times(ys.dtype)
        channels = jnp.stack([channel_values(system, outputs, ts, ys, name) for name in rec.channel_names], axis=-1)
    return q, v, channels


def _residuals(theta, problem):
    """Data residuals ``(n_data,)``, continuity defects and the records' worst run status
    (:func:`_simulate_record`: a non-finite state, a failed adaptive solve, or an RK4 step
    too long for a stick band or a dynamic law's internal state) at natural ``theta``; the
    status is dropped by the compiler where it is not used."""
    template = set_parameters(problem.system, {name: theta[i] for i, name in enumerate(problem.names)})
    width = 2 * template.n_dof + template.n_internal
    data, defects, offset, statuses = [], [], problem.n_params, []
    for rec in problem.records:
        system = rec.system(template)
        k = rec.n_free_states
        free = theta[offset : offset + width * k].reshape(k, width)
        offset += width * k
        starts = free if rec.y0 is None else jnp.concatenate([rec.y0[None].astype(free.dtype), free])
        ys, d, status = _simulate_record(system, rec, starts)
        statuses.append(status)
        q, v, channels = predicted(system, rec, ys, problem.outputs)
        w = jnp.sqrt(rec.weight)
        if rec.q is not None:
            data.append(w * (q - rec.q).ravel())
        if rec.v is not None:
            data.append(w * problem.velocity_weight * (v - rec.v).ravel())
        if rec.channels is not None:
            data.append(w * (channels - rec.channels).ravel())
        defects.append(d)
    defects = jnp.concatenate(defects)
    return (jnp.concatenate(data), defects * problem.defect_weight.astype(defects.dtype),
            jnp.max(jnp.stack(statuses)))


def _stacked(theta, problem, with_status: bool = False):
    """All residuals: data, then ``sqrt(continuity_weight)`` times the defects, then the
    constraint penalties ``sqrt(constraint_weight n_data) min(margin, 0)``; with
    ``with_status`` also the runs' status (:func:`_residuals`)."""
    r, d, status = _residuals(theta, problem)
    parts = [r, jnp.sqrt(problem.continuity_weight) * d]
    if problem.constraints:
        system = set_parameters(problem.system, {name: theta[i] for i, name in enumerate(problem.names)})
        margins = jnp.stack([jnp.reshape(fn(system), ()) for _, fn in problem.constraints]).astype(r.dtype)
        parts.append(jnp.sqrt(problem.constraint_weight * problem.n_data) * jnp.minimum(margins, 0.0))
    return (jnp.concatenate(parts), status) if with_status else jnp.concatenate(parts)


def _loss_plain(u, problem):
    r = _stacked(_to_natural(u, problem), problem)
    return jnp.sum(r * r) / problem.n_data


def _residuals_jacobian(u, problem):
    """Stacked residuals at ``u`` and their Jacobian ``d r / d u`` (forward mode, batched JVP)."""

    def f(x) -> tuple[Array, Array]:
        r = _stacked(_to_natural(x, problem), problem)
        return r, r

    jac, r = jax.jacfwd(f, has_aux=True)(u)
    return r, jac


@eqx.filter_jit
def forward_value_and_grad(u: Array, problem: Problem) -> tuple[Array, Array, Array, Array]:
    r, jac = _residuals_jacobian(u, problem)
    return jnp.sum(r * r) / problem.n_data, 2.0 * (r @ jac) / problem.n_data, r, jac


# filtered custom rules (equinox): the problem's non-array leaves (a literal ``0.0`` damping,
# a chain's int ``n``) stay Python values instead of becoming traced inputs of the rule


@eqx.filter_custom_vjp
def _loss_forward(u, problem):
    """The loss, with a custom VJP that computes the gradient in forward mode."""
    return _loss_plain(u, problem)


@_loss_forward.def_fwd
def _loss_forward_fwd(perturbed, u, problem):
    r, jac = _residuals_jacobian(u, problem)
    return jnp.sum(r * r) / problem.n_data, 2.0 * (r @ jac) / problem.n_data


@_loss_forward.def_bwd
def _loss_forward_bwd(grad, ct, perturbed, u, problem):
    return ct * grad


@eqx.filter_jit
def natural_and_slope(u: Array, problem: Problem) -> tuple[Array, Array]:
    """``theta = T(u)`` and the diagonal ``d theta / d u`` (the transforms are elementwise)."""
    return jax.jvp(lambda x: _to_natural(x, problem), (u,), (jnp.ones_like(u),))


def _loss(mode):
    return _loss_forward if mode == "forward" else _loss_plain


@eqx.filter_jit
def _optax_step(u, state, problem, opt, mode):
    """One optax update at ``u``: the loss and gradient at ``u``, then the new iterate.

    Line-search transformations (``optax.lbfgs``, ``scale_by_zoom_linesearch``) keep the
    value and gradient of the accepted point in their state; they are reused
    (``optax.value_and_grad_from_state``) instead of computed again.
    """
    loss = _loss(mode)

    def f(x) -> Array:
        return loss(x, problem)

    if optax.tree.get(state, "value") is not None and optax.tree.get(state, "grad") is not None:
        value, grad = optax.value_and_grad_from_state(f)(u, state=state)
    else:
        value, grad = jax.value_and_grad(f)(u)
    if isinstance(opt, optax.GradientTransformationExtraArgs):
        updates, state = opt.update(grad, state, u, value=value, grad=grad, value_fn=f)
    else:
        updates, state = opt.update(grad, state, u)
    return optax.apply_updates(u, updates), state, value, grad


@eqx.filter_jit
def _value_and_grad(u, problem, mode):
    return jax.value_and_grad(_loss(mode))(u, problem)


def _finite(value, grad):
    return math.isfinite(value) and bool(np.all(np.isfinite(np.asarray(grad))))


#: How a local run that did not stop at an optimum begins its message (the report reads it):
#: at the step limit, or on a non-finite loss (these messages contain "non-finite").
STEP_LIMIT = "stopped at the step limit"
#: The message of a trust-region run whose trial steps shrank without lowering the loss.
NO_DECREASE = "no decrease along the solver's direction"
#: Rejected trial steps in a row that end a least-squares run whose loss has stagnated.
STALLED_REJECTIONS = 3
#: The message of a least-squares run whose accepted steps stopped lowering the loss by a
#: statistically visible amount (:func:`negligible_decrease`).
NEGLIGIBLE = "the loss stopped improving"
#: A change of chi-square this small is negligible: a move of 0.1 standard error along the
#: best-determined direction changes chi-square by 0.1^2 near the optimum.
NEGLIGIBLE_CHI2 = 0.01
#: Accepted steps in a row with a negligible decrease, realised and predicted, that end the run.
NEGLIGIBLE_STEPS = 2


def negligible_decrease(problem: Problem) -> float:
    """The relative decrease of the loss that is statistically negligible for ``problem``:
    :data:`NEGLIGIBLE_CHI2` chi-square units, ``0.01 / (n - k)`` (``n`` data residuals, ``k``
    free variables), with the residuals' own variance as the unit.

    Residuals that are autocorrelated (model error) carry fewer independent observations than
    ``n``, so the same decrease is even less visible to them: the rule is conservative there.
    It needs no noise model, which is why it is the rule that ends fits under model error (the
    EMPS record's single-shooting fit: 9 solver calls instead of 44, the estimates equal to 1e-6
    relative)."""
    return NEGLIGIBLE_CHI2 / max(problem.n_data - problem.n_params - problem.state0.shape[0], 1)


def _predicted_decrease(at_u, step) -> float:
    """``(|r|^2 - |r + J step|^2) / |r|^2``: the relative decrease of the loss that the
    linearisation at the iterate predicts for ``step`` (inf where it cannot tell)."""
    if at_u is None:
        return math.inf
    r, jac = (np.asarray(x, dtype=float) for x in at_u)
    rr = float(np.sum(r * r))
    if not (rr > 0 and np.all(np.isfinite(jac))):
        return math.inf
    after = r + jac @ np.asarray(step, dtype=float)
    return (rr - float(np.sum(after * after))) / rr


def _relative_change(history, span):
    """``|L[-1 - span] - L[-1]| / |L[-1]|`` over the last ``span`` steps (fewer if the history is
    shorter; NaN with one value)."""
    if len(history) < 2:
        return math.nan
    before = history[-1 - min(span, len(history) - 1)]
    return abs(before - history[-1]) / abs(history[-1]) if history[-1] != 0 else abs(before - history[-1])


def _stalled(history, tol):
    """The loss changed by at most ``tol`` (relative) over the last 5 steps."""
    return len(history) > 5 and abs(history[-6] - history[-1]) <= tol * abs(history[-1])


def run_optax(u: Array, problem: Problem, opt, steps: int, mode: str, tol: float,
              bar) -> tuple[Array, list[float], int, str]:
    """Any optax ``GradientTransformation`` on the loss; the loss is recorded at every iterate.

    The run stops when the loss changed by less than ``tol`` (relative) over 5 steps (the
    report then checks the Gauss-Newton step from the end point), else at ``steps``, with a
    message that starts with :data:`STEP_LIMIT` and says how fast the loss still changes.

    Returns ``(u, history, steps taken, message)``; a non-finite loss or gradient stops the
    run at the last finite iterate.
    """
    state = opt.init(u)
    history: list[float] = []
    u_prev = u
    for k in range(steps):
        u_new, state_new, value, grad = _optax_step(u, state, problem, opt, mode)
        value = float(value)  # the loss at u, the iterate after k steps
        if not _finite(value, grad):
            if k == 0:
                return u, [value], 0, "non-finite loss at the initial guess"
            return u_prev, history, k - 1, f"stopped at step {k}: non-finite loss or gradient; kept the last finite iterate"
        if k > 0:
            bar(value)
        history.append(value)
        if _stalled(history, tol):
            return u, history, k, f"loss changed by < {tol:g} (relative) over 5 steps"
        u_prev, u, state = u, u_new, state_new
    value, grad = _value_and_grad(u, problem, mode)
    if not _finite(float(value), grad):
        return u_prev, history, steps - 1, "non-finite loss or gradient after the last step; kept the last finite iterate"
    history.append(float(value))
    bar(history[-1])
    change = _relative_change(history, 5)
    still = f", loss still changing by {change:.2g} (relative) over the last 5 steps" if math.isfinite(change) else ""
    return u, history, steps, f"{STEP_LIMIT} ({steps} steps){still}"


@eqx.filter_custom_jvp
def _ls_residuals(u, problem):
    return _stacked(_to_natural(u, problem), problem)


@_ls_residuals.def_jvp
def _ls_residuals_jvp(primals, tangents):
    # optimistix linearises the residuals and materialises the Jacobian from the linear map;
    # this rule makes that one batched forward pass (the linear map is then a matrix product),
    # and a trial point with a non-finite Jacobian gets NaN residuals, so it is rejected
    r, jac = _residuals_jacobian(*primals)
    return jnp.where(jnp.all(jnp.isfinite(jac)), r, jnp.nan), jac @ tangents[0]


def _ls_fn(u, problem):
    return _ls_residuals(u, problem), None


@eqx.filter_jit
def _ls_init(u, problem, solver):
    return solver.init(_ls_fn, u, problem, {}, jax.eval_shape(_ls_fn, u, problem)[0], None, frozenset())


@eqx.filter_jit
def _ls_step(u, state, problem, solver):
    """One solver step; returns the iterate, the state, the loss there and, for the
    Gauss-Newton family (Levenberg-Marquardt, Gauss-Newton, dogleg), ``(residuals,
    Jacobian)`` at the iterate read from the solver state, else None."""
    u, state, _ = solver.step(_ls_fn, u, problem, {}, state, frozenset())
    info = getattr(state, "f_info", None)
    if info is not None and hasattr(info, "residual") and hasattr(info, "jac"):
        r, jac = info.residual, info.jac.as_matrix()
        return u, state, jnp.sum(r * r) / problem.n_data, (r, jac)
    r = _stacked(_to_natural(u, problem), problem)
    return u, state, jnp.sum(r * r) / problem.n_data, None


def _gauss_newton_gain(at_u):
    """The relative decrease of the loss that the full Gauss-Newton step from the iterate
    predicts, ``|J step|^2 / |r|^2`` (0 when the solver state holds no Jacobian to tell or it
    is not finite)."""
    if at_u is None:
        return 0.0
    r, jac = (np.asarray(x, dtype=float) for x in at_u)
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(jac))):
        return 0.0
    step = np.linalg.lstsq(jac, -r, rcond=None)[0]
    rss = float(np.sum(r * r))
    return float(np.sum((jac @ step) ** 2)) / rss if rss > 0 else 0.0


def _gauss_newton_done(at_u, tol):
    """True when the full Gauss-Newton step from the iterate would lower the loss by at most
    ``tol`` (relative), or when the solver state holds no Jacobian to tell.

    A damped solver's first steps from a start near the optimum can be tiny (Levenberg-
    Marquardt's damping starts large), so a small change of the loss alone is not an optimum.
    The predicted decrease bounds the step itself: ``|J step|^2 <= tol |r|^2`` puts it within
    ``sqrt(tol (n - k))`` Gauss-Newton standard errors, whatever the noise.
    """
    return _gauss_newton_gain(at_u) <= tol


def run_least_squares(u: Array, problem: Problem, solver, steps: int, tol: float, bar,
                      negligible: float = 0.0) -> tuple[Array, list[float], int, str, Any]:
    """An optimistix least-squares solver (``optx.LevenbergMarquardt``, ``optx.GaussNewton``,
    ``optx.Dogleg``, ...) stepped here to record the loss at every accepted iterate.

    The run stops at an optimum when an accepted step changes the loss by less than ``tol``
    (relative) and the full Gauss-Newton step would not lower it by more (loss and step
    stagnated), or when the solver's own termination test passes, or when, once a trial step
    has been rejected, :data:`NEGLIGIBLE_STEPS` accepted steps in a row lowered the loss,
    realised and as the linearisation predicted it for the step taken, by at most
    ``negligible`` (relative; the fit passes :func:`negligible_decrease`, 0 turns the rule
    off). The last rule is the ``ftol`` test of MINPACK's Levenberg-Marquardt (Moré 1978,
    sec. 8) with a statistical tolerance; a rejected trial first shows that the trust region
    is bounded by the loss itself, not by the solver's initial damping (started at the
    optimum of a rate-and-state record, Levenberg-Marquardt's first two steps are that
    damped while the full Gauss-Newton step is still 0.6 standard error). A step that leaves the
    iterate unchanged is a rejected trial (trust-region solvers); 25 in a row end the run
    (:data:`NO_DECREASE`: the trial step has shrunk by about 4^25 without lowering the loss), and
    :data:`STALLED_REJECTIONS` in a row do when the loss has also changed by less than ``tol``
    over the last 5 accepted steps. Under model error the misfit can be rough on scales below
    the Gauss-Newton model's (an EMPS fit: the full step predicts a 1e-3 relative decrease that
    no trial step along it realises), so the Gauss-Newton test never passes there; without this
    rule such a run spent some 60 trials at a loss constant to 1e-11.
    Otherwise it stops at ``steps`` with a message that starts with :data:`STEP_LIMIT` and says
    how far from stagnation it was. Also returns the residuals and Jacobian at the final
    iterate when the solver state holds them.
    """
    state = _ls_init(u, problem, solver)
    u, state, value, at_u = _ls_step(u, state, problem, solver)  # the initial guess
    history, taken, message, rejected, small, bounded = [float(value)], 0, None, 0, 0, False
    if not math.isfinite(history[0]):
        return u, history, 0, "non-finite loss at the initial guess", None
    while taken < steps:
        u_new, state, value, at_new = _ls_step(u, state, problem, solver)
        if bool(jnp.array_equal(u_new, u)):
            rejected, bounded = rejected + 1, True
            if rejected >= 25:
                message = f"{NO_DECREASE} (at a minimum)"
                break
            if rejected >= STALLED_REJECTIONS and _stalled(history, tol):
                message = (f"{NO_DECREASE} (the loss changed by < {tol:g} (relative) over the last 5 steps and "
                           f"{rejected} trial steps in a row did not lower it)")
                break
            continue
        predicted = _predicted_decrease(at_u, np.asarray(u_new) - np.asarray(u)) if negligible > 0 else math.inf
        u, at_u, rejected, taken = u_new, at_new, 0, taken + 1
        history.append(float(value))
        bar(history[-1])
        realised = (history[-2] - history[-1]) / abs(history[-2]) if history[-2] != 0 else math.inf
        small = small + 1 if bounded and max(realised, predicted) <= negligible else 0
        if small >= NEGLIGIBLE_STEPS:
            message = (f"{NEGLIGIBLE} (the last {small} accepted steps lowered it by at most {negligible:.2g} "
                       f"(relative), {NEGLIGIBLE_CHI2:g} in chi-square, realised and predicted)")
            break
        if abs(history[-2] - history[-1]) <= tol * abs(history[-1]) and _gauss_newton_done(at_u, tol):
            message = f"loss changed by < {tol:g} (relative)"
            break
        done, _ = solver.terminate(_ls_fn, u, problem, {}, state, frozenset())
        if bool(done):
            message = "the solver's own termination test"
            break
    if message is None:
        change, gain = _relative_change(history, 1), _gauss_newton_gain(at_u)
        if not math.isfinite(change):
            still = ""
        elif change > tol:
            still = f", loss still changing by {change:.2g} (relative) per step"
        else:
            still = f", the full Gauss-Newton step would still lower the loss by {gain:.2g} (relative)"
        message = f"{STEP_LIMIT} ({steps} steps){still}"
    return u, history, taken, message, at_u
