"""The :class:`Template` type (a system and the settings to run it), its unwrapping by the
workflows, and the rules of a run's length and measured window."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from .._checks import check_int, check_real, check_tree_constraints
from .._paths import check_paths, get_parameter, set_parameters
from .._systems.base import AbstractFrictionSystem


@dataclasses.dataclass(frozen=True)
class Template:
    """A system and the settings to run it (see the module docstring).

    Attributes:
        system: the template system (any :class:`~jaxfriction.AbstractFrictionSystem`).
        dt: RK4 step bound (time units of the system), > 0.
        t1: run length from ``t = 0`` (time units), with ``window``; or None with ``cycles``
            (both None: the run length is left to the workflow's arguments).
        window: length of the measured final window (``0 < window <= t1``).
        cycles: run this many forcing periods and measure the last (int >= 1), with
            ``frequency``.
        frequency: path of the forcing frequency (rad per time unit), e.g. ``"force.omega"``.
        y0: initial positions and velocities ``(2 n_dof,)``; None: at rest at the origin.
        grid: default sweep axes for the command line, path -> ``"MIN:MAX:N"`` or values.
        wrt: default gradient paths for the command line.
        name, description, source: labels (the source names the paper and equation).

    Changing ``dt`` with ``replace`` keeps the system's regularization width; the builders
    of :data:`TEMPLATES` tie it to the step (``template("oscillator", dt=0.005)`` halves
    both).

    Raises:
        ValueError: naming a field: not a system, ``dt <= 0``, both ``t1`` and ``cycles``, a
            ``frequency`` or ``wrt``/``grid`` path the system lacks.
    """

    system: AbstractFrictionSystem
    dt: float
    t1: float | None = None
    window: float | None = None
    cycles: int | None = None
    frequency: str | None = None
    y0: Any = None
    grid: dict = dataclasses.field(default_factory=dict)
    wrt: tuple = ()
    name: str = ""
    description: str = ""
    source: str = ""

    def __post_init__(self):
        if not isinstance(self.system, AbstractFrictionSystem):
            raise ValueError(f"system must be a jaxfriction system, got {type(self.system).__name__}")
        check_real("dt", self.dt, positive=True)
        check_tree_constraints(self.system)  # fixed values set by with_parameters are checked here
        if self.t1 is not None or self.cycles is not None or self.window is not None:
            check_times(self.system, self.t1, self.window, self.cycles, self.frequency)
        check_paths(self.system, self.grid, "grid")
        check_paths(self.system, self.wrt, "wrt")

    def replace(self, **changes) -> Template:
        """A copy with fields replaced (``dataclasses.replace``), validated again."""
        return dataclasses.replace(self, **changes)

    def with_parameters(self, values: dict) -> Template:
        """A copy whose system has the parameters ``{path: value}`` set (see
        :func:`~jaxfriction.set_parameters`)."""
        return self.replace(system=set_parameters(self.system, values))


def split_template(obj, name: str = "system") -> tuple[AbstractFrictionSystem, Template | None]:
    """``(system, template)`` of what a workflow was given: a :class:`Template` gives its
    system and itself, a bare system itself and None. The one place where a template is
    unwrapped (the sweep, the fit, the prediction, the steady state and the sensitivity all
    take either).

    Args:
        obj: a system or a :class:`Template`.
        name: the argument's name, for the error.

    Raises:
        ValueError: naming ``name`` when ``obj`` is neither.
    """
    if isinstance(obj, Template):
        return obj.system, obj
    if not isinstance(obj, AbstractFrictionSystem):
        raise ValueError(f"{name} must be a jaxfriction system or a Template, got {type(obj).__name__}")
    return obj, None


def check_times(system, t1, window, cycles, frequency) -> None:
    """Validate a run specification: ``t1`` (and ``window``), or ``cycles`` and ``frequency``.

    Raises:
        ValueError: naming the argument.
    """
    if cycles is not None:
        if t1 is not None or window is not None:
            raise ValueError("give cycles (with frequency), or t1 and window, not both")
        check_int("cycles", cycles, minimum=1)
        if frequency is None:
            raise ValueError("cycles needs frequency, the path of the forcing frequency (e.g. 'force.omega')")
        check_paths(system, [frequency], "frequency")
        check_real("frequency", get_parameter(system, frequency), positive=True)
        return
    if t1 is None:
        raise ValueError("give t1 (the run length) or cycles and frequency")
    check_real("t1", t1, positive=True, scalar=True)
    if window is not None:
        check_real("window", window, positive=True, scalar=True)
        if float(window) > float(t1):
            raise ValueError(f"window must not be longer than the run, got window={window}, t1={t1}")


def run_times(system, t1, window, cycles, frequency) -> tuple[float, float]:
    """``(t_measure, t_end)``: the measured window of a run from ``t = 0`` (default: all of it).

    With ``cycles`` the window is the last period, ``[(cycles - 1) T, (cycles - 1) T + T]``.
    """
    check_times(system, t1, window, cycles, frequency)
    if cycles is not None:
        period = 2 * math.pi / float(get_parameter(system, frequency))
        return (cycles - 1) * period, (cycles - 1) * period + period
    return (0.0 if window is None else float(t1) - float(window)), float(t1)
