"""The periodic orbit of exact stick: :func:`~jaxfriction.periodic_orbit` on the exact
event-driven flow (``integrator=jf.EventDriven(...)``).

The period map is the event-driven solution of set-valued Coulomb friction
(:func:`.flow.exact_period_run`; a single-contact :class:`~jaxfriction.Oscillator` with
``Coulomb`` or ``StaticKineticCoulomb``, regime switching after Quinn 2004 Sec. 3.1.2), so the
orbit is exact to the solver tolerance, with no O(eps) regularization error. Newton's Jacobian
and the monodromy are forward-mode Jacobians through the located events, which carries the
saltation matrices of the stick-slip transitions (Leine & Nijmeijer 2004, Sec. 7.2): a
sticking orbit has a zero multiplier. An autonomous orbit's period is an unknown fixed by the
anchor phase condition, as on the RK4 flow (Seydel 2010, Sec. 7.3, eq. 7.11).

This module holds what is particular to the exact flow: the check of the ``integrator`` and
the system it must solve, the transient (whole periods of the exact flow) and the start of the
solve. The residual, the root finders with their implicit derivative, and the measured
:class:`~jaxfriction.PeriodicOrbit` are those of :mod:`.shooting`, which calls
:func:`_exact_start` for an ``EventDriven`` integrator.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp

from ..._checks import check_real
from ..._integrate.solvers import RK4
from ..._integrate.status import STATUS_MEANINGS, STATUS_OK
from .flow import exact_period_run, steps_per_period
from .period import _estimated_period, _forced_period, _need_transient, forcing_frequency_path


def _check_integrator(integrator, system):
    """None for the RK4 flow, or the :class:`~jaxfriction.EventDriven` after checking that it
    can solve ``system`` exactly."""
    from ..._exact.solver import EventDriven

    if integrator is None or isinstance(integrator, RK4):
        return None
    if not isinstance(integrator, EventDriven):
        raise ValueError(f"integrator must be None (RK4), jf.RK4() or jf.EventDriven(...) for periodic_orbit, got "
                         f"{type(integrator).__name__}: shooting needs a forward-mode Jacobian of the period map, "
                         f"which these two provide")
    from ..._exact.coulomb_params import coulomb_coefficients
    from ..._systems.oscillator import Oscillator

    if not isinstance(system, Oscillator):
        raise ValueError(f"system: EventDriven solves a single-contact Oscillator exactly, got "
                         f"{type(system).__name__}; use the RK4 flow of a regularized law (integrator=None)")
    coulomb_coefficients(system)  # raises naming law
    return integrator


@eqx.filter_jit
def _exact_periods(system, x, t0, period, cycles, integrator):
    """``cycles`` periods of the exact flow from ``x`` (a transient; Python int cycles)."""
    def one(_, x):
        return exact_period_run(system, x, t0, period, 1, integrator)[0].ys[-1][: system.dynamical_size]
    return jax.lax.fori_loop(0, cycles, one, x)  # one compiled period, not ``cycles`` copies


def _exact_start(system, y0, dt, period, frequency, t0, transient, integrator):
    """The start of :func:`~jaxfriction.periodic_orbit` on the exact event-driven flow: the
    checked period (forced, or an autonomous system's guess, estimated from an event-driven
    transient when not given), the saved intervals ``n`` of a period (``dt`` defaults to ``T /
    200``) and the shooting unknown ``z0`` after whole periods of the exact flow ending at
    phase ``t0``. Returns ``(frequency, n, z0)``; the solve and the orbit's measure are
    :mod:`.shooting`'s (``_solve`` and ``_finish`` with ``integrator``)."""
    from ..._exact.event_driven import simulate_event_driven

    frequency = forcing_frequency_path(system, frequency)
    if transient is not None:
        check_real("transient", transient, nonnegative=True)
    d = system.dynamical_size
    y = system.as_state(jnp.zeros(2 * system.n_dof) if y0 is None else y0)[:d]
    if frequency is not None:
        T = _forced_period(system, frequency, period)
    else:
        if period is None:
            _need_transient(transient)
            run = float(transient)
            traj, _ = simulate_event_driven(system, y, t0 - run, t0, n_save=2000, max_events=integrator.max_events,
                                            rtol=integrator.rtol, atol=integrator.atol, dtmax=integrator.dtmax,
                                            max_steps=integrator.max_steps)
            if int(traj.status) != STATUS_OK:
                raise ValueError(f"transient: the event-driven transient failed ({STATUS_MEANINGS[int(traj.status)]}); "
                                 f"raise the integrator's max_events or give period=")
            half = traj.ts.shape[0] // 2
            period = _estimated_period(traj.ts[half:], traj.ys[half:, 0])
            y, transient = traj.ys[-1, :d], 0.0
        check_real("period", period, positive=True)
        T = float(period)
    if dt is None:
        dt = T / 200
    check_real("dt", dt, positive=True)
    n = steps_per_period(T, dt)
    run = 5 * T if transient is None else float(transient)
    cycles = math.ceil(run / T * (1 - 1e-12)) if run > 0 else 0
    if cycles:  # whole periods of the exact flow, ending at phase t0
        # the period as an array: another forcing frequency reuses the compiled transient
        y = _exact_periods(system, y, jnp.asarray(t0, y.dtype), jnp.asarray(T, y.dtype), cycles, integrator)
    z0 = y if frequency is not None else jnp.concatenate([y, jnp.asarray([T], y.dtype)])
    return frequency, n, z0
