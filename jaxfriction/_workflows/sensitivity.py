"""Sensitivities of observables to system parameters: gradients, elasticities, maps.

Parameters are the floating-point leaves of a system (an equinox module), named by their
path, e.g. ``"law.mu"``, ``"law.eps"``, ``"alpha"``, ``"stiffness"``. An observable is any
scalar function of a system (dissipation per cycle, stick fraction, rest position, peak
sliding...), usually built on :func:`~jaxfriction.simulate`.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr


def parameter_names(system):
    """Paths of the floating-point leaves of ``system`` (``"law.mu"``, ``"alpha"``, ...)."""
    names = []
    for path, leaf in jax.tree_util.tree_leaves_with_path(system):
        if isinstance(leaf, float) or (eqx.is_array(leaf) and jnp.issubdtype(leaf.dtype, jnp.floating)):
            names.append(jax.tree_util.keystr(path).lstrip("."))
    return names


def _getter(name):
    def get(tree):
        for part in name.split("."):
            tree = getattr(tree, part)
        return tree

    return get


def _with(system, names, values):
    return eqx.tree_at(lambda s: [_getter(n)(s) for n in names], system, [v for v in values],
                       is_leaf=lambda x: x is None)


def _resolve(system, params):
    names = parameter_names(system) if params is None else list(params)
    known = set(parameter_names(system))
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"params must name floating-point parameters of the system ({sorted(known)}), got {unknown or names}")
    return names, jnp.stack([jnp.asarray(_getter(n)(system), dtype=float) for n in names])


def sensitivity(observable, system, params=None, mode="auto"):
    """Value, gradient and elasticities of ``observable(system)`` with respect to ``params``.

    Args:
        observable: scalar function of a system.
        system: the system at the point of interest.
        params: parameter paths (default: every floating-point leaf, :func:`parameter_names`).
        mode: ``"forward"`` (``jax.jacfwd``: one pass per parameter, no stored trajectory),
            ``"reverse"`` (``jax.grad``: one backward pass for all), or ``"auto"`` (forward for
            up to 4 parameters, reverse beyond).

    Returns: dict with ``value`` (float), ``gradient`` and ``elasticity`` (dicts name ->
        float; the elasticity ``d ln Q / d ln p = (p / Q) dQ/dp`` is NaN where ``Q = 0``).

    Raises: ValueError for unknown parameter names or mode.
    """
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be 'auto', 'forward' or 'reverse', got {mode!r}")
    names, p0 = _resolve(system, params)

    def f(p):
        return observable(_with(system, names, list(p)))

    if mode == "auto":
        mode = "forward" if len(names) <= 4 else "reverse"
    value = f(p0)
    grad = jax.jacfwd(f)(p0) if mode == "forward" else jax.grad(f)(p0)
    value, grad, p = float(value), np.asarray(grad), np.asarray(p0)
    elasticity = grad * p / value if value != 0 else np.full_like(grad, np.nan)
    return {"value": value, "gradient": dict(zip(names, grad.tolist())),
            "elasticity": dict(zip(names, elasticity.tolist())), "mode": mode}


def finite_difference_gradient(observable, system, params=None, rel_step=1e-6):
    """Central finite differences of ``observable`` (a cross-check of :func:`sensitivity`).

    Step ``h = rel_step * max(|p|, 1)`` per parameter. Returns dict name -> float.
    """
    names, p0 = _resolve(system, params)
    out = {}
    for i, name in enumerate(names):
        h = rel_step * max(abs(float(p0[i])), 1.0)
        plus = observable(_with(system, names, list(p0.at[i].add(h))))
        minus = observable(_with(system, names, list(p0.at[i].add(-h))))
        out[name] = float((plus - minus) / (2 * h))
    return out


def sensitivity_map(observable, make_system, grid, params):
    """Gradients of ``observable`` over a grid of parameter values, in one vmapped call.

    Args:
        observable: scalar function of a system.
        make_system: ``make_system(**point)`` builds the system at a grid point.
        grid: dict name -> 1-D array (the grid axes; their product is evaluated).
        params: parameter paths of the built system to differentiate (forward mode).

    Returns: ``xarray.Dataset`` with the grid as coordinates, the observable ``value`` and
        ``d_<param>`` (dots replaced by underscores) for each parameter.
    """
    axes = {k: np.asarray(v, dtype=float) for k, v in grid.items()}
    mesh = np.meshgrid(*axes.values(), indexing="ij")
    flat = {k: jnp.asarray(m.ravel()) for k, m in zip(axes, mesh)}

    def one(point):
        system = make_system(**point)
        names, p0 = _resolve(system, params)

        def f(p):
            return observable(_with(system, names, list(p)))

        return f(p0), jax.jacfwd(f)(p0)

    values, grads = jax.jit(jax.vmap(one))(flat)
    shape = mesh[0].shape
    dims = tuple(axes)
    data = {"value": (dims, np.asarray(values).reshape(shape))}
    for i, name in enumerate(params):
        data["d_" + name.replace(".", "_")] = (dims, np.asarray(grads[:, i]).reshape(shape))
    return xr.Dataset(data, coords={k: (k, v) for k, v in axes.items()})
