"""The local phase of :func:`~jaxfriction.fit`: the optimizer loops on a :class:`~.problem.Problem`.

Any optax ``GradientTransformation`` (:func:`run_optax`) or any optimistix least-squares
solver (:func:`run_least_squares`), stepped here so that the loss is recorded at every
iterate, with the stopping rules that tell an optimum from a stalled or limited run and the
messages the report reads (:data:`STEP_LIMIT`, :data:`NO_DECREASE`, :data:`NEGLIGIBLE`).
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

from .problem import Problem, _loss, _ls_fn, _stacked, _to_natural


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
