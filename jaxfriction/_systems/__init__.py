"""Systems: equinox modules with a diffrax-compatible ``vector_field(t, y, args)``."""

from .base import AbstractFrictionSystem, AdaptiveSolve, Rates
from .block2d import BlockOnShakingFloor, GriffinSpringBlock
from .chain import BurridgeKnopoffChain, TwoBlocksOnBelt
from .contacts import AbstractContactSystem
from .disc import LeineSwitchDisc
from .force_balance import coupled_force_balance
from .jointed import jointed_oscillator
from .modal import ModalStructure, bar_modes, jointed_bar
from .oscillator import Oscillator, disc_on_driving_disc
from .prescribed import PrescribedSlip
from .spring_slider import SpringSlider

__all__ = [
    "AbstractContactSystem",
    "AbstractFrictionSystem",
    "AdaptiveSolve",
    "BlockOnShakingFloor",
    "BurridgeKnopoffChain",
    "GriffinSpringBlock",
    "LeineSwitchDisc",
    "ModalStructure",
    "Oscillator",
    "PrescribedSlip",
    "Rates",
    "SpringSlider",
    "TwoBlocksOnBelt",
    "bar_modes",
    "coupled_force_balance",
    "disc_on_driving_disc",
    "jointed_oscillator",
    "jointed_bar",
]
