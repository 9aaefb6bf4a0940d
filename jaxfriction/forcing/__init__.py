"""Prescribed drives ``drive(t)``: forces, belt velocities, ground motions."""

from .drives import AbstractDrive, Constant, Harmonic

__all__ = ["AbstractDrive", "Constant", "Harmonic"]
