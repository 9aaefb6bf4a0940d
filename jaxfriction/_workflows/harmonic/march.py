"""Hysteretic elements marched through the period of a harmonic-balance solution.

A law with a return map (:meth:`~jaxfriction.AbstractDynamicLaw.slip_update`: Jenkins, Iwan
and Segalman elements with the exact switch) is not an unknown of the balance: its states
run along the solution's sampled slip, sample by sample, from the relaxed state at the
period's mean slip over :data:`MARCH_PERIODS` periods (after one full cycle a Masing
element's state repeats), and the last period's states enter the residual
(:mod:`.balance`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..periodic.flow import full_state
from .fourier import synthesis

#: Periods over which marched hysteretic states are run from the relaxed state; the last one
#: is the orbit's (its repeat mismatch is reported).
MARCH_PERIODS = 2
#: Slip increments per sample interval of the march.
MARCH_SUBSTEPS = 4

def marched(system) -> bool:
    """Whether harmonic balance marches ``system``'s internal variables through the period
    instead of solving for them: a law with internal states per contact whose
    :meth:`~jaxfriction.AbstractDynamicLaw.slip_update` is defined (Jenkins, Iwan and
    Segalman elements with the exact switch)."""
    from ..._integrate.stability import has_internal_states

    if not has_internal_states(system):
        return False
    law = system.law
    return law.slip_update(jnp.zeros((1, law.n_state)), jnp.zeros(1), jnp.ones(1)) is not None


def states_at(coefficients, system, omega, *, t0, samples: int, march: bool):
    """:func:`~jaxfriction._workflows.harmonic.balance.sampled_states` at the fundamental frequency ``omega`` (rad per time unit, may
    be traced) instead of the system's forcing frequency (a nonlinear mode's unknown)."""
    c = jnp.asarray(coefficients)
    harmonics = (c.shape[0] - 1) // 2
    if not march:
        return synthesis(harmonics, samples, c.dtype) @ c, jnp.zeros((), c.dtype)
    law = system.law
    n_fine = samples * MARCH_SUBSTEPS
    period = 2 * jnp.pi / omega
    ts = t0 + jnp.arange(n_fine) * (period / n_fine)
    x = synthesis(harmonics, n_fine, c.dtype) @ c
    relaxed = jnp.zeros(system.dynamical_size - c.shape[1], c.dtype)
    slip = jax.vmap(lambda t, xj: jnp.reshape(system.slip_velocity(t, full_state(system, jnp.concatenate(
        [xj, relaxed]))), (-1,)))(ts, x)  # (n_fine, contacts)
    increments, displacement = _slip_increments(slip, omega)
    normal = jnp.broadcast_to(jnp.reshape(jnp.asarray(system.normal, c.dtype), (-1,)), slip.shape[1:])
    relaxed_state = jnp.broadcast_to(law.init_state().astype(c.dtype), slip.shape[1:] + (law.n_state,))
    # relaxed at the period's mean slip displacement: a virgin loading from there to the slip at t0
    z0 = law.slip_update(relaxed_state, displacement[0] - jnp.mean(displacement, axis=0), normal)

    def step(z, du):
        return law.slip_update(z, du, normal), z

    z = z0
    for _ in range(MARCH_PERIODS - 1):
        z, _ = jax.lax.scan(step, z, increments)
    end, zs = jax.lax.scan(step, z, increments)
    states = jnp.concatenate([x[::MARCH_SUBSTEPS], zs[::MARCH_SUBSTEPS].reshape(samples, -1)], axis=1)
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
