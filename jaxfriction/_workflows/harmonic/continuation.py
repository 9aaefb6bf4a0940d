"""Frequency-response curves by harmonic balance: pseudo-arclength continuation through folds.

The branch ``R(c, p) = 0`` of the harmonic-balance residual (:mod:`.balance`) is followed in a
scalar parameter ``p`` at a leaf path (``"force.omega"``: the frequency-response curve;
``"force.amplitude"``, ``"law.mu"``: response against load or friction) with the predictor,
corrector and step control of :func:`~jaxfriction.continue_orbits` (Keller's pseudo-arclength
method, Seydel 2010 Sec. 4.4): the unknowns are the Fourier coefficients and ``p``, the
tangent is the null vector of ``[R_c, R_p]`` (by SVD of JAX's forward-mode Jacobian), and the
corrector is optimistix's Newton on ``R = 0``, ``t . (u - u_k) = ds``, so folds, where ``p``
turns back, are passed. At every point the stability is found as the start's was
(:attr:`~jaxfriction.HarmonicBalance.stability`): the Floquet multipliers of the period map
from the solution's state at ``t0`` (the system's RK4 flow, or with marched hysteretic
elements :func:`~jaxfriction._workflows.harmonic.march.marched_period_map`; the monodromy by
forward-mode AD); the branch is the same
``xarray.Dataset`` as :func:`~jaxfriction.continue_orbits`' (so
:func:`~jaxfriction.plot_branch` draws it), with the coefficients besides.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import check_real
from ..._paths import get_parameter, set_parameters, traced_parameters
from ..periodic.continuation import _dataset, _tangent, check_branch, follow
from .balance import HarmonicBalance, _omega, _scale, balance_residual, measure
from .hill import hill_multipliers


def _residual(u, system, path, frequency, t0, samples, shape, march):
    s = set_parameters(system, {path: u[-1]})
    return balance_residual(u[:-1].reshape(shape), s, frequency=frequency, t0=t0, samples=samples,
                            march=march).reshape(-1)


@eqx.filter_jit
def _point(system, u, path, frequency, t0, samples, shape, flow_steps, march, floquet):
    """The Jacobian ``[R_c, R_p]``, the residual and the observables at a corrected point
    (with ``floquet``, the period map's monodromy: :func:`.balance.measure`)."""
    jac = jax.jacfwd(lambda v: _residual(v, system, path, frequency, t0, samples, shape, march))(u)
    residual = jnp.max(jnp.abs(_residual(u, system, path, frequency, t0, samples, shape, march)))
    s = set_parameters(system, {path: u[-1]})
    c = u[:-1].reshape(shape)
    out = measure(s, c, frequency, t0, 4 * samples, flow_steps, march, monodromy=floquet)
    amplitude = out["amplitude"]
    keys = ("monodromy",) * floquet + ("period", "dissipation", "input_work", "stick_fraction", "x0")
    omega = _omega(s, frequency)
    return {**{k: out[k] for k in keys}, "omega": omega, "jac": jac, "residual": residual, "scale": _scale(c, omega),
            "amplitude": amplitude[0] if s.n_dof == 1 else amplitude, "status": out["flow_status"]}


@eqx.filter_jit
def _correct(system, u_pred, u_prev, tangent, ds, path, frequency, t0, samples, shape, march, tol, max_newton):
    import optimistix as optx

    def h(u, _):
        return jnp.concatenate([_residual(u, system, path, frequency, t0, samples, shape, march),
                                jnp.dot(tangent, u - u_prev)[None] - ds])

    c = u_pred[:-1].reshape(shape)
    omega = jnp.abs(jnp.asarray(get_parameter(set_parameters(system, {path: u_pred[-1]}), frequency), c.dtype))
    atol = tol * jax.lax.stop_gradient(_scale(c, omega))
    sol = optx.root_find(h, optx.Newton(rtol=tol, atol=atol), u_pred, max_steps=max_newton, throw=False)
    return sol.value, sol.result == optx.RESULTS.successful, sol.stats["num_steps"]


def continue_balance(start: HarmonicBalance, path: str, *, bounds: tuple[float, float], ds: float = 0.05,
                     ds_min: float = 1e-5, ds_max: float = 0.5, max_points: int = 200, direction: int = 1,
                     max_newton: int = 10, tol: float = 1e-9, progress: bool = False):
    """Follow a branch of harmonic-balance solutions in the parameter at ``path`` (module docstring).

    Args:
        start: a converged :class:`~jaxfriction.HarmonicBalance` on the branch (its system,
            harmonics, samples, phase and forcing path are the branch's; check its
            ``relative_error`` first: the branch keeps its harmonics).
        path: a scalar leaf path of the system (``"force.omega"``, ``"force.amplitude"``).
        bounds: ``(low, high)`` of the parameter: the continuation stops past either.
        ds: first arclength step (Euclidean norm of the coefficients and the parameter).
        ds_min, ds_max: step control limits (``0 < ds_min <= ds <= ds_max``).
        max_points: points on the branch at most (the start included).
        direction: +1 to start towards increasing ``p``, -1 towards decreasing.
        max_newton: corrector iterations per step.
        tol: the residual test of every point, ``|R|_inf <= tol max(1, |D c|_inf)``.
        progress: print one line per point.

    Returns:
        ``xarray.Dataset`` over ``point`` with the variables of
            :func:`~jaxfriction.continue_orbits` (the parameter named by ``path``,
            ``amplitude``, ``dissipation``, ``input_work``, ``stick_fraction``, ``period``,
            ``residual`` (here ``|R|_inf``), ``stable``, ``max_multiplier``, the multipliers,
            ``tangent_p``, ``fold``, ``bifurcation``, ``y0``, ``iterations``) and
            ``coefficients`` (``point, coefficient, component``: the unknowns, as in
            :attr:`~jaxfriction.HarmonicBalance.coefficients`). Attributes: ``path``,
            ``status``, ``harmonics``, ``samples``, ``n_steps`` (the RK4 steps per period of
            the stability check), ``t0``, ``autonomous`` (0), ``stability`` (the start's
            :attr:`~jaxfriction.HarmonicBalance.stability`: ``"hill"`` or ``"floquet"``).

    Raises:
        ValueError: naming the argument: a start that is not a converged
            :class:`~jaxfriction.HarmonicBalance`, a path that is not a scalar parameter,
            bounds that do not hold the start, invalid step limits.

    Source: Keller 1977 pseudo-arclength continuation (Seydel 2010, Sec. 4.4) on the
    harmonic-balance equations (Krack & Gross 2019, Sec. 4).
    """
    import xarray as xr

    if not isinstance(start, HarmonicBalance):
        raise ValueError(f"start must be a HarmonicBalance (from jf.harmonic_balance), got {type(start).__name__}")
    if not start.converged:
        raise ValueError(f"start did not converge ({start.status}, residual {start.residual:.3g})")
    p0, lo, hi = check_branch(start.system, path, bounds, ds, ds_min, ds_max, max_points, max_newton, direction)
    system = traced_parameters(start.system, keep_zeros=True)  # compiled once for the branch, whatever its values
    check_real("tol", tol, positive=True)
    frequency, t0, samples = start.frequency, start.t0, start.samples
    shape = tuple(start.coefficients.shape)
    march = start.internal == "marched"
    flow_steps = start.flow_steps
    if path == frequency and lo > 0:  # the longest period of the branch keeps the start's step
        flow_steps = max(flow_steps, math.ceil(flow_steps * start.omega / lo))
    u = jnp.asarray(np.concatenate([np.ravel(start.coefficients), [p0]]))
    floquet = start.stability == "floquet"

    def point(u):
        info = _point(system, u, path, frequency, t0, samples, shape, flow_steps, march, floquet)
        if floquet:
            return info
        jac = np.asarray(info["jac"])[:, :-1]
        return {**info, "multipliers": hill_multipliers(jac, float(info["omega"]), shape[1])}

    info = point(u)
    tangent = _tangent(info["jac"], direction=float(direction))

    def correct(u_pred, u_prev, tangent, step):
        return _correct(system, u_pred, u_prev, tangent, step, path, frequency, t0, samples, shape, march, tol,
                        max_newton)

    def accept(u, info):
        return float(info["residual"]) <= tol * float(info["scale"])

    points, status = follow(u, info, tangent, correct=correct, point=point, accept=accept, ds=ds, ds_min=ds_min,
                            ds_max=ds_max, max_points=max_points, max_newton=max_newton, bounds=(lo, hi), path=path,
                            progress=progress)
    # the branch's dataset as continue_orbits writes it: the state at t0 stands in for the shooting unknowns
    rows = [(jnp.concatenate([i["x0"], u[-1:]]), i, t, it) for u, i, t, it in points]
    branch = _dataset(rows, path, status, flow_steps, t0, False, xr)
    coefficients = np.stack([np.asarray(u[:-1]).reshape(shape) for u, *_ in points])
    branch["coefficients"] = (("point", "coefficient", "component"), coefficients)
    branch.attrs.update(harmonics=(shape[0] - 1) // 2, samples=samples, stability=start.stability)
    return branch
