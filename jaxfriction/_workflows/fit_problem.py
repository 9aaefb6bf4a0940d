"""The least-squares problem of :func:`~jaxfriction.workflows.fit.fit` and its optimizers.

The records, parameters and transforms as one equinox pytree (data arrays are dynamic
leaves, the grid structure static, so a second fit of the same shapes reuses the compiled
code); the residuals, the loss and its gradient in forward or reverse mode; the optimizer
loops (optax Adam and L-BFGS, optimistix Levenberg-Marquardt) that record the loss history.
Internal to :mod:`jaxfriction.workflows.fit`.
"""

from __future__ import annotations

import functools
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import optimistix as optx

from .._integrate.rk4 import rk4_scan
from .._integrate.simulate import simulate

class Record(eqx.Module):
    q: jax.Array
    v: jax.Array | None
    y0: jax.Array | None
    weight: jax.Array
    t_bounds: tuple = eqx.field(static=True)  # segment start times (S Python floats) and the end time
    i_bounds: tuple = eqx.field(static=True)  # segment boundary sample indices, S + 1 ints
    h: float = eqx.field(static=True)  # RK4 step
    n_sub: int = eqx.field(static=True)  # RK4 steps per sample interval

    @property
    def n_segments(self):
        return len(self.i_bounds) - 1

    @property
    def n_free_states(self):
        return self.n_segments - (self.y0 is not None)


class Problem(eqx.Module):
    build: object = eqx.field(static=True)
    names: tuple = eqx.field(static=True)
    kinds: tuple = eqx.field(static=True)  # per parameter: "free", "lower", "upper", "interval"
    fixed: tuple = eqx.field(static=True)  # ((name, value), ...)
    n_data: int = eqx.field(static=True)
    lo: jax.Array
    hi: jax.Array
    p0: jax.Array
    state0: jax.Array  # natural initial values of the free segment states, flat
    state_scale: jax.Array
    records: tuple
    velocity_weight: jax.Array
    continuity_weight: jax.Array

    @property
    def n_params(self):
        return len(self.names)


def _to_natural(u, problem):
    """Natural variables ``theta`` (parameters, then segment states) from unconstrained ``u``."""
    out = []
    for i, kind in enumerate(problem.kinds):
        lo, hi, p0, x = problem.lo[i], problem.hi[i], problem.p0[i], u[i]
        if kind == "lower":
            out.append(lo + (p0 - lo) * jnp.exp(x))
        elif kind == "upper":
            out.append(hi - (hi - p0) * jnp.exp(x))
        elif kind == "interval":
            out.append(lo + (hi - lo) * jax.nn.sigmoid(x + jnp.log((p0 - lo) / (hi - p0))))
        else:
            out.append(p0 + jnp.where(p0 != 0, jnp.abs(p0), 1.0) * x)
    states = problem.state0 + problem.state_scale * u[problem.n_params :]
    return jnp.concatenate([jnp.stack(out), states])


def _simulate_record(system, rec, starts):
    """Predicted ``(q, v)`` at every sample of ``rec`` and the continuity defects.

    One segment: :func:`~jaxfriction.simulate` (RK4 in ``lax.scan``). Several: the same RK4
    scan (:func:`~jaxfriction.rk4_scan`, which ``simulate`` runs) vmapped over the segments
    (``simulate`` needs concrete start times; one vmapped scan keeps the compiled program, and
    its compile time, independent of the number of segments); every segment runs the longest
    segment's length and the surplus samples are dropped.
    """
    if rec.n_segments == 1:
        traj = simulate(system, starts[0], rec.t_bounds[0], rec.t_bounds[1], rec.h, save_every=rec.n_sub)
        return traj.ys[:, 0], traj.ys[:, 1], jnp.zeros((0,), dtype=traj.ys.dtype)
    lengths = np.diff(rec.i_bounds)
    y0s = jax.vmap(system.initial_state)(starts[:, 0], starts[:, 1])
    t0s = jnp.asarray(rec.t_bounds[:-1], dtype=y0s.dtype)
    _, ys = jax.vmap(
        lambda y0, t0: rk4_scan(system.vector_field, y0, t0, rec.h, int(lengths.max()), rec.n_sub)
    )(y0s, t0s)
    seg = np.concatenate([np.full(n, s) for s, n in enumerate(lengths)] + [[len(lengths) - 1]])
    step = np.concatenate([np.arange(n) for n in lengths] + [[lengths[-1]]])
    ends = ys[np.arange(len(lengths) - 1), lengths[:-1], :2]
    return ys[seg, step, 0], ys[seg, step, 1], (ends - starts[1:]).ravel()


def _residuals(theta, problem):
    """Data residuals ``(n_data,)`` and continuity defects at natural ``theta``."""
    params = {name: theta[i] for i, name in enumerate(problem.names)}
    system = problem.build(**params, **dict(problem.fixed))
    data, defects, offset = [], [], problem.n_params
    for rec in problem.records:
        k = rec.n_free_states
        free = theta[offset : offset + 2 * k].reshape(k, 2)
        offset += 2 * k
        starts = free if rec.y0 is None else jnp.concatenate([rec.y0[None].astype(free.dtype), free])
        q, v, d = _simulate_record(system, rec, starts)
        w = jnp.sqrt(rec.weight)
        data.append(w * (q - rec.q))
        if rec.v is not None:
            data.append(w * problem.velocity_weight * (v - rec.v))
        defects.append(d)
    return jnp.concatenate(data), jnp.concatenate(defects)


def _stacked(theta, problem):
    """All residuals: data, then ``sqrt(continuity_weight)`` times the defects."""
    r, d = _residuals(theta, problem)
    return jnp.concatenate([r, jnp.sqrt(problem.continuity_weight) * d])


def _loss_plain(u, problem):
    r = _stacked(_to_natural(u, problem), problem)
    return jnp.sum(r * r) / problem.n_data


def _residuals_jacobian(u, problem):
    """Stacked residuals at ``u`` and their Jacobian ``d r / d u`` (forward mode, batched JVP)."""

    def f(x):
        r = _stacked(_to_natural(x, problem), problem)
        return r, r

    jac, r = jax.jacfwd(f, has_aux=True)(u)
    return r, jac


@eqx.filter_jit
def forward_value_and_grad(u, problem):
    r, jac = _residuals_jacobian(u, problem)
    return jnp.sum(r * r) / problem.n_data, 2.0 * (r @ jac) / problem.n_data, r, jac


@eqx.filter_jit
def _reverse_value_and_grad(u, problem):
    return jax.value_and_grad(_loss_plain)(u, problem)


@jax.custom_vjp
def _loss_forward(u, problem):
    """The loss, with a custom VJP that computes the gradient in forward mode."""
    return _loss_plain(u, problem)


def _loss_forward_fwd(u, problem):
    r, jac = _residuals_jacobian(u, problem)
    return jnp.sum(r * r) / problem.n_data, (2.0 * (r @ jac) / problem.n_data, problem)


def _loss_forward_bwd(res, ct):
    grad, problem = res
    return ct * grad, jax.tree_util.tree_map(jnp.zeros_like, problem)


_loss_forward.defvjp(_loss_forward_fwd, _loss_forward_bwd)


@functools.lru_cache(maxsize=32)
def _optimizer(name, learning_rate, steps):
    # cached so that repeated fits see the same (static) optimizer object: no recompilation
    if name == "adam":
        return optax.adam(optax.cosine_decay_schedule(learning_rate, max(steps, 1), alpha=1e-3))
    return optax.lbfgs()


@eqx.filter_jit
def _update(grad, state, u, opt):
    updates, state = opt.update(grad, state, u)
    return optax.apply_updates(u, updates), state


@eqx.filter_jit
def _lbfgs_step(u, state, problem, opt, mode):
    loss = _loss_forward if mode == "forward" else _loss_plain

    def f(x):
        return loss(x, problem)

    value, grad = optax.value_and_grad_from_state(f)(u, state=state)
    updates, state = opt.update(grad, state, u, value=value, grad=grad, value_fn=f)
    return optax.apply_updates(u, updates), state, value, grad


@eqx.filter_jit
def natural_and_slope(u, problem):
    """``theta = T(u)`` and the diagonal ``d theta / d u`` (the transforms are elementwise)."""
    return jax.jvp(lambda x: _to_natural(x, problem), (u,), (jnp.ones_like(u),))


def _value_and_grad(u, problem, mode):
    if mode == "forward":
        return forward_value_and_grad(u, problem)[:2]
    return _reverse_value_and_grad(u, problem)


def _finite(value, grad):
    return math.isfinite(value) and bool(np.all(np.isfinite(np.asarray(grad))))


def _stalled(history, tol):
    return len(history) > 5 and abs(history[-6] - history[-1]) <= tol * abs(history[-1])


def run_adam(u, problem, steps, learning_rate, mode, tol, bar):
    opt = _optimizer("adam", float(learning_rate), steps)
    state = opt.init(u)
    value, grad = _value_and_grad(u, problem, mode)
    history, message = [float(value)], f"reached steps = {steps}"
    if not _finite(history[0], grad):
        return u, history, 0, "non-finite loss at the initial guess"
    for k in range(steps):
        u_new, state = _update(grad, state, u, opt)
        value, grad = _value_and_grad(u_new, problem, mode)
        if not _finite(float(value), grad):
            return (
                u,
                history,
                k,
                f"stopped at step {k + 1}: non-finite loss or gradient; kept the last finite iterate",
            )
        u = u_new
        history.append(float(value))
        bar(history[-1])
        if _stalled(history, tol):
            return u, history, k + 1, f"loss changed by < {tol:g} (relative) over 5 steps"
    return u, history, steps, message


def run_lbfgs(u, problem, steps, mode, tol, bar):
    opt = _optimizer("lbfgs", 0.0, 0)
    state = opt.init(u)
    history, u_prev = [], u
    for k in range(steps):
        u_new, state_new, value, grad = _lbfgs_step(u, state, problem, opt, mode)
        value = float(value)  # the loss at u, the iterate after k steps
        if not _finite(value, grad):
            if k == 0:
                return u, [value], 0, "non-finite loss at the initial guess"
            return (
                u_prev,
                history,
                k - 1,
                f"stopped at step {k}: non-finite loss or gradient; kept the last finite iterate",
            )
        if k > 0:
            bar(value)
        history.append(value)
        if _stalled(history, tol):
            return u, history, k, f"loss changed by < {tol:g} (relative) over 5 steps"
        u_prev, u, state = u, u_new, state_new
    value, grad = _value_and_grad(u, problem, mode)
    if not _finite(float(value), grad):
        return (
            u_prev,
            history,
            steps - 1,
            "non-finite loss or gradient after the last step; kept the last finite iterate",
        )
    history.append(float(value))
    bar(history[-1])
    return u, history, steps, f"reached steps = {steps}"


@jax.custom_jvp
def _lm_residuals(u, problem):
    return _stacked(_to_natural(u, problem), problem)


@_lm_residuals.defjvp
def _lm_residuals_jvp(primals, tangents):
    # optimistix linearises the residuals and materialises the Jacobian from the linear map;
    # this rule makes that one batched forward pass (the linear map is then a matrix product),
    # and a trial point with a non-finite Jacobian gets NaN residuals, so it is rejected
    r, jac = _residuals_jacobian(*primals)
    return jnp.where(jnp.all(jnp.isfinite(jac)), r, jnp.nan), jac @ tangents[0]


def _lm_fn(u, problem):
    return _lm_residuals(u, problem), None


# stopping is fit's own test on the loss (``tol``): the solver's Cauchy test is switched off
_LM = optx.LevenbergMarquardt(rtol=0.0, atol=0.0)


@eqx.filter_jit
def _lm_init(u, problem):
    return _LM.init(_lm_fn, u, problem, {}, jax.eval_shape(_lm_fn, u, problem)[0], None, frozenset())


@eqx.filter_jit
def _lm_step(u, state, problem):
    """One solver step: a trial point is evaluated, accepted or rejected (trust-region ratio).

    Returns the current iterate, the state, the number of trials rejected since the last
    acceptance, the loss and ``(residuals, Jacobian)`` at the iterate (read from optimistix's
    Gauss-Newton state).
    """
    u, state, _ = _LM.step(_lm_fn, u, problem, {}, state, frozenset())
    r, jac = state.f_info.residual, state.f_info.jac.as_matrix()
    return u, state, state.num_steps_since_acceptance, jnp.sum(r * r) / problem.n_data, (r, jac)


def run_lm(u, problem, steps, tol, bar):
    """Levenberg-Marquardt: ``optimistix.LevenbergMarquardt`` stepped here to record the loss.

    Also returns the residuals and Jacobian at the final iterate (for the covariance).
    """
    u, state, _, value, at_u = _lm_step(u, _lm_init(u, problem), problem)  # the initial guess
    history, taken, message = [float(value)], 0, f"reached steps = {steps}"
    if not math.isfinite(history[0]):
        return u, history, 0, "non-finite loss at the initial guess", None
    while taken < steps:
        u, state, rejected, value, at_u = _lm_step(u, state, problem)
        if int(rejected) >= 25:  # the trial step has shrunk by 4^25 ~ 1e15
            message = "no decrease along the Levenberg-Marquardt direction (at a minimum)"
            break
        if int(rejected) == 0:
            taken += 1
            history.append(float(value))
            bar(history[-1])
            if abs(history[-2] - history[-1]) <= tol * abs(history[-1]):
                message = f"loss changed by < {tol:g} (relative)"
                break
    return u, history, taken, message, at_u
