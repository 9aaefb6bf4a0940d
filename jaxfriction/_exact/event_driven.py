"""Exact Coulomb friction by event-driven regime switching (paper 004; Quinn 2004 Sec. 3.1.2).

A single-contact system moves in one of three regimes: slip+ (``v_rel > 0``, friction
``-mu_k N``), slip- (``v_rel < 0``, ``+mu_k N``) and stick (``v_rel = 0``: the body rides the
surface and friction equals the force balance ``f_eq``). Each regime is a smooth ODE,
integrated with diffrax to tight tolerance until an event ends it:

- in slip ``s``: ``s v_rel`` falls to 0 (paper 004: value ``v``, direction ``-s``). If then
  ``|f_eq| <= mu_s N`` the contact sticks, otherwise the slip reverses at once
  (``s = -sgn f_eq``) with no stick interval;
- in stick: ``mu_s N - |f_eq|`` falls to 0 (paper 004: value ``F_ext -+ mu N``); the new
  slip direction is ``-sgn f_eq``.

The regimes form a hybrid system (:class:`~jaxfriction.AbstractHybridField`) solved by
:func:`~jaxfriction.simulate_hybrid`: a bounded loop of diffrax solves under ``jit``, ``vmap``
and both modes of differentiation, whose event times carry their implicit-function
derivatives (to mu, the forcing's amplitude and frequency, the initial state, earlier event
times), those of the exact hybrid flow as long as no event is grazing (``dg/dt = 0``), up to
the solver's error in the sensitivities; see :mod:`jaxfriction._exact.hybrid`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._integrate.diffrax_solvers import dynamics_rms_norm
from .._integrate.trajectory import Trajectory
from .._systems.oscillator import Oscillator
from .coulomb_params import coulomb_coefficients
from .hybrid import AbstractHybridField, EventLog, simulate_hybrid

#: Regime codes.
STICK, SLIP_POS, SLIP_NEG = 0, 1, -1


class _Regime(AbstractHybridField):
    """Vector field and event function of one system in a given regime (``args``)."""

    system: Oscillator
    mu_s: jax.Array
    mu_k: jax.Array

    def f_eq(self, t, x) -> Array:
        """Force balance with the body riding the surface (N)."""
        y = jnp.stack([x, self.system.surface_velocity(t)])
        return self.system.f_eq(t, y)

    def __call__(self, t, y, regime):
        sys = self.system
        x, v = y[0], y[1]
        vs, force = sys.surface_velocity(t), sys.external_force(t)
        stuck = regime == STICK
        nonfriction = force - sys.stiffness * x - sys.damping * v
        f_slip = -regime * self.mu_k * sys.normal
        f = jnp.where(stuck, self.f_eq(t, x), f_slip)
        acc = jnp.where(stuck, sys.surface_acceleration(t), (nonfriction + f) / sys.mass)
        dx = jnp.where(stuck, vs, v)
        return jnp.stack([dx, acc, -f * (v - vs), sys.damping * v * v, force * v + f * vs])

    def event(self, t, y, regime) -> Array:
        """Positive inside the regime, falls to 0 at its end."""
        v_rel = y[1] - self.system.surface_velocity(t)
        margin = self.mu_s * self.system.normal - jnp.abs(self.f_eq(t, y[0]))
        return jnp.where(regime == STICK, margin, regime * v_rel)

    def next_regime(self, t, y, regime) -> Array:
        """Regime after an event at ``(t, y)`` ending ``regime``."""
        f_eq = self.f_eq(t, y[0])
        holds = jnp.abs(f_eq) <= self.mu_s * self.system.normal
        slip = -jnp.sign(f_eq)
        return jnp.where(regime == STICK, slip, jnp.where(holds, STICK, slip)).astype(regime.dtype)

    def initial_regime(self, t, y) -> Array:
        v_rel = y[1] - self.system.surface_velocity(t)
        f_eq = self.f_eq(t, y[0])
        at_rest = jnp.where(jnp.abs(f_eq) <= self.mu_s * self.system.normal, STICK, -jnp.sign(f_eq))
        return jnp.where(v_rel != 0, jnp.sign(v_rel), at_rest).astype(jnp.int32)

    def enter(self, t, y, regime) -> Array:
        """State on entering ``regime``: in stick the velocity is set to the surface's exactly."""
        return y.at[1].set(jnp.where(regime == STICK, self.system.surface_velocity(t), y[1]))


def simulate_event_driven(system: Oscillator, y0: ArrayLike, t0: float, t1: float,
                          ts: ArrayLike | None = None, *, n_save: int = 1000, max_events: int = 256,
                          rtol: float = 1e-12, atol: float = 1e-12, dtmax=0.1, max_steps=100_000,
                          adjoint=None) -> tuple[Trajectory, EventLog]:
    """Exact Coulomb solution of a single-contact system by event-driven regime switching.

    See the module docstring for the regimes, the events, and how event times are
    differentiated. The system's law must be :class:`~jaxfriction.Coulomb` or
    :class:`~jaxfriction.StaticKineticCoulomb` (``mu_s >= mu_k``); its ``v = 0`` force
    balance is what the stick regime enforces.

    Args:
        system: an :class:`~jaxfriction.Oscillator` (forced, under a force, on a belt).
        y0: ``(2,)`` position and velocity, or a full state ``(5,)``.
        t0, t1: concrete floats, ``t1 > t0``.
        ts: increasing times at which to return states (1-D, within ``[t0, t1]``); default
            ``n_save + 1`` equally spaced times. Each segment's solve saves the times that fall
            in it (diffrax dense output), so they cost no extra integration.
        max_events: event budget (static int >= 1); a lane needing more reports
            ``STATUS_EVENT_BUDGET`` (3) in both returned statuses.
        rtol, atol: diffrax (Dopri8) tolerances of every segment; the event time is found to
            about the same accuracy. They control the position and velocity only: the
            energy integrals are quadratures outside the step-size control
            (:func:`~jaxfriction.dynamics_rms_norm`, as in :class:`~jaxfriction.Diffrax`).
        dtmax: largest step (time units). Events are detected by a sign change of the event
            function between steps, and in stick the state is constant, so without a cap the
            controller would step over a whole breakaway window; keep ``dtmax`` well below
            the shortest time scale of the forcing (default 0.1, for periods of order 1-10).
        max_steps: diffrax step budget of one segment.
        adjoint: diffrax adjoint; default ``RecursiveCheckpointAdjoint`` (reverse mode,
            ``jax.grad``); pass ``diffrax.ForwardMode()`` for ``jax.jvp``/``jax.jacfwd``.

    Returns:
        ``(trajectory, log)``: a :class:`~jaxfriction.Trajectory` at ``ts`` (every observable
            applies; its status combines the solver's and the budget's; times not reached
            before the budget ran out hold NaN) and an :class:`EventLog`.

    Raises:
        ValueError: another law, ``t1 <= t0``, bad ``y0``, ``max_events < 1``, ``ts`` outside
            ``[t0, t1]``, non-positive tolerances.
    """
    if not isinstance(system, Oscillator):
        raise ValueError(f"system must be a single-contact Oscillator, got {type(system).__name__}")
    mu_s, mu_k = coulomb_coefficients(system)
    y0 = system.as_state(y0)
    field = _Regime(system, jnp.asarray(mu_s, y0.dtype), jnp.asarray(mu_k, y0.dtype))
    ts, ys, log = simulate_hybrid(field, y0, t0, t1, ts, n_save=n_save, max_events=max_events, rtol=rtol,
                                  atol=atol, dtmax=dtmax, max_steps=max_steps, adjoint=adjoint, norm=dynamics_rms_norm)
    return Trajectory(ts=ts, ys=ys, system=system, status=log.status), log
