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

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import check_real
from .problem import _stacked, _to_natural, forward_value_and_grad
from .result import FitResult

_MAX_FORWARD = 16  # the gradient in forward mode up to this many variables (as fit's AutoMode), else reverse
_EXTRA = "sample_posterior needs the optional extra: pip install jaxfriction[bayes]"


def _log_jacobian(kind, lo, hi, p0, x):
    """``log |d theta / d u|`` of one parameter's transform, up to a constant."""
    if kind == "interval":
        z = x + jnp.log((p0 - lo) / (hi - p0))
        return jax.nn.log_sigmoid(z) + jax.nn.log_sigmoid(-z)
    if kind in ("lower", "upper"):
        return x  # theta - bound = +-(p0 - bound) exp(u)
    return jnp.zeros_like(x)


def _rss_reverse(u, problem):
    r = _stacked(_to_natural(u, problem), problem)
    return jnp.sum(r * r)


@eqx.filter_custom_vjp
def _rss_forward(u, problem):
    """The residual sum of squares, with a custom VJP that computes the gradient in forward mode."""
    return _rss_reverse(u, problem)


@_rss_forward.def_fwd
def _rss_forward_fwd(perturbed, u, problem):
    def f(x):
        r = _stacked(_to_natural(x, problem), problem)
        return r, r

    jac, r = jax.jacfwd(f, has_aux=True)(u)
    return jnp.sum(r * r), 2.0 * (r @ jac)


@_rss_forward.def_bwd
def _rss_forward_bwd(grad, ct, perturbed, u, problem):
    return ct * grad


def _log_density(x, problem, box, noise):
    """Log posterior density in the sampled variables ``x`` (``u``, then ``log sigma`` when
    ``noise`` is None), up to a constant.

    Prior in ``theta``: uniform on an interval, log-uniform on a half-line, flat without
    bounds; a parameter with a ``box`` ``(lo, hi)`` is uniform there (zero outside). In ``u``
    the density is the prior in ``theta`` times ``|d theta / d u|``: the interval's prior
    times the sigmoid's Jacobian is that Jacobian; the log-uniform prior on a half-line times
    its Jacobian ``exp(u)`` is flat; the box's uniform prior is the Jacobian.
    """
    n_u = problem.n_params + problem.state0.shape[0]
    u = x[:n_u]
    log_sigma = x[n_u] if noise is None else jnp.log(noise)
    theta = _to_natural(u, problem)
    n_r = jax.eval_shape(_stacked, theta, problem).shape[0]
    rss = (_rss_forward if n_u <= _MAX_FORWARD else _rss_reverse)(u, problem)
    log_lik = -0.5 * rss * jnp.exp(-2.0 * log_sigma) - n_r * log_sigma
    log_prior = 0.0
    for i, kind in enumerate(problem.kinds):
        jac = _log_jacobian(kind, problem.lo[i], problem.hi[i], problem.p0[i], u[i])
        if box[i] is not None:
            inside = (theta[i] > box[i][0]) & (theta[i] < box[i][1])
            log_prior = log_prior + jnp.where(inside, jac, -jnp.inf)
        elif kind == "interval":
            log_prior = log_prior + jac
    value = log_lik + log_prior
    return jnp.where(jnp.isfinite(value), value, -jnp.inf)


@functools.lru_cache(maxsize=None)
def _programs():
    """The jitted warmup and sampling programs (built once: blackjax is imported lazily)."""
    import blackjax
    from blackjax.adaptation.base import get_filter_adapt_info_fn

    @eqx.filter_jit
    def warmup(problem, box, noise, positions, inverse_mass, keys, n_steps):
        def logdensity(x):
            return _log_density(x, problem, box, noise)

        def one(key, position, imm):
            adaptation = blackjax.window_adaptation(
                blackjax.nuts, logdensity, initial_inverse_mass_matrix=imm,
                adaptation_info_fn=get_filter_adapt_info_fn())
            (state, parameters), _ = adaptation.run(key, position, n_steps)
            return state, parameters["step_size"], parameters["inverse_mass_matrix"]

        return jax.vmap(one)(keys, positions, inverse_mass)

    @eqx.filter_jit
    def sample(problem, box, noise, states, step_size, inverse_mass, keys, n_steps):
        def logdensity(x):
            return _log_density(x, problem, box, noise)

        def one(key, state, eps, imm):
            kernel = blackjax.nuts(logdensity, eps, imm)

            def step(state, k):
                state, info = kernel.step(k, state)
                return state, (state.position, state.logdensity, info.is_divergent, info.acceptance_rate,
                               info.num_integration_steps, info.num_trajectory_expansions, info.energy)

            return jax.lax.scan(step, state, jax.random.split(key, n_steps))

        return jax.vmap(one)(keys, states, step_size, inverse_mass)

    return warmup, sample


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


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
        kind, f_lo, f_hi = problem.kinds[i], float(problem.lo[i]), float(problem.hi[i])
        if (kind in ("lower", "interval") and float(lo) < f_lo) or (kind in ("upper", "interval") and float(hi) > f_hi):
            fit_range = (f_lo if kind in ("lower", "interval") else None, f_hi if kind in ("upper", "interval") else None)
            raise ValueError(f"bounds[{name!r}] = {spec!r} must lie within the fit's bounds {fit_range}")
        box.append((float(lo), float(hi)))
    return tuple(box)


def sample_posterior(result, *, draws=1000, warmup=1000, chains=4, seed=0, noise=None, bounds=None,
                     progress=False):
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
    variables ``u`` (plus ``log sigma``), so no draw leaves a parameter's valid range; the
    log density carries the transforms' log-Jacobians, so the prior above holds in natural
    units. Each chain adapts its step size and diagonal mass matrix with
    ``blackjax.window_adaptation`` (Stan's windowed scheme) over ``warmup`` steps, seeded
    with the Gauss-Newton variances of ``u``, then draws ``draws`` samples; chains start at
    the fit's optimum jittered by at most 0.1 Gauss-Newton standard deviations (capped at
    0.1 in ``u``) and run in parallel (``jax.vmap``). A simulation that fails at a trial
    point (non-finite residuals) gives log density ``-inf``: NUTS rejects it as a divergence.

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
            edges are hard: posterior mass at an edge shows as divergences.
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
    if not isinstance(result, FitResult):
        raise ValueError(f"result must be a FitResult of jaxfriction.fit, got {type(result).__name__}")
    if result.problem is None or result.u is None:
        raise ValueError("result carries no least-squares problem (problem is None): pass the FitResult that "
                         "jaxfriction.fit returned")
    draws = _positive_int("draws", draws)
    warmup = _positive_int("warmup", warmup)
    chains = _positive_int("chains", chains)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if noise is not None:
        check_real("noise", noise, positive=True)
        noise = float(noise)
    problem = result.problem
    box = _parse_box(bounds, problem)
    for i, name in enumerate(problem.names):
        if box[i] is not None and not box[i][0] < result.params[name] < box[i][1]:
            raise ValueError(f"bounds[{name!r}] = {box[i]} must contain the estimate {result.params[name]!r} "
                             f"(the chains start there)")
    try:
        import arviz as az
        import blackjax  # noqa: F401
    except ImportError as error:
        raise ImportError(_EXTRA) from error
    warmup_program, sample_program = _programs()
    started = time.perf_counter()

    # the start: the optimum, the Gauss-Newton variances of u (and of log sigma) seed the mass matrix
    dtype = problem.p0.dtype
    u = jnp.asarray(result.u, dtype=dtype)
    _, _, r, jac = forward_value_and_grad(u, problem)
    r, jac = np.asarray(r, dtype=float), np.asarray(jac, dtype=float)
    sigma_hat = noise if noise is not None else max(result.residual_std, 1e-300)
    with np.errstate(all="ignore"):
        try:
            var = sigma_hat**2 * np.diag(np.linalg.pinv(jac.T @ jac))
        except np.linalg.LinAlgError:
            var = np.full(u.shape, np.nan)
    var = np.where(np.isfinite(var) & (var > 0), var, 1e-2)
    x0 = np.asarray(result.u, dtype=float)
    if noise is None:
        x0 = np.append(x0, math.log(sigma_hat))
        var = np.append(var, 0.5 / r.shape[0])
    inverse_mass = np.clip(var, 1e-20, 1e2)
    key = jax.random.PRNGKey(int(seed))
    k_jitter, k_warmup, k_sample = jax.random.split(key, 3)
    jitter = np.asarray(jax.random.normal(k_jitter, (chains, x0.shape[0]), dtype=float))
    positions = x0 + jitter * np.minimum(0.1 * np.sqrt(var), 0.1)
    noise_arg = None if noise is None else jnp.asarray(noise, dtype=dtype)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=warmup + draws, desc="NUTS warmup", leave=False)
    try:
        states, step_size, imm = warmup_program(
            problem, box, noise_arg, jnp.asarray(positions, dtype=dtype),
            jnp.asarray(np.tile(inverse_mass, (chains, 1)), dtype=dtype), jax.random.split(k_warmup, chains), warmup)
        size = draws if bar is None else max(draws // 20, 1)  # the bar advances after each chunk
        chunks = [min(size, draws - s) for s in range(0, draws, size)]
        if bar is not None:
            bar.update(warmup)
            bar.set_description("NUTS sampling")
        out = []
        for j, n in enumerate(chunks):
            keys = jax.random.split(jax.random.fold_in(k_sample, j), chains)
            states, trace = sample_program(problem, box, noise_arg, states, step_size, imm, keys, n)
            out.append(jax.tree_util.tree_map(np.asarray, trace))
            if bar is not None:
                bar.update(n)
    finally:
        if bar is not None:
            bar.close()
    position, lp, diverging, acceptance, n_steps, depth, energy = (
        np.concatenate([o[k] for o in out], axis=1) for k in range(7))

    n_params, n_u = problem.n_params, u.shape[0]
    theta = np.asarray(jax.jit(jax.vmap(lambda x: _to_natural(x, problem)))(
        jnp.asarray(position[..., :n_u].reshape(-1, n_u))), dtype=float).reshape(chains, draws, n_u)
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
    attrs = {
        "sampler": "blackjax NUTS",
        "warmup": warmup,
        "seed": int(seed),
        "noise": "sampled" if noise is None else noise,
        "sampling_time": time.perf_counter() - started,
    }
    return az.from_dict(posterior=posterior, sample_stats=sample_stats, dims={"initial_states": ["state"]},
                        attrs=attrs)
