"""Parameter identification: fit parameters of any system to measured trajectories.

``fit(system, initial, data)`` estimates the parameters named by their leaf paths in the
template ``system`` (``"law.mu_s"``, ``"force.amplitude"``, ``"stiffness"``, ``"masses[1]"``)
from one or several measured trajectories, by minimising the trajectory misfit

    L = (sum_records w_j [ sum_i |q_sim(t_i) - q_i|^2 + sum_i |c_v (v_sim(t_i) - v_i)|^2 ]
         + c_d sum_defects |d|^2) / n_data

over the measured positions and velocities (any subset of the degrees of freedom;
continuity defects ``d`` only with multiple shooting). The model is integrated with
:func:`~jaxfriction.simulate` (classical RK4 in ``lax.scan``) on the measurement grid; the
optimizer (an optax ``GradientTransformation``, Adam by default, or an optimistix
least-squares solver such as Levenberg-Marquardt) works on unconstrained variables mapped
to each parameter's valid range; the report carries Gauss-Newton standard errors.

Gradients through stick-slip: the trajectory of a fixed-step integrator is a continuous,
piecewise smooth function of the parameters only if the friction law is continuous in the
slip velocity. With a law that switches discontinuously (Karnopp's band, exact
static/kinetic Coulomb) the trajectory jumps whenever a switch moves across a step, and
automatic differentiation returns the slope between jumps, blind to the switch-time
(saltation) term. Measured on a 30 s belt record (RK4, dt = 0.01, at mu_s = 0.6137,
mu_k = 0.3871): with Karnopp the AD derivative of the misfit in mu_s is 2.4 while the
secant slopes over h = 1e-2, 1e-3, 1e-4 are 11, 1.9 and 135 (the misfit is discontinuous);
with :class:`~jaxfriction.StaticKineticQuinn` (continuous, default ``onset``) AD gives
3.756 and agrees with the secants over h = 1e-6 and 1e-7 to 2e-8 (relative) and over
h = 1e-5 to 2e-3; over h = 1e-4 ... 1e-2 the secants are 2-6 % steeper, because the law's
breakaway makes the misfit undulate slightly in mu_s around its overall trend (smaller
``onset``, closer to exact Coulomb, undulates more). Fit with laws continuous in
the slip velocity (Quinn's, Awrejcewicz's, :class:`~jaxfriction.StaticKineticQuinn`; the
templates use them); with a static/kinetic law a quasi-Newton or least-squares optimizer
(``"lbfgs"``, ``"lm"``) reaches the optimum in far fewer steps than Adam.
"""

from __future__ import annotations

import math
import time

import jax.numpy as jnp
import numpy as np
import optax

from ..._checks import check_real
from ..._paths import check_paths, get_parameter, set_parameters
from ..._systems.base import AbstractFrictionSystem
from ..._templates import Template
from ..gradient import AutoMode, ForwardMode, ReverseMode, as_gradient_mode
from .measurement import Measurement
from .problem import (
    Problem,
    Record,
    forward_value_and_grad,
    natural_and_slope,
    run_least_squares,
    run_optax,
)
from .result import FitResult

# ---------------------------------------------------------------------------------------------
# fit


def _parse_bounds(name, spec, p0):
    """-> (kind, lo, hi) for one parameter; raises naming ``bounds``."""
    if isinstance(spec, str):
        if spec != "positive":
            raise ValueError(f"bounds[{name!r}] must be (lo, hi), 'positive' or None, got {spec!r}")
        spec = (0.0, None)
    if spec is None:
        return "free", 0.0, 0.0
    try:
        lo, hi = spec
    except (TypeError, ValueError):
        raise ValueError(f"bounds[{name!r}] must be (lo, hi), 'positive' or None, got {spec!r}") from None
    for side, value in (("lo", lo), ("hi", hi)):
        if value is not None:
            check_real(f"bounds[{name!r}] {side}", value)
    if lo is not None and hi is not None and not float(lo) < float(hi):
        raise ValueError(f"bounds[{name!r}] must have lo < hi, got {spec!r}")
    if (lo is not None and not p0 > float(lo)) or (hi is not None and not p0 < float(hi)):
        raise ValueError(
            f"initial[{name!r}] = {p0!r} must lie strictly inside bounds[{name!r}] = {spec!r} "
            f"(default bounds are (0, None): positive; pass None for an unconstrained parameter)"
        )
    if lo is None and hi is None:
        return "free", 0.0, 0.0
    if hi is None:
        return "lower", float(lo), 0.0
    if lo is None:
        return "upper", 0.0, float(hi)
    return "interval", float(lo), float(hi)


def _local_fit(t, y, i, half=3):
    """Value and slope at sample ``i`` of a least-squares quadratic over ``2 half + 1`` samples."""
    n = t.shape[0]
    a, b = max(0, i - half), min(n, i + half + 1)
    if b - a < 2 * half + 1:
        a, b = max(0, min(a, n - 2 * half - 1)), min(n, max(b, 2 * half + 1))
    x = t[a:b] - t[i]
    coef = np.polyfit(x, y[a:b], min(2, len(x) - 1))
    return float(np.polyval(coef, 0.0)), float(np.polyval(np.polyder(coef), 0.0))


def _optimizer(optimizer, learning_rate, steps):
    """``(kind, object, default steps)``: ``"optax"`` or ``"least_squares"`` (optimistix)."""
    if optimizer == "adam":
        # u is a log or relative variable, so the rate is a relative change per step
        return "optax", _adam(float(learning_rate), steps or 400), 400
    if optimizer == "lbfgs":
        return "optax", _lbfgs(), 100
    if optimizer == "lm":
        return "least_squares", _levenberg_marquardt(), 50
    if isinstance(optimizer, optax.GradientTransformation):
        return "optax", optimizer, 400
    import optimistix as optx

    if isinstance(optimizer, optx.AbstractLeastSquaresSolver):
        return "least_squares", optimizer, 50
    raise ValueError(f"optimizer must be 'adam', 'lbfgs', 'lm', an optax GradientTransformation or an optimistix "
                     f"least-squares solver, got {optimizer!r}")


# the shortcuts' objects are cached, so repeated fits reuse the compiled steps


def _adam(learning_rate, steps, cache={}):  # noqa: B006
    key = (learning_rate, steps)
    if key not in cache:
        cache[key] = optax.adam(optax.cosine_decay_schedule(learning_rate, max(steps, 1), alpha=1e-3))
    return cache[key]


def _lbfgs(cache=[]):  # noqa: B006
    if not cache:
        cache.append(optax.lbfgs())
    return cache[0]


def _levenberg_marquardt(cache=[]):  # noqa: B006
    if not cache:
        import optimistix as optx

        # stopping is fit's own test on the loss (``tol``): the solver's Cauchy test is off
        cache.append(optx.LevenbergMarquardt(rtol=0.0, atol=0.0))
    return cache[0]


def _initial_states(m, i_bounds, n_dof):
    """Natural initial values and scales of the free segment start states of record ``m``.

    A measured position gives the value and slope of a local quadratic fit; a measured
    velocity its sample; an unmeasured coordinate starts at 0 (scale 1).
    """
    state0, scale = [], []
    q_cols = dict(zip(m.q_dofs or (), range(len(m.q_dofs or ()))))
    v_cols = dict(zip(m.v_dofs or (), range(len(m.v_dofs or ()))))
    for i in i_bounds[(m.y0 is not None) : -1]:
        q, v, q_s, v_s = np.zeros(n_dof), np.zeros(n_dof), np.ones(n_dof), np.ones(n_dof)
        for d, j in q_cols.items():
            q[d], v[d] = _local_fit(m.t, m.q[:, j], i)
            q_s[d] = float(np.std(m.q[:, j])) or 1.0
            v_s[d] = float(np.std(np.gradient(m.q[:, j], m.t))) or 1.0
        for d, j in v_cols.items():
            v[d] = float(m.v[i, j])
            v_s[d] = float(np.std(m.v[:, j])) or 1.0
        state0 += [*q, *v]
        scale += [*q_s, *v_s]
    return state0, scale


def fit(system, initial, data, *, bounds=None, optimizer="adam", steps=None, learning_rate=0.02,
        shooting_segments=1, continuity_weight=100.0, dt=None, velocity_weight=1.0, weights=None,
        gradient=AutoMode(max_forward=16), tol=1e-10, progress=False):
    """Estimate parameters of a system from measured trajectories (nonlinear least squares).

    Args:
        system: the template system (any :class:`~jaxfriction.AbstractFrictionSystem`, any
            number of degrees of freedom and contacts, a user's own law and system
            included), or a :class:`~jaxfriction.Template` (its ``dt`` is the default). Its
            parameters not in ``initial`` stay as they are.
        initial: dict leaf path -> initial guess of each parameter to estimate (units of
            the parameter), e.g. ``{"law.mu_s": 0.75, "law.mu_k": 0.3}``.
        data: a :class:`~jaxfriction.Measurement` or a sequence of them: several records
            share the parameters; each measures any subset of the positions and velocities
            and has its own initial state (known ``y0``, or estimated).
        bounds: dict path -> ``(lo, hi)`` (either may be None for a half-line),
            ``"positive"`` or None (unconstrained). Parameters not listed are positive,
            ``(0, None)``. The optimiser works on unconstrained ``u`` with ``u = 0`` at the
            initial guess: a lower bound maps ``p = lo + (p0 - lo) exp(u)``, an upper bound
            ``p = hi - (hi - p0) exp(u)``, an interval a scaled sigmoid, no bound ``p = p0 +
            |p0| u``.
        optimizer: an optax ``GradientTransformation`` (any: ``optax.adam(1e-2)``,
            ``optax.lbfgs()`` with its line search, chains), an optimistix least-squares
            solver (``optimistix.LevenbergMarquardt(rtol=0, atol=0)``,
            ``optimistix.GaussNewton(...)``, ``optimistix.Dogleg(...)``; it gets the
            forward-mode Jacobian), or a shortcut: ``"adam"`` (``optax.adam``, learning rate
            cosine-decayed from ``learning_rate`` to 1/1000 of it over ``steps``),
            ``"lbfgs"`` (``optax.lbfgs()``), ``"lm"`` (optimistix Levenberg-Marquardt, the
            fastest for small problems).
        steps: maximum optimiser steps (default 400 for optax, 50 accepted steps for
            least-squares solvers; 100 for ``"lbfgs"``).
        learning_rate: the ``"adam"`` shortcut's initial learning rate.
        shooting_segments: ``S >= 1``; with ``S > 1`` every record is split into ``S``
            segments whose initial states are free variables (initialised from the data,
            see below), and the loss adds ``continuity_weight * |end of segment i - start
            of segment i + 1|^2 / n_data`` (multiple shooting, Bock & Plitt 1984). Only
            parameters are reported; the segment states are in
            ``FitResult.initial_states``.
        continuity_weight: weight of the continuity defects (natural units of q and v).
        dt: largest RK4 step (time units); default the template's, else the sample
            interval. The step used is ``interval / ceil(interval / dt)``: it divides the
            sample interval, and the simulation saves every ``ceil(interval / dt)`` steps.
        velocity_weight: factor on velocity residuals (``sigma_q / sigma_v`` makes the misfit
            a statistically consistent weighted least squares).
        weights: optional per-record weights (positive) on the squared residuals.
        gradient: a gradient mode object or name; the default ``AutoMode(max_forward=16)``
            uses forward mode up to 16 free variables (its pass yields the residuals'
            Jacobian too, 3-4x cheaper than reverse mode on CPU for 2-4 variables), reverse
            beyond; least-squares solvers always use forward mode. The Jacobian for the
            covariance is always forward.
        tol: stop when the loss changes by less than ``tol`` (relative) over 5 steps (one
            accepted step for least-squares solvers).
        progress: show a progress bar (tqdm, on stderr).

    Free initial states (records without ``y0``, and every later shooting segment) start
    from the data: a measured position gives the value and slope of a local quadratic fit,
    a measured velocity its sample, an unmeasured coordinate 0.

    Returns:
        The fit, a :class:`FitResult`. Standard errors are Gauss-Newton: at the optimum
            ``J = d r / d theta`` (natural parametrisation, all free variables, continuity
            rows included), ``sigma^2 = RSS / (n_residuals - n_variables)`` (RSS of the data
            residuals), ``cov = sigma^2 (J^T J)^-1``, restricted to the parameters (standard
            nonlinear least squares: Seber & Wild 2003 ch. 2; Bard 1974 ch. 7).

    Raises:
        ValueError: naming the argument: unknown or non-scalar paths (``initial``,
            ``bounds``), an initial value outside its bounds, bad bounds, bad ``data``
            (a degree of freedom the system lacks, a ``y0`` of the wrong size), too few
            samples for the variables or segments, a bad ``optimizer``, ``gradient``,
            ``steps`` or ``weights``, or a non-finite loss at the initial guess.

    Gradients are exact for the discrete model and flow through stick-slip for laws
    continuous in the slip velocity (see the module docstring). Fits of the same system
    structure and record shapes reuse the compiled code.
    """
    started = time.perf_counter()
    tpl = system if isinstance(system, Template) else None
    system = tpl.system if tpl is not None else system
    if not isinstance(system, AbstractFrictionSystem):
        raise ValueError(f"system must be a jaxfriction system or a Template, got {type(system).__name__}")
    kind, opt, default_steps = _optimizer(optimizer, learning_rate, steps)
    label = optimizer if isinstance(optimizer, str) else type(optimizer).__name__
    if kind == "optax" and not isinstance(optimizer, str):
        label = "optax"
    steps = default_steps if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an int >= 0, got {steps!r}")
    check_real("learning_rate", learning_rate, positive=True)
    check_real("continuity_weight", continuity_weight, positive=True)
    check_real("velocity_weight", velocity_weight, nonnegative=True)
    check_real("tol", tol, nonnegative=True)
    if isinstance(shooting_segments, bool) or not isinstance(shooting_segments, int) or shooting_segments < 1:
        raise ValueError(f"shooting_segments must be an int >= 1, got {shooting_segments!r}")

    # parameters
    if not isinstance(initial, dict) or not initial:
        raise ValueError(f"initial must be a non-empty dict path -> initial guess, got {initial!r}")
    bounds = dict(bounds or {})
    check_paths(system, initial, "initial")
    check_paths(system, bounds, "bounds")
    not_fitted = sorted(set(bounds) - set(initial))
    if not_fitted:
        raise ValueError(f"bounds: {not_fitted} are not estimated (not in initial)")
    names = tuple(initial)
    arrays = [n for n in names if np.ndim(get_parameter(system, n)) != 0]
    if arrays:
        raise ValueError(f"initial: {arrays} are arrays; estimate their elements, e.g. {arrays[0]}[0]")
    for name in names:
        check_real(f"initial[{name!r}]", initial[name])
    p0 = [float(initial[n]) for n in names]
    parsed = [_parse_bounds(n, bounds.get(n, (0.0, None)), p) for n, p in zip(names, p0)]
    system = set_parameters(system, {n: float(initial[n]) for n in names})  # a concrete check of the guess
    n_dof = system.n_dof

    # data
    if isinstance(data, Measurement):
        data = [data]
    if not isinstance(data, (list, tuple)) or not data or not all(isinstance(m, Measurement) for m in data):
        raise ValueError(f"data must be a Measurement or a non-empty list of them, got {type(data).__name__}")
    for j, m in enumerate(data):
        if m.max_dof >= n_dof:
            raise ValueError(f"data[{j}] ({m.name or 'record'}) measures degree of freedom {m.max_dof}, but the "
                             f"system has {n_dof}")
        if m.y0 is not None and m.y0.shape != (2 * n_dof,):
            raise ValueError(f"data[{j}].y0 must have shape ({2 * n_dof},) for this system, got {m.y0.shape}")
    weights = [1.0] * len(data) if weights is None else list(np.atleast_1d(np.asarray(weights, dtype=float)))
    if len(weights) != len(data) or not all(np.isfinite(w) and w > 0 for w in weights):
        raise ValueError(f"weights must be {len(data)} positive numbers (one per record), got {weights}")
    if dt is None and tpl is not None:
        dt = tpl.dt
    if dt is not None:
        check_real("dt", dt, positive=True)
    records, state0, scale, n_data = [], [], [], 0
    for j, m in enumerate(data):
        n = len(m)
        if n - 1 < 2 * shooting_segments:
            raise ValueError(f"shooting_segments = {shooting_segments} is too many for record {j} "
                             f"({m.name or 'data'}, {n} samples): each segment needs >= 2 intervals")
        interval = m.interval
        n_sub = 1 if dt is None else max(1, math.ceil(interval / float(dt) * (1 - 1e-9)))
        i_bounds = tuple(int(round(x)) for x in np.linspace(0, n - 1, shooting_segments + 1))
        s0, sc = _initial_states(m, i_bounds, n_dof)
        state0 += s0
        scale += sc
        records.append(Record(
            q=None if m.q is None else jnp.asarray(m.q), v=None if m.v is None else jnp.asarray(m.v),
            y0=None if m.y0 is None else jnp.asarray(m.y0), weight=jnp.asarray(weights[j]),
            q_dofs=m.q_dofs or (), v_dofs=m.v_dofs or (),
            t_bounds=tuple(float(m.t[0] + i * interval) for i in i_bounds), i_bounds=i_bounds,
            h=interval / n_sub, n_sub=n_sub))
        n_data += m.n_values
    n_vars = len(names) + len(state0)
    if n_data <= n_vars:
        raise ValueError(f"data: {n_data} residuals are too few for {n_vars} free variables")
    mode_obj = as_gradient_mode(gradient)
    if kind == "least_squares":
        if isinstance(mode_obj, ReverseMode):
            raise ValueError("gradient: a least-squares optimizer needs the forward-mode Jacobian; use 'auto' or "
                             "'forward'")
        mode_obj = ForwardMode()
    mode = "forward" if isinstance(mode_obj.resolve(n_vars), ForwardMode) else "reverse"
    problem = Problem(
        system=system,
        names=names,
        kinds=tuple(k for k, _, _ in parsed),
        n_data=n_data,
        lo=jnp.asarray([b[1] for b in parsed], dtype=float),
        hi=jnp.asarray([b[2] for b in parsed], dtype=float),
        p0=jnp.asarray(p0, dtype=float),
        state0=jnp.asarray(state0, dtype=float),
        state_scale=jnp.asarray(scale, dtype=float),
        records=tuple(records),
        velocity_weight=jnp.asarray(float(velocity_weight)),
        continuity_weight=jnp.asarray(float(continuity_weight)),
    )

    # optimise
    u = jnp.zeros(n_vars, dtype=problem.p0.dtype)
    tqdm_bar, at_u = None, None
    if progress:
        from tqdm.auto import tqdm

        tqdm_bar = tqdm(total=steps, desc=f"fit ({label})", leave=False)

    def bar(value):
        if tqdm_bar is not None:
            tqdm_bar.update(1)
            tqdm_bar.set_postfix(loss=f"{value:.4g}")

    try:
        if kind == "optax":
            u, history, taken, message = run_optax(u, problem, opt, steps, mode, tol, bar)
        else:
            u, history, taken, message, at_u = run_least_squares(u, problem, opt, steps, tol, bar)
    finally:
        if tqdm_bar is not None:
            tqdm_bar.close()
    if taken == 0 and not math.isfinite(history[0]):
        raise ValueError(f"initial: the loss at the initial guess {dict(zip(names, p0))} is not finite (the "
                         f"simulation diverged: reduce dt or start closer)")

    # Gauss-Newton covariance in the natural parametrisation: J_theta = J_u / (d theta / d u);
    # the Gauss-Newton solvers have the residuals and J_u at u already
    theta, slope = (np.asarray(x, dtype=float) for x in natural_and_slope(u, problem))
    stacked, jac_u = at_u or forward_value_and_grad(u, problem)[2:]
    stacked, jac = np.asarray(stacked, dtype=float), np.asarray(jac_u, dtype=float) / slope
    sigma2 = float(np.sum(stacked[:n_data] ** 2)) / (n_data - n_vars)
    try:
        with np.errstate(all="ignore"):
            jtj = jac.T @ jac
            inv = np.linalg.inv(jtj)
            step_gn = -inv @ (jac.T @ stacked)
        if not (np.all(np.isfinite(inv)) and np.all(np.isfinite(step_gn))):
            raise np.linalg.LinAlgError
    except (np.linalg.LinAlgError, ValueError):
        inv, step_gn = np.full((n_vars, n_vars), np.nan), np.full(n_vars, np.nan)
        message += "; J^T J is singular (parameters not identifiable from these data)"
    p = len(names)
    cov = sigma2 * inv[:p, :p]
    se = np.sqrt(np.abs(np.diag(cov)))
    converged = bool(math.isfinite(history[-1]) and np.all(np.abs(step_gn[:p]) <= 0.1 * se))
    # relative sensitivities d q / d ln(theta) far beyond the data's size mean exploding
    # tangents: RK4 unstable in a stiff stick band (h mu N / (m eps) > 2.8) while the clipped
    # force keeps the trajectory itself bounded; the Jacobian, and the stderr, are then garbage
    data_size = max(max(float(np.max(np.abs(x))) for m in data for x in (m.q, m.v) if x is not None), 1e-300)
    sensitivity = np.abs(jac) * np.maximum(np.abs(theta), 1e-300)
    if not np.all(np.isfinite(jac)) or float(np.max(sensitivity, initial=0.0)) > 1e8 * data_size:
        converged = False
        message += ("; the Jacobian is non-finite or exploding (derivatives of the simulation are unstable: "
                    "reduce dt, or bound the parameters away from a too stiff stick band)")
    initial_states, offset, width = [], p, 2 * n_dof
    for rec in records:
        k = rec.n_free_states
        states = theta[offset : offset + width * k].reshape(k, width)
        offset += width * k
        if rec.y0 is not None:
            states = np.concatenate([np.asarray(rec.y0, dtype=float)[None], states])
        initial_states.append(states)
    params = {n: float(theta[i]) for i, n in enumerate(names)}
    return FitResult(
        params=params,
        stderr={n: float(se[i]) for i, n in enumerate(names)},
        covariance=cov,
        names=names,
        residual_std=math.sqrt(sigma2),
        loss_history=np.asarray(history),
        n_steps=taken,
        converged=converged,
        optimizer=label,
        gradient=mode,
        n_residuals=n_data,
        n_variables=n_vars,
        initial_states=initial_states,
        system=set_parameters(system, params),
        seconds=time.perf_counter() - started,
        message=message,
        problem=problem,
        u=np.asarray(u, dtype=float),
    )
