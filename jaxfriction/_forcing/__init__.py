"""Prescribed drives ``drive(t)``: forces, belt velocities, ground motions."""

from .drives import AbstractDrive, Constant, Harmonic, Step
from .ground_motion import (
           GroundMotion,
           combine_components,
           load_at2,
           load_ground_motion,
           load_two_column,
)

__all__ = ["AbstractDrive", "Constant", "GroundMotion", "Harmonic", "combine_components", "load_at2",
           "load_ground_motion", "load_two_column", "Step"]
