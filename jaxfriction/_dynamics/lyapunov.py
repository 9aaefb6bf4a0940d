"""Lyapunov exponents by the Benettin / QR method on tangents from ``jax.linearize``.

The state and ``k`` tangent vectors are advanced together with the classical RK4 step;
the tangents are pushed through the *linearization of the RK4 step itself*
(``jax.linearize``), i.e. the discrete variational equation of the numerical flow, which
converges to the ODE's as ``dt -> 0``. No hand-written Jacobian. Every ``renorm_every``
steps the tangents are re-orthonormalized by a QR factorization and the logarithms of
``|diag R|`` accumulated (Benettin et al. 1980; Wolf et al. 1985).

Discontinuous laws: ``jnp.where`` differentiates only the branch taken, so the tangent
misses the jump at a switching surface (the saltation); the exponents of discontinuous
models are then wrong. This is why paper 002 introduces a continuous friction model.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_real
from .._integrate.rk4 import rk4_step
from .._systems.base import AbstractFrictionSystem


class LyapunovResult(eqx.Module):
    """Lyapunov exponents and their convergence.

    Attributes:
        exponents: ``(k,)`` in decreasing order (1/time unit).
        uncertainty: ``(k,)`` standard error of the exponents from ``n_blocks`` independent
            blocks of the averaging window.
        history: ``(n_renorm, k)`` running estimates after each renormalization.
        final_state: state at the end of the run.
    """

    exponents: jax.Array
    uncertainty: jax.Array
    history: jax.Array
    final_state: jax.Array


def system_dynamics(system: AbstractFrictionSystem, autonomous: bool = False) -> tuple[Callable, int]:
    """The mechanical part ``(q, v)`` of a system's vector field, as ``(f, d)``.

    The energy integrals of the state do not feed back into the motion, so they are left
    out (they would add spurious zero exponents). With ``autonomous=True`` the time is
    appended as a state ``tau' = 1`` (the paper's ``psi' = Omega`` up to scale), giving the
    extra zero exponent of the autonomous form; the state is then ``[q, v, tau]``.

    Returns:
        ``(f, d)`` with ``f(t, x, args)`` and the dimension ``d`` of ``x``.
    """
    n2 = 2 * system.n_dof
    pad = jnp.zeros(system.state_size - n2)

    def f(t, x, args=None) -> Array:
        return system.vector_field(t, jnp.concatenate([x, pad]), args)[:n2]

    if not autonomous:
        return f, n2

    def f_aut(t, z, args=None) -> Array:  # z = [x, tau]
        return jnp.concatenate([f(z[-1], z[:-1], args), jnp.ones(1, z.dtype)])

    return f_aut, n2 + 1


def lyapunov_spectrum(vector_field, x0: ArrayLike, *, dt: float, duration: float, transient: float = 0.0,
                      t0: float = 0.0, n_exponents: int | None = None, renorm_every: int = 10,
                      n_blocks: int = 10, args=None) -> LyapunovResult:
    """Lyapunov spectrum of ``x' = f(t, x)`` (Benettin/QR; see module docstring).

    Args:
        vector_field: ``f(t, x, args)`` (e.g. from :func:`system_dynamics`).
        x0: ``(d,)`` initial state.
        dt: RK4 step (> 0).
        duration: averaging time after the transient (> 0).
        transient: time integrated first (>= 0), the tangents evolved and renormalized along
            but their growth not counted, so that averaging starts from tangents already
            aligned with the Lyapunov vectors (counting their start-up transient biased a
            300 s average by about 1 %).
        t0: start time.
        n_exponents: how many exponents (default all ``d``; 1 gives the largest alone, the
            cheaper option: a single tangent renormalized by its norm).
        renorm_every: RK4 steps between QR renormalizations (static int >= 1).
        n_blocks: blocks for the uncertainty estimate (must divide the renormalizations).

    Returns:
        The spectrum, a :class:`LyapunovResult`. Works under ``jit`` and ``vmap`` (batch over
            parameters by building the system inside the mapped function).

    Raises:
        ValueError: non-positive ``dt``/``duration``, negative ``transient``, bad counts.
    """
    check_real("dt", dt, positive=True)
    check_real("duration", duration, positive=True)
    check_real("transient", transient, nonnegative=True)
    x0 = jnp.asarray(x0, dtype=jnp.result_type(float))
    d = x0.shape[0]
    k = d if n_exponents is None else n_exponents
    if not isinstance(k, int) or not 1 <= k <= d:
        raise ValueError(f"n_exponents must be an int in [1, {d}], got {n_exponents!r}")
    if not isinstance(renorm_every, int) or renorm_every < 1:
        raise ValueError(f"renorm_every must be a positive int, got {renorm_every!r}")
    n_tr = int(math.ceil(float(transient) / float(dt) - 1e-9))
    n_renorm = max(n_blocks, int(round(float(duration) / (float(dt) * renorm_every))))
    n_renorm -= n_renorm % n_blocks

    def step(i, x) -> Array:
        return rk4_step(vector_field, t0 + i * dt, x, dt, args)

    n_free = n_tr % renorm_every  # the state alone first, then whole renormalization windows
    x = jax.lax.fori_loop(0, n_free, step, x0)

    def renorm(carry, j) -> tuple[tuple[Array, Array], Array]:
        x, q = carry

        def inner(carry, m) -> tuple[tuple[Array, Array], None]:
            x, q = carry
            i = n_free + j * renorm_every + m
            x_new, lin = jax.linearize(lambda z: step(i, z), x)
            return (x_new, jax.vmap(lin, in_axes=1, out_axes=1)(q)), None

        (x, q), _ = jax.lax.scan(inner, (x, q), jnp.arange(renorm_every))
        q, r = jnp.linalg.qr(q)
        diag = jnp.diagonal(r)
        q = q * jnp.where(diag < 0, -1.0, 1.0)
        return (x, q), jnp.log(jnp.abs(diag))

    # a fixed generic orthonormal start: an axis-aligned one can miss a decoupled direction
    q0 = jnp.asarray(np.linalg.qr(np.random.default_rng(0).normal(size=(d, k)))[0], dtype=x0.dtype)
    n_aligned = n_tr // renorm_every
    (x, q), _ = jax.lax.scan(renorm, (x, q0), jnp.arange(n_aligned))  # tangents through the transient
    (x, _), logs = jax.lax.scan(renorm, (x, q), n_aligned + jnp.arange(n_renorm))
    window = renorm_every * dt
    history = jnp.cumsum(logs, axis=0) / (window * jnp.arange(1, n_renorm + 1))[:, None]
    blocks = jnp.sum(jnp.reshape(logs, (n_blocks, -1, k)), axis=1) / (window * (n_renorm // n_blocks))
    exponents = jnp.sum(logs, axis=0) / (window * n_renorm)
    uncertainty = jnp.std(blocks, axis=0, ddof=1) / jnp.sqrt(n_blocks)
    order = jnp.argsort(-exponents)
    return LyapunovResult(exponents=exponents[order], uncertainty=uncertainty[order], history=history[:, order],
                          final_state=x)
