"""Named systems for the workflows and the CLI: builders from keyword parameters.

Each builder maps plain keyword parameters (all differentiable except ``law``) to a system
module, so sweeps, fits and sensitivity maps can name what they vary. ``SYSTEMS[name]`` is a
:class:`SystemSpec`: its builder, the RK4 step the source paper uses, and the parameter
whose value sets the forcing period (for ``cycles``), if the system is periodically forced.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Callable

from .._laws import (
    Awrejcewicz,
    Coulomb,
    Karnopp,
    Quinn,
    StaticKineticCoulomb,
    StaticKineticQuinn,
    Threlfall,
    VelocityLimited,
)
from .._systems.disc import DiscOnDrivingDisc
from .._systems.oscillators import ForcedOscillator, SpringMassOnBelt

#: Laws selectable by name; ``eps`` is the law's regularization width (Karnopp's ``eta``,
#: Threlfall's ``v0``), ignored by Coulomb.
LAWS = {
    "quinn": lambda mu, eps: Quinn(mu=mu, eps=eps),
    "coulomb": lambda mu, eps: Coulomb(mu=mu),
    "velocity-limited": lambda mu, eps: VelocityLimited(mu=mu, eps=eps),
    "karnopp": lambda mu, eps: Karnopp(mu_s=mu, eta=eps),
    "threlfall": lambda mu, eps: Threlfall(mu=mu, v0=eps),
    "awrejcewicz": lambda mu, eps: Awrejcewicz(mu_s=mu, delta=0.0, eps=eps),
}


def make_law(name: str, mu, eps):
    """Build the law called ``name`` (a key of :data:`LAWS`) with coefficient ``mu`` and width ``eps``.

    Raises: ValueError for an unknown name (the message lists the known ones).
    """
    if name not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)}, got {name!r}")
    return LAWS[name](mu, eps)


#: Laws of the belt, built from ``(mu_s, mu_k, eps)``.
BELT_LAWS = {
    "quinn": lambda mu_s, mu_k, eps: StaticKineticQuinn(mu_s=mu_s, mu_k=mu_k, eps=eps),
    "karnopp": lambda mu_s, mu_k, eps: Karnopp(mu_s=mu_s, mu_k=mu_k, eta=eps),
    "coulomb": lambda mu_s, mu_k, eps: StaticKineticCoulomb(mu_s=mu_s, mu_k=mu_k),
}


def _choose(table, law):
    if law not in table:
        raise ValueError(f"law must be one of {sorted(table)}, got {law!r}")
    return table[law]


def oscillator_system(muN=1.0, alpha=1.2, omega=0.5, k=1.0, m=1.0, eps=0.02, c=0.0, law="quinn"):
    """Quinn's forced friction oscillator (Quinn 2004 eq. 5), Quinn's law (eq. 4) by default.

    ``m x'' + c x' + k x = f + alpha sin(omega t)``, ``|f| <= mu N``. Defaults: Quinn 2004
    Fig. 7 case (a), sustained sticking: ``mu N = 1``, ``alpha = 1.2``, ``omega = 0.5``,
    ``m = k = 1``, ``eps = 0.02`` (``2 dt``, ``dt = 0.01``), all nondimensional (Quinn's
    units: time in 1/natural frequency). ``law``: a name of :data:`LAWS` built with
    ``(muN, eps)``.

    Returns: a :class:`~jaxfriction.ForcedOscillator` (``normal = 1``: the law's ``mu`` is mu N).
    Raises: ValueError for an unknown law or invalid values (named).
    """
    return ForcedOscillator(law=make_law(law, muN, eps), alpha=alpha, omega=omega, mass=m, stiffness=k, damping=c,
                            normal=1.0)


def belt_system(mu_s=0.6, mu_k=0.4, v0=0.5, k=1.0, m=1.0, eps=0.02, c=0.0, normal=1.0, law="quinn"):
    """Spring-mass on a belt (paper 004, system 2): stick up to ``mu_s N``, slip at ``mu_k N``.

    ``m x'' + c x' + k x = f(x' - v0)``. Nondimensional defaults (m = k = N = 1):
    ``mu_s = 0.6``, ``mu_k = 0.4``, ``v0 = 0.5``, ``eps = 0.02`` (``2 dt``), ``c = 0``.
    ``law``: ``"quinn"`` (:class:`~jaxfriction.StaticKineticQuinn`, continuous, the one to
    differentiate), ``"karnopp"`` (band ``eta = eps``) or ``"coulomb"`` (static/kinetic).

    Returns: a :class:`~jaxfriction.SpringMassOnBelt`.
    Raises: ValueError for an unknown law or invalid values (named).
    """
    friction = _choose(BELT_LAWS, law)(mu_s, mu_k, eps)
    return SpringMassOnBelt(law=friction, belt_velocity=v0, mass=m, stiffness=k, damping=c, normal=normal)


def disc_system(F_s=20.0, delta=3.0, omega_dr=0.3, M0=0.5, Omega=2.0, I=2.0, k=10.0, r=0.1, eps=1e-3,  # noqa: E741
                law="awrejcewicz"):
    """Disc on a driving disc, Awrejcewicz, Grzelczyk and Pyryev 2007 (paper 002, eq. 5).

    ``I phi'' + k phi = r F_fr + M0 cos(Omega t)`` with the continuous Awrejcewicz law
    (paper 002 eqs. 1-4): static level ``F_s`` (N), velocity weakening ``delta`` (s/rad),
    band ``eps`` (rad/s). Defaults are the paper's: ``F_s = 20``, ``delta = 3``,
    ``omega_dr = 0.3``, ``M0 = 0.5``, ``Omega = 2``, ``I = 2``, ``k = 10``, ``r = 0.1``,
    ``eps = 1e-3``, step ``dt = 1e-3``. ``law``: ``"awrejcewicz"`` only.

    Returns: a :class:`~jaxfriction.DiscOnDrivingDisc`.
    Raises: ValueError for another law or invalid values (named).
    """
    _choose({"awrejcewicz": None}, law)
    return DiscOnDrivingDisc(law=Awrejcewicz(mu_s=F_s, delta=delta, eps=eps), omega_dr=omega_dr, M0=M0, Omega=Omega,
                             inertia=I, stiffness=k, radius=r)


def builder_defaults(build):
    """Keyword parameters of a builder with their defaults (``inspect.Parameter.empty`` if none)."""
    return {n: p.default for n, p in inspect.signature(build).parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


@dataclass(frozen=True)
class SystemSpec:
    """A named system: ``build(**params)``, the paper's RK4 step, the forcing-frequency parameter."""

    build: Callable
    dt: float
    frequency: str | None = None

    @property
    def defaults(self) -> dict:
        """The builder's keyword parameters with their defaults."""
        return builder_defaults(self.build)

    @property
    def parameters(self) -> list:
        """Numeric (sweepable, differentiable) parameter names."""
        return [n for n in self.defaults if n != "law"]

    def period(self, params) -> float | None:
        """Forcing period ``2 pi / frequency`` for concrete ``params`` (None if unforced)."""
        if self.frequency is None:
            return None
        return 2 * math.pi / float({**self.defaults, **params}[self.frequency])


#: name -> :class:`SystemSpec`.
SYSTEMS = {
    "oscillator": SystemSpec(oscillator_system, dt=0.01, frequency="omega"),
    "belt": SystemSpec(belt_system, dt=0.01),
    "disc": SystemSpec(disc_system, dt=1e-3, frequency="Omega"),
}


def system_spec(name) -> SystemSpec:
    """The :class:`SystemSpec` called ``name``.

    Raises: ValueError for an unknown name (the message lists the known ones).
    """
    if name not in SYSTEMS:
        raise ValueError(f"system must be one of {sorted(SYSTEMS)}, got {name!r}")
    return SYSTEMS[name]


def check_parameters(spec_name, names, what="parameter"):
    """Raise ValueError naming any of ``names`` that the system ``spec_name`` does not have.

    Args: ``spec_name`` a name of :data:`SYSTEMS`; ``names`` parameter names; ``what`` how
        the message calls them (e.g. ``"swept parameter"``).
    """
    known = system_spec(spec_name).defaults
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown} for system {spec_name!r}; it has {sorted(known)}")
