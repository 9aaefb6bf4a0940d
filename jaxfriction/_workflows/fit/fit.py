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

import dataclasses
import math
import time
import warnings
from typing import TYPE_CHECKING, Any, NamedTuple

import jax.numpy as jnp
import numpy as np
import optax

from ..._checks import check_int, check_real
from ..._paths import check_paths, get_parameter, set_parameters
from ..._systems.base import AbstractFrictionSystem
from ..._templates import Template, split_template
from ..gradient import AutoMode, ForwardMode, ReverseMode, as_gradient_mode
from .local_phase import negligible_decrease, run_least_squares, run_optax
from .outputs import check_outputs
from .report import report
from .result import FitResult, FitWarning
from .search import GlobalSearch, check_search_boxes, global_phase
from .segments import auto_segments
from .setup import box_centre, build_problem, check_data, parse_bounds
from .validation import check_validation, validate

if TYPE_CHECKING:
    from jax import Array

    from .measurement import Measurement
    from .problem import Problem


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


def _parameters(system, initial, bounds):
    """``(names, p0, parsed bounds)``; with no ``initial`` the box centres are the reference."""
    bounds = dict(bounds or {})
    if initial is None:
        if not bounds:
            raise ValueError("initial: give initial guesses, or bounds (a (lo, hi) box per parameter) to search")
        check_paths(system, bounds, "bounds")
        names = tuple(bounds)
        parsed = [parse_bounds(n, bounds[n]) for n in names]
        if any(kind != "interval" for kind, _, _ in parsed):
            check_search_boxes(names, parsed)
        p0 = [box_centre(lo, hi) for _, lo, hi in parsed]
    else:
        if not isinstance(initial, dict) or not initial:
            raise ValueError(f"initial must be a non-empty dict path -> initial guess (or None with bounds), "
                             f"got {initial!r}")
        check_paths(system, initial, "initial")
        check_paths(system, bounds, "bounds")
        not_fitted = sorted(set(bounds) - set(initial))
        if not_fitted:
            raise ValueError(f"bounds: {not_fitted} are not estimated (not in initial)")
        names = tuple(initial)
        for name in names:
            check_real(f"initial[{name!r}]", initial[name])
        p0 = [float(initial[n]) for n in names]
        parsed = [parse_bounds(n, bounds.get(n, (0.0, None)), p) for n, p in zip(names, p0)]
    arrays = [n for n in names if np.ndim(get_parameter(system, n)) != 0]
    if arrays:
        raise ValueError(f"{'bounds' if initial is None else 'initial'}: {arrays} are arrays; estimate their "
                         f"elements, e.g. {arrays[0]}[0]")
    return names, p0, parsed


def fit(
    system: AbstractFrictionSystem | Template, initial: dict[str, float] | None = None,
    data: Measurement | list[Measurement] | None = None, *, bounds: dict | None = None,
    search: GlobalSearch | None = None, noise: float | None = None, optimizer=None, steps: int | None = None,
    learning_rate: float = 0.02, shooting_segments: int | str = 1, continuity_weight: float = 100.0,
    dt: float | None = None, velocity_weight: float = 1.0, weights=None, gradient=AutoMode(max_forward=16),
    tol: float = 1e-10, progress: bool = False, devices=None, outputs: dict | None = None, validation=None,
    constraints: dict | None = None, constraint_weight: float = 1e4,
) -> FitResult:
    """Estimate parameters of a system from measured trajectories (nonlinear least squares).

    Args:
        system: the template system (any :class:`~jaxfriction.AbstractFrictionSystem`, any
            number of degrees of freedom and contacts, a user's own law and system
            included), or a :class:`~jaxfriction.Template` (its ``dt`` is the default). Its
            parameters not estimated stay as they are.
        initial: dict leaf path -> initial guess of each parameter to estimate (units of
            the parameter), e.g. ``{"law.mu_s": 0.75, "law.mu_k": 0.3}``; or None with
            ``bounds`` alone: the paths of ``bounds`` are estimated by a global search.
        data: a :class:`~jaxfriction.Measurement` or a sequence of them: several records
            share the parameters; each measures any subset of the positions and velocities,
            or named channels (``channels={"mu": ...}``: the friction coefficient of a
            velocity-step record; ``{"friction_force": ...}``, a tribometer's force record),
            has its own initial state (known ``y0``, or estimated) and its own measured
            inputs (``inputs={"force": samples}``, played back by a
            :class:`~jaxfriction.Sampled` drive at that path of the system).
        bounds: dict path -> ``(lo, hi)`` (either may be None for a half-line),
            ``"positive"`` or None (unconstrained). Parameters not listed are positive,
            ``(0, None)``. The optimiser works on unconstrained ``u`` with ``u = 0`` at the
            initial guess (the box centre without one): a lower bound maps ``p = lo + (p0 -
            lo) exp(u)``, an upper bound ``p = hi - (hi - p0) exp(u)``, an interval a scaled
            sigmoid, no bound ``p = p0 + |p0| u``. A global search needs a finite box for
            every estimated parameter.
        search: a :class:`~jaxfriction.GlobalSearch` (design over the box of ``bounds``,
            batched misfit, parallel Levenberg-Marquardt from the best candidates, then the
            local optimiser from the best end point), or None: a global search when
            ``initial`` is None, else the local optimiser from ``initial`` only.
        noise: the measurement noise standard deviation (units of q; of the weighted
            residuals when velocities are measured), if known: goodness of fit is then a
            chi-square test; between 1e-150 and 1e150. Default: estimated from the record
            (see the report).
        optimizer: an optax ``GradientTransformation`` (any: ``optax.adam(1e-2)``,
            ``optax.lbfgs()`` with its line search, chains), an optimistix least-squares
            solver (``optimistix.LevenbergMarquardt(rtol=0, atol=0)``,
            ``optimistix.GaussNewton(...)``, ``optimistix.Dogleg(...)``; it gets the
            forward-mode Jacobian), or a shortcut: ``"adam"`` (``optax.adam``, learning rate
            cosine-decayed from ``learning_rate`` to 1/1000 of it over ``steps``),
            ``"lbfgs"`` (``optax.lbfgs()``), ``"lm"`` (optimistix Levenberg-Marquardt, the
            fastest for small problems). Default ``"lm"`` after a global search, else
            ``"adam"``.
        steps: maximum optimiser steps (default 400 for optax, 50 accepted steps for
            least-squares solvers; 100 for ``"lbfgs"``).
        learning_rate: the ``"adam"`` shortcut's initial learning rate.
        shooting_segments: ``S >= 1``, or ``"auto"`` (per record, one segment per period of
            the record's dominant oscillation, see :func:`~jaxfriction.auto_segments`). With
            ``S > 1`` every record is split into ``S`` segments whose initial states ``(q, v,
            z)`` (a dynamic law's internal variables ``z`` included) are free variables,
            initialised from the data where measured and from a simulation at the initial
            guess elsewhere; the loss adds ``continuity_weight * |w (end of segment i -
            start of segment i + 1)|^2 / n_data`` (multiple shooting, Bock & Plitt 1984),
            with ``w = 1`` for positions and velocities (natural units) and ``w =
            std(q) / std(z)`` for internal variables (one standard deviation of ``z`` costs
            what one of ``q`` costs). Only parameters are reported; the segment states are
            in ``FitResult.initial_states``.
        continuity_weight: weight of the continuity defects.
        dt: largest RK4 step (time units); default the template's, else the sample
            interval (the inputs' interval where the record's inputs are sampled faster, as in
            a :meth:`~jaxfriction.Measurement.decimate`-d record). The step used is
            ``interval / ceil(interval / dt)``: it divides the
            sample interval, and the simulation saves every ``ceil(interval / dt)`` steps.
            With a global search and the default step, the step is halved (up to 5 times)
            while RK4's step rules flag a corner of the box (``FitResult.search["step"]``;
            ValueError naming ``dt`` if one is still flagged at 1/32). A system with a
            ``default_solver()`` (:class:`~jaxfriction.QuasiStaticSlider`) is integrated by
            that adaptive run when ``dt`` is None (its steps end at the load's jumps;
            derivatives in forward mode, one shooting segment).
        velocity_weight: factor on velocity residuals (``sigma_q / sigma_v`` makes the misfit
            a statistically consistent weighted least squares).
        weights: optional per-record weights (positive) on the squared residuals.
        gradient: a gradient mode object or name; the default ``AutoMode(max_forward=16)``
            uses forward mode up to 16 free variables (its pass yields the residuals'
            Jacobian too, 3-4x cheaper than reverse mode on CPU for 2-4 variables), reverse
            beyond; least-squares solvers always use forward mode. The Jacobian for the
            covariance is always forward.
        tol: stop when the loss changes by less than ``tol`` (relative) over 5 steps (one
            accepted step for least-squares solvers, with the Gauss-Newton test; or over 5
            accepted steps followed by 3 rejected trials).
        progress: show a progress bar (tqdm, on stderr).
        devices: devices the global search's design is sharded over (default all local).
        outputs: optional dict channel name -> ``fn(system, t, y)`` returning a scalar: the
            model's value of a measured channel that the system does not compute itself (a
            controller force, a spring force); the system's own outputs
            (:meth:`~jaxfriction.AbstractFrictionSystem.output`: ``"friction_force"``,
            ``"f_eq"``, internal variables) need none.
        constraints: optional dict name -> ``margin(system)``, a differentiable scalar that
            is ``>= 0`` where the constraint holds: the fit adds the penalty
            ``constraint_weight * min(margin, 0)^2`` to the loss (units of the mean squared
            residual), so an estimate may end on a constraint but not far past it. The
            passivity of a dynamic law: ``{"passive": lambda s:
            jf.passivity_margin(s.law)}`` (for LuGre ``sigma1 (F_s - F_c) <= sigma2 F_c``;
            :func:`~jaxfriction.passivity_margin`). An active constraint is reported in
            ``result.constraints``; a margin that is negative at the end raises a
            FitWarning.
        constraint_weight: the penalty's weight (> 0).
        validation: optional :class:`~jaxfriction.Measurement` or list of them, not fitted:
            after the fit the model is simulated over them (:func:`~jaxfriction.validate`,
            driven by their own inputs) and ``result.validation`` holds the
            :class:`~jaxfriction.ValidationReport` (RMS, NRMSE, fit %, relative error).

    Returns:
        The fit, a :class:`FitResult`, with its report: convergence, standard errors
            (Gauss-Newton: at the optimum ``J = d r / d theta``, ``sigma^2 = RSS /
            (n_residuals - n_variables)``, ``cov = sigma^2 (J^T J)^-1`` restricted to the
            parameters; Seber & Wild 2003 ch. 2, Bard 1974 ch. 7), whether they are
            reliable, goodness of fit, identifiability and, after a global search, the
            distinct local optima found; with ``validation``, ``result.validation``.

    Warns:
        FitWarning: the fit did not converge (standard errors unreliable), the model does
            not explain the data, ``J^T J`` is singular, or a parameter has no sensitivity
            (with the reason when it is an exact switch).

    Raises:
        ValueError: naming the argument: unknown or non-scalar paths (``initial``,
            ``bounds``), an initial value outside its bounds, bad bounds (``lo >= hi``, no
            finite box for a global search), bad ``data`` (a degree of freedom the system
            lacks, a ``y0`` of the wrong size), too few samples for the variables or
            segments, a bad ``optimizer``, ``gradient``, ``steps``, ``weights``, ``noise``
            or ``search``, or a non-finite loss at the initial guess; a ``validation``
            record the system cannot simulate (a channel or degree of freedom it lacks, the
            inputs of ``data`` missing), before the fit; a box too stiff for the default ``dt``.
        RuntimeError: the simulation of a ``validation`` record is not finite.

    Gradients are exact for the discrete model and flow through stick-slip for laws
    continuous in the slip velocity (see the module docstring). Fits of the same system
    structure and record shapes reuse the compiled code.
    """
    started = time.perf_counter()
    # 1. the arguments; 2. the least-squares problem; 3. the gradient mode
    tpl, system, search, optimiser = _check_arguments(system, initial, data, search, optimizer, steps,
                                                      learning_rate, continuity_weight, velocity_weight, tol,
                                                      noise)
    checked = (check_outputs(outputs), _check_constraints(constraints, constraint_weight), constraint_weight)
    problem, guess, parsed, data, weights = _build(system, tpl, initial, bounds, search, data, weights, dt,
                                                   shooting_segments, velocity_weight, continuity_weight, *checked)
    if validation is not None:  # before the fit: another system's record is refused at once
        check_validation(system, validation, outputs=outputs, inputs={p for m in data for p in (m.inputs or ())})
    mode = _gradient_mode(gradient, optimiser.kind, problem.n_params + problem.state0.shape[0])
    if mode == "reverse" and any(rec.solver is not None for rec in problem.records):
        raise ValueError(f"gradient: {type(system).__name__} is fitted with its adaptive solver, which "
                         f"differentiates in forward mode only; use gradient='forward' (or 'auto' with at "
                         f"most 16 free variables), or give dt for RK4")
    # 4. the global search, if any; 5. the local optimiser from its best point (or the guess)
    rebuild = None if dt is not None else (
        lambda step: _build(system, tpl, initial, bounds, search, data, weights, step, shooting_segments,
                            velocity_weight, continuity_weight, *checked)[0])
    u, search_report, evaluations, problem = _global_phase(problem, parsed, search, devices, rebuild)
    u, history, taken, message, at_u = _local_phase(u, problem, optimiser, mode, tol, progress)
    evaluations += taken + 1
    if taken == 0 and not math.isfinite(history[0]):
        raise ValueError(f"initial: the loss at the initial guess {guess} is not finite (the "
                         f"simulation diverged: reduce dt or start closer)")
    # 6. the report: standard errors, diagnostics, warnings
    result = report(problem, data, u, at_u, history, taken, message, started, optimiser.label, mode, noise,
                    search_report, evaluations, velocity_weight, weights)
    if problem.constraints:
        result = _constraint_report(result, problem)
    if validation is None:
        return result
    if search_report is not None and search_report["step"]["halvings"]:
        dt = search_report["step"]["dt"]  # the default step was refined for the box: validate on it
    return dataclasses.replace(result, validation=validate(result, validation, dt=dt if dt is not None else (
        tpl.dt if tpl is not None else None), outputs=outputs))

class _Optimiser(NamedTuple):
    """The local optimiser: ``kind`` (``"optax"`` or ``"least_squares"``), the object, the
    label the report shows and the maximum number of steps."""

    kind: str
    obj: Any
    label: str
    steps: int


def _check_arguments(
    system, initial, data, search, optimizer, steps, learning_rate, continuity_weight, velocity_weight, tol,
    noise,
) -> tuple[Template | None, AbstractFrictionSystem, GlobalSearch | None, _Optimiser]:
    """Stage 1: the arguments checked (ValueError naming the argument).

    Returns ``(template or None, system, search or None, optimiser)``: a global search is the
    default without ``initial``, and the default optimiser ``"lm"`` after a global search,
    else ``"adam"``.
    """
    system, tpl = split_template(system)
    if data is None:
        raise ValueError("data: give the measured record(s), a Measurement or a list of them")
    if search is None and initial is None:
        search = GlobalSearch()
    if search is not None and not isinstance(search, GlobalSearch):
        raise ValueError(f"search must be a GlobalSearch or None, got {search!r}")
    if optimizer is None:
        optimizer = "lm" if search is not None else "adam"
    kind, opt, default_steps = _optimizer(optimizer, learning_rate, steps)
    label = optimizer if isinstance(optimizer, str) else type(optimizer).__name__
    if kind == "optax" and not isinstance(optimizer, str):
        label = "optax"
    steps = default_steps if steps is None else steps
    check_int("steps", steps, minimum=0)
    check_real("learning_rate", learning_rate, positive=True)
    check_real("continuity_weight", continuity_weight, positive=True)
    check_real("velocity_weight", velocity_weight, nonnegative=True)
    check_real("tol", tol, nonnegative=True)
    check_real("noise", noise, positive=True)
    level = np.asarray(1.0 if noise is None else noise, dtype=float)
    if not np.all((level > 1e-150) & (level < 1e150)):  # noise**2 and its inverse stay floats
        raise ValueError(f"noise must lie in (1e-150, 1e150) (units of the data), got {noise!r}")
    return tpl, system, search, _Optimiser(kind, opt, label, steps)


def _check_constraints(constraints, weight) -> tuple:
    """``constraints`` (dict name -> margin function, or None) as sorted pairs (ValueError
    naming ``constraints`` / ``constraint_weight``)."""
    check_real("constraint_weight", weight, positive=True)
    if constraints is None:
        return ()
    if not isinstance(constraints, dict) or not all(isinstance(k, str) and callable(f) for k, f in constraints.items()):
        raise ValueError(f"constraints must be a dict name -> margin(system) (>= 0 where it holds), got "
                         f"{constraints!r}")
    return tuple(sorted(constraints.items()))


def _constraint_report(result, problem):
    """The fitted system's constraint margins in ``result.constraints``; a FitWarning (and a
    line in ``result.warnings``) for each that is negative."""
    margins = {name: float(fn(result.system)) for name, fn in problem.constraints}
    broken = [f"constraint {name!r} is violated at the estimates (margin {m:.4g} < 0): the data pull past it; "
              f"raise constraint_weight to enforce it harder" for name, m in margins.items() if m < 0]
    for text in broken:
        warnings.warn(text, FitWarning, stacklevel=3)
    return dataclasses.replace(result, constraints=margins, warnings=result.warnings + tuple(broken))


def _build(system, tpl, initial, bounds, search, data, weights, dt, shooting_segments, velocity_weight,
           continuity_weight, outputs=(), constraints=(), constraint_weight=1e4) -> tuple[Problem, dict, list, list,
                                                                                       list]:
    """Stage 2: the least-squares problem (see :func:`~.setup.build_problem`).

    Checks the parameters, bounds, records, ``dt`` and ``shooting_segments``; the fitted
    leaves of ``system`` become arrays at the initial guess, so that fits from other guesses
    or boxes reuse the compiled programs (a Python float is part of the program's identity)
    and no fitted term is left out as a literal zero. Returns ``(problem, initial guess
    {path: value}, parsed bounds, records, weights)``.
    """
    names, p0, parsed = _parameters(system, initial, bounds)
    if search is not None:
        check_search_boxes(names, parsed)
    system = set_parameters(system, {n: jnp.asarray(p, dtype=float) for n, p in zip(names, p0)})
    data, weights = check_data(data, system.n_dof, weights, system.n_internal, system, outputs)
    if dt is None and tpl is not None:
        dt = tpl.dt
    if dt is not None:
        check_real("dt", dt, positive=True)
    if shooting_segments == "auto":
        segments = [auto_segments(m) for m in data]
    else:
        try:
            segments = [check_int("shooting_segments", shooting_segments, minimum=1)] * len(data)
        except ValueError:
            raise ValueError(f"shooting_segments must be an integer >= 1 or 'auto', got {shooting_segments!r}") \
                from None
    problem = build_problem(system, names, p0, parsed, data, weights, segments=segments, dt=dt,
                            velocity_weight=velocity_weight, continuity_weight=continuity_weight,
                            outputs=outputs, constraints=constraints, constraint_weight=constraint_weight)
    return problem, dict(zip(names, p0)), parsed, data, weights


def _gradient_mode(gradient, kind, n_vars) -> str:
    """Stage 3: ``"forward"`` or ``"reverse"`` for ``n_vars`` free variables; a least-squares
    optimizer always takes the forward-mode Jacobian (ValueError if ``gradient`` asks for
    reverse)."""
    mode_obj = as_gradient_mode(gradient)
    if kind == "least_squares":
        if isinstance(mode_obj, ReverseMode):
            raise ValueError("gradient: a least-squares optimizer needs the forward-mode Jacobian; use 'auto' or "
                             "'forward'")
        mode_obj = ForwardMode()
    return "forward" if isinstance(mode_obj.resolve(n_vars), ForwardMode) else "reverse"


def _global_phase(problem, parsed, search, devices, rebuild) -> tuple[Array, Any, int, Problem]:
    """Stage 4: the global search, if any (:func:`~.search.global_phase`).

    Returns ``(u, search report or None, misfit evaluations, problem)``; without a search
    ``u = 0``, the initial guess. With ``rebuild`` (the step is the default) the problem may
    come back at a smaller step, where the box's corners broke RK4's step rules.
    """
    if search is None:
        return jnp.zeros(problem.n_params + problem.state0.shape[0], dtype=problem.p0.dtype), None, 0, problem
    return global_phase(problem, parsed, search, devices, rebuild)


def _local_phase(u, problem, optimiser, mode, tol, progress) -> tuple[Array, list[float], int, str, Any]:
    """Stage 5: the local optimiser from ``u`` (optax or optimistix), with the progress bar.

    Returns ``(u, loss history, steps taken, message, the least-squares solver's state at u or
    None)``.
    """
    tqdm_bar, at_u = None, None
    if progress:
        from tqdm.auto import tqdm

        tqdm_bar = tqdm(total=optimiser.steps, desc=f"fit ({optimiser.label})", leave=False)

    def bar(value: float) -> None:
        if tqdm_bar is not None:
            tqdm_bar.update(1)
            tqdm_bar.set_postfix(loss=f"{value:.4g}")

    try:
        if optimiser.kind == "optax":
            u, history, taken, message = run_optax(u, problem, optimiser.obj, optimiser.steps, mode, tol, bar)
        else:
            u, history, taken, message, at_u = run_least_squares(u, problem, optimiser.obj, optimiser.steps, tol,
                                                                 bar, negligible_decrease(problem))
    finally:
        if tqdm_bar is not None:
            tqdm_bar.close()
    return u, history, taken, message, at_u
