"""The switch model of the disc on a driving disc (paper 002 eq. 7; Leine et al. 1998).

The continuous model of paper 002 (eq. 5) is an :class:`~jaxfriction.Oscillator`:
:func:`~jaxfriction.disc_on_driving_disc`.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive, real
from .base import AbstractFrictionSystem, Rates


class LeineSwitchDisc(AbstractFrictionSystem):
    """The disc with Leine's switch model, paper 002 eq. (7) (Leine et al. 1998).

    Three sets of equations, switched on the state:

    - slip ``|omega_rel| > eps``: ``I w' = -k phi + M_s sgn(omega_rel) / (1 + delta (|omega_rel|
      - eps)) + M0 cos(Omega t)``, ``phi' = w``;
    - transition ``|omega_rel| <= eps``, ``|M_ex| > M_s``: ``I w' = -k phi + M_s sgn(M_ex) +
      M0 cos(Omega t)``, ``phi' = w``;
    - stick ``|omega_rel| <= eps``, ``|M_ex| <= M_s``: ``phi' = omega_dr`` and ``w' = omega_rel
      sqrt(k/I)``: the disc is carried along while ``w`` relaxes to ``omega_dr``.

    ``M_s = r F_s``, ``omega_rel = omega_dr - w``, ``M_ex = k phi - M0 cos(Omega t)``; the
    ``cos phi`` of the printed equations is ``cos(Omega t)`` (typo, as eq. 6). The state has
    the library's layout ``[phi, w, E_friction, E_damping, W_input]``; ``E_friction`` is the
    work of the friction moment ``-M_fr (phi' - omega_dr)``. Because ``phi' != w`` in stick,
    the energy balance of this model is not exact (it is a switch model, not a mechanical
    law); its residual measures that.

    The arguments are those of :func:`~jaxfriction.disc_on_driving_disc`, with ``F_s``,
    ``delta``, ``eps`` instead of a law.

    Args:
        F_s: static friction force (N); ``M_s = r F_s``.
        delta: velocity-weakening coefficient (s/rad).
        eps: half-width of the stick band ``|omega_rel| <= eps`` (rad/s).
        omega_dr: driving disc speed (rad/s).
        M0: excitation amplitude (N m).
        Omega: excitation frequency (rad/s).
        inertia: ``I > 0`` (kg m^2).
        stiffness: ``k >= 0`` (N m/rad).
        radius: ``r >= 0`` (m).

    Raises:
        ValueError: invalid values.
    """

    n_dof = 1

    F_s: float = 20.0
    delta: float = 3.0
    eps: float = 1e-3
    omega_dr: float = 0.3
    M0: float = 0.5
    Omega: float = 2.0
    inertia: float = 2.0
    stiffness: float = 10.0
    radius: float = 0.1

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("F_s", self.F_s), nonnegative("delta", self.delta), positive("eps", self.eps),
                positive("inertia", self.inertia),
                *(real(name, getattr(self, name)) for name in ("omega_dr", "M0", "Omega", "stiffness", "radius")))

    def _regime(self, t, y):
        phi, w = y[0], y[1]
        m_s = self.radius * self.F_s
        rel = self.omega_dr - w
        m_ex = self.stiffness * phi - self.M0 * jnp.cos(self.Omega * t)
        slip = jnp.abs(rel) > self.eps
        stick = ~slip & (jnp.abs(m_ex) <= m_s)
        m_slip = m_s * jnp.sign(rel) / (1.0 + self.delta * (jnp.maximum(jnp.abs(rel), self.eps) - self.eps))
        m_fr = jnp.where(slip, m_slip, jnp.where(stick, m_ex, m_s * jnp.sign(m_ex)))
        return rel, m_ex, stick, m_fr

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        phi, w = y[0], y[1]
        rel, _, stick, m_fr = self._regime(t, y)
        drive = self.M0 * jnp.cos(self.Omega * t)
        dphi = jnp.where(stick, self.omega_dr, w)
        dw = jnp.where(stick, rel * jnp.sqrt(self.stiffness / self.inertia),
                       (-self.stiffness * phi + m_fr + drive) / self.inertia)
        return Rates(dphi, dw, -m_fr * (dphi - self.omega_dr), drive * dphi + m_fr * self.omega_dr)

    def mechanical_energy(self, y: Array) -> Array:
        return 0.5 * self.inertia * y[..., 1] ** 2 + 0.5 * self.stiffness * y[..., 0] ** 2

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        return self._regime(t, y)[3]

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        return -self._regime(t, y)[0]

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        return self._regime(t, y)[1]
