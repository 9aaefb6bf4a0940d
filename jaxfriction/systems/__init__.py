"""Systems: equinox modules with a diffrax-compatible ``vector_field(t, y, args)``."""

from .base import AbstractFrictionSystem, AbstractOscillator
from .oscillators import ForcedOscillator, MassUnderForce, SpringMassOnBelt

__all__ = [
    "AbstractFrictionSystem",
    "AbstractOscillator",
    "ForcedOscillator",
    "MassUnderForce",
    "SpringMassOnBelt",
]
