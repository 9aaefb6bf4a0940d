"""Posterior samples of fitted parameters by NUTS: uncertainty beyond the linearization.

:func:`~jaxfriction.fit` reports Gauss-Newton standard errors: the covariance of a Gaussian
fitted to the misfit at its minimum. They mislead when the misfit is far from quadratic over
the parameters' uncertainty (weakly identified parameters, a posterior cut by a bound,
strongly curved or banana-shaped correlations, skewed posteriors of scale parameters).
:func:`sample_posterior` draws from the posterior itself, with the No-U-Turn sampler, from
the same residual function the fit minimised.

Why blackjax (not numpyro): blackjax samples any JAX log-density directly, and the fit's
residual function is already one (a Gaussian likelihood is ``-|r|^2 / (2 sigma^2)``), so the
sampler runs on the fit's compiled simulation unchanged. numpyro would need the model
re-expressed in its primitives (``sample`` sites for every parameter and observation) or a
hand-written ``potential_fn``, and brings a modelling language (effect handlers,
distributions, plates) that this one fixed likelihood does not need. Both are optional: the
``bayes`` extra installs blackjax and ArviZ.
"""

from __future__ import annotations

import functools
import math
import time
from typing import TYPE_CHECKING, Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import check_int, check_real
from .problem import _stacked, _to_natural
from .result import FitResult

if TYPE_CHECKING:
    from arviz import InferenceData
    from jax import Array

_MAX_FORWARD = 16  # the gradient in forward mode up to this many variables (as fit's AutoMode), else reverse
_EXTRA = "sample_posterior needs the optional extra: pip install jaxfriction[bayes]"


def _natural(y, problem, box):
    """Natural ``theta`` (parameters, then free segment states) from the sampled ``y``: the
    fit's transforms of ``u``, except a parameter with a ``box`` ``(lo, hi)``, which is
    ``lo + (hi - lo) sigmoid(y)``."""
    mask = np.array([b is not None for b in box] + [False] * (y.shape[0] - len(box)))
    theta = _to_natural(jnp.where(mask, 0.0, y), problem)  # box entries replaced below
    for i, b in enumerate(box):
        if b is not None:
            theta = theta.at[i].set(b[0] + (b[1] - b[0]) * jax.nn.sigmoid(y[i]))
    return theta


_natural_batch = eqx.filter_jit(jax.vmap(_natural, in_axes=(0, None, None)))


def _log_jacobian(y, problem, box):
    """Log prior in ``theta`` plus ``log |d theta / d y|``, summed over the parameters, up to a
    constant: the log prior density of ``y``.

    Uniform on an interval (the fit's or a box): the scaled sigmoid's log-Jacobian
    ``log s + log(1 - s)``. Log-uniform on a half-line (density ``1 / (theta - lo)``) times
    the Jacobian ``(p0 - lo) exp(u)``: flat. No bound (``theta = p0 + |p0| u``): flat.
    """
    out = 0.0
    for i, kind in enumerate(problem.kinds):
        if box[i] is not None:
            z = y[i]
        elif kind == "interval":
            lo, hi, p0 = problem.lo[i], problem.hi[i], problem.p0[i]
            z = y[i] + jnp.log((p0 - lo) / (hi - p0))
        else:
            continue
        out = out + jax.nn.log_sigmoid(z) + jax.nn.log_sigmoid(-z)
    return out


def _residuals_at(y, problem, box):
    return _stacked(_natural(y, problem, box), problem)


def _rss_reverse(y, problem, box):
    r = _residuals_at(y, problem, box)
    return jnp.sum(r * r)


@eqx.filter_custom_vjp
def _rss_forward(y, problem, box):
    """The residual sum of squares, with a custom VJP that computes the gradient in forward mode."""
    return _rss_reverse(y, problem, box)


@_rss_forward.def_fwd
def _rss_forward_fwd(perturbed, y, problem, box):
    def f(x) -> tuple[Array, Array]:
        r = _residuals_at(x, problem, box)
        return r, r

    jac, r = jax.jacfwd(f, has_aux=True)(y)
    return jnp.sum(r * r), 2.0 * (r @ jac)


@_rss_forward.def_bwd
def _rss_forward_bwd(grad, ct, perturbed, y, problem, box):
    return ct * grad


@eqx.filter_jit
def _jacobian(y, problem, box):
    """Stacked residuals at ``y`` and their Jacobian ``d r / d y`` (forward mode)."""

    def f(x) -> tuple[Array, Array]:
        r = _residuals_at(x, problem, box)
        return r, r

    jac, r = jax.jacfwd(f, has_aux=True)(y)
    return r, jac


def _log_density(x, problem, box, noise):
    """Log posterior density of the sampled variables ``x`` (``y``, then ``log sigma`` when
    ``noise`` is None), up to a constant: Gaussian likelihood of the stacked residuals, the
    parameters' priors with the Jacobian of ``theta(y)``, flat in the segment states and in
    ``log sigma``. Non-finite values (a failed simulation) become ``-inf``."""
    n_y = problem.n_params + problem.state0.shape[0]
    y = x[:n_y]
    log_sigma = x[n_y] if noise is None else jnp.log(noise)
    n_r = jax.eval_shape(_residuals_at, y, problem, box).shape[0]
    rss = (_rss_forward if n_y <= _MAX_FORWARD else _rss_reverse)(y, problem, box)
    value = -0.5 * rss * jnp.exp(-2.0 * log_sigma) - n_r * log_sigma + _log_jacobian(y, problem, box)
    return jnp.where(jnp.isfinite(value), value, -jnp.inf)


@functools.cache
def _programs():
    """The jitted warmup and sampling programs (built once: blackjax is imported lazily)."""
    import blackjax
    from blackjax.adaptation.base import get_filter_adapt_info_fn

    # the chains move in z = (x - center) / scale (an affine map, constant Jacobian)
    @eqx.filter_jit
    def warmup(problem, box, noise, center, scale, positions, keys, n_steps) -> tuple[Any, Array, Array]:
        def logdensity(z) -> Array:
            return _log_density(center + scale * z, problem, box, noise)

        def one(key, position) -> tuple[Any, Array, Array]:
            adaptation = blackjax.window_adaptation(
                blackjax.nuts, logdensity, adaptation_info_fn=get_filter_adapt_info_fn())
            (state, parameters), _ = adaptation.run(key, position, n_steps)
            return state, parameters["step_size"], parameters["inverse_mass_matrix"]

        return jax.vmap(one)(keys, positions)

    @eqx.filter_jit
    def sample(problem, box, noise, center, scale, states, step_size, inverse_mass,
               keys) -> tuple[Any, tuple]:
        def logdensity(z) -> Array:
            return _log_density(center + scale * z, problem, box, noise)

        def one(keys, state, eps, imm) -> tuple[Any, tuple]:
            kernel = blackjax.nuts(logdensity, eps, imm)

            def step(state, k) -> tuple[Any, tuple]:
                state, info = kernel.step(k, state)
                trace = (center + scale * state.position, state.logdensity, info.is_divergent,
                         info.acceptance_rate, info.num_integration_steps, info.num_trajectory_expansions,
                         info.energy)
                return state, trace

            return jax.lax.scan(step, state, keys)

        return jax.vmap(one)(keys, states, step_size, inverse_mass)

    return warmup, sample


def _parse_box(bounds, problem):
    """Per parameter ``(lo, hi)`` or None from ``bounds``; raises naming ``bounds``."""
    if bounds is None:
        return (None,) * problem.n_params
    if not isinstance(bounds, dict):
        raise ValueError(f"bounds must be a dict path -> (lo, hi) or None, got {bounds!r}")
    unknown = sorted(set(bounds) - set(problem.names))
    if unknown:
        raise ValueError(f"bounds: {unknown} are not fitted parameters (fitted: {list(problem.names)})")
    box = []
    for i, name in enumerate(problem.names):
        if name not in bounds:
            box.append(None)
            continue
        spec = bounds[name]
        try:
            lo, hi = spec
        except (TypeError, ValueError):
            raise ValueError(f"bounds[{name!r}] must be a finite (lo, hi), got {spec!r}") from None
        check_real(f"bounds[{name!r}] lo", lo)
        check_real(f"bounds[{name!r}] hi", hi)
        if lo is None or hi is None or not float(lo) < float(hi):
            raise ValueError(f"bounds[{name!r}] must be a finite (lo, hi) with lo < hi, got {spec!r}")
        kind = problem.kinds[i]
        f_lo = float(problem.lo[i]) if kind in ("lower", "interval") else None
        f_hi = float(problem.hi[i]) if kind in ("upper", "interval") else None
        if (f_lo is not None and float(lo) < f_lo) or (f_hi is not None and float(hi) > f_hi):
            fit_range = (f_lo, f_hi)
            raise ValueError(f"bounds[{name!r}] = {spec!r} must lie within the fit's bounds {fit_range}")
        box.append((float(lo), float(hi)))
    return tuple(box)


def sample_posterior(result: FitResult, *, draws: int = 1000, warmup: int = 1000, chains: int = 4,
                     seed: int = 0, noise: float | None = None, bounds: dict | None = None,
                     progress: bool = False) -> InferenceData:
    """Posterior samples of a fit's parameters by the No-U-Turn sampler (blackjax).

    The posterior of the fitted variables given the records, sampled from the residuals that
    :func:`~jaxfriction.fit` minimised (same system, records, weights, RK4 step, parameter
    transforms): uncertainty beyond the Gauss-Newton linearization of
    :attr:`FitResult.stderr`.

    Model. Likelihood: every stacked residual of the fit (weighted position and velocity
    residuals, plus ``sqrt(continuity_weight)`` times the continuity defects under multiple
    shooting) is independent Gaussian with standard deviation ``sigma`` (units of q). Known
    noise: ``sigma = noise``. Otherwise ``sigma`` is sampled too, with the Jeffreys prior
    ``p(sigma) ~ 1 / sigma`` (flat in ``log sigma``). Priors of the parameters, from the
    fit's bounds: an interval ``(lo, hi)``: uniform on it; a half-line (``(lo, None)``,
    ``"positive"``, ``(None, hi)``): log-uniform, flat in ``log(p - lo)`` (``log(hi - p)``);
    no bound: flat. Free segment initial states: flat. The half-line and flat priors are
    improper: the posterior is proper only when the data constrain the parameter (a
    parameter the records do not determine drifts without limit; give it ``bounds`` here).
    With multiple shooting the continuity defects are residuals too, a soft constraint of
    width ``sigma / sqrt(continuity_weight)``; for the posterior of the single-trajectory
    model fit with ``shooting_segments=1``.

    Sampling. NUTS (multinomial, iterative, blackjax's ``nuts``) in the fit's unconstrained
    variables ``u`` (a parameter with ``bounds`` here: the logit of its place in the box;
    plus ``log sigma``), so no draw leaves a parameter's valid range; the log density
    carries the transforms' log-Jacobians, so the priors above hold in natural units. The
    variables are scaled by their Gauss-Newton standard deviations at the optimum (at most
    1), so the posterior is near unit scale as the warmup assumes; each chain then adapts
    its step size and diagonal mass matrix with ``blackjax.window_adaptation`` (Stan's
    windowed scheme) over ``warmup`` steps and draws ``draws`` samples. The chains start at
    the fit's optimum jittered by 0.1 scaled units (seeded) and run in parallel
    (``jax.vmap``). The gradient is forward mode up to 16 variables (the fit's default),
    reverse beyond. A simulation that fails at a trial point (non-finite residuals) gives
    log density ``-inf``: NUTS rejects it as a divergence.

    Args:
        result: a :class:`FitResult` of :func:`~jaxfriction.fit` (it carries its problem and
            optimum ``u``).
        draws: samples kept per chain (positive int).
        warmup: adaptation steps per chain, discarded (positive int; Stan's windows need
            about 150 or more).
        chains: independent chains (positive int; R-hat needs at least 2, 4 is usual).
        seed: seed of the ``jax.random`` key (int).
        noise: known noise standard deviation of the (weighted) residuals, > 0 (units of
            q); None samples ``sigma``.
        bounds: optional dict path -> finite ``(lo, hi)``: that parameter's prior is uniform
            on ``(lo, hi)`` (flat in natural units, zero outside) instead of the one from the
            fit's bounds; ``(lo, hi)`` must lie within the fit's bounds and contain the
            estimate. This makes a half-line or unbounded parameter's prior proper. The
            parameter is sampled as ``lo + (hi - lo) sigmoid(y)``, so no draw leaves the box;
            a box far wider than the posterior makes the density of ``y`` steep (a few
            divergences; see the how-to).
        progress: show a progress bar (tqdm, on stderr).

    Returns:
        An ``arviz.InferenceData``. ``posterior``: one variable per fitted path (``"law.mu_s"``,
            natural units), ``(chain, draw)``; ``"sigma"`` when sampled; ``"initial_states"``
            ``(chain, draw, state)`` when the fit estimated segment initial states (the
            fit's order: per record, per free segment, positions then velocities).
            ``sample_stats``: ``diverging``, ``acceptance_rate``, ``step_size``,
            ``tree_depth``, ``n_steps`` (leapfrog steps), ``energy``, ``lp`` (log density in
            the sampled variables). ``attrs``: ``sampler`` (``"blackjax NUTS"``),
            ``warmup``, ``seed``, ``noise`` (the known value or ``"sampled"``),
            ``sampling_time`` (s, compilation included). ``arviz.summary(idata)`` gives
            means, standard deviations, credible intervals, and the rank-normalized split
            R-hat and bulk / tail effective sample sizes of Vehtari et al. (2021); trust
            the samples when R-hat < 1.01 and ESS > 400 for every variable, and there are no
            divergences.

    Raises:
        ValueError: naming the argument: ``result`` not a :class:`FitResult` or without its
            problem, ``draws`` / ``warmup`` / ``chains`` not positive ints, a non-int
            ``seed``, ``noise`` not finite and > 0, bad ``bounds`` (an unknown path, not
            ``lo < hi``, outside the fit's bounds, not containing the estimate).
        ImportError: blackjax or ArviZ is missing (the ``bayes`` extra).

    Sources: the No-U-Turn sampler, Hoffman & Gelman, J. Mach. Learn. Res. 15 (2014)
    1593-1623 (blackjax's variant samples multinomially along the trajectory, Betancourt
    2017); rank-normalized R-hat and ESS, Vehtari, Gelman, Simpson, Carpenter & Buerkner,
    Bayesian Analysis 16 (2021) 667-718, as ArviZ computes them.
    """
    draws, warmup, chains, noise, box = _check_arguments(result, draws, warmup, chains, seed, noise, bounds)
    az = _import_extra()
    warmup_program, sample_program = _programs()
    started = time.perf_counter()
    problem = result.problem
    y0, center, scale = _whitening(result, box, noise)
    trace, step_size = _run_chains(warmup_program, sample_program, problem, box, noise, center, scale, seed,
                                   chains, warmup, draws, progress)
    posterior, sample_stats = _samples(trace, step_size, problem, box, noise, y0.shape[0], chains, draws)
    attrs = {
        "sampler": "blackjax NUTS",
        "warmup": warmup,
        "seed": int(seed),
        "noise": "sampled" if noise is None else noise,
        "sampling_time": time.perf_counter() - started,
    }
    return az.from_dict(posterior=posterior, sample_stats=sample_stats, dims={"initial_states": ["state"]},
                        attrs=attrs)


def _check_arguments(result, draws, warmup, chains, seed, noise, bounds) -> tuple[int, int, int, float | None,
                                                                                   tuple]:
    """Stage 1: the arguments checked (ValueError naming the argument).

    Returns ``(draws, warmup, chains, noise as a float or None, box)``, ``box`` the per
    parameter ``(lo, hi)`` of ``bounds`` or None (:func:`_parse_box`), each containing the
    estimate.
    """
    if not isinstance(result, FitResult):
        raise ValueError(f"result must be a FitResult of jaxfriction.fit, got {type(result).__name__}")
    if result.problem is None or result.u is None:
        raise ValueError("result carries no least-squares problem (problem is None): pass the FitResult that "
                         "jaxfriction.fit returned")
    draws = check_int("draws", draws, minimum=1)
    warmup = check_int("warmup", warmup, minimum=1)
    chains = check_int("chains", chains, minimum=1)
    check_int("seed", seed)
    if noise is not None:
        check_real("noise", noise, positive=True)
        noise = float(noise)
    problem = result.problem
    box = _parse_box(bounds, problem)
    for i, name in enumerate(problem.names):
        if box[i] is not None and not box[i][0] < result.params[name] < box[i][1]:
            raise ValueError(f"bounds[{name!r}] = {box[i]} must contain the estimate {result.params[name]!r} "
                             f"(the chains start there)")
    return draws, warmup, chains, noise, box


def _import_extra():
    """Stage 2: ArviZ (returned) and blackjax, or ImportError naming the ``bayes`` extra."""
    try:
        import arviz as az
        import blackjax  # noqa: F401
    except ImportError as error:
        raise ImportError(_EXTRA) from error
    return az


def _whitening(result, box, noise) -> tuple[np.ndarray, Array, Array]:
    """Stage 3: where the chains start and their scale.

    The chains move in ``z = (x - x0) / scale``, ``x0`` the optimum (``y``, with the logit of
    a boxed parameter's place in its box, then ``log sigma`` when sampled), ``scale`` the
    Gauss-Newton standard deviations of ``x`` (at most 1: ``y`` is a relative, log or logit
    variable; the Laplace variance ``1 / (2 n_residuals)`` for ``log sigma``). The posterior is
    then near unit scale, as the warmup assumes (it starts from the identity metric and
    regularises the adapted variances towards 1e-3). Returns ``(y0, center, scale)``.
    """
    problem = result.problem
    dtype = problem.p0.dtype
    y0 = np.asarray(result.u, dtype=float).copy()
    for i, b in enumerate(box):
        if b is not None:
            frac = (result.params[problem.names[i]] - b[0]) / (b[1] - b[0])
            y0[i] = math.log(frac / (1.0 - frac))
    r, jac = (np.asarray(a, dtype=float) for a in _jacobian(jnp.asarray(y0, dtype=dtype), problem, box))
    sigma_hat = noise if noise is not None else max(result.residual_std, 1e-300)
    with np.errstate(all="ignore"):
        try:
            var = sigma_hat**2 * np.diag(np.linalg.inv(jac.T @ jac))
        except np.linalg.LinAlgError:
            var = np.full(y0.shape, np.nan)
    x0 = y0
    if noise is None:
        x0 = np.append(x0, math.log(sigma_hat))
        var = np.append(var, 0.5 / r.shape[0])  # the Laplace variance of log sigma
    scale = np.where(np.isfinite(var) & (var > 0), np.sqrt(np.abs(var)), 1.0).clip(np.finfo(dtype).tiny, 1.0)
    return y0, jnp.asarray(x0, dtype=dtype), jnp.asarray(scale, dtype=dtype)


def _run_chains(warmup_program, sample_program, problem, box, noise, center, scale, seed, chains, warmup,
                draws, progress) -> tuple[tuple[np.ndarray, ...], Array]:
    """Stage 4: the NUTS chains, in parallel: window adaptation over ``warmup`` steps, then
    ``draws`` samples (in chunks of 1/20 when the progress bar shows).

    The chains start at the optimum jittered by 0.1 scaled units. Returns the trace
    ``(position, lp, diverging, acceptance, n_steps, depth, energy)``, each ``(chains, draws,
    ...)``, and the adapted step size per chain.
    """
    dtype = problem.p0.dtype
    key = jax.random.PRNGKey(int(seed))
    k_jitter, k_warmup, k_sample = jax.random.split(key, 3)
    positions = 0.1 * jax.random.normal(k_jitter, (chains, center.shape[0]), dtype=dtype)
    noise_arg = None if noise is None else jnp.asarray(noise, dtype=dtype)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=warmup + draws, desc="NUTS warmup", leave=False)
    try:
        states, step_size, imm = warmup_program(problem, box, noise_arg, center, scale, positions,
                                                jax.random.split(k_warmup, chains), warmup)
        keys = jax.random.split(k_sample, (chains, draws))  # the same draws with or without the bar
        size = draws if bar is None else max(draws // 20, 1)  # the bar advances after each chunk
        if bar is not None:
            bar.update(warmup)
            bar.set_description("NUTS sampling")
        out = []
        for start in range(0, draws, size):
            states, trace = sample_program(problem, box, noise_arg, center, scale, states, step_size, imm,
                                           keys[:, start : start + size])
            out.append(jax.tree_util.tree_map(np.asarray, trace))
            if bar is not None:
                bar.update(min(size, draws - start))
    finally:
        if bar is not None:
            bar.close()
    return tuple(np.concatenate([o[k] for o in out], axis=1) for k in range(7)), step_size


def _samples(trace, step_size, problem, box, noise, n_u, chains, draws) -> tuple[dict, dict]:
    """Stage 5: the trace in natural units: ``(posterior, sample_stats)`` as ArviZ takes them."""
    position, lp, diverging, acceptance, n_steps, depth, energy = trace
    dtype = problem.p0.dtype
    n_params = problem.n_params
    flat = jnp.asarray(position[..., :n_u].reshape(-1, n_u), dtype=dtype)
    theta = np.asarray(_natural_batch(flat, problem, box), dtype=float).reshape(chains, draws, n_u)
    posterior = {name: theta[..., i] for i, name in enumerate(problem.names)}
    if noise is None:
        posterior["sigma"] = np.exp(position[..., n_u])
    if n_u > n_params:
        posterior["initial_states"] = theta[..., n_params:]
    sample_stats = {
        "diverging": diverging.astype(bool),
        "acceptance_rate": acceptance,
        "step_size": np.broadcast_to(np.asarray(step_size)[:, None], (chains, draws)).copy(),
        "tree_depth": depth,
        "n_steps": n_steps,
        "energy": energy,
        "lp": lp,
    }
    return posterior, sample_stats
