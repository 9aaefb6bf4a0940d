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
import functools
import inspect
import math
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import optimistix as optx

from .._checks import check_real
from ..integrate.rk4 import rk4_scan
from ..integrate.simulate import simulate
from ..systems.base import AbstractFrictionSystem
from .registry import SYSTEMS

#: Relative tolerance on the spacing of measurement times (text files round them).
UNIFORM_RTOL = 1e-4

# ---------------------------------------------------------------------------------------------
# measurements


@dataclasses.dataclass(frozen=True, eq=False)
class Measurement:
    """One measured trajectory of a one-degree-of-freedom system.

    Args:
        t: ``(n,)`` sample times (time units of the system), ``n >= 3``, strictly increasing
            and uniformly spaced (to a relative ``1e-4`` of the interval, for rounded files).
        q: ``(n,)`` measured positions (length or angle units of the system).
        v: optional ``(n,)`` measured velocities; when given they enter the misfit.
        y0: optional known initial state ``(q(t0), v(t0))``, shape ``(2,)``; when None the
            initial state is estimated with the parameters (from a local quadratic fit of the
            first samples).
        name: a label (file name) used in messages.

    Raises:
        ValueError: naming the argument (``t``, ``q``, ``v``, ``y0``) for wrong shapes,
            non-finite values, too few samples, or times not strictly increasing or not
            uniform.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray | None = None
    y0: np.ndarray | None = None
    name: str = ""

    def __post_init__(self):
        t = _as_vector("t", self.t)
        if t.shape[0] < 3:
            raise ValueError(f"t must have at least 3 samples, got {t.shape[0]}")
        steps = np.diff(t)
        if not np.all(steps > 0):
            i = int(np.argmin(steps > 0))
            raise ValueError(
                f"t must be strictly increasing, but t[{i + 1}] = {float(t[i + 1])} <= t[{i}] = {float(t[i])}"
            )
        interval = (t[-1] - t[0]) / (t.shape[0] - 1)
        bad = np.abs(steps - interval) > UNIFORM_RTOL * interval
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ValueError(
                f"t must be uniformly spaced (interval {interval:.6g}), but t[{i + 1}] - t[{i}] = "
                f"{steps[i]:.6g}"
            )
        object.__setattr__(self, "t", t)
        for name in ("q", "v"):
            value = getattr(self, name)
            if value is None:
                continue
            value = _as_vector(name, value)
            if value.shape != t.shape:
                raise ValueError(f"{name} must have the shape of t {t.shape}, got {value.shape}")
            object.__setattr__(self, name, value)
        if self.y0 is not None:
            y0 = np.asarray(self.y0, dtype=float)
            if y0.shape != (2,):
                raise ValueError(f"y0 must have shape (2,) (position, velocity), got {y0.shape}")
            check_real("y0", y0)
            object.__setattr__(self, "y0", y0)

    @property
    def interval(self) -> float:
        """Sample interval (time units): ``(t[-1] - t[0]) / (n - 1)``."""
        return float((self.t[-1] - self.t[0]) / (self.t.shape[0] - 1))

    def __len__(self):
        return int(self.t.shape[0])

    @classmethod
    def from_trajectory(
        cls,
        trajectory,
        noise=0.0,
        velocity_noise=None,
        seed=0,
        with_velocity=False,
        known_y0=False,
        name="synthetic",
    ):
        """Synthetic measurement from a simulated :class:`~jaxfriction.Trajectory`.

        Args:
            trajectory: a one-dof trajectory (its ``ts`` must be uniform: save with
                ``save_every``).
            noise: standard deviation of the Gaussian noise added to positions (units of q).
            velocity_noise: the same for velocities (default ``noise``).
            seed: seed of ``numpy.random.default_rng``.
            with_velocity: also record (noisy) velocities.
            known_y0: record the exact initial state as ``y0``.

        Returns: a :class:`Measurement`.
        """
        rng = np.random.default_rng(seed)
        t = np.asarray(trajectory.ts, dtype=float)
        q = np.asarray(trajectory.position, dtype=float)
        v = np.asarray(trajectory.velocity, dtype=float)
        if q.ndim != 1:
            raise ValueError(f"trajectory must be of a one-degree-of-freedom system, got positions {q.shape}")
        y0 = np.array([q[0], v[0]]) if known_y0 else None
        q_meas = q + noise * rng.standard_normal(q.shape)
        sigma_v = noise if velocity_noise is None else velocity_noise
        v_meas = v + sigma_v * rng.standard_normal(v.shape) if with_velocity else None
        return cls(t=t, q=q_meas, v=v_meas, y0=y0, name=name)

    def to_csv(self, path):
        """Write ``t,q[,v]`` with a header line (17 significant digits, lossless)."""
        cols = [self.t, self.q] + ([self.v] if self.v is not None else [])
        header = "t,q" + (",v" if self.v is not None else "")
        np.savetxt(path, np.column_stack(cols), delimiter=",", header=header, comments="", fmt="%.17g")


def _as_vector(name, value):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(value).__name__}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be finite, got {float(arr[i])} at index {i}")
    return arr


def load_measurement(path, y0=None):
    """Read a measured trajectory from a CSV file with a header line.

    Format: optional ``#`` comment lines and blank lines, then a header naming the columns
    ``t`` and ``q`` and optionally ``v`` (any order, comma separated), then one row of numbers
    per sample. Times must be uniform (see :class:`Measurement`).

    Args:
        path: file path.
        y0: optional known initial state ``(q0, v0)``.

    Returns: a :class:`Measurement` named after the file.

    Raises:
        FileNotFoundError: no such file.
        ValueError: ``path:line: ...`` for a malformed header or row (unknown or missing
            column, wrong number of values, a value that is not a number), ``path: ...`` for
            invalid data (non-uniform times, NaN...).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    columns, rows = None, []
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            fields = [f.strip() for f in text.split(",")]
            if columns is None:
                columns = [f.lower() for f in fields]
                unknown = [c for c in columns if c not in ("t", "q", "v")]
                if unknown or "t" not in columns or "q" not in columns or len(set(columns)) != len(columns):
                    raise ValueError(
                        f"{path}:{lineno}: the header must name the columns t,q and optionally v "
                        f"(once each), got {text!r}"
                    )
                continue
            if len(fields) != len(columns):
                raise ValueError(
                    f"{path}:{lineno}: expected {len(columns)} values ({','.join(columns)}), "
                    f"got {len(fields)}"
                )
            try:
                rows.append([float(f) for f in fields])
            except ValueError:
                bad = next(f for f in fields if not _is_float(f))
                raise ValueError(f"{path}:{lineno}: {bad!r} is not a number") from None
    if columns is None:
        raise ValueError(f"{path}: empty file (expected a header t,q[,v] and data rows)")
    if not rows:
        raise ValueError(f"{path}: no data rows after the header")
    data = np.asarray(rows, dtype=float)
    col = {c: data[:, i] for i, c in enumerate(columns)}
    try:
        return Measurement(t=col["t"], q=col["q"], v=col.get("v"), y0=y0, name=path.name)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _is_float(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


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


def builder_defaults(build):
    """Keyword parameters of a builder with their defaults (``inspect.Parameter.empty`` if none)."""
    return {
        n: p.default
        for n, p in inspect.signature(build).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


# ---------------------------------------------------------------------------------------------
# the problem as a pytree: data arrays are dynamic leaves, the grid structure is static, so a
# second fit with the same builder and record shapes reuses the compiled code


class _Record(eqx.Module):
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


class _Problem(eqx.Module):
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
def _forward_value_and_grad(u, problem):
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
def _natural_and_slope(u, problem):
    """``theta = T(u)`` and the diagonal ``d theta / d u`` (the transforms are elementwise)."""
    return jax.jvp(lambda x: _to_natural(x, problem), (u,), (jnp.ones_like(u),))


def _value_and_grad(u, problem, mode):
    if mode == "forward":
        return _forward_value_and_grad(u, problem)[:2]
    return _reverse_value_and_grad(u, problem)


def _finite(value, grad):
    return math.isfinite(value) and bool(np.all(np.isfinite(np.asarray(grad))))


def _stalled(history, tol):
    return len(history) > 5 and abs(history[-6] - history[-1]) <= tol * abs(history[-1])


def _run_adam(u, problem, steps, learning_rate, mode, tol, bar):
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


def _run_lbfgs(u, problem, steps, mode, tol, bar):
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


def _run_lm(u, problem, steps, tol, bar):
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
            _Record(
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
    problem = _Problem(
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
            u, history, taken, message = _run_adam(u, problem, steps, learning_rate, gradient, tol, bar)
        elif optimizer == "lbfgs":
            u, history, taken, message = _run_lbfgs(u, problem, steps, gradient, tol, bar)
        else:
            u, history, taken, message, at_u = _run_lm(u, problem, steps, tol, bar)
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
    theta, slope = (np.asarray(x, dtype=float) for x in _natural_and_slope(u, problem))
    stacked, jac_u = at_u or _forward_value_and_grad(u, problem)[2:]
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
