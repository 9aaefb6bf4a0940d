"""jaxfriction: differentiable simulation of dry friction and stick-slip in JAX.

Friction laws (:mod:`jaxfriction.laws`) are pure functions ``law(v, f_eq, normal)`` wrapped
in equinox modules; systems (:mod:`jaxfriction.systems`) compose them into a diffrax-ready
``vector_field``; :func:`simulate` integrates them (RK4 in ``lax.scan`` or any diffrax
solver); observables read the resulting :class:`Trajectory`. Everything is a pytree, so
``jax.vmap``, ``jax.grad`` and ``jax.jvp`` apply directly.

The library never switches JAX to 64-bit floats itself; turn JAX's x64 flag on in your
script (tests, examples and scripts do) before comparing with published numbers.
"""

from ._exact import STATUS_EVENT_BUDGET, EventLog, moreau_jean_step, simulate_event_driven, simulate_moreau_jean
from ._forcing import AbstractDrive, Constant, GroundMotion, Harmonic, load_at2, load_ground_motion, load_two_column
from ._integrate import (
    STATUS_NONFINITE,
    STATUS_OK,
    STATUS_SOLVER_FAILED,
    ClassicRK4,
    Trajectory,
    fixed_grid,
    rk4_scan,
    rk4_step,
    simulate,
)
from ._laws import *  # noqa: F403
from ._laws import __all__ as _laws_all
from ._observables import *  # noqa: F403
from ._observables import __all__ as _observables_all
from ._reference import belt_limit_cycle, den_hartog_response, unforced_rest_position
from ._dynamics import LyapunovResult, lyapunov_spectrum, peak_samples, stick_slip_period, stroboscopic_samples, system_dynamics
from ._systems import (
    AbstractContactSystem,
    BlockOnShakingFloor,
    GriffinSpringBlock,
    DiscOnDrivingDisc,
    LeineSwitchDisc,
    BurridgeKnopoffChain,
    TwoBlocksOnBelt,
    coupled_force_balance,
    AbstractFrictionSystem,
    AbstractOscillator,
    ForcedOscillator,
    MassUnderForce,
    SpringMassOnBelt,
)
from ._workflows.fit import FIT_SYSTEMS, FitResult, fit
from ._workflows.measurement import Measurement, load_measurement

__version__ = "0.1.0"

__all__ = [
    *_laws_all,
    *_observables_all,
    "STATUS_EVENT_BUDGET",
    "STATUS_NONFINITE",
    "STATUS_OK",
    "STATUS_SOLVER_FAILED",
    "AbstractContactSystem",
    "BlockOnShakingFloor",
    "GriffinSpringBlock",
    "GroundMotion",
    "AbstractDrive",
    "BurridgeKnopoffChain",
    "TwoBlocksOnBelt",
    "coupled_force_balance",
    "AbstractFrictionSystem",
    "AbstractOscillator",
    "ClassicRK4",
    "DiscOnDrivingDisc",
    "LeineSwitchDisc",
    "LyapunovResult",
    "EventLog",
    "Constant",
    "ForcedOscillator",
    "Harmonic",
    "MassUnderForce",
    "SpringMassOnBelt",
    "Trajectory",
    "belt_limit_cycle",
    "den_hartog_response",
    "fixed_grid",
    "load_at2",
    "load_ground_motion",
    "load_two_column",
    "lyapunov_spectrum",
    "peak_samples",
    "stick_slip_period",
    "stroboscopic_samples",
    "system_dynamics",
    "moreau_jean_step",
    "rk4_scan",
    "rk4_step",
    "simulate",
    "simulate_event_driven",
    "simulate_moreau_jean",
    "unforced_rest_position",
    "FIT_SYSTEMS",
    "FitResult",
    "Measurement",
    "fit",
    "load_measurement",
]
