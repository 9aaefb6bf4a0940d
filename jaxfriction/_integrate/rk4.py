"""Classical fixed-step fourth-order Runge-Kutta in ``lax.scan`` (the papers' method)."""

from __future__ import annotations

import math
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jaxtyping import PyTree

from .marched import marched_rk4_step, marches


def rk4_step(vector_field, t, y: PyTree, h, args=None) -> PyTree:
    """One classical RK4 step; the friction law is evaluated at all four stages.

    Args:
        vector_field: ``vector_field(t, y, args)``.
        t: time.
        y: state (an array of any shape, or any pytree of arrays that ``vector_field`` takes
            and returns).
        h: step.

    Returns:
        The state at ``t + h``, shaped like ``y``.

    A system's own ``vector_field`` (a bound method, or one wrapped in :class:`ComponentField`)
    whose law declares :attr:`~jaxfriction.AbstractDynamicLaw.marched_in_rk4` is stepped
    with the law's states marched along each stage's slip
    (:func:`~jaxfriction._integrate.marched.marched_rk4_step`: Maxwell-slip's exact switch).
    """
    system = _marched_system(vector_field)
    if system is not None:
        if isinstance(vector_field, ComponentField):
            y1 = marched_rk4_step(system, t, jnp.stack(y).reshape(vector_field.shape), h, args).reshape(-1)
            return tuple(y1[i] for i in range(len(y)))
        return marched_rk4_step(system, t, y, h, args)

    def axpy(c, k) -> PyTree:
        return jax.tree.map(lambda y, k: y + c * k, y, k)

    k1 = vector_field(t, y, args)
    k2 = vector_field(t + 0.5 * h, axpy(0.5 * h, k1), args)
    k3 = vector_field(t + 0.5 * h, axpy(0.5 * h, k2), args)
    k4 = vector_field(t + h, axpy(h, k3), args)
    return jax.tree.map(lambda y, a, b, c, d: y + (h / 6.0) * (a + 2.0 * b + 2.0 * c + d), y, k1, k2, k3, k4)


def _marched_system(vector_field):
    """The system whose own ``vector_field`` this is, when RK4 marches its law's states; else None."""
    field = vector_field.vector_field if isinstance(vector_field, ComponentField) else vector_field
    system = getattr(field, "__self__", None)
    if system is None or getattr(field, "__name__", None) != "vector_field":
        return None
    return system if marches(system) else None


#: States with at most this many elements are stepped component by component (see rk4_scan).
ROW_STATE_LIMIT = 32


class ComponentField(eqx.Module):
    """``vector_field`` on a state held as a tuple of its scalar components (the RK4 scans'
    and diffrax's explicit solvers' small states).

    The vector field still sees the stacked array; stacking right before the call and
    slicing right after it are removed by XLA's simplifier, so :func:`rk4_step` on the
    tuple leaves no concatenate in the step: every stage is plain elementwise arithmetic.
    An equinox module, not a closure, so that the system's arrays stay pytree leaves and
    eager diffrax solves of equal structure reuse their compiled program (a new closure per
    call would recompile every time)."""

    vector_field: Callable
    shape: tuple = eqx.field(static=True)

    def __call__(self, t, rows, args):
        k = self.vector_field(t, jnp.stack(rows).reshape(self.shape), args).reshape(-1)
        return tuple(k[i] for i in range(len(rows)))


def rk4_scan(vector_field, y0: Array, t0, h, n_saves: int, save_every: int, args=None,
             checkpoint: bool = False) -> tuple[Array, Array]:
    """Integrate ``n_saves * save_every`` RK4 steps of size ``h`` from ``(t0, y0)``.

    Times are formed as ``t0 + k h`` from the integer step count ``k`` (no accumulated
    rounding). ``n_saves`` and ``save_every`` must be Python ints.

    Small states (at most :data:`ROW_STATE_LIMIT` elements, e.g. every single-contact
    oscillator with its energy integrals) are carried as a tuple of components. Under
    ``vmap`` a stacked ``(batch, n)`` state makes XLA's CPU backend fuse each stage's
    ``stack`` into a concatenate that it evaluates element by element, recomputing the
    earlier stages for every component; component-wise the step compiles to a few
    vectorized loops over the batch, 5-15x faster on CPU for the 1-dof oscillator
    (``scripts/benchmarks/bench.py``). The arithmetic is that of :func:`rk4_step`.

    ``checkpoint=True`` bounds the memory of reverse-mode differentiation: the steps
    between two saves run as ``ceil(sqrt(save_every))``-step blocks under
    ``jax.checkpoint``, so the backward pass stores one state per block and recomputes
    the steps inside (memory O(n_saves sqrt(save_every)) states instead of every stage of
    every step, for about one extra forward run). Results are unchanged.

    Returns:
        ``(ts, ys)`` with ``ts`` of shape ``(n_saves + 1,)`` and ``ys`` of shape
            ``(n_saves + 1,) + y0.shape``, including the initial point.
    """

    shape = jnp.shape(y0)
    by_rows = jnp.size(y0) <= ROW_STATE_LIMIT

    field = ComponentField(vector_field, shape) if by_rows else vector_field

    def steps(y, first, count) -> PyTree:
        def one_step(y, j) -> tuple[PyTree, None]:
            return rk4_step(field, t0 + (first + j) * h, y, h, args), None

        return jax.lax.scan(one_step, y, jnp.arange(count))[0]

    block = math.isqrt(save_every - 1) + 1 if checkpoint else save_every
    n_blocks, rest = divmod(save_every, block)

    def one_save(y, i) -> tuple[PyTree, PyTree]:
        if checkpoint:
            run_block = jax.checkpoint(lambda y, b: (steps(y, i * save_every + b * block, block), None))
            y, _ = jax.lax.scan(run_block, y, jnp.arange(n_blocks))
            y = steps(y, i * save_every + n_blocks * block, rest) if rest else y
        else:
            y = steps(y, i * save_every, save_every)
        return y, (jnp.stack(y).reshape(shape) if by_rows else y)

    start = tuple(jnp.ravel(y0)) if by_rows else y0
    _, ys = jax.lax.scan(one_save, start, jnp.arange(n_saves))
    ks = jnp.arange(n_saves + 1) * save_every
    return t0 + ks * h, jnp.concatenate([y0[None], ys], axis=0)


def rk4_legs(vector_field, y0: Array, legs: list, args=None, monitor=None) -> PyTree:
    """Several consecutive fixed-step RK4 runs ("legs") in one compiled loop.

    Leg ``l = (t0, h, n_steps, every, stored)`` runs ``n_steps`` steps of size ``h`` from
    ``t0`` (where the previous leg ended) with the arithmetic of :func:`rk4_scan`, marking a
    point every ``every`` steps and at its end. A ``stored`` leg saves its points
    (``n_steps`` must then be a multiple of ``every``); any other leg keeps only its end
    state. Unlike one :func:`rk4_scan` per leg, the step is compiled once: the legs are
    iterations of one loop whose step count and step size are loop values, so a sweep's
    unsaved transient and its saved window (two legs with different steps) cost one step
    body in the program instead of two (half the compile time of the lane). Forward-mode
    differentiation only (the inner loops have trip counts known at run time); reverse
    mode needs :func:`rk4_scan`.

    Args:
        vector_field: ``vector_field(t, y, args)``.
        y0: the initial state.
        legs: a sequence of ``(t0, h, n_steps, every, stored)``: Python numbers and a bool.
        monitor: None, or ``monitor(t, y) -> scalar`` evaluated at every marked point of
            every leg (stored or not; not at ``y0``), whose largest value per leg is
            returned (NaN once met, as ``jnp.max``): e.g. the step-size rule of a
            transient that is not saved.

    Returns:
        ``ys``: the saved states ``(1 + sum points,) + y0.shape``: ``y0``, then the points of
            each leg (all of a stored leg's ``n_steps / every``, the end of any other);
            with a ``monitor``, ``(ys, peaks)`` with ``peaks`` ``(len(legs),)``.
    """
    if monitor is None:  # a leg that is not stored needs no marked points but its end: one inner loop
        legs = [leg if leg[4] else (*leg[:3], max(int(leg[2]), 1), leg[4]) for leg in legs]
    shape = jnp.shape(y0)
    by_rows = jnp.size(y0) <= ROW_STATE_LIMIT
    field = ComponentField(vector_field, shape) if by_rows else vector_field
    points = [leg[2] // leg[3] if leg[4] else 1 for leg in legs]
    for leg, n in zip(legs, points):
        if leg[4] and n * leg[3] != leg[2]:
            raise ValueError(f"a stored leg's n_steps ({leg[2]}) must be a multiple of its every ({leg[3]})")
    rows = [1 + sum(points[:i]) for i in range(len(legs))]
    n_rows = 1 + sum(points)
    dtype = jnp.result_type(float)
    xs = (jnp.asarray([leg[0] for leg in legs], dtype), jnp.asarray([leg[1] for leg in legs], dtype),
          jnp.asarray([leg[2] for leg in legs]), jnp.asarray([leg[3] for leg in legs]),
          jnp.asarray([bool(leg[4]) for leg in legs]), jnp.asarray(rows))
    start = tuple(jnp.ravel(y0)) if by_rows else y0
    saved = jax.tree.map(lambda c: jnp.zeros((n_rows,) + jnp.shape(c), jnp.result_type(c)).at[0].set(c), start)
    as_state = (lambda y: jnp.stack(y).reshape(shape)) if by_rows else (lambda y: y)

    def leg(carry, x) -> tuple[PyTree, Array]:  # type: ignore[no-redef]  # one of two definitions, by branch
        t0, h, n_steps, every, stored, row = x

        def one_point(i, carry) -> tuple:
            y, saved, peak = carry
            first = i * every
            count = jnp.minimum(every, n_steps - first)

            def one_step(j, y) -> PyTree:
                return rk4_step(field, t0 + (first + j) * h, y, h, args)

            y = jax.lax.fori_loop(0, count, one_step, y)
            at = jnp.where(stored, row + i, row)
            saved = jax.tree.map(lambda s, c: jax.lax.dynamic_update_index_in_dim(s, c, at, 0), saved, y)
            if monitor is not None:
                value = jnp.asarray(monitor(t0 + (first + count) * h, as_state(y)), dtype)
                peak = jnp.where((value > peak) | jnp.isnan(value), value, peak)
            return y, saved, peak

        y, saved = carry
        n_points = (n_steps + every - 1) // every
        y, saved, peak = jax.lax.fori_loop(0, n_points, one_point, (y, saved, jnp.asarray(-jnp.inf, dtype)))
        return (y, saved), peak

    (_, saved), peaks = jax.lax.scan(leg, (start, saved), xs)
    ys = jnp.stack(saved, axis=-1).reshape((n_rows,) + shape) if by_rows else saved
    return ys if monitor is None else (ys, peaks)
