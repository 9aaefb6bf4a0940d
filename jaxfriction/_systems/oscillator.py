"""One body, one contact: the friction oscillator, built from drives."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_real, is_concrete, is_static_zero, nonnegative, positive
from .._forcing.drives import AbstractDrive, Constant, Harmonic
from .._laws.awrejcewicz import Awrejcewicz
from .._laws.base import AbstractFrictionLaw
from .._laws.dynamic import AbstractDynamicLaw, friction_power
from .base import AbstractFrictionSystem, Rates
from .law_state import LawStateMixin


def _zero_drive(drive) -> bool:
    return isinstance(drive, Constant) and is_static_zero(drive.value)


def check_law(law, vector: bool, dynamic: bool = False) -> None:
    """Raise ValueError naming ``law`` unless it is a friction law of the right dimension
    (``dynamic``: a law with internal state, :class:`~jaxfriction.AbstractDynamicLaw`, is
    accepted too)."""
    if dynamic and isinstance(law, AbstractDynamicLaw):
        return
    if not isinstance(law, AbstractFrictionLaw):
        raise ValueError(f"law must be a jaxfriction friction law, got {law!r}")
    if law.vector != vector:
        kind = "a vector (tangential-plane) law such as VectorQuinn" if vector else "a scalar law such as Quinn"
        raise ValueError(f"law must be {kind} for this system, got {type(law).__name__}")


def check_one_contact_law(law, n_internal=0):
    """Raise ValueError naming ``law`` unless its force at one contact is a scalar (an array
    of parameters, ``Quinn(mu=[0.5, 0.3])``, is for systems with several contacts)."""
    if not is_concrete(law):
        return
    scalar = jax.ShapeDtypeStruct((), jnp.result_type(float))
    try:
        if isinstance(law, AbstractDynamicLaw):
            out = jax.eval_shape(law.force, scalar, jax.ShapeDtypeStruct((n_internal,), scalar.dtype), scalar)
        else:
            out = jax.eval_shape(law, scalar, scalar, scalar)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"law parameters must be scalars for a system with one contact: {exc}") from None
    except Exception:  # noqa: BLE001 - a law that cannot be traced alone; its own call will say why
        return
    if jnp.shape(out) != ():
        shapes = {f.name: np.shape(getattr(law, f.name)) for f in dataclasses.fields(law)
                  if isinstance(getattr(law, f.name), (list, tuple, np.ndarray, jax.Array))
                  and np.ndim(getattr(law, f.name))}
        raise ValueError(f"law parameters must be scalars for a system with one contact, got {type(law).__name__} "
                         f"with {', '.join(f'{k} of shape {v}' for k, v in shapes.items()) or 'array parameters'}")


class Oscillator(LawStateMixin, AbstractFrictionSystem):  # type: ignore[override]
    """The friction oscillator ``m x'' + c x' + k x = F(t) + f`` on a moving surface.

    One body of mass ``m`` on a spring ``k`` and damper ``c``, driven by a force ``F(t)``
    (drive ``force``), in frictional contact with a surface moving at ``v_s(t)`` (drive
    ``surface``: a fixed floor, a belt, a driving disc). The friction force is ``f =
    law(x' - v_s, f_eq, N)`` and the force balance ``f_eq = m a_s(t) + k x + c x' - F(t)`` is
    the friction force that gives the body the surface's acceleration ``a_s`` (Quinn 2004:
    "the value of the friction force necessary to balance the gross force"). Power of the
    drives: ``F(t) x' + f v_s(t)`` (the surface's motor supplies ``f v_s``). State ``[x, x',
    E_friction, E_damping, W_input]``.

    Dynamic laws (:class:`~jaxfriction.AbstractDynamicLaw`: LuGre, Dahl, Iwan, rate-and-state)
    are accepted as well: the law's ``n_state`` internal variables become the system's
    internal block ``z`` (state ``[x, x', z, E_friction, E_damping, W_input]``, starting at
    ``law.init_state()``), the friction force is ``law.force(x' - v_s, z, N)``, the energy
    stored in the law's springs is part of :meth:`mechanical_energy` and ``E_friction``
    integrates only the dissipated power ``-f (x' - v_s) - d/dt stored`` (exact balance).
    The force balance ``f_eq`` is still reported but the law does not use it.

    The systems of the source papers are this class with other drives:

    - Quinn 2004 eq. (5): ``Oscillator(law=Quinn(mu, eps), force=Harmonic(alpha, omega))``
      (``m = k = N = 1``, fixed floor);
    - a mass under a prescribed force (paper 004, system 1): ``stiffness=0.0``,
      ``force=Harmonic(...)`` or ``Constant(...)``;
    - a spring-mass on a belt (paper 004, system 2): ``surface=Constant(v0)``; the paper
      pulls the spring at ``v0`` over a fixed floor instead, which in the frame of the
      spring's end is the same system (``x`` here is the spring extension with the sign of
      paper 004's ``-x``);
    - the disc on a driving disc (paper 002 eq. 5): :func:`disc_on_driving_disc`.

    Parameter paths: ``"law.<field>"``, ``"force.amplitude"``, ``"force.omega"``,
    ``"surface.value"``, ``"mass"``, ``"stiffness"``, ``"damping"``, ``"normal"``.
    Fast paths follow the field types: a ``Constant`` surface has no acceleration, a
    ``Constant(0.0)`` surface or force and a literal ``0.0`` stiffness or damping are left
    out of the arithmetic (same numbers; XLA cannot drop ``0 * x`` itself, and those terms
    cost about 30 % of a sweep).

    Args:
        law: a scalar friction law or a dynamic law.
        force: drive ``F(t)`` (N); default none.
        surface: drive ``v_s(t)`` (m/s); default a fixed floor.
        mass: ``m > 0`` (kg).
        stiffness: ``k >= 0`` (N/m).
        damping: ``c >= 0`` (N s/m).
        normal: normal force ``N >= 0`` (N).

    Raises:
        ValueError: a vector law or no law, drives that are not drives, ``mass <= 0``,
            negative stiffness, damping or normal force, non-finite values.
    """

    n_dof = 1

    law: AbstractFrictionLaw | AbstractDynamicLaw
    force: AbstractDrive = Constant(0.0)
    surface: AbstractDrive = Constant(0.0)
    mass: float = 1.0
    stiffness: float = 1.0
    damping: float = 0.0
    normal: float = 1.0

    def __check_init__(self):
        check_law(self.law, vector=False, dynamic=True)
        check_one_contact_law(self.law, self.n_internal)
        for name in ("force", "surface"):
            if not isinstance(getattr(self, name), AbstractDrive):
                raise ValueError(f"{name} must be a jaxfriction drive (Constant, Harmonic, ...), "
                                 f"got {getattr(self, name)!r}")

    def contact_mobility(self) -> tuple:
        """One body: mobility ``1 / mass`` (see :meth:`AbstractFrictionSystem.contact_mobility`)."""
        return 1.0 / self.mass, self.normal, jnp.zeros(()), jnp.ones(())

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("mass", self.mass), nonnegative("stiffness", self.stiffness),
                nonnegative("damping", self.damping), nonnegative("normal", self.normal))

    def external_force(self, t: ArrayLike) -> Array:
        """Prescribed force ``F(t)`` on the body (N)."""
        return self.force(t)

    def surface_velocity(self, t: ArrayLike) -> Array:
        """Velocity of the surface under the body (m/s)."""
        return self.surface(t)

    def surface_acceleration(self, t: ArrayLike) -> Array:
        """Acceleration of the surface (m/s^2): 0 for a ``Constant`` surface, else ``d v_s/dt``."""
        if isinstance(self.surface, Constant):
            return 0.0 * t  # type: ignore[return-value]
        return jax.jvp(self.surface, (t,), (jnp.ones_like(t),))[1]

    def _forces(self, t, y):
        x, v = y[0], y[1]
        nonfriction = 0.0 if _zero_drive(self.force) else self.external_force(t)
        if not is_static_zero(self.stiffness):
            nonfriction = nonfriction - self.stiffness * x
        if not is_static_zero(self.damping):
            nonfriction = nonfriction - self.damping * v
        f_eq = -nonfriction
        if not isinstance(self.surface, Constant):
            f_eq = self.mass * self.surface_acceleration(t) + f_eq
        slip = v if _zero_drive(self.surface) else v - self.surface_velocity(t)
        if self.dynamic:
            return nonfriction, f_eq, slip, self.law.force(slip, y[2 : 2 + self.n_internal], self.normal)
        return nonfriction, f_eq, slip, self.law(slip, f_eq, self.normal)

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        v = y[1]
        nonfriction, _, slip, f = self._forces(t, y)
        work = 0.0 if _zero_drive(self.force) else self.external_force(t) * v
        if not _zero_drive(self.surface):
            work = work + f * self.surface_velocity(t)
        damping = 0.0 if is_static_zero(self.damping) else self.damping * v * v
        if self.dynamic:  # dissipation is the friction power less the rate of the stored energy
            _, dissipated, z_dot = friction_power(self.law, slip, y[2 : 2 + self.n_internal], self.normal)  # type: ignore[arg-type]
            return Rates(v, (nonfriction + f) / self.mass, dissipated, work, damping, internal=z_dot)
        return Rates(v, (nonfriction + f) / self.mass, -f * slip, work, damping)

    def mechanical_energy(self, y: Array) -> Array:
        return 0.5 * self.mass * y[..., 1] ** 2 + 0.5 * self.stiffness * y[..., 0] ** 2 + self.law_energy(y)

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        return self._forces(t, y)[3]

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        return self._forces(t, y)[2]

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        return self._forces(t, y)[1]


def disc_on_driving_disc(law: AbstractFrictionLaw | None = None, *, omega_dr: float = 0.3, M0: float = 0.5,
                         Omega: float = 2.0, inertia: float = 2.0, stiffness: float = 10.0,
                         radius: float = 0.1) -> Oscillator:
    """The disc on a driving disc of Awrejcewicz, Grzelczyk and Pyryev 2007 (paper 002, eq. 5).

    ``I phi'' + k phi = M_fr + M0 cos(Omega t)`` with the disc turning at ``omega_dr``, as an
    :class:`Oscillator` in moments: ``mass = I``, ``surface = Constant(omega_dr)``, ``force =
    Harmonic(M0, Omega, phase=pi/2)`` (``M0 cos(Omega t)``) and ``normal = r``: every law of
    the library is homogeneous of degree one in ``(f_eq, normal)``, so with ``normal = r``
    (m) and the law's static coefficient equal to ``F_s`` (N) the law works in moments
    (``M_fr = r F_fr``, N m). ``M_fr`` is taken at the relative velocity ``omega_rel =
    omega_dr - phi'`` (our slip velocity is ``phi' - omega_dr``).

    Paper 002 eq. (6) has a typo: the excitation is ``M0 cos(Omega t)`` (written ``cos
    phi``), with the third state ``psi' = Omega`` of the autonomous form. Defaults are the
    paper's parameters: ``I = 2``, ``k = 10``, ``F_s = 20``, ``r = 0.1``, ``delta = 3``,
    ``omega_dr = 0.3``, ``Omega = 2``, ``M0 = 0.5``, ``eps = 1e-3``.

    Args:
        law: friction law in force units with ``F_s`` as its static coefficient; default
            ``Awrejcewicz(mu_s=20, delta=3, eps=1e-3)``.
        omega_dr: driving disc speed (rad/s).
        M0: excitation amplitude (N m).
        Omega: excitation frequency (rad/s).
        inertia: ``I > 0`` (kg m^2).
        stiffness: ``k >= 0`` (N m/rad).
        radius: ``r >= 0`` (m).

    Returns:
        The system, an :class:`Oscillator`; its paths are ``"surface.value"`` (omega_dr),
            ``"force.amplitude"`` (M0), ``"force.omega"`` (Omega), ``"mass"`` (I),
            ``"stiffness"``, ``"normal"`` (r), ``"law.mu_s"`` (F_s), ``"law.delta"``,
            ``"law.eps"``.

    Raises:
        ValueError: naming an invalid argument.
    """
    check_real("inertia", inertia, positive=True)
    check_real("stiffness", stiffness, nonnegative=True)
    check_real("radius", radius, nonnegative=True)
    law = Awrejcewicz(mu_s=20.0, delta=3.0, eps=1e-3) if law is None else law
    return Oscillator(law=law, force=Harmonic(M0, Omega, phase=math.pi / 2), surface=Constant(omega_dr),
                      mass=inertia, stiffness=stiffness, damping=0.0, normal=radius)
