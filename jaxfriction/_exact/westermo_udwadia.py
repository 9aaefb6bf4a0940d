"""Westermo and Udwadia's stick-slip model: exact Coulomb with transitions located inside the step.

Paper 003 Sec. 2.1 (after Westermo & Udwadia 1983): a block on a floor sticks while the
inertial force the floor needs to carry it is within the friction limit, ``|m w''| <= mu m
g``; otherwise it slides with the kinetic force, ``|m u''| = mu m g`` (eq. 2), the force
along the floor's acceleration at the start of the slide ``t_i`` (eq. 3: ``u'(t) =
sign(w''(t_i)) mu g (t - t_i) + u'(t_i)``), until the block's and the floor's velocities
are equal again. The same rules hold for Westermo and Udwadia's sliding oscillator (a mass
on a spring and damper): stick while the force balance ``|f_eq| <= mu_s N``, slip with
``-mu_k N sgn(slip velocity)``.

Here the rules act on any :class:`~jaxfriction.Oscillator` with ``Coulomb`` or
``StaticKineticCoulomb`` friction (the rigid block of paper 003 is ``stiffness=0`` with the
inertial force ``force=-m w''(t)`` in the floor frame). Each fixed step is split at its
transitions: every phase (stick, slip in one direction) is integrated with one RK4 step of
the phase's smooth flow, and the transition time inside it (``|f_eq| = mu_s N`` for the
onset of slip, slip velocity ``= 0`` for its end) is found by bisection on that RK4 flow,
refined by one Newton step so that transition times carry their derivatives (the implicit
function theorem: ``dt*/dp = -(dg/dp) / (dg/dt)``). At a slip-to-stick transition the
velocity is set to the surface's exactly (the kinetic energy of the round-off left is
booked as dissipated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import check_int
from .._integrate.grid import check_rounding
from .._integrate.rk4 import rk4_step
from .._integrate.solvers import (
    FixedStepSolver,
    check_saved_size,
    fixed_step_scan,
)
from .._laws.base import AbstractFrictionLaw, broadcast_like
from .._systems.oscillator import Oscillator
from .coulomb_params import coulomb_coefficients

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem


class _PhaseForce(AbstractFrictionLaw):
    """Friction of one phase: ``-sigma mu_k N`` in slip (``sigma = +-1``), ``f_eq`` in stick (``sigma = 0``)."""

    sigma: float
    mu_k: float

    def __call__(self, v, f_eq, normal):
        slip = broadcast_like(-self.sigma * self.mu_k * normal, v)
        return jnp.where(self.sigma == 0, f_eq, slip)

    def static_limit(self, normal: ArrayLike) -> Array:
        return jnp.inf * normal  # type: ignore[return-value]


def _bisect(g, r, iterations):
    """Root of ``g`` on ``[0, r]`` with ``g(0) <= 0 < g(r)``: the bisection's upper end.

    The value is the end where ``g > 0`` (the transition has happened, so the next phase
    sees it); its derivative is that of a Newton step there, ``-g / g'``, which is the
    implicit function theorem's ``ds/dp = -g_p / g_s`` at the root.
    """
    g_plain = jax.lax.stop_gradient

    def halve(_, bracket) -> tuple[Array, Array]:
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        up = g_plain(g(mid)) > 0
        return jnp.where(up, lo, mid), jnp.where(up, mid, hi)

    _, hi = jax.lax.fori_loop(0, iterations, halve, (jnp.zeros_like(r), g_plain(r)))
    value, slope = jax.jvp(g, (hi,), (jnp.ones_like(hi),))
    ok = jnp.isfinite(slope) & (slope != 0)
    newton = -jnp.where(ok, value / jnp.where(ok, slope, 1.0), 0.0)
    return hi + (newton - g_plain(newton))


def westermo_udwadia_step(system: Oscillator, mu_s: ArrayLike, mu_k: ArrayLike, t: ArrayLike,
                          y: Array, h: ArrayLike, max_transitions: int = 4,
                          iterations: int = 60) -> tuple[Array, Array]:
    """One step of Westermo and Udwadia's model, split at its transitions (module docstring).

    Args:
        system: an :class:`~jaxfriction.Oscillator`.
        mu_s: static coefficient (the stick test ``|f_eq| <= mu_s N``).
        mu_k: kinetic coefficient (the slip force ``mu_k N``).
        t: time (s).
        y: full state (5,).
        h: step (s).
        max_transitions: phases per step (static int); a step with more transitions is
            left unfinished and flagged.
        iterations: bisection halvings per transition.

    Returns:
        ``(state at t + h, ok)``: ``ok`` is False if the step needed more than
            ``max_transitions`` phases.
    """
    normal = system.normal
    t_end = t + h

    def flow(sigma, tau, y, s) -> Array:
        return rk4_step(eqx.tree_at(lambda sys: sys.law, system, _PhaseForce(sigma, mu_k)).vector_field, tau, y, s)  # type: ignore[arg-type]

    def phase(_, carry) -> tuple[Array, Array, Array]:
        tau, y, done = carry
        r = jnp.where(done, 0.0, jnp.maximum(t_end - tau, 0.0))
        slip = system.slip_velocity(tau, y)
        f_eq = system.f_eq(tau, y)
        stuck = slip == 0
        # direction of the phase: slip's sign, or at a stick whose force balance exceeds the
        # static limit the direction it breaks away in (the friction takes f_eq's sign)
        breaking = stuck & (jnp.abs(f_eq) > mu_s * normal)
        sigma = jnp.where(stuck, jnp.where(breaking, -jnp.sign(f_eq), 0.0), jnp.sign(slip))

        def event(s) -> Array:  # > 0 once the phase has ended
            z = flow(sigma, tau, y, s)
            return jnp.where(sigma == 0, jnp.abs(system.f_eq(tau + s, z)) - mu_s * normal,
                             -sigma * system.slip_velocity(tau + s, z))

        ends = (r > 0) & (event(r) > 0)
        s = jax.lax.cond(ends, lambda: _bisect(event, r, iterations), lambda: r)
        z = flow(sigma, tau, y, s)
        # a slip phase that ended: the velocity is the surface's, exactly; the impulse's
        # kinetic energy m d^2 / 2 is dissipated and the surface does -m d v_s of work
        d = system.slip_velocity(tau + s, z)
        snap = ends & (sigma != 0)
        m, vs = system.mass, system.surface_velocity(tau + s)
        z = jnp.where(snap, z.at[1].add(-d).at[-3].add(0.5 * m * d * d).at[-1].add(-m * d * vs), z)
        # the step is done once a phase runs to its end: a flag, not a comparison of tau with
        # t_end, which XLA may compute twice with different rounding (a contracted t + h)
        return jnp.where(r > 0, tau + s, tau), jnp.where(r > 0, z, y), done | ~ends

    _, y_new, done = jax.lax.fori_loop(0, max_transitions, phase, (t, y, jnp.zeros((), bool)))
    return y_new, done


class WestermoUdwadia(FixedStepSolver):
    """Westermo and Udwadia's stick-slip model with transitions located inside each step.

    A solver object for :func:`~jaxfriction.simulate` (paper 003 Sec. 2.1, eqs. 2-3; the
    module docstring gives the method): exact Coulomb friction for an
    :class:`~jaxfriction.Oscillator` with ``Coulomb`` or ``StaticKineticCoulomb`` friction,
    fixed step ``dt`` on the step-aligned grid, every phase integrated with RK4 (fourth
    order between transitions), stick exact (slip velocity exactly 0). Runs under
    ``jit``/``vmap``; derivatives flow through the located transition times.

    Args:
        max_transitions: phases per step (default 4: a slip that stops and restarts the
            other way in one step takes 3); a step needing more gets
            ``STATUS_SOLVER_FAILED``.
        iterations: bisection halvings per transition (default 60: float64 resolution).
        rounding: step-count convention, ``"ceil"`` or ``"round"``
            (:func:`~jaxfriction.fixed_grid`).

    Raises:
        ValueError: when integrating, for another system or law.

    Source: paper 003 Sec. 2.1 (eqs. 2-3); Westermo and Udwadia 1983.
    """

    max_transitions: int = eqx.field(default=4, static=True)
    iterations: int = eqx.field(default=60, static=True)
    rounding: str = eqx.field(default="ceil", static=True)

    def __check_init__(self):
        check_rounding(self.rounding)
        check_int("max_transitions", self.max_transitions, minimum=2)
        check_int("iterations", self.iterations, minimum=1)

    def integrate_on_grid(self, system: AbstractFrictionSystem, y0: Array, t0: ArrayLike, h: ArrayLike,
                          n_saves: int, every: int, args) -> tuple[Array, Array, Array]:
        del args
        if not isinstance(system, Oscillator):
            raise ValueError(f"system must be an Oscillator for WestermoUdwadia, got {type(system).__name__}")
        mu_s, mu_k = coulomb_coefficients(system)
        check_saved_size(n_saves + 1, y0.size, y0.dtype)

        def step(t, y) -> tuple[Array, Array]:
            return westermo_udwadia_step(system, mu_s, mu_k, t, y, h, self.max_transitions, self.iterations)

        return fixed_step_scan(step, y0, t0, h, n_saves, every)
