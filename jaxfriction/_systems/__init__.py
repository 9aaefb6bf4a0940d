"""Systems: equinox modules with a diffrax-compatible ``vector_field(t, y, args)``."""

from .base import AbstractFrictionSystem, AbstractOscillator
from .block2d import BlockOnShakingFloor, GriffinSpringBlock
from .chain import BurridgeKnopoffChain, TwoBlocksOnBelt
from .contacts import AbstractContactSystem
from .disc import DiscOnDrivingDisc, LeineSwitchDisc
from .force_balance import coupled_force_balance
from .oscillators import ForcedOscillator, MassUnderForce, SpringMassOnBelt

__all__ = [
    "AbstractContactSystem",
    "BlockOnShakingFloor",
    "BurridgeKnopoffChain",
    "GriffinSpringBlock",
    "TwoBlocksOnBelt",
    "coupled_force_balance",
    "AbstractFrictionSystem",
    "AbstractOscillator",
    "DiscOnDrivingDisc",
    "LeineSwitchDisc",
    "ForcedOscillator",
    "MassUnderForce",
    "SpringMassOnBelt",
]
