"""Exact derivatives of a periodic steady state by the implicit function theorem.

At a converged orbit ``F(x, p) = phi_T(x; p) - x = 0`` defines ``x(p)``; its derivative is
``dx/dp = -(dF/dx)^{-1} dF/dp`` with ``dF/dx = M - I`` (``M`` the monodromy), and an orbit
quantity ``Q(x(p), p)`` (dissipation per cycle, amplitude, period, the orbit's state) has
``dQ/dp = dQ/dx dx/dp + dQ/dp``. optimistix's ``ImplicitAdjoint`` applies exactly this at the
root of :func:`~jaxfriction._workflows.periodic.shooting.shoot` (one linear solve per
direction, Blondel et al. 2022, "Efficient and modular implicit differentiation"), so the
derivative never passes through the Newton iterations or a transient; forward mode through
the one-period RK4 map gives ``dF/dp`` and ``dQ/dp``. For an autonomous orbit the period is an
unknown of ``F`` (with the phase condition) and gets its derivative the same way.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import renamed_keyword
from ..._paths import set_parameters
from ..sensitivity import scalar_wrt
from .shooting import PeriodicOrbit, amplitude, shoot

#: Orbit quantities :func:`orbit_sensitivity` differentiates.
QUANTITIES = ("dissipation", "amplitude", "period", "input_work", "y0")


@eqx.filter_jit
def _jacobian(system, p0, z0, frequency, t0, n_steps, tol, max_steps, integrator=None):
    def quantities(values):
        sys = set_parameters(system, values)
        out = shoot(sys, z0, frequency=frequency, t0=t0, n_steps=n_steps, tol=tol, max_steps=max_steps,
                    integrator=integrator)
        traj = out["trajectory"]
        q = {"dissipation": out["end"][-3], "input_work": out["end"][-1], "period": out["period"],
             "amplitude": amplitude(traj, out["event_positions"]), "y0": out["x"]}
        return q, (q, out["converged"])

    jac, (value, converged) = jax.jacfwd(quantities, has_aux=True)(p0)
    return value, jac, converged


def orbit_sensitivity(orbit: PeriodicOrbit, wrt=None, *, params=None) -> dict:
    """Derivatives of a converged orbit's quantities with respect to parameter paths, by the
    implicit function theorem at the orbit (module docstring).

    Args:
        orbit: a converged :class:`~jaxfriction.PeriodicOrbit` (from
            :func:`~jaxfriction.periodic_orbit`; its state is the starting point, so the
            solve takes one Newton step). An exact-stick orbit (``integrator=EventDriven``)
            is differentiated through its event-driven flow (forward mode, event times by
            the implicit function theorem).
        wrt: a path or a list of scalar leaf paths (``"force.omega"``, ``"law.mu"``,
            ``"law.eps"``); the same keyword as :func:`~jaxfriction.sweep`'s. ``params=``,
            its old name, still works for one release with a DeprecationWarning.

    Returns:
        Dict quantity -> dict path -> derivative, for ``"dissipation"`` (J per unit of the
            parameter), ``"amplitude"``, ``"period"`` (0 for a forced orbit unless the path is
            its frequency), ``"input_work"`` and ``"y0"`` (``(dynamical_size,)`` arrays); and
            ``"value"``: the quantities at the orbit.

    Raises:
        ValueError: an orbit that did not converge, unknown or non-scalar paths.
        TypeError: neither ``wrt`` nor ``params`` given, or both.
    """
    if not isinstance(orbit, PeriodicOrbit):
        raise ValueError(f"orbit must be a PeriodicOrbit, got {type(orbit).__name__}")
    if not orbit.converged:
        raise ValueError(f"orbit did not converge ({orbit.status}, residual {orbit.residual:.3g}): its derivatives "
                         f"would be those of a non-periodic state")
    wrt = renamed_keyword("orbit_sensitivity", "wrt", wrt, "params", params, missing="required")
    system, names, p0 = scalar_wrt(orbit.system, wrt)
    system = set_parameters(system, p0)
    z0 = jnp.asarray(orbit.y0)
    if orbit.autonomous:
        z0 = jnp.concatenate([z0, jnp.asarray([orbit.period], z0.dtype)])
    value, jac, converged = _jacobian(system, p0, z0, orbit.frequency, orbit.t0, orbit.n_steps, orbit.tol, 20,
                                      orbit.integrator)
    if not bool(converged):
        raise ValueError("orbit: the orbit does not solve the shooting problem at its own parameters")
    out = {q: {n: np.asarray(jac[q][n]) if q == "y0" else float(jac[q][n]) for n in names} for q in QUANTITIES}
    out["value"] = {q: np.asarray(v) if q == "y0" else float(v) for q, v in value.items()}
    return out
