"""Scalar friction laws: pure ``jnp.where`` functions and equinox modules.

Every law has the call shape ``force = law(v, f_eq, normal)`` (see :mod:`.base`).
"""

from .asymmetric import AsymmetricFriction, asymmetric_friction
from .awrejcewicz import Awrejcewicz, awrejcewicz, smoothstep
from .base import AbstractFrictionLaw, force_balance
from .coulomb import (
    Coulomb,
    StaticKineticCoulomb,
    ViscousCoulomb,
    coulomb,
    static_kinetic_coulomb,
    viscous_coulomb,
)
from .karnopp import Karnopp, karnopp
from .load_dependent import LoadDependent, smooth_abs
from .quinn import Quinn, StaticKineticQuinn, quinn, static_kinetic_quinn
from .stribeck import Stribeck, stribeck, stribeck_coefficient
from .threlfall import Threlfall, threlfall
from .velocity_limited import VelocityLimited, velocity_limited

__all__ = [
    "AbstractFrictionLaw",
    "AsymmetricFriction",
    "Awrejcewicz",
    "Coulomb",
    "Karnopp",
    "LoadDependent",
    "Quinn",
    "StaticKineticCoulomb",
    "StaticKineticQuinn",
    "Stribeck",
    "Threlfall",
    "VelocityLimited",
    "ViscousCoulomb",
    "asymmetric_friction",
    "awrejcewicz",
    "coulomb",
    "force_balance",
    "karnopp",
    "quinn",
    "smooth_abs",
    "smoothstep",
    "static_kinetic_coulomb",
    "static_kinetic_quinn",
    "stribeck",
    "stribeck_coefficient",
    "threlfall",
    "velocity_limited",
    "viscous_coulomb",
]

from .vector import (  # noqa: E402
    VectorCoulomb,
    VectorQuinn,
    VectorThrelfall,
    project_to_disc,
    safe_norm,
    tangential_projection,
    vector_coulomb,
    vector_quinn,
    vector_threlfall,
)

__all__ += [
    "VectorCoulomb",
    "VectorQuinn",
    "VectorThrelfall",
    "project_to_disc",
    "safe_norm",
    "tangential_projection",
    "vector_coulomb",
    "vector_quinn",
    "vector_threlfall",
]

from .bouc_wen import BoucWen  # noqa: E402
from .dahl import Dahl  # noqa: E402
from .dynamic import AbstractDynamicLaw, drive_law  # noqa: E402
from .iwan import Iwan, SegalmanIwan  # noqa: E402
from .lugre import LuGre  # noqa: E402
from .maxwell_slip import MaxwellSlip  # noqa: E402
from .passivity import PassivityReport, lugre_passivity_margin, passivity, passivity_margin  # noqa: E402
from .rate_state import RateState, TwoStateRateState  # noqa: E402

__all__ += [
    "AbstractDynamicLaw",
    "BoucWen",
    "Dahl",
    "Iwan",
    "LuGre",
    "MaxwellSlip",
    "PassivityReport",
    "RateState",
    "SegalmanIwan",
    "TwoStateRateState",
    "drive_law",
    "lugre_passivity_margin",
    "passivity",
    "passivity_margin",
]
