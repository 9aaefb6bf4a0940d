"""The least-squares problem of :func:`~jaxfriction.fit`.

The template system, records, parameter paths and transforms as one equinox pytree (data
arrays are dynamic leaves, the grid structure static, so a second fit of the same shapes
reuses the compiled code); the residuals, the loss and its gradient in forward or reverse
mode, and the residual function an optimistix solver steps on. The optimizer loops that
record the loss history are in :mod:`.local_phase`.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from ..._forcing.sampled import with_inputs
from ..._integrate.rk4 import rk4_scan
from ..._integrate.saveat import SaveAt
from ..._integrate.simulate import simulate
from ..._integrate.solvers import rk4_status
from ..._paths import set_parameters
from ..._systems.base import AbstractFrictionSystem
from .outputs import channel_values


class Record(eqx.Module):
    q: jax.Array | None  # (n, kq) measured positions
    v: jax.Array | None  # (n, kv) measured velocities
    channels: jax.Array | None  # (n, kc) measured channels, system.internal(ys, name)
    y0: jax.Array | None  # (2 n_dof + n_internal,) known initial state (q, v, z)
    weight: jax.Array
    channel_names: tuple = eqx.field(static=True)
    q_dofs: tuple = eqx.field(static=True)
    v_dofs: tuple = eqx.field(static=True)
    t_bounds: tuple = eqx.field(static=True)  # segment start times (S Python floats) and the end time
    i_bounds: tuple = eqx.field(static=True)  # segment boundary sample indices, S + 1 ints
    h: float = eqx.field(static=True)  # RK4 step
    n_sub: int = eqx.field(static=True)  # RK4 steps per sample interval
    solver: object = None  # an adaptive Diffrax run (one segment) instead of RK4, or None
    inputs: tuple = ()  # Sampled drives: the record's measured inputs, at input_paths
    input_paths: tuple = eqx.field(static=True, default=())

    def system(self, system):
        """``system`` driven by this record's measured inputs."""
        return with_inputs(system, dict(zip(self.input_paths, self.inputs)))

    def times(self, dtype):
        """``(n,)`` sample times of the record."""
        return self.t_bounds[0] + self.h * self.n_sub * jnp.arange(self.i_bounds[-1] + 1, dtype=dtype)

    @property
    def n_segments(self) -> int:
        return len(self.i_bounds) - 1

    @property
    def n_free_states(self) -> int:
        return self.n_segments - (self.y0 is not None)


class Problem(eqx.Module):
    system: AbstractFrictionSystem  # the template system; the fitted paths are set in it
    names: tuple = eqx.field(static=True)  # the fitted paths
    kinds: tuple = eqx.field(static=True)  # per parameter: "free", "lower", "upper", "interval"
    n_data: int = eqx.field(static=True)
    lo: jax.Array
    hi: jax.Array
    p0: jax.Array
    state0: jax.Array  # natural initial values of the free segment states, flat
    state_scale: jax.Array
    defect_weight: jax.Array  # per continuity defect: 1 for q and v, std(q) / std(z) for internal variables
    records: tuple
    velocity_weight: jax.Array
    continuity_weight: jax.Array
    outputs: tuple = eqx.field(static=True, default=())  # user channels: (name, fn(system, t, y)) pairs
    constraints: tuple = eqx.field(static=True, default=())  # (name, margin(system) >= 0 when satisfied) pairs
    constraint_weight: float = eqx.field(static=True, default=1e4)

    @property
    def n_params(self) -> int:
        return len(self.names)


def natural_parameters(u, kinds: tuple, lo, hi, p0):
    """Parameters ``(p,)`` from unconstrained ``u`` (its first ``p`` entries; ``u = 0`` is the
    guess ``p0``), per ``kinds``: ``"lower"`` ``lo + (p0 - lo) e^u``, ``"upper"`` ``hi - (hi -
    p0) e^u``, ``"interval"`` a logistic map into ``(lo, hi)``, ``"free"`` ``p0 + |p0| u``."""
    out = []
    for i, kind in enumerate(kinds):
        low, high, start, x = lo[i], hi[i], p0[i], u[i]
        if kind == "lower":
            out.append(low + (start - low) * jnp.exp(x))
        elif kind == "upper":
            out.append(high - (high - start) * jnp.exp(x))
        elif kind == "interval":
            out.append(low + (high - low) * jax.nn.sigmoid(x + jnp.log((start - low) / (high - start))))
        else:
            out.append(start + jnp.where(start != 0, jnp.abs(start), 1.0) * x)
    return jnp.stack(out)


def _to_natural(u, problem):
    """Natural variables ``theta`` (parameters, then segment states) from unconstrained ``u``."""
    params = natural_parameters(u, problem.kinds, problem.lo, problem.hi, problem.p0)
    states = problem.state0 + problem.state_scale * u[problem.n_params :]
    return jnp.concatenate([params, states])


def to_unconstrained(params, problem: Problem) -> Array:
    """The inverse of the parameter transforms: ``u`` ``(..., p)`` of natural parameter
    values ``(..., p)`` (NumPy; the segment states are not included)."""
    params = np.asarray(params, dtype=float)
    lo, hi, p0 = (np.asarray(x, dtype=float) for x in (problem.lo, problem.hi, problem.p0))
    out = np.empty_like(params)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, kind in enumerate(problem.kinds):
            x = params[..., i]
            if kind == "lower":
                out[..., i] = np.log((x - lo[i]) / (p0[i] - lo[i]))
            elif kind == "upper":
                out[..., i] = np.log((hi[i] - x) / (hi[i] - p0[i]))
            elif kind == "interval":
                out[..., i] = np.log((x - lo[i]) / (hi[i] - x)) - np.log((p0[i] - lo[i]) / (hi[i] - p0[i]))
            else:
                out[..., i] = (x - p0[i]) / (abs(p0[i]) if p0[i] != 0 else 1.0)
    return out


def _simulate_record(system, rec, starts):
    """Predicted states ``(n, state_size)`` at every sample of ``rec``, the continuity
    defects and the run's status (``simulate``'s; for segments RK4's at the samples,
    :func:`~jaxfriction._integrate.solvers.rk4_status`).

    One segment: :func:`~jaxfriction.simulate` (RK4 in ``lax.scan``; with ``rec.solver``, that
    adaptive run saved at the sample times, its steps ending at the drive's jumps). Several: the same RK4
    scan (:func:`~jaxfriction.rk4_scan`, which ``simulate`` runs) vmapped over the segments
    (``simulate`` needs concrete start times; one vmapped scan keeps the compiled program, and
    its compile time, independent of the number of segments); every segment runs the longest
    segment's length and the surplus samples are dropped.
    """
    n, width = system.n_dof, 2 * system.n_dof + system.n_internal
    if rec.n_segments == 1:
        if rec.solver is not None:
            ts = rec.times(starts.dtype)
            traj = simulate(system, starts[0], rec.t_bounds[0], rec.t_bounds[1], solver=rec.solver,
                            saveat=SaveAt(ts=jnp.minimum(ts, rec.t_bounds[1])))
        else:
            traj = simulate(system, starts[0], rec.t_bounds[0], rec.t_bounds[1], rec.h, save_every=rec.n_sub)
        return traj.ys, jnp.zeros((0,), dtype=traj.ys.dtype), traj.status
    lengths = np.diff(rec.i_bounds)
    y0s = jax.vmap(system.initial_state)(starts[:, :n], starts[:, n : 2 * n], starts[:, 2 * n :])
    t0s = jnp.asarray(rec.t_bounds[:-1], dtype=y0s.dtype)
    _, ys = jax.vmap(
        lambda y0, t0: rk4_scan(system.vector_field, y0, t0, rec.h, int(lengths.max()), rec.n_sub)
    )(y0s, t0s)
    seg = np.concatenate([np.full(n, s) for s, n in enumerate(lengths)] + [[len(lengths) - 1]])
    step = np.concatenate([np.arange(n) for n in lengths] + [[lengths[-1]]])
    ends = ys[np.arange(len(lengths) - 1), lengths[:-1], :width]
    ys = ys[seg, step]
    return ys, (ends - starts[1:]).ravel(), rk4_status(system, rec.times(ys.dtype), ys, rec.h)


def predicted(system, rec, ys, outputs=()) -> tuple:
    """What record ``rec`` measures, as the model predicts it from the states ``ys`` ``(n,
    state_size)``: ``(q (n, kq) or None, v (n, kv) or None, channels (n, kc) or None)``."""
    q = None if rec.q is None else ys[:, list(rec.q_dofs)]
    v = None if rec.v is None else ys[:, [system.n_dof + d for d in rec.v_dofs]]
    channels = None
    if rec.channels is not None:
        ts = rec.times(ys.dtype)
        channels = jnp.stack([channel_values(system, outputs, ts, ys, name) for name in rec.channel_names], axis=-1)
    return q, v, channels


def _residuals(theta, problem):
    """Data residuals ``(n_data,)``, continuity defects and the records' worst run status
    (:func:`_simulate_record`: a non-finite state, a failed adaptive solve, or an RK4 step
    too long for a stick band or a dynamic law's internal state) at natural ``theta``; the
    status is dropped by the compiler where it is not used."""
    template = set_parameters(problem.system, {name: theta[i] for i, name in enumerate(problem.names)})
    width = 2 * template.n_dof + template.n_internal
    data, defects, offset, statuses = [], [], problem.n_params, []
    for rec in problem.records:
        system = rec.system(template)
        k = rec.n_free_states
        free = theta[offset : offset + width * k].reshape(k, width)
        offset += width * k
        starts = free if rec.y0 is None else jnp.concatenate([rec.y0[None].astype(free.dtype), free])
        ys, d, status = _simulate_record(system, rec, starts)
        statuses.append(status)
        q, v, channels = predicted(system, rec, ys, problem.outputs)
        w = jnp.sqrt(rec.weight)
        if rec.q is not None:
            data.append(w * (q - rec.q).ravel())
        if rec.v is not None:
            data.append(w * problem.velocity_weight * (v - rec.v).ravel())
        if rec.channels is not None:
            data.append(w * (channels - rec.channels).ravel())
        defects.append(d)
    defects = jnp.concatenate(defects)
    return (jnp.concatenate(data), defects * problem.defect_weight.astype(defects.dtype),
            jnp.max(jnp.stack(statuses)))


def _stacked(theta, problem, with_status: bool = False):
    """All residuals: data, then ``sqrt(continuity_weight)`` times the defects, then the
    constraint penalties ``sqrt(constraint_weight n_data) min(margin, 0)``; with
    ``with_status`` also the runs' status (:func:`_residuals`)."""
    r, d, status = _residuals(theta, problem)
    parts = [r, jnp.sqrt(problem.continuity_weight) * d]
    if problem.constraints:
        system = set_parameters(problem.system, {name: theta[i] for i, name in enumerate(problem.names)})
        margins = jnp.stack([jnp.reshape(fn(system), ()) for _, fn in problem.constraints]).astype(r.dtype)
        parts.append(jnp.sqrt(problem.constraint_weight * problem.n_data) * jnp.minimum(margins, 0.0))
    return (jnp.concatenate(parts), status) if with_status else jnp.concatenate(parts)


def _loss_plain(u, problem):
    r = _stacked(_to_natural(u, problem), problem)
    return jnp.sum(r * r) / problem.n_data


def _residuals_jacobian(u, problem):
    """Stacked residuals at ``u`` and their Jacobian ``d r / d u`` (forward mode, batched JVP)."""

    def f(x) -> tuple[Array, Array]:
        r = _stacked(_to_natural(x, problem), problem)
        return r, r

    jac, r = jax.jacfwd(f, has_aux=True)(u)
    return r, jac


@eqx.filter_jit
def forward_value_and_grad(u: Array, problem: Problem) -> tuple[Array, Array, Array, Array]:
    r, jac = _residuals_jacobian(u, problem)
    return jnp.sum(r * r) / problem.n_data, 2.0 * (r @ jac) / problem.n_data, r, jac


# filtered custom rules (equinox): the problem's non-array leaves (a literal ``0.0`` damping,
# a chain's int ``n``) stay Python values instead of becoming traced inputs of the rule


@eqx.filter_custom_vjp
def _loss_forward(u, problem):
    """The loss, with a custom VJP that computes the gradient in forward mode."""
    return _loss_plain(u, problem)


@_loss_forward.def_fwd
def _loss_forward_fwd(perturbed, u, problem):
    r, jac = _residuals_jacobian(u, problem)
    return jnp.sum(r * r) / problem.n_data, 2.0 * (r @ jac) / problem.n_data


@_loss_forward.def_bwd
def _loss_forward_bwd(grad, ct, perturbed, u, problem):
    return ct * grad


@eqx.filter_jit
def natural_and_slope(u: Array, problem: Problem) -> tuple[Array, Array]:
    """``theta = T(u)`` and the diagonal ``d theta / d u`` (the transforms are elementwise)."""
    return jax.jvp(lambda x: _to_natural(x, problem), (u,), (jnp.ones_like(u),))


def _loss(mode):
    return _loss_forward if mode == "forward" else _loss_plain


@eqx.filter_custom_jvp
def _ls_residuals(u, problem):
    return _stacked(_to_natural(u, problem), problem)


@_ls_residuals.def_jvp
def _ls_residuals_jvp(primals, tangents):
    # optimistix linearises the residuals and materialises the Jacobian from the linear map;
    # this rule makes that one batched forward pass (the linear map is then a matrix product),
    # and a trial point with a non-finite Jacobian gets NaN residuals, so it is rejected
    r, jac = _residuals_jacobian(*primals)
    return jnp.where(jnp.all(jnp.isfinite(jac)), r, jnp.nan), jac @ tangents[0]


def _ls_fn(u, problem):
    return _ls_residuals(u, problem), None
