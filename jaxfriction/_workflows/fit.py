"""Parameter identification: fit system parameters to measured trajectories.

``fit(build, initial, data)`` estimates chosen parameters of a one-degree-of-freedom system
from one or several measured trajectories by minimising the trajectory misfit

    L = (sum_records w_j [ sum_i (q_sim(t_i) - q_i)^2 + sum_i (c_v (v_sim(t_i) - v_i))^2 ]
         + c_d sum_defects |d|^2) / n_data

(velocity terms only where velocity is measured; continuity defects ``d`` only with multiple
shooting). The model is integrated with :func:`~jaxfriction.simulate` (classical RK4 in
``lax.scan``) on the measurement grid; the optimiser (``optax`` Adam by default, ``optax``
L-BFGS with its zoom line search, or ``optimistix`` Levenberg-Marquardt on the forward-mode
Jacobian) works on unconstrained variables mapped to each parameter's valid range; the report
carries Gauss-Newton standard errors.

Gradients through stick-slip: the trajectory of a fixed-step integrator is a continuous,
piecewise smooth function of the parameters only if the friction law is continuous in the
slip velocity. With a law that switches discontinuously (Karnopp's band, exact
static/kinetic Coulomb) the trajectory jumps whenever a switch moves across a step, and
automatic differentiation returns the slope between jumps, blind to the switch-time
(saltation) term. Measured on a 30 s belt record (RK4, dt = 0.01, at mu_s = 0.6137,
mu_k = 0.3871): with Karnopp the AD derivative of the misfit in mu_s is 2.4 while the
secant slopes over h = 1e-2, 1e-3, 1e-4 are 11, 1.9 and 135 (the misfit is discontinuous);
with :class:`~jaxfriction.StaticKineticQuinn` AD gives 17.98 and the secants 18.2, 17.9,
18.0. The named systems of :data:`FIT_SYSTEMS` therefore use continuous regularised laws by
default (Quinn's, Awrejcewicz's and :class:`~jaxfriction.StaticKineticQuinn`).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from .._systems.base import AbstractFrictionSystem
from .fit_problem import Problem, Record, forward_value_and_grad, natural_and_slope, run_adam, run_lbfgs, run_lm
from .measurement import Measurement
from .registry import SYSTEMS, builder_defaults

# ---------------------------------------------------------------------------------------------
# named systems


#: Named systems for :func:`fit` and the ``jaxfriction fit`` command: name -> builder taking
#: keyword parameters, shared with the sweeps (:data:`~jaxfriction.workflows.registry.SYSTEMS`,
#: whose docstrings list the parameters, units and defaults):
#:
#: - ``"belt"``: spring-mass on a belt (paper 004, system 2), ``mu_s``, ``mu_k``, ``v0``,
#:   ``k``, ``m``, ``eps``, ``c``, ``normal``, with :class:`~jaxfriction.StaticKineticQuinn`
#:   (stick up to ``mu_s N`` at zero slip, kinetic ``mu_k N`` beyond a few ``eps``; continuous
#:   in the slip velocity, so exact gradients through stick-slip; the module docstring says
#:   why not Karnopp's switch);
#: - ``"oscillator"``: Quinn 2004 eq. 5 with Quinn's law, ``muN``, ``alpha``, ``omega``,
#:   ``k``, ``m``, ``eps``, ``c`` (defaults: Fig. 7 case (a), sustained sticking);
#: - ``"disc"``: disc on a driving disc (paper 002, eq. 5) with the Awrejcewicz law, ``F_s``,
#:   ``delta``, ``omega_dr``, ``M0``, ``Omega``, ``I``, ``k``, ``r``, ``eps`` (the paper's).
#:
#: Each also takes ``law`` (a name, fixed: ``fixed={"law": ...}``). When :func:`fit` gets no
#: ``dt`` it uses the step of the source paper (``SYSTEMS[name].dt``: 0.01, 0.01, 1e-3).
FIT_SYSTEMS = {name: spec.build for name, spec in SYSTEMS.items()}


def _default_dt(build):
    for spec in SYSTEMS.values():
        if spec.build is build:
            return spec.dt
    return getattr(build, "default_dt", None)


# ---------------------------------------------------------------------------------------------
# the report


@dataclasses.dataclass(frozen=True, eq=False)
class FitResult:
    """Report of :func:`fit`.

    Attributes:
        params: dict name -> estimate (the physical parameters only).
        stderr: dict name -> Gauss-Newton standard error.
        covariance: ``(p, p)`` covariance of the estimates, order of ``names``.
        names: the fitted parameter names.
        residual_std: ``sqrt(RSS / (n_residuals - n_variables))``, the estimated noise
            standard deviation of the (weighted) data residuals (units of q).
        loss_history: ``(n_steps + 1,)`` loss at every iterate (mean squared residual plus
            the weighted continuity defects).
        n_steps: optimiser steps taken (LM: accepted steps). converged: the Gauss-Newton step
            from the final point is below 0.1 standard error in every parameter (the
            optimiser's remaining error is statistically negligible) and the loss is finite.
        optimizer: ``"adam"``, ``"lbfgs"`` or ``"lm"``. gradient: ``"forward"`` or
            ``"reverse"``.
        n_residuals: data residuals (positions, plus velocities where measured).
        n_variables: free variables (parameters plus estimated segment initial states).
        initial_states: per record, ``(S, 2)`` estimated (or known) segment start states.
        system: the system built at the estimates.
        seconds: wall time of the fit. message: why the optimiser stopped.
    """

    params: dict
    stderr: dict
    covariance: np.ndarray
    names: tuple
    residual_std: float
    loss_history: np.ndarray
    n_steps: int
    converged: bool
    optimizer: str
    gradient: str
    n_residuals: int
    n_variables: int
    initial_states: list
    system: object
    seconds: float
    message: str

    @property
    def correlation(self):
        """Correlation matrix of the estimates, ``(p, p)``."""
        s = np.sqrt(np.diag(self.covariance))
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.covariance / np.outer(s, s)

    def summary(self):
        """A text table: estimate, standard error and relative error per parameter."""
        lines = [f"{'parameter':<12} {'estimate':>14} {'stderr':>12} {'rel. stderr':>12}"]
        for name in self.names:
            value, err = self.params[name], self.stderr[name]
            rel = abs(err / value) if value != 0 else math.inf
            lines.append(f"{name:<12} {value:>14.6g} {err:>12.3g} {rel:>11.2%}")
        lines.append(
            f"residual std {self.residual_std:.4g} ({self.n_residuals} residuals, {self.n_variables} "
            f"free variables); final loss {self.loss_history[-1]:.4g}"
        )
        lines.append(
            f"{self.optimizer} ({self.gradient}-mode gradients), {self.n_steps} steps in "
            f"{self.seconds:.1f} s: {'converged' if self.converged else 'NOT converged'} ({self.message})"
        )
        return "\n".join(lines)

    def to_dict(self):
        """JSON-ready dict (everything but ``system``)."""
        return {
            "params": dict(self.params),
            "stderr": dict(self.stderr),
            "names": list(self.names),
            "covariance": np.asarray(self.covariance).tolist(),
            "residual_std": self.residual_std,
            "loss_history": np.asarray(self.loss_history).tolist(),
            "final_loss": float(self.loss_history[-1]),
            "n_steps": self.n_steps,
            "converged": self.converged,
            "optimizer": self.optimizer,
            "gradient": self.gradient,
            "n_residuals": self.n_residuals,
            "n_variables": self.n_variables,
            "initial_states": [np.asarray(s).tolist() for s in self.initial_states],
            "seconds": self.seconds,
            "message": self.message,
        }


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


def fit(
    build,
    initial,
    data,
    *,
    fixed=None,
    bounds=None,
    optimizer="adam",
    steps=None,
    learning_rate=0.02,
    shooting_segments=1,
    continuity_weight=100.0,
    dt=None,
    velocity_weight=1.0,
    weights=None,
    gradient="auto",
    tol=1e-10,
    progress=False,
):
    """Estimate parameters of a system from measured trajectories (nonlinear least squares).

    Args:
        build: ``build(**params) -> system``, a one-dof jaxfriction system whose parameters
            stay differentiable (pass them into the modules as they are, no ``float()``), or
            a name of :data:`FIT_SYSTEMS` (``"belt"``, ``"oscillator"``, ``"disc"``).
        initial: dict name -> initial guess of each parameter to estimate (units of the
            builder's argument).
        data: a :class:`Measurement` or a sequence of them: several records share the
            parameters; each has its own initial state (known ``y0``, or estimated).
        fixed: dict name -> value of further builder arguments held fixed (numbers, or any
            hashable value: they are compile-time constants).
        bounds: dict name -> ``(lo, hi)`` (either may be None for a half-line), ``"positive"``
            or None (unconstrained). Parameters not listed are positive, ``(0, None)``. The
            optimiser works on unconstrained ``u`` with ``u = 0`` at the initial guess: a
            lower bound maps ``p = lo + (p0 - lo) exp(u)``, an upper bound ``p = hi - (hi -
            p0) exp(u)``, an interval a scaled sigmoid, no bound ``p = p0 + |p0| u``.
        optimizer: ``"adam"`` (``optax.adam``, learning rate cosine-decayed from
            ``learning_rate`` to 1/1000 of it over ``steps``; ``u`` is a log or relative
            variable, so the rate is a relative change per step), ``"lbfgs"``
            (``optax.lbfgs`` with its zoom line search, values and gradients reused through
            ``optax.value_and_grad_from_state``), or ``"lm"``
            (``optimistix.LevenbergMarquardt``, trust-region damping, on the Jacobian that the
            forward mode computes anyway; fastest for small problems).
        steps: maximum optimiser steps (default 400 for Adam, 100 for L-BFGS, 50 accepted
            steps for LM).
        learning_rate: Adam's initial learning rate (ignored by L-BFGS and LM).
        shooting_segments: ``S >= 1``; with ``S > 1`` every record is split into ``S``
            segments whose initial states ``(q, v)`` are free variables (initialised from a
            local quadratic fit of the positions, or from the measured velocity), and the
            loss adds ``continuity_weight * |end of segment i - start of segment i + 1|^2 /
            n_data`` (multiple shooting, Bock & Plitt 1984). Only parameters are reported;
            the segment states are in ``FitResult.initial_states``.
        continuity_weight: weight of the continuity defects (natural units of q and v).
        dt: largest RK4 step (time units); default the paper's step for the builders of
            :data:`FIT_SYSTEMS`, else ``build.default_dt`` if set, else the sample interval.
            The step used is ``interval / ceil(interval / dt)``: it divides the sample
            interval, and the simulation saves every ``ceil(interval / dt)`` steps.
        velocity_weight: factor on velocity residuals (``sigma_q / sigma_v`` makes the misfit
            a statistically consistent weighted least squares).
        weights: optional per-record weights (positive) on the squared residuals.
        gradient: ``"forward"`` (one batched JVP through the simulation: on CPU it is
            3-4x cheaper than reverse mode with 2-4 variables), ``"reverse"``
            (``jax.grad`` through the scan), or ``"auto"`` (forward up to 16 free
            variables, reverse beyond). The Jacobian for the covariance is always forward.
        tol: stop when the loss changes by less than ``tol`` (relative) over 5 steps (one
            accepted step for LM).
        progress: show a progress bar (tqdm, on stderr).

    Returns:
        :class:`FitResult`. Standard errors are Gauss-Newton: at the optimum ``J = d r / d
        theta`` (natural parametrisation, all free variables, continuity rows included),
        ``sigma^2 = RSS / (n_residuals - n_variables)`` (RSS of the data residuals),
        ``cov = sigma^2 (J^T J)^-1``, restricted to the parameters (standard nonlinear
        least squares: Seber & Wild 2003 ch. 2; Bard 1974 ch. 7).

    Raises:
        ValueError: naming the argument: unknown parameter names (``initial``, ``fixed``,
            ``bounds``), an initial value outside its bounds, bad bounds, bad ``data``,
            too few samples for the variables or segments, bad ``optimizer``,
            ``gradient``, ``steps`` or ``weights``, a ``build`` that does not return a
            one-dof system, or a non-finite loss at the initial guess.

    The model is integrated with :func:`~jaxfriction.simulate` (RK4 in ``lax.scan``) on each
    record's sample grid. Gradients are exact for the discrete model and flow through
    stick-slip for laws continuous in the slip velocity (see the module docstring). Fits
    with the same builder, fixed values and record shapes reuse the compiled code.
    """
    started = time.perf_counter()
    if isinstance(build, str):
        if build not in FIT_SYSTEMS:
            raise ValueError(f"build must be a builder or one of {sorted(FIT_SYSTEMS)}, got {build!r}")
        build = FIT_SYSTEMS[build]
    if not callable(build):
        raise ValueError(f"build must be callable or a name in {sorted(FIT_SYSTEMS)}, got {build!r}")
    if optimizer not in ("adam", "lbfgs", "lm"):
        raise ValueError(f"optimizer must be 'adam', 'lbfgs' or 'lm', got {optimizer!r}")
    if gradient not in ("auto", "forward", "reverse"):
        raise ValueError(f"gradient must be 'auto', 'forward' or 'reverse', got {gradient!r}")
    if steps is None:
        steps = {"adam": 400, "lbfgs": 100, "lm": 50}[optimizer]
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
        raise ValueError(f"initial must be a non-empty dict name -> initial guess, got {initial!r}")
    fixed = dict(fixed or {})
    bounds = dict(bounds or {})
    accepted = builder_defaults(build)
    open_kwargs = any(p.kind == p.VAR_KEYWORD for p in inspect.signature(build).parameters.values())
    for arg, given in (("initial", initial), ("fixed", fixed), ("bounds", bounds)):
        unknown = [n for n in given if n not in accepted and not open_kwargs]
        if unknown:
            raise ValueError(f"{arg}: unknown parameter(s) {unknown} (the builder takes {sorted(accepted)})")
    both = sorted(set(initial) & set(fixed))
    if both:
        raise ValueError(f"fixed: {both} are also in initial (a parameter is either estimated or fixed)")
    not_fitted = sorted(set(bounds) - set(initial))
    if not_fitted:
        raise ValueError(f"bounds: {not_fitted} are not estimated (not in initial)")
    names = tuple(initial)
    for name in names:
        check_real(f"initial[{name!r}]", initial[name])
    for name, value in fixed.items():
        if isinstance(value, (int, float, np.number)) or (eqx.is_array(value) and np.ndim(value) == 0):
            check_real(f"fixed[{name!r}]", value)
            fixed[name] = float(value)
        else:
            try:
                hash(value)
            except TypeError:
                raise ValueError(f"fixed[{name!r}] must be a number or hashable, got {value!r}") from None
    p0 = [float(initial[n]) for n in names]
    parsed = [_parse_bounds(n, bounds.get(n, (0.0, None)), p) for n, p in zip(names, p0)]
    try:
        system0 = build(**initial, **fixed)
    except TypeError as exc:
        raise ValueError(f"build(**initial, **fixed) failed: {exc}") from None
    if not isinstance(system0, AbstractFrictionSystem) or system0.n_dof != 1:
        raise ValueError(
            f"build must return a one-degree-of-freedom jaxfriction system, got {type(system0).__name__}"
        )

    # data
    if isinstance(data, Measurement):
        data = [data]
    if not isinstance(data, (list, tuple)) or not data or not all(isinstance(m, Measurement) for m in data):
        raise ValueError(f"data must be a Measurement or a non-empty list of them, got {type(data).__name__}")
    weights = [1.0] * len(data) if weights is None else list(np.atleast_1d(np.asarray(weights, dtype=float)))
    if len(weights) != len(data) or not all(np.isfinite(w) and w > 0 for w in weights):
        raise ValueError(f"weights must be {len(data)} positive numbers (one per record), got {weights}")
    if dt is None:
        dt = _default_dt(build)
    if dt is not None:
        check_real("dt", dt, positive=True)
    records, state0, scale, n_data = [], [], [], 0
    for j, m in enumerate(data):
        n = len(m)
        if n - 1 < 2 * shooting_segments:
            raise ValueError(
                f"shooting_segments = {shooting_segments} is too many for record {j} "
                f"({m.name or 'data'}, {n} samples): each segment needs >= 2 intervals"
            )
        interval = m.interval
        n_sub = 1 if dt is None else max(1, math.ceil(interval / float(dt) * (1 - 1e-9)))
        i_bounds = tuple(int(round(x)) for x in np.linspace(0, n - 1, shooting_segments + 1))
        q_scale = float(np.std(m.q)) or 1.0
        v_scale = float(np.std(np.gradient(m.q, m.t) if m.v is None else m.v)) or 1.0
        for i in i_bounds[(m.y0 is not None) : -1]:
            q_i, v_i = _local_fit(m.t, m.q, i)
            state0 += [q_i, v_i if m.v is None else float(m.v[i])]
            scale += [q_scale, v_scale]
        records.append(
            Record(
                q=jnp.asarray(m.q),
                v=None if m.v is None else jnp.asarray(m.v),
                y0=None if m.y0 is None else jnp.asarray(m.y0),
                weight=jnp.asarray(weights[j]),
                t_bounds=tuple(float(m.t[0] + i * interval) for i in i_bounds),
                i_bounds=i_bounds,
                h=interval / n_sub,
                n_sub=n_sub,
            )
        )
        n_data += n * (1 if m.v is None else 2)
    n_vars = len(names) + len(state0)
    if n_data <= n_vars:
        raise ValueError(f"data: {n_data} residuals are too few for {n_vars} free variables")
    if gradient == "auto":
        gradient = "forward" if n_vars <= 16 else "reverse"
    if optimizer == "lm":
        if gradient == "reverse":
            raise ValueError("gradient='reverse' cannot be used with optimizer='lm', which needs the forward-mode "
                             "Jacobian; use 'auto' or 'forward'")
        gradient = "forward"
    problem = Problem(
        build=build,
        names=names,
        kinds=tuple(k for k, _, _ in parsed),
        fixed=tuple(sorted(fixed.items())),
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

        tqdm_bar = tqdm(total=steps, desc=f"fit ({optimizer})", leave=False)

    def bar(value):
        if tqdm_bar is not None:
            tqdm_bar.update(1)
            tqdm_bar.set_postfix(loss=f"{value:.4g}")

    try:
        if optimizer == "adam":
            u, history, taken, message = run_adam(u, problem, steps, learning_rate, gradient, tol, bar)
        elif optimizer == "lbfgs":
            u, history, taken, message = run_lbfgs(u, problem, steps, gradient, tol, bar)
        else:
            u, history, taken, message, at_u = run_lm(u, problem, steps, tol, bar)
    finally:
        if tqdm_bar is not None:
            tqdm_bar.close()
    if taken == 0 and not math.isfinite(history[0]):
        raise ValueError(
            f"initial: the loss at the initial guess {dict(zip(names, p0))} is not finite (the "
            f"simulation diverged: reduce dt or start closer)"
        )

    # Gauss-Newton covariance in the natural parametrisation: J_theta = J_u / (d theta / d u);
    # LM has the residuals and J_u at u already
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
    data_size = max(max(float(np.max(np.abs(m.q))) for m in data), 1e-300)
    sensitivity = np.abs(jac) * np.maximum(np.abs(theta), 1e-300)
    if not np.all(np.isfinite(jac)) or float(np.max(sensitivity, initial=0.0)) > 1e8 * data_size:
        converged = False
        message += (
            "; the Jacobian is non-finite or exploding (derivatives of the simulation are unstable: "
            "reduce dt, or bound the parameters away from a too stiff stick band)"
        )
    initial_states, offset = [], p
    for rec in records:
        k = rec.n_free_states
        states = theta[offset : offset + 2 * k].reshape(k, 2)
        offset += 2 * k
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
        optimizer=optimizer,
        gradient=gradient,
        n_residuals=n_data,
        n_variables=n_vars,
        initial_states=initial_states,
        system=build(**params, **fixed),
        seconds=time.perf_counter() - started,
        message=message,
    )
