"""Simple analytic drives: constant, harmonic and a (smoothed) step.

A drive is an equinox module called as ``drive(t)`` that returns a scalar (units of
whatever it drives: N for a force, m/s for a belt). Its parameters are pytree leaves, so
gradients with respect to a forcing amplitude or frequency need no plumbing.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp

from .._checks import Constraint, check_constraints, is_static_zero, nonnegative, real


class AbstractDrive(eqx.Module):
    """Base class of prescribed drives: ``value = drive(t)`` with ``t`` in seconds.

    Parameters are fields (paths ``"force.amplitude"``, ``"surface.value"``, ...); their
    valid ranges come from ``constraints()``, checked when the drive is built.
    """

    def __check_init__(self):
        check_constraints(self)

    def constraints(self) -> tuple[Constraint, ...]:
        """The parameters' valid ranges (see :mod:`jaxfriction._checks`)."""
        return ()

    def jump_times(self) -> tuple:
        """Times (s) where the drive jumps (a sharp step), ``()`` for a continuous drive.

        Adaptive diffrax runs stop a step exactly at each and restart the solver there
        (``diffrax.ClipStepSizeController(jump_ts=...)``, see
        :meth:`~jaxfriction.AbstractFrictionSystem.jump_times`), instead of leaving the
        step-size controller to find the discontinuity by rejected steps."""
        return ()

    @abc.abstractmethod
    def __call__(self, t):
        """Value of the drive at time ``t`` (scalar)."""

    def __add__(self, other):
        """``drive + drive`` (or ``+ number``, a :class:`Constant`): a
        :class:`~jaxfriction.DriveSum`, nested sums flattened."""
        from .sampled import DriveSum

        parts = []
        for x in (self, other):
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                x = Constant(float(x))
            if not isinstance(x, AbstractDrive):
                return NotImplemented
            parts += list(x.terms) if isinstance(x, DriveSum) else [x]
        return DriveSum(tuple(parts))

    def __radd__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return Constant(float(other)) + self
        return NotImplemented


class Constant(AbstractDrive):
    """A constant drive, ``value`` at all times.

    Raises:
        ValueError: if ``value`` is not finite.
    """

    value: float = 0.0

    def constraints(self) -> tuple[Constraint, ...]:
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

    def constraints(self) -> tuple[Constraint, ...]:
        return (real("amplitude", self.amplitude), real("omega", self.omega), real("phase", self.phase))

    def __call__(self, t):
        # a literal zero phase is left out: the same numbers, one addition less per call
        angle = self.omega * t if is_static_zero(self.phase) else self.omega * t + self.phase
        return self.amplitude * jnp.sin(angle)


class Step(AbstractDrive):
    """A step from ``before`` to ``after`` at ``t_step``, sharp or smoothed over ``width``.

    ``width == 0`` (a literal, the default) is the sharp step ``before`` for ``t < t_step``
    and ``after`` from ``t_step`` on; ``width > 0`` is the smooth step ::

        before + (after - before) (1 + tanh((t - t_step) / width)) / 2,

    which a fixed-step integrator resolves with a few steps per ``width`` (a sharp step
    inside an RK4 step costs RK4 its order; an adaptive diffrax solver finds it by step
    rejection). The load-point velocity step ``V -> e V`` of rate-and-state experiments
    (Dieterich 1979; Ruina 1983) is ``Step(V, e V, t_step)``.

    Args:
        before: value before the step, finite.
        after: value after the step, finite.
        t_step: time of the step (s), finite.
        width: smoothing time (s), ``>= 0``.

    Raises:
        ValueError: a non-finite value or a negative width.
    """

    before: float = 0.0
    after: float = 1.0
    t_step: float = 0.0
    width: float = 0.0

    def constraints(self) -> tuple[Constraint, ...]:
        return (real("before", self.before), real("after", self.after), real("t_step", self.t_step),
                nonnegative("width", self.width))

    def jump_times(self) -> tuple:
        """``(t_step,)`` for the sharp step (a literal zero ``width``), else ``()``."""
        return (self.t_step,) if is_static_zero(self.width) else ()

    def __call__(self, t):
        sharp = jnp.where(t >= self.t_step, self.after + 0.0 * t, self.before + 0.0 * t)
        if is_static_zero(self.width):
            return sharp
        smooth = self.width > 0  # a traced width may still be 0: the sharp step, no 0/0
        width = jnp.where(smooth, self.width, 1.0)
        ramp = 0.5 * (1.0 + jnp.tanh((t - self.t_step) / width))
        return jnp.where(smooth, self.before + (self.after - self.before) * ramp, sharp)


class Steps(AbstractDrive):
    """A piecewise-constant drive: ``values[0]`` before ``times[0]``, ``values[i]`` from
    ``times[i - 1]`` on (sharp steps, declared to adaptive solvers as :meth:`jump_times`).

    The load-point protocols of rate-and-state experiments: a velocity step ``V -> e V`` at
    ``t1`` is ``Steps((V, e V), (t1,))`` (Dieterich 1979; Ruina 1983), a slide-hold-slide test
    (Dieterich 1972; Beeler, Tullis & Weeks 1994) ``Steps((V, 0, V), (t1, t1 + t_hold))``, a
    staircase of steps ``Steps((V1, V2, V3, ...), (t1, t2, ...))``.

    Args:
        values: ``(n + 1,)`` finite values (units of the driven quantity; m/s for a load
            point).
        times: ``(n,)`` step times (s), finite and strictly increasing.

    Raises:
        ValueError: non-finite values or times, ``len(values) != len(times) + 1``, times
            that do not increase.
    """

    values: tuple | jnp.ndarray = (0.0, 1.0)
    times: tuple | jnp.ndarray = (0.0,)

    def __check_init__(self):
        import numpy as np

        from .._checks import is_concrete, numeric_array

        values, times = numeric_array("values")(self.values), numeric_array("times")(self.times)
        if values.ndim != 1 or times.ndim != 1 or values.size != times.size + 1:
            raise ValueError(f"values must have one entry more than times (1-D), got values of shape "
                             f"{values.shape} and times of shape {times.shape}")
        if is_concrete(self.times) and times.size > 1 and not np.all(np.diff(np.asarray(times, float)) > 0):
            raise ValueError(f"times must increase strictly, got {self.times}")
        super().__check_init__()

    def constraints(self) -> tuple[Constraint, ...]:
        return (real("values", jnp.asarray(self.values)), real("times", jnp.asarray(self.times)))

    def jump_times(self) -> tuple:
        """The step times ``times``."""
        return tuple(jnp.asarray(self.times)) if not isinstance(self.times, tuple) else self.times

    def __call__(self, t):
        times = jnp.asarray(self.times)
        values = jnp.asarray(self.values)
        index = jnp.sum(t >= times)  # 0 before the first step, i from times[i - 1] on
        return values[index] + 0.0 * t
