"""Hysteretic elements marched through the period of a harmonic-balance solution.

A law with a closed-form update over an interval of slip
(:meth:`~jaxfriction.AbstractDynamicLaw.interval_update`: the return map of Jenkins, Iwan and
Segalman elements with the exact switch and of Dahl's model, and the rate-dependent
Maxwell-slip elements at the interval's mean slip speed) is not an unknown of the balance: its
states run along the solution's sampled slip, sample by sample, from the relaxed state at the
period's mean slip over :data:`MARCH_PERIODS` periods (after one full cycle a Masing
element's state repeats, and so does a Maxwell-slip element's once it has slipped: it enters
its slip on its limit, whatever it held before), and the last period's states enter the
residual (:mod:`.balance`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..._integrate.marched import contact_normals, marched_rk4_step
from ..periodic.flow import full_state
from .fourier import synthesis

#: Periods over which marched hysteretic states are run from the relaxed state; the last one
#: is the orbit's (its repeat mismatch is reported).
MARCH_PERIODS = 2
#: Slip increments per sample interval of the march: a return map is exact along any
#: increment, so these only follow the slip path between the samples.
MARCH_SUBSTEPS = 4
#: Slip increments per sample interval for a rate-dependent law (whose
#: :meth:`~jaxfriction.AbstractDynamicLaw.slip_update` is None): each increment is taken at its
#: mean speed, which is first order in the increment where an element's slip limit moves with
#: the speed (a Maxwell-slip element following its rising limit); measured on the forced
#: oscillator of ``tests/test_harmonic_balance.py`` (2003 form, 32 harmonics, 256 samples),
#: 4 increments 8.5e-4 off in amplitude (relative, against a long RK4 transient), 16 increments 2.2e-4.
RATE_MARCH_SUBSTEPS = 16


def march_substeps(law) -> int:
    """Increments per sample interval of the march of ``law`` (:data:`MARCH_SUBSTEPS`, or
    :data:`RATE_MARCH_SUBSTEPS` for a rate-dependent law)."""
    independent = law.slip_update(jnp.zeros((1, law.n_state)), jnp.zeros(1), jnp.ones(1)) is not None
    return MARCH_SUBSTEPS if independent else RATE_MARCH_SUBSTEPS


def marched(system) -> bool:
    """Whether harmonic balance marches ``system``'s internal variables through the period
    instead of solving for them: a law with internal states per contact whose
    :meth:`~jaxfriction.AbstractDynamicLaw.interval_update` is defined (Jenkins, Iwan and
    Segalman elements with the exact switch, Dahl's model, Maxwell-slip elements)."""
    from ..._integrate.marched import has_internal_states

    if not has_internal_states(system):
        return False
    law = system.law
    return law.interval_update(jnp.zeros((1, law.n_state)), jnp.zeros(1), jnp.ones(1), jnp.ones(1)) is not None


def states_at(coefficients, system, omega, *, t0, samples: int, march: bool):
    """:func:`~jaxfriction._workflows.harmonic.balance.sampled_states` at the fundamental frequency ``omega`` (rad per time unit, may
    be traced) instead of the system's forcing frequency (a nonlinear mode's unknown)."""
    c = jnp.asarray(coefficients)
    harmonics = (c.shape[0] - 1) // 2
    if not march:
        return synthesis(harmonics, samples, c.dtype) @ c, jnp.zeros((), c.dtype)
    law = system.law
    substeps = march_substeps(law)
    n_fine = samples * substeps
    period = 2 * jnp.pi / omega
    ts = t0 + jnp.arange(n_fine) * (period / n_fine)
    x = synthesis(harmonics, n_fine, c.dtype) @ c
    relaxed = jnp.zeros(system.dynamical_size - c.shape[1], c.dtype)
    slip = jax.vmap(lambda t, xj: jnp.reshape(system.slip_velocity(t, full_state(system, jnp.concatenate(
        [xj, relaxed]))), (-1,)))(ts, x)  # (n_fine, contacts)
    increments, displacement = _slip_increments(slip, omega)
    normal = contact_normals(system, slip.shape[1], c.dtype)
    relaxed_state = jnp.broadcast_to(law.init_state().astype(c.dtype), slip.shape[1:] + (law.n_state,))
    # relaxed at the period's mean slip displacement: a virgin loading from there to the slip at
    # t0, over a quarter period (a sine's time from its mean to its extreme; a rate-dependent
    # element's speed there sets only the offsets of elements that never slip)
    z0 = law.interval_update(relaxed_state, displacement[0] - jnp.mean(displacement, axis=0), period / 4, normal)
    interval = period / n_fine

    def step(z, du):
        return law.interval_update(z, du, interval, normal), z

    z = z0
    for _ in range(MARCH_PERIODS - 1):
        z, _ = jax.lax.scan(step, z, increments)
    end, zs = jax.lax.scan(step, z, increments)
    states = jnp.concatenate([x[::substeps], zs[::substeps].reshape(samples, -1)], axis=1)
    return states, jnp.max(jnp.abs(end - z))


def _slip_increments(slip, omega):
    """The slip displacement's increments over each interval of the ``n`` equally spaced
    samples ``slip`` ``(n, contacts)`` of a period, and the displacement at the samples (from
    0 at the first), by spectral integration: the periodic part's Fourier series integrated
    term by term (``rfft``), the mean slip (a belt's) as a linear drift. Exact for a slip
    velocity that is a trigonometric polynomial of degree below ``n / 2`` (the trapezoid rule
    would make a stuck joint's stiffness ``O(h^2)`` soft)."""
    n = slip.shape[0]
    spectrum = jnp.fft.rfft(slip, axis=0)
    k = jnp.arange(spectrum.shape[0])[:, None]
    keep = (k > 0) & (2 * k != n)  # the mean drifts; a Nyquist term has no sine to integrate
    antiderivative = jnp.where(keep, spectrum / jnp.where(keep, 1j * k * omega, 1.0), 0.0)
    periodic = jnp.fft.irfft(antiderivative, n=n, axis=0)
    step = 2 * jnp.pi / omega / n
    mean = spectrum[0].real / n
    displacement = mean * step * jnp.arange(n)[:, None] + periodic - periodic[:1]
    increments = mean * step + jnp.roll(periodic, -1, axis=0) - periodic
    return increments, displacement


def marched_period_map(system, x, t0, period, n_steps: int):
    """The dynamical state after one period from ``x`` at ``t0``, with the hysteretic elements
    updated by their return map (traceable; its forward-mode derivative is the monodromy).

    The steps are :func:`~jaxfriction._integrate.marched.marched_rk4_step`'s: RK4 steps the
    positions and velocities, and at every stage the elements' states are the update from the
    step's start along the slip the stage has made over the stage's time ``tau``
    (``law.interval_update(z_n, s, tau)``), and so are the states that end the step. The map
    is a continuous, piecewise smooth function of ``x`` (the update clips, it does not switch
    a rate), so its forward-mode derivative
    holds what the AD derivative of an integration with a switched rate ``z' = v`` or ``0``
    misses: an element reaching its slip limit forgets a perturbation of its elongation (the
    saltation of the switch; with a switched rate the perturbation stays for the whole slip).
    An element stuck over the whole period keeps one (a multiplier 1: its offset is free).

    Args:
        system: a system whose law has a return map (:func:`marched`).
        x: ``(dynamical_size,)``: positions, velocities and the law's states.
        t0, period: start and length (time units); n_steps: RK4 steps (Python int).

    Returns:
        ``(dynamical_size,)``.
    """
    h = period / n_steps

    def step(y, i):
        return marched_rk4_step(system, t0 + i * h, y, h), None

    y, _ = jax.lax.scan(step, full_state(system, x), jnp.arange(n_steps, dtype=x.dtype))
    return y[:system.dynamical_size]
