"""The named templates of the source papers (:data:`TEMPLATES`) and their lookup by name
(:func:`template`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from .._checks import check_real
from .._forcing.drives import Constant, Harmonic
from .._laws import (
    Awrejcewicz,
    Coulomb,
    Dahl,
    Iwan,
    Karnopp,
    LuGre,
    Quinn,
    RateState,
    SegalmanIwan,
    StaticKineticCoulomb,
    StaticKineticQuinn,
    Threlfall,
    VelocityLimited,
)
from .._systems.chain import BurridgeKnopoffChain, TwoBlocksOnBelt
from .._systems.jointed import jointed_oscillator
from .._systems.modal import jointed_bar
from .._systems.oscillator import Oscillator, disc_on_driving_disc
from .._systems.spring_slider import SpringSlider
from .base import Template

#: Laws of the oscillator template by name, built from ``(mu, eps)``; ``eps`` is the law's
#: regularization width (Karnopp's ``eta``, Threlfall's ``v0``), ignored by Coulomb.
OSCILLATOR_LAWS = {
    "quinn": lambda mu, eps: Quinn(mu=mu, eps=eps),
    "coulomb": lambda mu, eps: Coulomb(mu=mu),
    "velocity-limited": lambda mu, eps: VelocityLimited(mu=mu, eps=eps),
    "karnopp": lambda mu, eps: Karnopp(mu_s=mu, eta=eps),
    "threlfall": lambda mu, eps: Threlfall(mu=mu, v0=eps),
    "awrejcewicz": lambda mu, eps: Awrejcewicz(mu_s=mu, delta=0.0, eps=eps),
}

#: Laws of the belt template by name, built from ``(mu_s, mu_k, eps)``.
BELT_LAWS = {
    "quinn": lambda mu_s, mu_k, eps: StaticKineticQuinn(mu_s=mu_s, mu_k=mu_k, eps=eps),
    "karnopp": lambda mu_s, mu_k, eps: Karnopp(mu_s=mu_s, mu_k=mu_k, eta=eps),
    "coulomb": lambda mu_s, mu_k, eps: StaticKineticCoulomb(mu_s=mu_s, mu_k=mu_k),
}


def _choose(table, law, what):
    if law not in table:
        raise ValueError(f"law must be one of {sorted(table)} for the {what} template, got {law!r}")
    return table[law]


def oscillator_template(dt=0.01, law="quinn") -> Template:
    """Quinn's forced friction oscillator, Quinn 2004 eq. (5) and Fig. 7 case (a).

    ``x'' + x = f + alpha sin(omega t)`` with ``mu N = 1``, ``alpha = 1.2``, ``omega = 0.5``
    (sustained sticking), nondimensional (``m = k = N = 1``), Quinn's law with ``eps = 2 dt``;
    50 forcing cycles from rest, the last measured (Quinn Sec. 3.1.2). Command-line default
    grid: ``law.mu`` 0.05..1 and ``force.amplitude`` 0.05..2 (64 x 64), ``dD/d law.mu``.

    Args:
        dt: RK4 step (> 0).
        law: a name of :data:`OSCILLATOR_LAWS`.
    """
    check_real("dt", dt, positive=True)
    system = Oscillator(law=_choose(OSCILLATOR_LAWS, law, "oscillator")(1.0, 2 * dt), force=Harmonic(1.2, 0.5))
    return Template(system, dt=dt, cycles=50, frequency="force.omega",
                    grid={"law.mu": "0.05:1.0:64", "force.amplitude": "0.05:2.0:64"},
                    wrt=("law.mu",) if law != "coulomb" else (), name="oscillator",
                    description=f"forced friction oscillator, {law} law (eps = 2 dt)",
                    source="Quinn 2004 eq. 5, Fig. 7(a)")


def belt_template(dt=0.01, law="quinn") -> Template:
    """Spring-mass on a belt (paper 004, system 2): stick up to ``mu_s N``, slip at ``mu_k N``.

    ``m x'' + k x = f(x' - v0)``, nondimensional ``m = k = N = 1``, ``mu_s = 0.6``,
    ``mu_k = 0.4``, ``v0 = 0.5``, :class:`~jaxfriction.StaticKineticQuinn` with ``eps = 2 dt``
    (continuous in the slip velocity, the one to differentiate); 60 time units from rest,
    the last 20 measured. Command-line default grid: ``surface.value`` (the belt speed)
    0.05..0.35 and ``law.mu_k`` 0.2..0.5 (16 x 16), gradients in ``law.mu_s``, ``law.mu_k``.

    Args:
        dt: RK4 step (> 0).
        law: a name of :data:`BELT_LAWS`.
    """
    check_real("dt", dt, positive=True)
    friction = _choose(BELT_LAWS, law, "belt")(0.6, 0.4, 2 * dt)
    system = Oscillator(law=friction, surface=Constant(0.5))
    return Template(system, dt=dt, t1=60.0, window=20.0,
                    grid={"surface.value": "0.05:0.35:16", "law.mu_k": "0.2:0.5:16"},
                    wrt=("law.mu_s", "law.mu_k") if law != "coulomb" else (), name="belt",
                    description=f"spring-mass on a belt, {law} law", source="paper 004, system 2")


def disc_template(dt=1e-3, law="awrejcewicz") -> Template:
    """Disc on a driving disc with the continuous Awrejcewicz law (paper 002, eq. 5).

    The paper's parameters (:func:`~jaxfriction.disc_on_driving_disc`) and step ``dt = 1e-3``;
    50 excitation periods (``Omega = 2``), the last measured. Command-line default grid:
    ``surface.value`` (``omega_dr``) 0.02..0.4 (64), ``dD/d law.mu_s``.

    Args:
        dt: RK4 step (> 0).
        law: ``"awrejcewicz"`` only.
    """
    check_real("dt", dt, positive=True)
    _choose({"awrejcewicz": None}, law, "disc")
    return Template(disc_on_driving_disc(), dt=dt, cycles=50, frequency="force.omega",
                    grid={"surface.value": "0.02:0.4:64"}, wrt=("law.mu_s",), name="disc",
                    description="disc on a driving disc, Awrejcewicz law", source="paper 002 eq. 5")


def chain_template(dt=0.01, law="quinn", n=32) -> Template:
    """The Burridge-Knopoff chain of Quinn 2004 Sec. 3.2 (Fig. 9).

    ``n = 32`` blocks, ``alpha = 0.25``, ``omega = 0.5``, Quinn's law with ``eps = 10 omega
    dt`` (as printed), four cycles from rest, the last measured. Command-line default grid:
    ``alpha`` 0.05..0.5 (16), ``dD/d alpha``.

    Args:
        dt: RK4 step (> 0; keep it below about ``1/n``).
        law: ``"quinn"``, ``"coulomb"`` or ``"velocity-limited"``.
        n: blocks (int >= 2).
    """
    check_real("dt", dt, positive=True)
    laws = {"quinn": lambda eps: Quinn(1.0, eps), "coulomb": lambda eps: Coulomb(1.0),
            "velocity-limited": lambda eps: VelocityLimited(1.0, eps)}
    system = BurridgeKnopoffChain(law=_choose(laws, law, "chain")(10 * 0.5 * dt), n=n, alpha=0.25, omega=0.5)  # type: ignore[call-arg]
    return Template(system, dt=dt, cycles=4, frequency="omega", grid={"alpha": "0.05:0.5:16"},
                    wrt=("alpha",) if law != "coulomb" else (), name="chain",
                    description=f"Burridge-Knopoff chain, n = {n}, {law} law", source="Quinn 2004 Sec. 3.2, Fig. 9")


def two_blocks_template(dt=1e-3, law="quinn") -> Template:
    """Two stacked blocks on a moving belt, coupled contacts (Quinn 2004 Sec. 3.3, Fig. 11).

    ``kappa = 2``, ``mu = (0.5, 0.25)`` (paths ``law.mu[0]``, ``law.mu[1]``), belt ``u =
    sin(0.5 t)``, Quinn's law with ``eps = 2 dt``; four belt periods from rest, the last
    measured. Command-line default grid: ``kappa`` 0.5..4 (16), ``dD/d kappa``.

    Args:
        dt: RK4 step (> 0).
        law: ``"quinn"`` or ``"coulomb"``.
    """
    check_real("dt", dt, positive=True)
    mu = jnp.array([0.5, 0.25])
    laws = {"quinn": lambda: Quinn(mu, 2 * dt), "coulomb": lambda: Coulomb(mu)}  # type: ignore[arg-type]
    system = TwoBlocksOnBelt(law=_choose(laws, law, "two-blocks")())  # type: ignore[call-arg]
    return Template(system, dt=dt, cycles=4, frequency="belt_omega", grid={"kappa": "0.5:4.0:16"},
                    wrt=("kappa",) if law != "coulomb" else (), name="two-blocks",
                    description=f"two blocks on a belt, {law} law", source="Quinn 2004 Sec. 3.3, Fig. 11")


def lugre_template(dt=None, law="lugre") -> Template:
    """A forced mass on a spring with a dynamic friction law: the LuGre identification experiment.

    ``m x'' + k x = f + F sin(omega t)`` with ``m = k = 1``, ``F = 0.8 N``, ``omega = 1.3``,
    a soft LuGre contact (``sigma0 = 200 N/m``, ``sigma1 = 5 N s/m``, ``sigma2 = 0.1 N s/m``,
    ``mu_c = 0.3``, ``mu_s = 0.5``, ``v_s = 0.1 m/s``; Canudas de Wit et al. 1995): it sticks on
    its bristles, breaks away and slides through the Stribeck drop every half period (the
    record of the LuGre fit in the fit how-to). Ten forcing cycles from rest, the last
    measured. Command-line default grid: ``force.amplitude`` 0.4..1.6 and ``law.mu_s``
    0.3..0.8 (16 x 16), ``dD/d law.sigma0``.

    Args:
        dt: RK4 step (> 0; default 1e-3 for LuGre, 5e-4 for Dahl). The bristles relax at
            ``sigma0 |v| / g(v)`` (Dahl's spring at ``sigma |v| / (mu N)``); a lane whose step
            is too long for that at its speeds, in the transient or the window, is flagged
            ``STATUS_UNSTABLE_STEP`` (LuGre at ``dt = 2e-3``, Dahl at ``1e-3``: the amplitude
            1.6 N, whose D agreed with ``dt / 10`` to 4e-7 there: the flag is conservative).
        law: ``"lugre"``, or ``"dahl"`` (``sigma = 200 N/m``, ``mu = 0.3``).
    """
    dt = (1e-3 if law == "lugre" else 5e-4) if dt is None else dt
    check_real("dt", dt, positive=True)
    laws = {"lugre": lambda: LuGre(sigma0=200.0, sigma1=5.0, sigma2=0.1, mu_c=0.3, mu_s=0.5, v_s=0.1),
            "dahl": lambda: Dahl(sigma=200.0, mu=0.3)}
    system = Oscillator(law=_choose(laws, law, "lugre")(), force=Harmonic(0.8, 1.3))
    wrt = ("law.sigma0",) if law == "lugre" else ("law.sigma",)
    return Template(system, dt=dt, cycles=10, frequency="force.omega",
                    grid={"force.amplitude": "0.4:1.6:16", "law.mu_s" if law == "lugre" else "law.mu": "0.3:0.8:16"},
                    wrt=wrt, name="lugre", description=f"forced mass on a spring, {law} friction",
                    source="Canudas de Wit et al. 1995 (LuGre); Dahl 1976")


def jointed_template(dt=None, law="segalman") -> Template:
    """A jointed oscillator: mass, spring and Segalman's four-parameter Iwan joint, forced.

    :func:`~jaxfriction.jointed_oscillator` with ``m = k = 1``, ``c = 0.01``, ``omega = 0.3``
    and the joint ``SegalmanIwan(F_S=1, K_T=3, chi=-0.5, beta=0.1)`` on 64 elements (Segalman
    2005): microslip below the joint's strength ``F_S``, macroslip above. Three forcing
    cycles, the last measured (its dissipation per cycle). Command-line default grid:
    ``force.amplitude`` 0.01..2 (32), ``dD/d law.K_T``.

    Args:
        dt: RK4 step (> 0; default 1/1000 of the forcing period).
        law: ``"segalman"``, or ``"iwan"`` (4 Jenkins elements of the same stiffness
            ``K_T / 4`` and slip forces 0.25, 0.5, 0.75, 1 N).
    """
    period = 2 * math.pi / 0.3
    dt = period / 1000 if dt is None else dt
    check_real("dt", dt, positive=True)
    laws = {"segalman": lambda: SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=64),
            "iwan": lambda: Iwan(jnp.full(4, 0.75), jnp.array([0.25, 0.5, 0.75, 1.0]))}
    system = jointed_oscillator(_choose(laws, law, "jointed")(), force_amplitude=0.1, omega=0.3, damping=0.01)
    return Template(system, dt=dt, cycles=3, frequency="force.omega", grid={"force.amplitude": "0.01:2.0:32"},
                    wrt=("law.K_T",) if law == "segalman" else (), name="jointed",
                    description=f"jointed oscillator, {law} joint", source="Segalman 2005; Iwan 1966")


def jointed_bar_template(dt=None, law="jenkins", n=40) -> Template:
    """A bar held by a frictional lap joint, reduced to four modes with ``n`` contacts.

    :func:`~jaxfriction.jointed_bar` with modal damping ratio 0.05, forced at ``omega = 2``
    (between the free bar's first frequency ``pi / 2`` and the stuck joint's 2.38 rad/s):
    microslip from the loaded end inward as the force grows, then macroslip.
    Forty forcing cycles, the last measured. Command-line default grid: ``force.amplitude``
    0.01..0.3 (32).

    Args:
        dt: RK4 step (> 0; default 1/1000 of the forcing period).
        law: ``"jenkins"`` (one Jenkins element per contact) or ``"iwan"`` (four per contact).
        n: contact elements (>= 1).
    """
    period = 2 * math.pi / 2.0
    dt = period / 1000 if dt is None else dt
    check_real("dt", dt, positive=True)
    _choose({"jenkins": None, "iwan": None}, law, "jointed-bar")
    system = jointed_bar(n, 4, law=law, damping_ratio=0.05, force_amplitude=0.1, omega=2.0)
    return Template(system, dt=dt, cycles=40, frequency="force.omega", grid={"force.amplitude": "0.01:0.3:32"},
                    name="jointed-bar", description=f"bar with a lap joint, {n} {law} contacts, 4 modes",
                    source="Menq, Bielak & Griffin 1986; Krack & Gross 2019 Sec. 5.3")


def spring_slider_template(dt=1e-2, law="aging") -> Template:
    """A spring-slider pulled at constant speed with rate-and-state friction (Rice & Ruina 1983).

    :class:`~jaxfriction.SpringSlider` with ``m = 1 kg``, ``N = 1 N``, load point at ``V = 1
    cm/s`` and :class:`~jaxfriction.RateState` (``a = 0.01``, ``b = 0.015``, ``D_c = 1 cm``,
    ``mu_0 = 0.6``, ``V_0 = 1 mm/s``), so the critical stiffness is ``k_c = 1 N/m``; the
    spring ``k = 0.8 k_c`` makes steady sliding unstable and the slider grows into
    stick-slip. 300 s from the steady state, the last 100 s measured. Command-line default
    grid: ``stiffness`` 0.5..1.5 (32), ``dD/d law.a``. Every lane starts at the steady
    sliding of ``k = 0.8``, so a lane of another stiffness starts far from its own and nearly
    stops in the transient, where RK4 does not resolve the slip-rate stiffness ``N a / (m
    |v|)`` at this step (nor at ``1e-3``): those lanes are flagged ``STATUS_UNSTABLE_STEP``
    (their window may still be right: at ``k = 1.5`` D agreed with ``dt / 10`` to 3e-6,
    at ``k = 0.5`` it was 1.6 % off); an implicit solver (``jf.Diffrax(diffrax.Kvaerno5())``)
    or the quasi-static slider (:class:`~jaxfriction.QuasiStaticSlider`) runs them.

    Args:
        dt: RK4 step (> 0).
        law: the state evolution, ``"aging"`` (Dieterich) or ``"slip"`` (Ruina).
    """
    check_real("dt", dt, positive=True)
    _choose({"aging": None, "slip": None}, law, "spring-slider")
    system = SpringSlider(law=RateState(a=0.01, b=0.015, D_c=1e-2, mu_0=0.6, V_0=1e-3, evolution=law),
                          load=Constant(1e-2), stiffness=0.8)
    # a small kick off steady sliding: stretch, velocity and the state variable psi (without
    # psi the block started at psi = 0, far from steady, and nearly stopped within 7 s)
    y0 = np.asarray(system.steady_sliding()) + np.array([0.0, 1e-4, 0.0])
    return Template(system, dt=dt, t1=300.0, window=100.0, y0=y0, grid={"stiffness": "0.5:1.5:32"},
                    wrt=("law.a",), name="spring-slider", description=f"rate-and-state spring-slider, {law} law",
                    source="Rice & Ruina 1983; Gu et al. 1984")


#: name -> template builder ``(dt=..., law=...) -> Template``.
TEMPLATES: dict[str, Callable[..., Template]] = {
    "oscillator": oscillator_template,
    "belt": belt_template,
    "disc": disc_template,
    "chain": chain_template,
    "two-blocks": two_blocks_template,
    "lugre": lugre_template,
    "jointed": jointed_template,
    "jointed-bar": jointed_bar_template,
    "spring-slider": spring_slider_template,
}


def template(name: str, **options) -> Template:
    """The named template (a key of :data:`TEMPLATES`), built with ``options`` (``dt``, ``law``).

    Raises:
        ValueError: an unknown name (the message lists the known ones) or option.
    """
    if name not in TEMPLATES:
        raise ValueError(f"system must be one of {sorted(TEMPLATES)} (or module:attribute of your own), got {name!r}")
    try:
        return TEMPLATES[name](**options)
    except TypeError as exc:
        raise ValueError(f"template {name!r}: {exc}") from None
