"""The disc on a driving disc of Awrejcewicz, Grzelczyk and Pyryev 2007 (paper 002, Sec. 3)."""

import jax.numpy as jnp

from .._checks import check_real
from .._laws.awrejcewicz import Awrejcewicz
from .._laws.base import AbstractFrictionLaw
from .base import AbstractFrictionSystem, AbstractOscillator


class DiscOnDrivingDisc(AbstractOscillator):
    """``I phi'' + k phi = M_fr + M0 cos(Omega t)`` on a disc turning at ``omega_dr`` (paper 002 eq. 5).

    ``M_fr = r F_fr`` with ``F_fr`` from the law at the relative velocity ``omega_rel =
    omega_dr - phi'`` (our slip velocity is ``phi' - omega_dr``) and ``F_ex = M_ex / r``,
    ``M_ex = k phi - M0 cos(Omega t)``. Every law of the library is homogeneous of degree one
    in ``(f_eq, normal)``, so the moments are obtained directly with ``normal = r`` (m) and the
    law's static coefficient equal to ``F_s`` (N): the law then works in moments (N m).

    Paper 002 eq. (6) has a typo: the excitation is ``M0 cos(Omega t)`` (written ``cos phi``),
    with the third state ``psi' = Omega`` of the autonomous form. Defaults are the paper's
    parameters: ``I = 2``, ``k = 10``, ``F_s = 20``, ``r = 0.1``, ``delta = 3``,
    ``omega_dr = 0.3``, ``Omega = 2``, ``M0 = 0.5``, ``eps = 1e-3``.

    Args:
        law: friction law in force units with ``F_s`` as its static coefficient; default
            ``Awrejcewicz(mu_s=20, delta=3, eps=1e-3)``.
        omega_dr: driving disc speed (rad/s). M0: excitation amplitude (N m).
        Omega: excitation frequency (rad/s). inertia I (kg m^2), stiffness k (N m/rad),
        radius r (m).

    Raises: ValueError for non-finite values, ``inertia <= 0``, negative stiffness or radius.
    """

    law: AbstractFrictionLaw = Awrejcewicz(mu_s=20.0, delta=3.0, eps=1e-3)
    omega_dr: float = 0.3
    M0: float = 0.5
    Omega: float = 2.0
    inertia: float = 2.0
    stiffness: float = 10.0
    radius: float = 0.1

    def __check_init__(self):
        check_real("omega_dr", self.omega_dr)
        check_real("M0", self.M0)
        check_real("Omega", self.Omega)
        check_real("inertia", self.inertia, positive=True)
        check_real("radius", self.radius, nonnegative=True)

    @property
    def mass(self):
        return self.inertia

    @property
    def damping(self):
        return 0.0

    @property
    def normal(self):
        return self.radius

    def external_force(self, t):
        return self.M0 * jnp.cos(self.Omega * t)

    def surface_velocity(self, t):
        return self.omega_dr + 0.0 * t


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

    Args: as :class:`DiscOnDrivingDisc`, with ``F_s``, ``delta``, ``eps`` instead of a law.
    Raises: ValueError for invalid values.
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

    def __check_init__(self):
        check_real("F_s", self.F_s, nonnegative=True)
        check_real("delta", self.delta, nonnegative=True)
        check_real("eps", self.eps, positive=True)
        check_real("inertia", self.inertia, positive=True)
        for name in ("omega_dr", "M0", "Omega", "stiffness", "radius"):
            check_real(name, getattr(self, name))

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

    def vector_field(self, t, y, args=None):
        phi, w = y[0], y[1]
        rel, _, stick, m_fr = self._regime(t, y)
        drive = self.M0 * jnp.cos(self.Omega * t)
        dphi = jnp.where(stick, self.omega_dr, w)
        dw = jnp.where(stick, rel * jnp.sqrt(self.stiffness / self.inertia),
                       (-self.stiffness * phi + m_fr + drive) / self.inertia)
        return jnp.stack([dphi, dw, -m_fr * (dphi - self.omega_dr), 0.0 * t, drive * dphi + m_fr * self.omega_dr])

    def mechanical_energy(self, y):
        return 0.5 * self.inertia * y[..., 1] ** 2 + 0.5 * self.stiffness * y[..., 0] ** 2

    def friction_force(self, t, y):
        return self._regime(t, y)[3]

    def slip_velocity(self, t, y):
        return -self._regime(t, y)[0]

    def f_eq(self, t, y):
        return self._regime(t, y)[1]
