"""The step rules of fixed-step RK4: the stick band of a regularized law, the internal states
of a dynamic law, and the secant of a law that acts as a switch at zero slip (issue 25)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
from jax import Array

from .._checks import without_tangents
from .._laws.vector import safe_norm
from .marched import contact_normals, has_internal_states, marches

if TYPE_CHECKING:
    from .._systems.base import AbstractFrictionSystem

#: Where the real axis leaves the stability region of classical RK4 (``|R(z)| = 1`` at
#: ``z = -2.785293563...``).
RK4_STABILITY_LIMIT = 2.785293563405282

#: A run with a dynamic law is flagged once ``h`` times the slip-rate stiffness ``-dv'/dv``
#: at a saved state passes this (not RK4's 2.785: rate-and-state's ``N a / (m |v|)`` changes
#: by orders within a step as ``v`` falls. Measured on a rate-and-state spring slider, whose
#: largest ``h rate`` over every step was 2.03 at dt 1e-3 (dissipation 6.5x the converged
#: one), 1.15 at dt 1e-4 (agreeing with dt 1e-5 to 4e-8); the velocity-step test of
#: ``tests/test_spring_slider.py`` is accurate to 7e-8 at ``h rate = 1``). The law's own state
#: rates are held to RK4's limit.
SLIP_RATE_STEP_LIMIT = 1.5

#: A run of a law that RK4 marches (Maxwell-slip) is flagged once the slip limits of its
#: loading elements at or near them move by more than this fraction of themselves within one
#: step (``h`` times :meth:`~jaxfriction.AbstractDynamicLaw.limit_motion_rate` at a saved
#: state). Chosen on ``scripts/studies/step_honesty.py``'s Maxwell-slip draws (256 at dt 1e-3):
#: 0.1 flagged 46 % and 0.3 flagged 22 % (23 % at seed 1), none wrong at status 0; 1.0 flagged
#: 8 % and left 2 % wrong (window dissipation more than 5 % off the dt / 10 run's).
LIMIT_MOTION_STEP_LIMIT = 0.3

#: A run is flagged once ``h`` times a contact's slip-rate secant (:func:`secant_rate`)
#: at a saved state passes this: the step then changes the slip velocity by more than its
#: size, so RK4's stages straddle zero slip. Below RK4's 2.785 because exact Coulomb in
#: stick chatters at slip speeds spread over ``[0, 2 h mobility mu N]`` (Quinn 2004 Fig.
#: 5a): at 1.0 a stick phase puts a saved speed under ``h mobility mu N`` within a few steps.
SECANT_STEP_LIMIT = 1.0
#: The secant rule counts where the secant passes this many times the slope the other rules
#: see (a static law's largest band slope, a dynamic law's slope at the state): where the law
#: acts as a switch. A regularized law (Quinn: secant at most ``mu N / eps``, its band slope;
#: LuGre: secant about its slope) is left to its own rules.
SWITCH_RATIO = 2.0

#: Slip speeds, in stick-band widths, at which :func:`stick_band_rate` takes the law's slope:
#: inside the band and beyond it, where some laws turn at widths of a fraction of the band
#: (the square-root onset of :class:`~jaxfriction.StaticKineticQuinn`).
BAND_POINTS = (0.0, 0.5, 0.99, 1.003, 1.01, 1.03, 1.1, 1.3, 2.0, 4.0)


def _contacts(system) -> tuple | None:
    """The system's :meth:`~jaxfriction.AbstractFrictionSystem.contact_mobility`, without
    tangents; None for a system that has none."""
    contacts = system.contact_mobility()
    if contacts is None:
        return None
    mobility, normal, zero, tangent = contacts
    # a status, not a quantity to differentiate: no tangents are carried through it
    mobility, normal = without_tangents((mobility, normal))
    return mobility, normal, zero, tangent


def stick_band_rate(system: AbstractFrictionSystem) -> Array | None:
    """Largest relaxation rate of a contact at slow slip (1/time), or None.

    Inside the band a regularized law is a steep damper: the slip velocity of contact ``i``
    obeys ``z'' = -D_ii s_i z'`` with ``s_i = -df/dv`` the law's slope and ``D_ii`` the
    contact's mobility (``1/m`` for one body, the Delassus diagonal in general). Classical
    RK4 is stable there only for ``h D_ii s_i <= 2.785`` (Quinn's law: ``h mu N / (m eps)``;
    Quinn's ``eps = 2 dt`` with ``mu N = m = 1`` gives 0.5). The slope is taken by
    ``jax.jvp`` of the law at ``f_eq = 0`` and slip velocities :data:`BAND_POINTS` times
    ``b = law.stick_band()`` (inside the band and just beyond it, where a law may rise
    steeply: :class:`~jaxfriction.StaticKineticQuinn` with ``mu_k > mu_s``), so it covers
    any law, a user's own included; switch laws (Coulomb, Karnopp) have slope 0 there
    (exact Coulomb's stick is judged along the run: :func:`secant_rate`).

    Args:
        system: an :class:`~jaxfriction.Oscillator`, an
            :class:`~jaxfriction.AbstractContactSystem` or a
            :class:`~jaxfriction.BlockOnShakingFloor` (other systems, and systems with a
            dynamic law, have no band rate: None).

    Returns:
        A scalar (traced under ``vmap``) or None.
    """
    contacts = _contacts(system)
    if contacts is None or getattr(system, "dynamic", False):
        return None  # a dynamic law has no stick band
    mobility, normal, zero, tangent = contacts
    law = without_tangents(system.law)  # type: ignore[attr-defined]  # checked to have it above
    band = jnp.asarray(law.stick_band(), dtype=zero.dtype)

    def slope(v) -> Array:
        df = jax.jvp(lambda x: law(x, jnp.zeros_like(x), normal), (v,), (tangent,))[1]
        return -(df[..., 0] if law.vector else df)

    rates = [slope(zero + k * band * tangent) for k in BAND_POINTS]
    return jnp.max(jnp.stack([jnp.max(r * mobility) for r in rates]))


def secant_rate(system: AbstractFrictionSystem, ts: Array, ys: Array, band=None) -> Array | None:
    """Largest slip-rate secant of a contact at the saved states (1/time), or None.

    At a saved state with slip velocity ``v != 0`` this is ``min(mobility |f(v) - f(0)|,
    d) / |v|`` per contact, ``d = max(0, -dv/dt . v / |v|)`` the slip's deceleration: the rate at which the rate-dependent part of the friction
    force would bring the slip to rest (``f(0)`` at the same internal state, and ``f_eq = 0``
    for a static law: 0 for Coulomb, a LuGre bristle's elastic force in presliding), if the
    slip is in fact slowing down that fast (``dv/dt`` by ``jax.jvp`` of the slip velocity
    along the vector field; in steady sliding, where the spring balances the friction, and
    in acceleration away from rest it is small or 0). A step longer than ``1 / rate`` makes RK4's stages straddle zero slip, where the
    force reverses, and the step averages the reversals instead of resolving them (Quinn
    2004 Sec. 2, Fig. 5a).
    That is how a smooth fixed-step run goes wrong with

    - exact Coulomb (:class:`~jaxfriction.Coulomb`, :class:`~jaxfriction.ViscousCoulomb`,
      :class:`~jaxfriction.StaticKineticCoulomb`, :class:`~jaxfriction.VectorCoulomb`):
      the secant is ``mobility mu N / |v|``; in stick the run chatters across zero instead
      of sticking, and the chatter's dissipation is first order in ``h`` (7x the converged
      value at ``h = 0.01`` in ``scripts/studies/step_honesty.py``). No step fixes that: use an
      exact solver (:class:`~jaxfriction.EventDriven`, :class:`~jaxfriction.MoreauJean`) or
      a regularized law;
    - rate-and-state with a large ``mu_0 / a``, whose regularization width ``2 V_0
      exp(-mu / a)`` is far below any saved speed, so that the law acts as a switch (a
      block decelerated by ``mu N`` from 1 cm/s crossed zero within one step of 0.01 s and
      kept its speed: the stages' forces cancelled).

    It counts only where the secant passes :data:`SWITCH_RATIO` times the slope the other
    rules see (a static law's largest band slope, :func:`stick_band_rate`; a dynamic law's
    ``df/dv`` at the state): a regularized law's secant is at most its band slope, so it is
    held to its band rule alone (Quinn at ``h mu N / (m eps) = 1.2`` is not flagged), and a
    law whose force is linear in ``v`` at fixed state (LuGre, Maxwell-slip) to its state
    rule. ``v = 0`` exactly (force balance: true stick) counts 0. A static law that declares
    ``slope_bounded`` (Quinn's: its secant is at most its slope at zero slip, so never twice
    the band slope) gets None: the rule cannot fire, and is not evaluated at every step of
    a sweep's transient.
    Scaled by ``RK4_STABILITY_LIMIT / SECANT_STEP_LIMIT`` for the common test ``h rate <=
    RK4_STABILITY_LIMIT`` (:data:`SECANT_STEP_LIMIT`).

    Args:
        system: an :class:`~jaxfriction.Oscillator`, a :class:`~jaxfriction.SpringSlider`,
            an :class:`~jaxfriction.AbstractContactSystem` or a
            :class:`~jaxfriction.BlockOnShakingFloor`, static or dynamic law (other
            systems: None).
        ts: saved times ``(k,)``.
        ys: saved states ``(k, state_size)``.
        band: :func:`stick_band_rate` of ``system`` if already computed (None: computed here).

    Returns:
        A scalar (traced under ``vmap``) or None (no contacts with a known mobility, no
        law, or a ``slope_bounded`` static law).
    """
    contacts = _contacts(system)
    if contacts is None or getattr(system, "law", None) is None:
        return None
    mobility, normal, _, _ = contacts
    system, ts, ys = without_tangents((system, ts, ys))
    law, dynamic = system.law, has_internal_states(system)  # type: ignore[attr-defined]  # checked to have it above
    if not dynamic and getattr(law, "slope_bounded", False):
        return None
    band = None if dynamic else stick_band_rate(system) if band is None else band

    def one(t, y) -> Array:
        v = system.slip_velocity(t, y)
        if dynamic:  # scalar laws: one slip velocity and n_state internal states per contact
            v = jnp.reshape(v, (-1,))
            start = 2 * system.n_dof
            z = jnp.reshape(y[start : start + system.n_internal], (v.shape[0], -1))
            n = jnp.broadcast_to(jnp.reshape(jnp.asarray(normal, y.dtype), (-1,)), v.shape)
            force, slope = jax.jvp(lambda u: law.force(u, z, n), (v,), (jnp.ones_like(v),))
            change = jnp.abs(force - law.force(jnp.zeros_like(v), z, n))
            speed = jnp.abs(v)
            switch = change > SWITCH_RATIO * jnp.abs(slope) * speed  # the local slope does not show it
        else:
            change = law(v, jnp.zeros_like(v), normal) - law(jnp.zeros_like(v), jnp.zeros_like(v), normal)
            speed, change = (safe_norm(v), safe_norm(change)) if law.vector else (jnp.abs(v), jnp.abs(change))
            switch = mobility * change > SWITCH_RATIO * band * speed  # beyond every slope the band rule sees
        # how fast the slip in fact slows down: small in steady sliding, where the secant is not
        accel = jax.jvp(system.slip_velocity, (t, y), (jnp.ones_like(t), system.vector_field(t, y)))[1]
        along = jnp.sum(accel * v, axis=-1) if law.vector else accel * v
        accel = jnp.maximum(-jnp.reshape(along, jnp.shape(speed)) / jnp.where(speed > 0, speed, 1.0), 0.0)
        rate = jnp.minimum(mobility * change, accel) / jnp.where(speed > 0, speed, 1.0)
        return jnp.max(jnp.where((speed > 0) & switch, rate, 0.0))

    return jnp.max(jax.vmap(one)(ts, ys)) * (RK4_STABILITY_LIMIT / SECANT_STEP_LIMIT)


def saved_state_rate(system: AbstractFrictionSystem, ts: Array, ys: Array, band=None) -> Array | None:
    """The rate that judges a fixed-step RK4 run at its saved states ``ys`` ``(k, state_size)``
    at times ``ts`` ``(k,)`` (1/time, for ``h rate <= RK4_STABILITY_LIMIT``): the larger of
    :func:`internal_state_rate` (dynamic laws) and :func:`secant_rate` (every law; it
    matters where a law acts as a switch at zero slip); None when neither applies. ``band``:
    :func:`stick_band_rate` of ``system`` when the caller has it (it depends on the
    parameters alone; None computes it)."""
    rates = [r for r in (internal_state_rate(system, ts, ys), secant_rate(system, ts, ys, band)) if r is not None]
    return None if not rates else rates[0] if len(rates) == 1 else jnp.maximum(*rates)


def internal_state_rate(system: AbstractFrictionSystem, ts: Array, ys: Array) -> Array | None:
    """Largest rate of a system with a dynamic law over a run (1/time), or None.

    A dynamic law (:class:`~jaxfriction.AbstractDynamicLaw`: LuGre's bristles, Dahl's
    spring, the elements of an Iwan or Maxwell-slip model, the rate-and-state variable)
    relaxes its state ``z`` at rates that grow with the slip speed (LuGre: ``sigma0 |v| /
    g(v)``); fixed-step RK4 goes unstable once ``h`` times the fastest passes
    :data:`RK4_STABILITY_LIMIT`. At every saved state this takes the larger of

    - the law's :meth:`~jaxfriction.AbstractDynamicLaw.max_state_rate` at each contact's slip
      velocity and state (by default ``|d z_i'/d z_i|`` by ``jax.jvp``; a bound for laws whose
      fastest rate the state does not show: the Iwan models' switch rate ``sum k_i |v| / sum
      phi_i``), or, for a law whose states RK4 marches (Maxwell-slip:
      :func:`~jaxfriction._integrate.marched.marched_rk4_step`), its
      :meth:`~jaxfriction.AbstractDynamicLaw.limit_motion_rate` along the slip acceleration
      (scaled so that ``h`` times it is held to :data:`LIMIT_MOTION_STEP_LIMIT`), and
    - the slip-rate stiffness ``-d v'/d v`` (by one ``jax.jvp`` of the vector field along
      the velocities, all-ones tangents): the law's ``-df/dv`` times the mobility, plus
      viscous damping (rate-and-state: ``N a / (m |v|)`` in slip, far larger near rest;
      LuGre: ``(sigma1 + sigma2) / m``).

    The run is flagged once ``h`` times the law's rate passes :data:`RK4_STABILITY_LIMIT`
    or ``h`` times the slip-rate stiffness passes :data:`SLIP_RATE_STEP_LIMIT` (1.5), so the
    value returned is the larger of the law's rate and the slip-rate stiffness times
    ``RK4_STABILITY_LIMIT / SLIP_RATE_STEP_LIMIT``, for the common test ``h rate <=
    RK4_STABILITY_LIMIT`` of
    :func:`~jaxfriction._integrate.solvers.unstable_step_status`. The rule sees the saved
    states only (a run that saves its end points alone, e.g. a sweep's transient, is judged
    at those).

    Args:
        system: a system; those whose ``law`` is not dynamic (or that have no internal
            states) return None.
        ts: saved times ``(k,)``.
        ys: saved states ``(k, state_size)``.

    Returns:
        A scalar (traced under ``vmap``; NaN states give NaN) or None.
    """
    if not has_internal_states(system):
        return None
    n_dof = system.n_dof
    start = 2 * n_dof
    stop = start + system.n_internal
    system, ts, ys = without_tangents((system, ts, ys))
    law, n_state = system.law, system.law.n_state  # type: ignore[attr-defined]  # checked to have it above
    marched = marches(system)

    def one(t, y) -> Array:
        v = jnp.reshape(system.slip_velocity(t, y), (-1,))
        z = jnp.reshape(y[start:stop], (-1, n_state))
        normal = contact_normals(system, v.shape[0], y.dtype)
        if marched:  # the march is exact at constant speed: what it errs by is the limits' motion
            dv = jnp.reshape(jax.jvp(lambda y: system.slip_velocity(t, y), (y,), (system.vector_field(t, y),))[1],
                             v.shape)
            law_rate = jnp.max(law.limit_motion_rate(v, dv, z, normal)) * (RK4_STABILITY_LIMIT / LIMIT_MOTION_STEP_LIMIT)
        else:
            law_rate = jnp.max(law.max_state_rate(v, z, normal))
        if n_dof == 0:  # a prescribed motion (PrescribedSlip): no slip-rate stiffness
            return law_rate

        def accelerations(u):  # the velocities replaced by joining slices (no scatter: planning a
            # compiled sweep moves slices and joins on the host, a scatter is an XLA program per shape)
            return system.vector_field(t, jnp.concatenate([y[:n_dof], u, y[start:]]))[n_dof:start]

        u = y[n_dof:start]
        slope = jax.jvp(accelerations, (u,), (jnp.ones_like(u),))[1]
        return jnp.maximum(law_rate, jnp.max(-slope) * (RK4_STABILITY_LIMIT / SLIP_RATE_STEP_LIMIT))

    return jnp.max(jax.vmap(one)(ts, ys))
