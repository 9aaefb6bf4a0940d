"""jaxfriction: differentiable simulation of dry friction and stick-slip in JAX.

Friction laws are pure functions ``law(v, f_eq, normal)`` wrapped in equinox modules;
systems compose them into a diffrax-ready ``vector_field``; :func:`simulate` integrates them
with a solver object (RK4 in ``lax.scan``, any diffrax solver, Moreau-Jean, event-driven);
observables read the resulting :class:`Trajectory`. Everything is a pytree, so ``jax.vmap``,
``jax.grad`` and ``jax.jvp`` apply directly, and a parameter is named by its leaf path in
the system (``"law.mu"``, ``"force.amplitude"``, ``"masses[3]"``): the one vocabulary of
:func:`sweep`, :func:`fit`, :func:`sensitivity` and the command line.

The physics core is imported here; the workflows (``sweep``, ``fit``, ``sensitivity``, the
earthquake application) and everything that needs diffrax, optax, optimistix, xarray or
tqdm are loaded on first use. The library never switches JAX to 64-bit floats itself; turn
JAX's x64 flag on in your script (tests, examples and scripts do) before comparing with
published numbers.
"""

import importlib
from typing import TYPE_CHECKING

from ._checks import Constraint, at_most, constraints_hold, nonnegative, positive, real
from ._dynamics import (
    LyapunovResult,
    lyapunov_spectrum,
    peak_samples,
    stick_slip_period,
    stroboscopic_samples,
    system_dynamics,
)
from ._exact import (
    EventDriven,
    MoreauJean,
    NaEltawil2D,
    WestermoUdwadia,
    moreau_jean_step,
)
from ._forcing import (
    AbstractDrive,
    Constant,
    GroundMotion,
    Harmonic,
    Step,
    combine_components,
    load_at2,
    load_ground_motion,
    load_two_column,
)
from ._integrate import (
    MAX_SAVED_BYTES,
    RK4,
    RK4_STABILITY_LIMIT,
    STATUS_EVENT_BUDGET,
    STATUS_INVALID_PARAMETER,
    STATUS_MEANINGS,
    STATUS_NONFINITE,
    STATUS_NONFINITE_GRADIENT,
    STATUS_OK,
    STATUS_SOLVER_FAILED,
    STATUS_UNSTABLE_STEP,
    AbstractSolver,
    Diffrax,
    SaveAt,
    Trajectory,
    fixed_grid,
    rk4_scan,
    rk4_step,
    simulate,
    stick_band_rate,
)
from ._laws import *  # noqa: F403
from ._laws import __all__ as _laws_all
from ._observables import *  # noqa: F403
from ._observables import __all__ as _observables_all
from ._paths import (
    get_parameter,
    parameter_paths,
    scalar_parameter_paths,
    set_parameters,
)
from ._reference import belt_limit_cycle, den_hartog_response, unforced_rest_position
from ._systems import (
    AbstractContactSystem,
    AbstractFrictionSystem,
    BlockOnShakingFloor,
    BurridgeKnopoffChain,
    GriffinSpringBlock,
    LeineSwitchDisc,
    Oscillator,
    Rates,
    SpringSlider,
    TwoBlocksOnBelt,
    coupled_force_balance,
    disc_on_driving_disc,
    jointed_oscillator,
)
from ._templates import TEMPLATES, Template, template
from ._workflows.gradient import (
    AbstractGradientMode,
    AutoMode,
    ForwardMode,
    ReverseMode,
)
from ._workflows.sweep.kernels import (
    AbstractKernel,
    AutoKernel,
    FusedKernel,
    VmapKernel,
)

__version__ = "0.2.0"

if TYPE_CHECKING:  # the lazy names below, visible to type checkers and the API docs
    from ._applications.quake import (  # noqa: F401
        default_eps,
        find_record,
        fragility_sweep,
        quake_response,
    )
    from ._exact.event_driven import EventLog, simulate_event_driven  # noqa: F401
    from ._integrate.diffrax_solvers import ClassicRK4, dynamics_rms_norm  # noqa: F401
    from ._workflows.fit.compare import ModelComparison, compare_models  # noqa: F401
    from ._workflows.fit.fit import fit  # noqa: F401
    from ._workflows.fit.search import GlobalSearch  # noqa: F401
    from ._workflows.fit.segments import auto_segments  # noqa: F401
    from ._workflows.fit.measurement import Measurement, load_measurement  # noqa: F401
    from ._workflows.fit.posterior import sample_posterior  # noqa: F401
    from ._workflows.fit.result import FitResult, FitWarning  # noqa: F401
    from ._workflows.sensitivity import finite_difference_gradient, sensitivity  # noqa: F401
    from ._workflows.sweep.sweep import sensitivity_map, sweep  # noqa: F401

#: Public names defined in modules that load heavy dependencies: name -> module.
_LAZY = {
    "sweep": "._workflows.sweep.sweep",
    "sensitivity_map": "._workflows.sweep.sweep",
    "fit": "._workflows.fit.fit",
    "FitResult": "._workflows.fit.result",
    "FitWarning": "._workflows.fit.result",
    "GlobalSearch": "._workflows.fit.search",
    "auto_segments": "._workflows.fit.segments",
    "compare_models": "._workflows.fit.compare",
    "ModelComparison": "._workflows.fit.compare",
    "Measurement": "._workflows.fit.measurement",
    "load_measurement": "._workflows.fit.measurement",
    "sample_posterior": "._workflows.fit.posterior",
    "sensitivity": "._workflows.sensitivity",
    "finite_difference_gradient": "._workflows.sensitivity",
    "quake_response": "._applications.quake",
    "fragility_sweep": "._applications.quake",
    "find_record": "._applications.quake",
    "default_eps": "._applications.quake",
    "ClassicRK4": "._integrate.diffrax_solvers",
    "dynamics_rms_norm": "._integrate.diffrax_solvers",
    "simulate_event_driven": "._exact.event_driven",
    "EventLog": "._exact.event_driven",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'jaxfriction' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    *_laws_all,
    *_observables_all,
    *_LAZY,
    "MAX_SAVED_BYTES",
    "RK4",
    "RK4_STABILITY_LIMIT",
    "STATUS_EVENT_BUDGET",
    "STATUS_INVALID_PARAMETER",
    "STATUS_MEANINGS",
    "STATUS_NONFINITE",
    "STATUS_NONFINITE_GRADIENT",
    "STATUS_OK",
    "STATUS_SOLVER_FAILED",
    "STATUS_UNSTABLE_STEP",
    "TEMPLATES",
    "AbstractContactSystem",
    "AbstractDrive",
    "AbstractFrictionSystem",
    "AbstractGradientMode",
    "AbstractKernel",
    "AbstractSolver",
    "AutoKernel",
    "AutoMode",
    "BlockOnShakingFloor",
    "BurridgeKnopoffChain",
    "Constant",
    "Constraint",
    "Diffrax",
    "EventDriven",
    "ForwardMode",
    "FusedKernel",
    "GriffinSpringBlock",
    "GroundMotion",
    "Harmonic",
    "LeineSwitchDisc",
    "LyapunovResult",
    "MoreauJean",
    "NaEltawil2D",
    "Oscillator",
    "Rates",
    "ReverseMode",
    "SaveAt",
    "SpringSlider",
    "Step",
    "Template",
    "Trajectory",
    "TwoBlocksOnBelt",
    "VmapKernel",
    "WestermoUdwadia",
    "at_most",
    "belt_limit_cycle",
    "constraints_hold",
    "combine_components",
    "coupled_force_balance",
    "den_hartog_response",
    "disc_on_driving_disc",
    "fixed_grid",
    "get_parameter",
    "jointed_oscillator",
    "load_at2",
    "load_ground_motion",
    "load_two_column",
    "lyapunov_spectrum",
    "moreau_jean_step",
    "nonnegative",
    "parameter_paths",
    "peak_samples",
    "positive",
    "real",
    "scalar_parameter_paths",
    "rk4_scan",
    "rk4_step",
    "set_parameters",
    "simulate",
    "stick_band_rate",
    "stick_slip_period",
    "stroboscopic_samples",
    "system_dynamics",
    "template",
    "unforced_rest_position",
]
