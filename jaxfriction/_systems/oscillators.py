"""The single-contact systems of the source papers."""

from __future__ import annotations

import jax.numpy as jnp

from .._checks import check_real
from .._forcing.drives import AbstractDrive, Constant
from .._laws.base import AbstractFrictionLaw
from .base import AbstractOscillator


class ForcedOscillator(AbstractOscillator):
    """Forced 1-dof friction oscillator, Quinn 2004 eq. (5).

    ``m x'' + c x' + k x = f + alpha sin(omega t)``, fixed floor, so ``f_eq = k x + c x' -
    alpha sin(omega t)`` (Quinn: ``f_eq = x - alpha sin(omega t)`` with ``m = k = 1``,
    ``c = 0``). Nondimensional by default: ``mu N`` is the law's ``mu`` times ``normal``.

    Args:
        law: friction law (module).
        alpha: forcing amplitude (force units).
        omega: forcing frequency (rad per time unit).
        mass: > 0; stiffness: >= 0; damping: >= 0; normal: normal force >= 0.

    Raises:
        ValueError: non-finite values, ``mass <= 0``, negative stiffness, damping or normal.
    """

    law: AbstractFrictionLaw
    alpha: float = 0.0
    omega: float = 1.0
    mass: float = 1.0
    stiffness: float = 1.0
    damping: float = 0.0
    normal: float = 1.0

    def __check_init__(self):
        check_real("alpha", self.alpha)
        check_real("omega", self.omega)

    def external_force(self, t):
        return self.alpha * jnp.sin(self.omega * t)


class MassUnderForce(AbstractOscillator):
    """A mass on a rough fixed floor under a prescribed force ``F_ext(t)`` (paper 004, system 1).

    ``m x'' = F_ext(t) + f``, ``f_eq = -F_ext(t)``; the papers' normal force is ``m g``.

    Args:
        law: friction law.
        force: the drive ``F_ext(t)`` (N), e.g. ``Harmonic`` or ``Constant``.
        mass: > 0 (kg); normal: >= 0 (N).
        stiffness, damping: optional spring to a wall and viscous damper (default 0).

    Raises:
        ValueError: as :class:`ForcedOscillator`; ``force`` not a drive.
    """

    law: AbstractFrictionLaw
    force: AbstractDrive = Constant(0.0)
    mass: float = 1.0
    normal: float = 1.0
    stiffness: float = 0.0
    damping: float = 0.0

    def __check_init__(self):
        if not isinstance(self.force, AbstractDrive):
            raise ValueError(f"force must be a jaxfriction drive, got {self.force!r}")

    def external_force(self, t):
        return self.force(t)


class SpringMassOnBelt(AbstractOscillator):
    """Spring-mass on a belt moving at constant speed ``v0`` (paper 004, system 2).

    ``m x'' + c x' + k x = f(x' - v0, f_eq, N)`` with ``f_eq = k x + c x'``: the classic
    stick-slip oscillator. Paper 004 pulls the spring at ``v0`` over a fixed floor instead;
    in the frame of the spring's end the two are the same system (``x`` here is the
    spring extension with the sign of paper 004's ``-x``). In stick the block rides the belt
    until ``|k x + c v0|`` reaches the static limit ``mu_s N``.

    Args:
        law: friction law.
        belt_velocity: ``v0`` (m/s).
        mass: > 0 (kg); stiffness: >= 0 (N/m); damping: >= 0 (N s/m); normal: >= 0 (N).

    Raises:
        ValueError: as :class:`ForcedOscillator`.
    """

    law: AbstractFrictionLaw
    belt_velocity: float = 1.0
    mass: float = 1.0
    stiffness: float = 1.0
    damping: float = 0.0
    normal: float = 1.0

    def __check_init__(self):
        check_real("belt_velocity", self.belt_velocity)

    def external_force(self, t):
        return 0.0 * t

    def surface_velocity(self, t):
        return self.belt_velocity + 0.0 * t
