"""jaxfriction: differentiable simulation of dry friction and stick-slip in JAX.

Friction laws are pure functions ``law(v, f_eq, normal)`` wrapped in equinox modules;
systems compose them into a diffrax-ready ``vector_field``; :func:`simulate` integrates them
with a solver object (RK4 in ``lax.scan``, any diffrax solver, Moreau-Jean, event-driven);
observables read the resulting :class:`Trajectory`. Everything is a pytree, so ``jax.vmap``,
``jax.grad`` and ``jax.jvp`` apply directly, and a parameter is named by its leaf path in
the system (``"law.mu"``, ``"force.amplitude"``, ``"masses[3]"``): the one vocabulary of
:func:`sweep`, :func:`fit`, :func:`sensitivity` and the command line.

Every public name is loaded on first use (PEP 562): ``import jaxfriction`` itself imports
neither JAX nor NumPy, so the command line answers ``--help`` at once; the first name used
loads its module (the physics core brings JAX and equinox; the workflows, ``sweep``, ``fit``,
``sensitivity`` and the earthquake application, bring diffrax, optax, optimistix, xarray or
tqdm). The library never switches JAX to 64-bit floats itself; turn JAX's x64 flag on in
your script (tests, examples and scripts do) before comparing with published numbers.

With ``JAXFRICTION_XLA_LOOP_KERNELS=1`` in the environment, the import raises XLA's CPU option
``xla_cpu_small_while_loop_byte_threshold`` in ``XLA_FLAGS`` (before JAX starts its
backends) so that each time-stepping loop runs as one compiled kernel: much faster fits and
Jacobians on a CPU, last-bit differences in results (see ``jaxfriction._xla_flags``).
"""

import importlib
import importlib.metadata
from typing import TYPE_CHECKING

try:  # one place for the version: pyproject.toml, as installed
    __version__ = importlib.metadata.version("jaxfriction")
except importlib.metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

from ._xla_flags import enable_loop_kernels as _enable_loop_kernels

_enable_loop_kernels()  # with JAXFRICTION_XLA_LOOP_KERNELS=1: XLA's CPU loops as single kernels (see _xla_flags)

if TYPE_CHECKING:  # the same names as _EXPORTS below, visible to type checkers and the API docs
    from ._checks import Constraint, at_most, constraints_hold, nonnegative, positive, real  # noqa: F401
    from ._dynamics import (  # noqa: F401
        LyapunovResult, lyapunov_spectrum, peak_samples, stick_slip_period, stroboscopic_samples,
        system_dynamics,
    )
    from ._exact import EventDriven, MoreauJean, NaEltawil2D, WestermoUdwadia, moreau_jean_step  # noqa: F401
    from ._exact.event_driven import simulate_event_driven  # noqa: F401
    from ._exact.hybrid import AbstractHybridField, EventLog, simulate_hybrid  # noqa: F401
    from ._forcing import (  # noqa: F401
        AbstractDrive, Constant, GroundMotion, Harmonic, Step, combine_components, load_at2,
        load_ground_motion, load_two_column,
    )
    from ._integrate import (  # noqa: F401
        MAX_SAVED_BYTES, RK4, RK4_STABILITY_LIMIT, STATUS_EVENT_BUDGET, STATUS_INVALID_PARAMETER,
        STATUS_MEANINGS, STATUS_NONFINITE, STATUS_NONFINITE_GRADIENT, STATUS_NOT_PERIODIC, STATUS_OK,
        STATUS_SOLVER_FAILED, STATUS_UNSTABLE_STEP, AbstractSolver, Diffrax, FixedStepSolver, SaveAt, Trajectory, fixed_grid,
        rk4_scan, rk4_step, simulate, stick_band_rate,
    )
    from ._integrate.diffrax_solvers import ClassicRK4, dynamics_rms_norm  # noqa: F401
    from ._laws import (  # noqa: F401
        AbstractDynamicLaw, AbstractFrictionLaw, Awrejcewicz, BoucWen, Coulomb, Dahl, Iwan, Karnopp, LuGre,
        MaxwellSlip, Quinn, RateState, SegalmanIwan, StaticKineticCoulomb, StaticKineticQuinn, Stribeck,
        Threlfall, VectorCoulomb, VectorQuinn, VectorThrelfall, VelocityLimited, ViscousCoulomb, awrejcewicz,
        coulomb, drive_law, force_balance, karnopp, project_to_disc, quinn, safe_norm, smoothstep,
        static_kinetic_coulomb, static_kinetic_quinn, stribeck, stribeck_coefficient, tangential_projection,
        threlfall, vector_coulomb, vector_quinn, vector_threlfall, velocity_limited, viscous_coulomb,
    )
    from ._observables import (  # noqa: F401
        STICK_TOL, WINDOW_OBSERVABLES, chatter_count, dissipation_per_cycle, energy_balance_residual,
        final_position, friction_dissipation_at, peak_slip, relative_energy_residual, rest_position,
        rk4_stage_forces, stick_fraction, stick_intervals, stick_mask, window_dissipation,
        window_energy_residual,
    )
    from ._paths import get_parameter, parameter_paths, scalar_parameter_paths, set_parameters  # noqa: F401
    from ._reference import belt_limit_cycle, den_hartog_response, unforced_rest_position  # noqa: F401
    from ._systems import (  # noqa: F401
        AbstractContactSystem, AbstractFrictionSystem, AdaptiveSolve, BlockOnShakingFloor, BurridgeKnopoffChain,
        GriffinSpringBlock, LeineSwitchDisc, Oscillator, PrescribedSlip, Rates, SpringSlider, TwoBlocksOnBelt,
        coupled_force_balance, disc_on_driving_disc, jointed_oscillator, ModalStructure, bar_modes, jointed_bar,
    )
    from ._systems.quasi_static import QuasiStaticSlider  # noqa: F401
    from ._laws.rate_state import TwoStateRateState  # noqa: F401
    from ._laws.asymmetric import AsymmetricFriction, asymmetric_friction  # noqa: F401
    from ._laws.load_dependent import LoadDependent, smooth_abs  # noqa: F401
    from ._laws.passivity import PassivityReport, lugre_passivity_margin, passivity, passivity_margin  # noqa: F401
    from ._forcing.drives import Steps  # noqa: F401
    from ._forcing.sampled import DriveSum, Sampled, with_inputs  # noqa: F401
    from ._templates import TEMPLATES, Template, template  # noqa: F401
    from ._workflows.gradient import AbstractGradientMode, AutoMode, ForwardMode, ReverseMode  # noqa: F401
    from ._lanes.compiled import CompiledLoopKernel  # noqa: F401
    from ._lanes.fused import FusedKernel  # noqa: F401
    from ._lanes.kernels import AbstractKernel, AutoKernel  # noqa: F401
    from ._lanes.vmap import VmapKernel  # noqa: F401
    from ._workflows.sweep.sweep import SweepPlan, plan_sweep, sensitivity_map, sweep  # noqa: F401
    from ._workflows.fit.fit import fit  # noqa: F401
    from ._workflows.fit.result import FitResult, FitWarning  # noqa: F401
    from ._workflows.fit.derived import DerivedQuantity  # noqa: F401
    from ._workflows.fit.search import GlobalSearch  # noqa: F401
    from ._workflows.fit.segments import auto_segments  # noqa: F401
    from ._workflows.fit.compare import ModelComparison, compare_models  # noqa: F401
    from ._workflows.fit.validation import ValidationReport, validate  # noqa: F401
    from ._workflows.fit.measurement import Measurement, load_measurement  # noqa: F401
    from ._workflows.fit.preprocess import detrend, load_point_slip, remove_offset, resample_record  # noqa: F401
    from ._workflows.fit.preprocessing_check import PreprocessingSensitivity, preprocessing_sensitivity  # noqa: F401
    from ._workflows.fit.predict import predict  # noqa: F401
    from ._workflows.fit.posterior import sample_posterior  # noqa: F401
    from ._workflows.sensitivity import finite_difference_gradient, sensitivity  # noqa: F401
    from ._workflows.periodic.shooting import PeriodicOrbit, periodic_orbit  # noqa: F401
    from ._workflows.periodic.sensitivity import orbit_sensitivity  # noqa: F401
    from ._workflows.periodic.continuation import continue_orbits  # noqa: F401
    from ._workflows.periodic.plot import plot_branch  # noqa: F401
    from ._workflows.periodic.measure import SteadyState  # noqa: F401
    from ._workflows.periodic.basins import ATTRACTORS, attractor, basin_stability  # noqa: F401
    from ._workflows.harmonic.balance import HarmonicBalance, harmonic_balance, solve_balance  # noqa: F401
    from ._workflows.harmonic.batch import harmonic_balance_batch  # noqa: F401
    from ._workflows.harmonic.continuation import continue_balance  # noqa: F401
    from ._workflows.harmonic.modes import nonlinear_mode, nonlinear_mode_batch, solve_mode  # noqa: F401
    from ._workflows.harmonic.backbone_fit import BackboneFit, fit_backbone  # noqa: F401
    from ._applications.quake import default_eps, find_record, fragility_sweep, quake_response  # noqa: F401
    from ._applications.emps import (  # noqa: F401
        EMPSRecord, emps_controller_force, emps_errors, emps_model, load_emps,
    )

#: The public names by the module that defines (or gathers) them, each loaded on first use.
_EXPORTS = {
    "._checks": ("Constraint", "at_most", "constraints_hold", "nonnegative", "positive", "real"),
    "._dynamics": (
        "LyapunovResult", "lyapunov_spectrum", "peak_samples", "stick_slip_period", "stroboscopic_samples",
        "system_dynamics",
    ),
    "._exact": ("EventDriven", "MoreauJean", "NaEltawil2D", "WestermoUdwadia", "moreau_jean_step"),
    "._exact.event_driven": ("simulate_event_driven",),
    "._exact.hybrid": ("AbstractHybridField", "EventLog", "simulate_hybrid"),
    "._forcing": (
        "AbstractDrive", "Constant", "GroundMotion", "Harmonic", "Step", "combine_components", "load_at2",
        "load_ground_motion", "load_two_column",
    ),
    "._integrate": (
        "MAX_SAVED_BYTES", "RK4", "RK4_STABILITY_LIMIT", "STATUS_EVENT_BUDGET", "STATUS_INVALID_PARAMETER",
        "STATUS_MEANINGS", "STATUS_NONFINITE", "STATUS_NONFINITE_GRADIENT", "STATUS_NOT_PERIODIC", "STATUS_OK",
        "STATUS_SOLVER_FAILED", "STATUS_UNSTABLE_STEP", "AbstractSolver", "Diffrax", "FixedStepSolver", "SaveAt",
        "Trajectory", "fixed_grid", "rk4_scan", "rk4_step", "simulate", "stick_band_rate",
    ),
    "._integrate.diffrax_solvers": ("ClassicRK4", "dynamics_rms_norm"),
    "._laws": (
        "AbstractDynamicLaw", "AbstractFrictionLaw", "Awrejcewicz", "BoucWen", "Coulomb", "Dahl", "Iwan",
        "Karnopp", "LuGre", "MaxwellSlip", "Quinn", "RateState", "SegalmanIwan", "StaticKineticCoulomb",
        "StaticKineticQuinn", "Stribeck", "Threlfall", "VectorCoulomb", "VectorQuinn", "VectorThrelfall",
        "VelocityLimited", "ViscousCoulomb", "awrejcewicz", "coulomb", "drive_law", "force_balance",
        "karnopp", "project_to_disc", "quinn", "safe_norm", "smoothstep", "static_kinetic_coulomb",
        "static_kinetic_quinn", "stribeck", "stribeck_coefficient", "tangential_projection", "threlfall",
        "vector_coulomb", "vector_quinn", "vector_threlfall", "velocity_limited", "viscous_coulomb",
    ),
    "._observables": (
        "STICK_TOL", "WINDOW_OBSERVABLES", "chatter_count", "dissipation_per_cycle",
        "energy_balance_residual", "final_position", "friction_dissipation_at", "peak_slip",
        "relative_energy_residual", "rest_position", "rk4_stage_forces", "stick_fraction", "stick_intervals",
        "stick_mask", "window_dissipation", "window_energy_residual",
    ),
    "._paths": ("get_parameter", "parameter_paths", "scalar_parameter_paths", "set_parameters"),
    "._reference": ("belt_limit_cycle", "den_hartog_response", "unforced_rest_position"),
    "._systems": (
        "AbstractContactSystem", "AbstractFrictionSystem", "AdaptiveSolve", "BlockOnShakingFloor", "BurridgeKnopoffChain",
        "GriffinSpringBlock", "LeineSwitchDisc", "Oscillator", "PrescribedSlip", "Rates", "SpringSlider",
        "TwoBlocksOnBelt",
        "coupled_force_balance", "disc_on_driving_disc", "jointed_oscillator", "ModalStructure", "bar_modes",
        "jointed_bar",
    ),
    "._systems.quasi_static": ("QuasiStaticSlider",),
    "._forcing.drives": ("Steps",),
    "._forcing.sampled": ("DriveSum", "Sampled", "with_inputs"),
    "._laws.rate_state": ("TwoStateRateState",),
    "._laws.asymmetric": ("AsymmetricFriction", "asymmetric_friction"),
    "._laws.load_dependent": ("LoadDependent", "smooth_abs"),
    "._laws.passivity": ("PassivityReport", "lugre_passivity_margin", "passivity", "passivity_margin"),
    "._templates": ("TEMPLATES", "Template", "template"),
    "._workflows.gradient": ("AbstractGradientMode", "AutoMode", "ForwardMode", "ReverseMode"),
    "._lanes.kernels": ("AbstractKernel", "AutoKernel"),
    "._lanes.vmap": ("VmapKernel",),
    "._lanes.fused": ("FusedKernel",),
    "._lanes.compiled": ("CompiledLoopKernel",),
    "._workflows.sweep.sweep": ("SweepPlan", "plan_sweep", "sensitivity_map", "sweep"),
    "._workflows.fit.fit": ("fit",),
    "._workflows.fit.result": ("FitResult", "FitWarning"),
    "._workflows.fit.derived": ("DerivedQuantity",),
    "._workflows.fit.search": ("GlobalSearch",),
    "._workflows.fit.segments": ("auto_segments",),
    "._workflows.fit.compare": ("ModelComparison", "compare_models"),
    "._workflows.fit.validation": ("ValidationReport", "validate"),
    "._workflows.fit.measurement": ("Measurement", "load_measurement"),
    "._workflows.fit.preprocess": ("detrend", "load_point_slip", "remove_offset", "resample_record"),
    "._workflows.fit.preprocessing_check": ("PreprocessingSensitivity", "preprocessing_sensitivity"),
    "._workflows.fit.predict": ("predict",),
    "._workflows.fit.posterior": ("sample_posterior",),
    "._workflows.sensitivity": ("finite_difference_gradient", "sensitivity"),
    "._workflows.periodic.shooting": ("PeriodicOrbit", "periodic_orbit"),
    "._workflows.periodic.sensitivity": ("orbit_sensitivity",),
    "._workflows.periodic.continuation": ("continue_orbits",),
    "._workflows.periodic.plot": ("plot_branch",),
    "._workflows.periodic.measure": ("SteadyState",),
    "._workflows.periodic.basins": ("ATTRACTORS", "attractor", "basin_stability"),
    "._workflows.harmonic.balance": ("HarmonicBalance", "harmonic_balance", "solve_balance"),
    "._workflows.harmonic.batch": ("harmonic_balance_batch",),
    "._workflows.harmonic.continuation": ("continue_balance",),
    "._workflows.harmonic.modes": ("nonlinear_mode", "nonlinear_mode_batch", "solve_mode"),
    "._workflows.harmonic.backbone_fit": ("BackboneFit", "fit_backbone"),
    "._applications.quake": ("default_eps", "find_record", "fragility_sweep", "quake_response"),
    "._applications.emps": ("EMPSRecord", "emps_controller_force", "emps_errors", "emps_model", "load_emps"),
}

#: Public name -> the module it is loaded from.
_LAZY = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'jaxfriction' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = list(_LAZY)
