"""Moreau-Jean time stepping for exact (set-valued) Coulomb friction.

The standard non-regularized scheme of nonsmooth mechanics (Moreau 1988; Jean 1999):
friction enters as an impulse over each step, found implicitly so that the contact sticks
whenever the static limit can hold it. For one contact the implicit problem has a closed
form, a projection. With step ``h`` and body velocity ``v_k``:

1. free velocity ``v_free = v_k + (h/m) F_nf(t_k, x_k, v_k)`` (non-friction forces);
2. the impulse that makes the contact stick at ``t_{k+1}``:
   ``P_stick = m (v_s(t_{k+1}) - v_free)``;
3. if ``|P_stick| <= h mu_s N`` the contact sticks, ``P = P_stick``; otherwise it slips with
   ``P = -h mu_k N sgn(v_free - v_s(t_{k+1}))``, the projection of ``P_stick`` onto the
   kinetic interval ``[-h mu_k N, h mu_k N]``;
4. ``v_{k+1} = v_free + P/m`` and ``x_{k+1} = x_k + h v_{k+1}``.

It needs no events, sticks exactly (``v_{k+1} = v_s``) and is first-order accurate; it is
the exact-stick reference for systems where event detection is impractical.

Many contacts (:class:`~jaxfriction.AbstractContactSystem`): the impulses ``P`` (c,) act
as ``W^T P`` and change the contact velocities by ``D P`` (``D = W M^-1 W^T``). Contacts on
their own bodies (diagonal ``D``) get the closed form above contact by contact; coupled
contacts are solved by projected Gauss-Seidel sweeps, each contact's closed form given
the others' impulses (a fixed number of sweeps, so it runs under ``jit``/``vmap``/``grad``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._integrate.grid import check_rounding
from .._integrate.solvers import (
    FixedStepSolver,
    check_saved_size,
    fixed_step_scan,
)
from .._laws.vector import safe_norm
from .._systems.block2d import BlockOnShakingFloor
from .._systems.contacts import AbstractContactSystem
from .._systems.oscillator import Oscillator
from .coulomb_params import coulomb_coefficients

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem


def _contact_impulse(residual, diag, h, mu_s_n, mu_k_n):
    """Closed-form impulse of one contact: stick if the static limit holds, else kinetic slip."""
    p_stick = -residual / diag
    return jnp.where(jnp.abs(p_stick) <= h * mu_s_n, p_stick, jnp.sign(p_stick) * h * mu_k_n)


def moreau_jean_step(system: Oscillator, mu_s: ArrayLike, mu_k: ArrayLike, t: ArrayLike, y: Array,
                     h: ArrayLike) -> Array:
    """One Moreau-Jean step of a single-contact system (see module docstring).

    Args:
        system: an :class:`~jaxfriction.Oscillator`.
        mu_s: static coefficient, ``mu_s >= mu_k``.
        mu_k: kinetic coefficient.
        t: time.
        y: full state (5,).
        h: step.

    Returns:
        The state at ``t + h``; the integrals are advanced with the step's impulse (friction
            dissipation ``-P v_rel(t+h)``, exactly 0 in stick).
    """
    x, v = y[0], y[1]
    m, n = system.mass, system.normal
    force = system.external_force(t)
    nonfriction = force - system.stiffness * x - system.damping * v
    v_free = v + h * nonfriction / m
    vs = system.surface_velocity(t + h)
    p = _contact_impulse(v_free - vs, 1.0 / m, h, mu_s * n, mu_k * n)
    v_new = v_free + p / m
    x_new = x + h * v_new
    return jnp.stack([
        x_new,
        v_new,
        y[2] - p * (v_new - vs),
        y[3] + h * system.damping * v * v,
        y[4] + h * force * v_new + p * vs,
    ])


def contact_moreau_jean_step(system: AbstractContactSystem, mu_s: ArrayLike, mu_k: ArrayLike, t: ArrayLike,
                             y: Array, h: ArrayLike, sweeps: int = 50) -> Array:
    """One Moreau-Jean step of an :class:`~jaxfriction.AbstractContactSystem` (module docstring).

    Args:
        system: an :class:`~jaxfriction.AbstractContactSystem`.
        mu_s: static coefficient (scalar or ``(c,)``).
        mu_k: kinetic coefficient (scalar or ``(c,)``).
        t: time.
        y: full state.
        h: step.
        sweeps: Gauss-Seidel sweeps for coupled contacts.

    Returns:
        The state at ``t + h``.
    """
    n = system.n_dof
    q, v = y[:n], y[n : 2 * n]
    m = system.masses
    force = system.external_force(t)
    v_free = v + h * system.nonfriction_force(t, q, v) / m
    vs = system.surface_velocity(t + h)
    vs = jnp.zeros(jnp.shape(system.normal)) if vs is None else vs
    z_free = system.contact_velocity(v_free) - vs
    diag = system.delassus_diagonal()
    mu_s_n, mu_k_n = mu_s * system.normal, mu_k * system.normal
    if system.independent_contacts:
        p = _contact_impulse(z_free, diag, h, mu_s_n, mu_k_n)
    else:
        d = system.delassus()

        def sweep(_, p) -> Array:
            def one(i, p) -> Array:
                residual = z_free[i] + d[i] @ p - diag[i] * p[i]
                return p.at[i].set(_contact_impulse(residual, diag[i], h, mu_s_n[i], mu_k_n[i]))

            return jax.lax.fori_loop(0, p.shape[0], one, p)

        p = jax.lax.fori_loop(0, sweeps, sweep, jnp.zeros_like(z_free))
    v_new = v_free + system.generalized_force(p) / m
    z_new = system.contact_velocity(v_new) - vs
    return jnp.concatenate([
        q + h * v_new,
        v_new,
        jnp.stack([
            y[-3] - jnp.sum(p * z_new),
            y[-2] + h * jnp.sum(system.damping * v * v),
            y[-1] + h * jnp.sum(force * v_new) + jnp.sum(p * vs),
        ]),
    ])


def block_moreau_jean_step(system: BlockOnShakingFloor, mu_s: ArrayLike, mu_k: ArrayLike, t: ArrayLike,
                           y: Array, h: ArrayLike) -> Array:
    """One Moreau-Jean step of the 2-D block (:class:`~jaxfriction.BlockOnShakingFloor`).

    Isotropic Coulomb: the sticking impulse ``P = -m v_free`` is kept if ``|P| <= h mu_s N``
    (inside the static disc), else the block slips with ``P = h mu_k N P / |P|`` (projection
    onto the kinetic disc), the vector form of the scalar closed form.
    """
    u, v = y[0:2], y[2:4]
    m, n = system.mass, system.normal
    a_g = system.ground(t)
    v_free = v - h * a_g
    p_stick = -m * v_free
    size = safe_norm(p_stick)
    p = jnp.where(size <= h * mu_s * n, p_stick, p_stick * (h * mu_k * n / jnp.where(size > 0, size, 1.0)))
    v_new = v_free + p / m
    return jnp.concatenate([u + h * v_new, v_new,
                            jnp.stack([y[-3] - jnp.dot(p, v_new), y[-2], y[-1] - h * m * jnp.dot(a_g, v_new)])])


def _step_function(system):
    if isinstance(system, Oscillator):
        return moreau_jean_step
    if isinstance(system, AbstractContactSystem):
        return contact_moreau_jean_step
    if isinstance(system, BlockOnShakingFloor):
        return block_moreau_jean_step
    raise ValueError(f"system must be an Oscillator, an AbstractContactSystem or a BlockOnShakingFloor for "
                     f"Moreau-Jean, got {type(system).__name__}")


class MoreauJean(FixedStepSolver):
    """Moreau-Jean time stepping: exact (set-valued) Coulomb friction, exact stick, first order.

    A solver object for :func:`~jaxfriction.simulate` (see the module docstring for the
    scheme). Systems: an :class:`~jaxfriction.Oscillator` or
    :class:`~jaxfriction.AbstractContactSystem` whose law is ``Coulomb`` or
    ``StaticKineticCoulomb`` (coefficients may be per-contact arrays), or a
    :class:`~jaxfriction.BlockOnShakingFloor` with ``VectorCoulomb`` (isotropic, vector
    projection). Fixed step ``dt``, step-aligned grid, ``SaveAt(every=...)`` or
    ``SaveAt(n=...)``.

    Args:
        sweeps: projected Gauss-Seidel sweeps for coupled contacts (default 50).
        rounding: the step-count convention, ``"ceil"`` or ``"round"``
            (:func:`~jaxfriction.fixed_grid`).

    Raises:
        ValueError: when integrating, for another system or law.
    """

    sweeps: int = eqx.field(default=50, static=True)
    rounding: str = eqx.field(default="ceil", static=True)

    def __check_init__(self):
        check_rounding(self.rounding)

    def integrate_on_grid(self, system: AbstractFrictionSystem, y0: Array, t0: ArrayLike, h: ArrayLike,
                          n_saves: int, every: int, args) -> tuple[Array, Array, Array]:
        del args
        step = _step_function(system)
        mu_s, mu_k = coulomb_coefficients(system)
        check_saved_size(n_saves + 1, y0.size, y0.dtype)
        kwargs = {"sweeps": self.sweeps} if step is contact_moreau_jean_step else {}

        def one_step(t, y) -> tuple[Array, Array]:
            return step(system, mu_s, mu_k, t, y, h, **kwargs), jnp.array(True)

        return fixed_step_scan(one_step, y0, t0, h, n_saves, every)
