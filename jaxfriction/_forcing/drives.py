"""Simple analytic drives: constant and harmonic.

A drive is an equinox module called as ``drive(t)`` that returns a scalar (units of
whatever it drives: N for a force, m/s for a belt). Its parameters are pytree leaves, so
gradients with respect to a forcing amplitude or frequency need no plumbing.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp

from .._checks import check_constraints, is_static_zero, real


class AbstractDrive(eqx.Module):
    """Base class of prescribed drives: ``value = drive(t)`` with ``t`` in seconds.

    Parameters are fields (paths ``"force.amplitude"``, ``"surface.value"``, ...); their
    valid ranges come from ``constraints()``, checked when the drive is built.
    """

    def __check_init__(self):
        check_constraints(self)

    def constraints(self):
        """The parameters' valid ranges (see :mod:`jaxfriction._checks`)."""
        return ()

    @abc.abstractmethod
    def __call__(self, t):
        """Value of the drive at time ``t`` (scalar)."""


class Constant(AbstractDrive):
    """A constant drive, ``value`` at all times.

    Raises:
        ValueError: if ``value`` is not finite.
    """

    value: float = 0.0

    def constraints(self):
        return (real("value", self.value),)

    def __call__(self, t):
        return self.value + 0.0 * t


class Harmonic(AbstractDrive):
    """``amplitude * sin(omega t + phase)`` (Quinn 2004 eq. 5: ``alpha sin(omega t)``).

    Args:
        amplitude: finite (units of the driven quantity).
        omega: angular frequency, finite (rad/s).
        phase: phase, finite (rad).

    Raises:
        ValueError: if a parameter is not finite.
    """

    amplitude: float = 1.0
    omega: float = 1.0
    phase: float = 0.0

    def constraints(self):
        return (real("amplitude", self.amplitude), real("omega", self.omega), real("phase", self.phase))

    def __call__(self, t):
        # a literal zero phase is left out: the same numbers, one addition less per call
        angle = self.omega * t if is_static_zero(self.phase) else self.omega * t + self.phase
        return self.amplitude * jnp.sin(angle)
