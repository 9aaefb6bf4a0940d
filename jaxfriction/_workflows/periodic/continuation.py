"""Pseudo-arclength continuation of periodic orbits in a parameter path.

The branch ``G(z, p) = 0`` of the shooting problem (:mod:`.shooting`: ``z = x`` for a forced
orbit, ``z = [x, T]`` with the phase condition for an autonomous one) is followed in the
parameter ``p`` at a leaf path (``"force.omega"`` gives a frequency-response curve,
``"force.amplitude"`` a response-amplitude curve). Keller's pseudo-arclength method
(Keller 1977; Seydel 2010, Sec. 4.4): from a point ``u_k = (z_k, p_k)`` with unit tangent
``t_k`` (the null vector of ``[G_z, G_p]``, by SVD), the predictor ``u_k + ds t_k`` is
corrected by Newton (optimistix) on ``G(u) = 0``, ``t_k . (u - u_k) = ds``, which passes
folds where ``p`` turns back. Step control: a corrector that converges in few iterations
lengthens the step (x1.5 up to ``ds_max``), a failed one halves it; below ``ds_min`` the
continuation stops with status ``"stalled"``. Folds are where the ``p`` component of the
tangent changes sign; stability changes where a Floquet multiplier crosses the unit circle
(:func:`~jaxfriction._workflows.periodic.floquet.crossing_kind`).
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import check_int, check_real
from ..._observables.stick import stick_fraction
from ..._paths import check_paths, get_parameter, set_parameters
from .floquet import crossing_kind, floquet_multipliers, is_stable, nontrivial
from .flow import full_state, period_trajectory, steps_per_period
from .period import forcing_period
from .shooting import PeriodicOrbit, _residual_fn, amplitude, periodic_orbit, residual_scale

#: Statuses of a continuation (the dataset's ``status`` attribute).
CONTINUATION_STATUSES = ("completed", "bounds reached", "max points", "stalled")


def _anchor(system, frequency, t0, z, d):
    if frequency is not None:
        return None
    x = z[:d]
    f = system.vector_field(t0, full_state(system, x))[:d]
    return x, f / jnp.maximum(jnp.linalg.norm(f), 1e-300)


def _g(u, system, path, frequency, t0, n_steps, anchor):
    sys = set_parameters(system, {path: u[-1]})
    d = system.dynamical_size
    fn = _residual_fn(frequency, t0, n_steps, d)
    return fn(u[:-1], sys if frequency is not None else (sys, *anchor))


@eqx.filter_jit
def _point(system, u, path, frequency, t0, n_steps, anchor):
    """Jacobian, multipliers' matrix and observables at ``u`` (a corrected point)."""
    d = system.dynamical_size
    g, jac = _g(u, system, path, frequency, t0, n_steps, anchor), jax.jacfwd(
        lambda v: _g(v, system, path, frequency, t0, n_steps, anchor))(u)
    sys = set_parameters(system, {path: u[-1]})
    period = forcing_period(sys, frequency) if frequency is not None else u[d]
    traj = period_trajectory(sys, u[:d], t0, period, n_steps)
    monodromy = jac[:d, :d] + jnp.eye(d, dtype=u.dtype)
    return {"residual": jnp.max(jnp.abs(g[:d])), "jac": jac, "monodromy": monodromy, "period": period,
            "dissipation": traj.friction_dissipation[-1], "input_work": traj.input_work[-1],
            "amplitude": amplitude(traj), "stick_fraction": stick_fraction(traj), "status": traj.status}


@eqx.filter_jit
def _correct(system, u_pred, u_prev, tangent, ds, path, frequency, t0, n_steps, anchor, tol, max_newton):
    import optimistix as optx

    def h(u, _):
        g = _g(u, system, path, frequency, t0, n_steps, anchor)
        return jnp.concatenate([g, jnp.dot(tangent, u - u_prev)[None] - ds])

    atol = tol * jax.lax.stop_gradient(residual_scale(u_pred[:-1]))
    sol = optx.root_find(h, optx.Newton(rtol=tol, atol=atol), u_pred, max_steps=max_newton, throw=False)
    return sol.value, sol.result == optx.RESULTS.successful, sol.stats["num_steps"]


def _tangent(jac, previous=None, direction=1.0):
    """Unit null vector of the ``(m, m + 1)`` Jacobian, oriented along ``previous`` (or with
    ``sign(t_p) = direction`` at the start)."""
    _, _, vt = np.linalg.svd(np.asarray(jac))
    t = vt[-1]
    if previous is not None:
        return t if np.dot(t, previous) >= 0 else -t
    return t if t[-1] * direction >= 0 else -t


def continue_orbits(start, path: str, *, bounds: tuple[float, float], ds: float = 0.05, ds_min: float = 1e-5,
                    ds_max: float = 0.5, max_points: int = 200, direction: int = 1, max_newton: int = 8,
                    dt: float | None = None, progress: bool = False):
    """Follow a branch of periodic orbits in the parameter at ``path`` (module docstring).

    Args:
        start: a converged :class:`~jaxfriction.PeriodicOrbit` on the branch (from
            :func:`~jaxfriction.periodic_orbit`; its system, phase, tolerance and forcing
            path are the branch's).
        path: a scalar leaf path of the system (``"force.omega"``, ``"force.amplitude"``,
            ``"law.mu"``).
        bounds: ``(low, high)`` of the parameter: the continuation stops past either.
        ds: first arclength step (in the Euclidean norm of ``(z, p)``: state, period and
            parameter units together).
        ds_min, ds_max: step control limits (``0 < ds_min <= ds <= ds_max``).
        max_points: points on the branch at most (the start included).
        direction: +1 to start towards increasing ``p``, -1 towards decreasing.
        max_newton: corrector iterations per step.
        dt: RK4 step bound for the branch (default the start's step); the steps per period
            are fixed along the branch, taken for the longest period when ``path`` is the
            forcing frequency (so ``h <= dt`` everywhere within ``bounds``).
        progress: print one line per point.

    Returns:
        ``xarray.Dataset`` over ``point``: the parameter as a variable named by ``path``,
            ``amplitude``, ``dissipation``, ``input_work``, ``stick_fraction``, ``period``,
            ``residual`` (``|phi_T(x) - x|_inf``, every point), ``stable``,
            ``max_multiplier`` (largest non-trivial ``|mu|``), ``multipliers_real`` and
            ``multipliers_imag`` (``point, multiplier``), ``tangent_p`` (``dp/ds``), ``fold``
            (``dp/ds`` changed sign since the previous point), ``bifurcation`` (``""``,
            ``"fold"``, ``"period-doubling"`` or ``"neimark-sacker"`` where a multiplier
            crossed the circle since the previous point), ``y0`` (``point, state``) and
            ``iterations``. Attributes: ``path``, ``status`` (one of
            :data:`CONTINUATION_STATUSES`), ``n_steps``, ``t0``, ``autonomous``.

    Raises:
        ValueError: naming the argument: a start that is not a converged orbit, a path that
            is not a scalar float parameter, bounds that do not hold the start, invalid step
            limits.
    """
    import xarray as xr

    if not isinstance(start, PeriodicOrbit):
        raise ValueError(f"start must be a PeriodicOrbit (from jf.periodic_orbit), got {type(start).__name__}")
    if not start.converged:
        raise ValueError(f"start did not converge ({start.status}, residual {start.residual:.3g}): continue from "
                         f"a converged orbit")
    if start.integrator is not None:
        raise ValueError("start: continuation follows orbits of the RK4 flow; an exact-stick orbit "
                         "(integrator=EventDriven) cannot be continued yet: call periodic_orbit at each parameter "
                         "value, or continue the orbit of a regularized law")
    system = start.system
    p0, lo, hi = check_branch(system, path, bounds, ds, ds_min, ds_max, max_points, max_newton, direction)
    frequency, t0, tol, d = start.frequency, start.t0, start.tol, system.dynamical_size
    n_steps = start.n_steps
    if dt is not None or path == frequency:
        check_real("dt", 1.0 if dt is None else dt, positive=True)
        step = start.period / start.n_steps if dt is None else float(dt)
        longest = 2 * math.pi / max(min(abs(lo), abs(hi)), 1e-300) if path == frequency and lo * hi > 0 else \
            start.period
        n_steps = max(steps_per_period(longest, step), 20)
    if n_steps != start.n_steps:  # the start again on the branch's grid
        start = periodic_orbit(system, start.y0, dt=start.period / n_steps * (1 + 1e-12), frequency=frequency,
                               t0=t0, transient=0.0, tol=tol, period=start.period if start.autonomous else None,
                               warn=False)
        if not start.converged:
            raise ValueError(f"start: the orbit does not converge on the branch's grid of {n_steps} steps per period")
    z = np.asarray(start.y0)
    if start.autonomous:
        z = np.concatenate([z, [start.period]])
    u = jnp.asarray(np.concatenate([z, [p0]]))
    anchor = _anchor(system, frequency, t0, u[:-1], d)
    info = _point(system, u, path, frequency, t0, n_steps, anchor)
    tangent = _tangent(info["jac"], direction=float(direction))
    holder = {"anchor": anchor}

    def correct(u_pred, u_prev, tangent, step):
        return _correct(system, u_pred, u_prev, tangent, step, path, frequency, t0, n_steps, holder["anchor"], tol,
                        max_newton)

    def point(u):
        return _point(system, u, path, frequency, t0, n_steps, holder["anchor"])

    def accept(u, info):
        return float(info["residual"]) <= tol * float(residual_scale(u[:-1])) and int(info["status"]) == 0

    def moved(u):
        holder["anchor"] = _anchor(system, frequency, t0, u[:-1], d)

    points, status = follow(u, info, tangent, correct=correct, point=point, accept=accept, moved=moved, ds=ds,
                            ds_min=ds_min, ds_max=ds_max, max_points=max_points, max_newton=max_newton,
                            bounds=(lo, hi), path=path, progress=progress)
    return _dataset(points, path, status, n_steps, t0, frequency is None, xr)


def check_branch(system, path, bounds, ds, ds_min, ds_max, max_points, max_newton, direction):
    """The checks of a continuation's arguments (:func:`continue_orbits`,
    :func:`~jaxfriction.continue_balance`); returns ``(p0, low, high)``, the start's parameter
    and the bounds as floats.

    Raises:
        ValueError: naming ``path`` (unknown, or an array), ``bounds``, ``ds``, ``ds_min``,
            ``ds_max``, ``max_points``, ``max_newton`` or ``direction``.
    """
    check_paths(system, [path], "path")
    p0 = get_parameter(system, path)
    if np.ndim(p0) != 0:
        raise ValueError(f"path: {path!r} is an array; name one element, e.g. {path}[0]")
    p0 = float(p0)
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be (low, high) numbers, got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and lo <= p0 <= hi):
        raise ValueError(f"bounds must be finite (low, high) with low < high holding the start's {path} = {p0:g}, "
                         f"got {bounds!r}")
    check_real("ds", ds, positive=True)
    check_real("ds_min", ds_min, positive=True)
    check_real("ds_max", ds_max, positive=True)
    if not ds_min <= ds <= ds_max:
        raise ValueError(f"ds must lie in [ds_min, ds_max], got ds={ds}, ds_min={ds_min}, ds_max={ds_max}")
    check_int("max_points", max_points, minimum=2)
    check_int("max_newton", max_newton, minimum=1)
    if direction not in (1, -1):
        raise ValueError(f"direction must be 1 or -1, got {direction!r}")
    return p0, lo, hi


def follow(u, info, tangent, *, correct, point, accept, ds, ds_min, ds_max, max_points, max_newton, bounds, path,
           progress, moved=None):
    """Keller's predictor-corrector loop with the module's step control, for any residual.

    Args:
        u, info, tangent: the start ``(z, p)``, its :func:`point` dict (``jac``, ``amplitude``)
            and unit tangent.
        correct: ``(u_pred, u_prev, tangent, ds) -> (u, succeeded, iterations)``.
        point: ``u -> info`` at a corrected point.
        accept: ``(u, info) -> bool``: the point's own test (its residual, its run's status).
        moved: optional ``u -> None`` called at each accepted point (a new phase anchor).
        ds, ds_min, ds_max, max_points, max_newton, bounds, path, progress: as
            :func:`continue_orbits`.

    Returns:
        ``(points, status)``: ``(u, info, tangent, iterations)`` per point, and one of
            :data:`CONTINUATION_STATUSES` but ``"completed"``.
    """
    lo, hi = bounds
    points = [(u, info, tangent, 0)]
    status = "max points"
    while len(points) < max_points:
        u_prev, _, t_prev, _ = points[-1]
        while True:
            # ds as an array: a compiled corrector serves every step length
            u_new, ok, iters = correct(u_prev + ds * t_prev, u_prev, jnp.asarray(t_prev),
                                       jnp.asarray(ds, jnp.result_type(u_prev)))
            ok = bool(ok) and bool(jnp.all(jnp.isfinite(u_new)))
            if ok:
                new_info = point(u_new)
                ok = accept(u_new, new_info)
            if ok:
                break
            ds *= 0.5
            if ds < ds_min:
                break
        if not ok:
            status = "stalled"
            break
        tangent = _tangent(new_info["jac"], previous=t_prev)
        points.append((u_new, new_info, tangent, int(iters)))
        if progress:
            print(f"{len(points):4d} {path} = {float(u_new[-1]):.6g} amplitude = {np.asarray(new_info['amplitude'])} "
                  f"ds = {ds:.3g} iterations = {int(iters)}")
        p = float(u_new[-1])
        if p < lo or p > hi:
            status = "bounds reached"
            break
        if int(iters) <= 3:
            ds = min(ds * 1.5, ds_max)
        elif int(iters) >= max_newton - 1:
            ds = max(ds * 0.5, ds_min)
        if moved is not None:
            moved(u_new)
    return points, status


def _dataset(points, path, status, n_steps, t0, autonomous, xr):
    us = np.stack([np.asarray(u) for u, *_ in points])
    infos = [jax.tree.map(np.asarray, info) for _, info, *_ in points]
    mults = [i["multipliers"] if "multipliers" in i else floquet_multipliers(i["monodromy"]) for i in infos]
    stable = np.array([is_stable(m, autonomous) for m in mults])
    largest = np.array([float(np.max(np.abs(nontrivial(m, autonomous)))) if len(nontrivial(m, autonomous)) else
                        np.nan for m in mults])
    tp = np.array([t[-1] for _, _, t, _ in points])
    fold = np.concatenate([[False], np.sign(tp[1:]) != np.sign(tp[:-1])])
    kinds = [""] + [crossing_kind(a, b, autonomous) or "" for a, b in zip(mults[:-1], mults[1:])]
    d = infos[0]["monodromy"].shape[0] if "monodromy" in infos[0] else len(infos[0]["x0"])
    amp = np.stack([i["amplitude"] for i in infos])
    amp_dims = ("point",) if amp.ndim == 1 else ("point", "dof")
    ds = xr.Dataset(
        {path: ("point", us[:, -1]),
         "amplitude": (amp_dims, amp),
         "dissipation": ("point", np.array([float(i["dissipation"]) for i in infos])),
         "input_work": ("point", np.array([float(i["input_work"]) for i in infos])),
         "stick_fraction": ("point", np.array([float(i["stick_fraction"]) for i in infos])),
         "period": ("point", np.array([float(i["period"]) for i in infos])),
         "residual": ("point", np.array([float(i["residual"]) for i in infos])),
         "stable": ("point", stable),
         "max_multiplier": ("point", largest),
         "multipliers_real": (("point", "multiplier"), np.stack([m.real for m in mults])),
         "multipliers_imag": (("point", "multiplier"), np.stack([m.imag for m in mults])),
         "tangent_p": ("point", tp),
         "fold": ("point", fold),
         "bifurcation": ("point", np.array(kinds, dtype=object).astype(str)),
         "y0": (("point", "state"), us[:, :d]),
         "iterations": ("point", np.array([it for *_, it in points]))},
        coords={"point": np.arange(len(points))},
        attrs={"path": path, "status": status, "n_steps": n_steps, "t0": t0, "autonomous": int(autonomous)})
    ds[path].attrs["long_name"] = path
    return ds
