"""A structure reduced to a few linear modes with many frictional contacts (issue 37)."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_int, check_real, nonnegative, numeric_array, positive
from .._forcing.drives import AbstractDrive, Harmonic
from .._laws.base import AbstractFrictionLaw
from .._laws.dynamic import AbstractDynamicLaw
from .._laws.iwan import Iwan
from .contacts import AbstractContactSystem


@eqx.filter_jit
def _stuck_stiffness(law, normal):
    """``d f / d s`` of each contact's force along its closed-form update over a slip ``s`` from
    the relaxed state, at ``s = 0``, or None for a law without that update: one compiled program,
    not the dozens of small ones its operations compile one by one (``docs/performance.md``,
    "Other timings")."""
    c = normal.size
    z0, unit = jnp.broadcast_to(law.init_state(), (c, law.n_state)), jnp.ones(c)
    if law.interval_update(z0, jnp.zeros(c), unit, normal) is None:  # traced, not run
        return None

    def force(s):
        return law.force(jnp.zeros(c), law.interval_update(z0, s, unit, normal), normal)

    return jax.jvp(force, (jnp.zeros(c),), (jnp.ones(c),))[1]


class ModalStructure(AbstractContactSystem):
    """A linear structure reduced to ``m`` mass-normalized modes, with ``c`` frictional contacts.

    ``q_k'' + 2 zeta_k omega_k q_k' + omega_k^2 q_k = b_k F(t) + sum_j Phi_jk f_j``: the modal
    coordinates ``q`` ``(m,)`` of the structure without its contacts (modal mass 1, natural
    frequencies ``omega_k``, modal damping ratios ``zeta_k``), loaded by a drive ``F(t)``
    through the modal participations ``b`` ``(m,)`` (the mode shapes at the loaded point
    times its direction), and by the contact forces ``f`` ``(c,)`` through the contact mode
    shapes ``Phi`` ``(c, m)``: contact ``j`` slips at ``Phi_j . q'`` against fixed ground.
    This is the reduced-order model of jointed structures in the frequency domain (a
    component-mode or modal reduction with the contact points kept, e.g. Krack & Gross 2019,
    "Harmonic Balance for Nonlinear Vibration Problems", Sec. 5.3; the tmdsimpy bolted
    beam), written as an :class:`~jaxfriction.AbstractContactSystem` with unit masses, the
    potential ``sum_k omega_k^2 q_k^2 / 2``, dampers ``2 zeta_k omega_k`` and the contact
    Jacobian ``Phi``: every workflow (simulation, sweeps, harmonic balance, nonlinear modes)
    serves it, and its energy balance is exact.

    Each contact carries the ``law`` with its own parameters: a dynamic joint law whose
    arrays lead with the contacts (``Iwan(stiffness (c, n_el), slip_force (c, n_el))``: one
    Jenkins element per contact with ``n_el = 1``; any number of contacts), or a static law
    with ``(c,)`` parameters (at most one contact per mode: its coupled force balance needs
    independent contact slips). :func:`jointed_bar` builds one from closed-form modes.

    Args:
        law: a scalar friction law or a dynamic law, one per contact.
        frequencies: ``omega_k > 0`` ``(m,)`` (rad/s).
        damping_ratios: ``zeta_k >= 0`` ``(m,)``.
        contact_modes: ``Phi`` ``(c, m)`` (1/sqrt(kg): slip in m per unit modal coordinate).
        force_modes: ``b`` ``(m,)`` (1/sqrt(kg)).
        normal: normal forces ``(c,)`` (N; joint laws' slip forces do not scale with them).
        force: drive ``F(t)`` (N), default ``Harmonic(1, 1)``.

    Raises:
        ValueError: shapes that do not match ``m`` and ``c`` (naming the field), non-positive
            frequencies, negative damping ratios or normal forces, non-finite values, a static
            law on more contacts than modes (naming ``law``).
    """

    law: AbstractFrictionLaw | AbstractDynamicLaw
    frequencies: Array = eqx.field(converter=numeric_array("frequencies"))
    damping_ratios: Array = eqx.field(converter=numeric_array("damping_ratios"))
    contact_modes: Array = eqx.field(converter=numeric_array("contact_modes"))
    force_modes: Array = eqx.field(converter=numeric_array("force_modes"))
    normal: Array = eqx.field(converter=numeric_array("normal"))
    force: AbstractDrive = Harmonic(1.0, 1.0)

    def __check_init__(self):
        if jnp.ndim(self.frequencies) != 1 or jnp.size(self.frequencies) < 1:
            raise ValueError(f"frequencies must be a 1-D array of the modes' frequencies, got shape "
                             f"{jnp.shape(self.frequencies)}")
        if jnp.ndim(self.normal) != 1 or jnp.size(self.normal) < 1:
            raise ValueError(f"normal must be a 1-D array with one entry per contact, got {jnp.shape(self.normal)}")
        m, c = jnp.size(self.frequencies), jnp.size(self.normal)
        for name, shape in (("damping_ratios", (m,)), ("force_modes", (m,)), ("contact_modes", (c, m))):
            if jnp.shape(getattr(self, name)) != shape:
                raise ValueError(f"{name} must have shape {shape} ({c} contacts in normal, {m} modes in "
                                 f"frequencies), got {jnp.shape(getattr(self, name))}")
        if not isinstance(self.law, AbstractDynamicLaw) and c > m:
            raise ValueError(f"law: a static law's force balance needs independent contacts (at most one per mode), "
                             f"got {c} contacts on {m} modes; give the contacts an elastic joint law (Iwan) or keep "
                             "more modes")
        if not isinstance(self.force, AbstractDrive):
            raise ValueError(f"force must be a jaxfriction drive (Harmonic, ...), got {self.force!r}")
        super().__check_init__()

    def constraints(self) -> tuple[Constraint, ...]:
        return (positive("frequencies", self.frequencies), nonnegative("damping_ratios", self.damping_ratios),
                nonnegative("normal", self.normal))

    @property
    def n_dof(self) -> int:  # type: ignore[override]
        return jnp.shape(self.frequencies)[0]

    @property  # type: ignore[misc]
    def masses(self) -> Array:  # type: ignore[override]
        return jnp.ones_like(self.frequencies)

    @property  # type: ignore[misc]
    def damping(self) -> Array:  # type: ignore[override]
        return 2.0 * self.damping_ratios * self.frequencies

    def potential_energy(self, q: Array) -> Array:
        return 0.5 * jnp.sum((self.frequencies * q) ** 2)

    def contact_jacobian(self) -> Array:
        return self.contact_modes

    def external_force(self, t: ArrayLike) -> Array:
        return self.force_modes * self.force(t)

    def surface_velocity(self, t: ArrayLike) -> None:
        return None

    def stuck_frequencies(self) -> np.ndarray:
        """Natural frequencies (rad/s) ``(m,)`` with every contact stuck: the square roots of
        the eigenvalues of ``diag(omega^2) + Phi^T diag(k_j) Phi``, ``k_j`` the contacts'
        tangential stiffness: ``-d f / d s`` of the law's force along its update over a slip
        (:meth:`~jaxfriction.AbstractDynamicLaw.interval_update`, over a unit time) from the
        relaxed state (an Iwan, Segalman or Maxwell-slip joint: the sum of its element
        stiffnesses); a static law adds none. The
        small-amplitude limit of the backbones; ``frequencies`` is the limit when every
        contact slides freely.

        Raises:
            ValueError: naming ``law``: a dynamic law without a closed-form update
                (``interval_update`` None: LuGre, rate and state).
        """
        c = jnp.size(self.normal)
        k = np.zeros(c)
        law = self.law
        if isinstance(law, AbstractDynamicLaw):
            slope = _stuck_stiffness(law, jnp.asarray(self.normal))
            if slope is None:
                raise ValueError(f"law: {type(law).__name__} has no closed-form update (interval_update), "
                                 "so no stuck stiffness")
            k = -np.asarray(slope)
        phi = np.asarray(self.contact_modes)
        stiffness = np.diag(np.asarray(self.frequencies) ** 2) + phi.T @ (k[:, None] * phi)
        return np.sqrt(np.linalg.eigvalsh(stiffness))


def bar_modes(n_modes: int, positions: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Mass-normalized axial modes of a uniform clamped-free bar of unit length, mass and
    axial stiffness ``EA``: ``omega_k = (2k - 1) pi / 2`` and ``phi_k(x) = sqrt(2) sin(omega_k
    x)`` (rad/s and 1/sqrt(kg) for ``L = 1 m``, ``rho A L = 1 kg``, ``EA = 1 N``).

    Args:
        n_modes: ``m >= 1``.
        positions: ``(p,)`` points along the bar in ``[0, 1]`` (m).

    Returns:
        ``(omega (m,), phi (p, m))``.
    """
    check_int("n_modes", n_modes, minimum=1)
    omega = (2 * np.arange(1, n_modes + 1) - 1) * math.pi / 2
    x = np.asarray(positions, dtype=float).reshape(-1, 1)
    return omega, math.sqrt(2.0) * np.sin(omega * x)


def jointed_bar(n_contacts: int = 40, n_modes: int = 4, *, law: str = "jenkins", elements: int = 4,
                stiffness: float = 2.0, slip_force: float = 0.2, lap: float = 0.5, damping_ratio: float = 0.01,
                force_amplitude: float = 0.05, omega: float = 2.0) -> ModalStructure:
    """A bar in axial vibration held by a frictional lap joint, reduced to its first modes.

    A uniform clamped-free bar (unit length, mass and axial stiffness, :func:`bar_modes`) is
    pressed against rigid ground over the lap ``[1 - lap, 1]`` at its free end, where it is
    loaded axially by ``F sin(omega t)``. The lap's interface is ``n_contacts`` equally spaced
    contact elements (the midpoints of equal patches), each a Jenkins element (a tangential
    spring in series with a Coulomb slider) or an Iwan element of ``elements`` Jenkins
    elements, so that the joint's total tangential stiffness is ``stiffness`` and its total
    slip force ``slip_force`` whatever ``n_contacts``. Under a growing load the contacts
    nearest the loaded end slip first and the slip front moves inward (microslip) until the
    whole lap slides (macroslip, the bar's own frequencies ``frequencies``): the microslip
    bar of Menq, Bielak & Griffin (J. Sound Vib. 107 (1986) 279), discretized as the
    reduced-order models of bolted joints are (Krack & Gross 2019, Sec. 5.3).

    With the defaults the stuck joint raises the first natural frequency from ``pi / 2`` to
    2.38 rad/s (:meth:`ModalStructure.stuck_frequencies`).

    Args:
        n_contacts: ``c >= 1`` contact elements.
        n_modes: ``m >= 1`` modes kept (the reduction).
        law: ``"jenkins"`` (one element per contact) or ``"iwan"`` (``elements`` per contact,
            equal stiffnesses, slip forces ``(1..elements) / elements`` times the contact's
            share, normalized to its share of ``slip_force``).
        elements: Jenkins elements per contact of the ``"iwan"`` law (>= 1).
        stiffness: the lap's total tangential stiffness (N/m, > 0).
        slip_force: the lap's total slip force (N, > 0).
        lap: the lap's length as a fraction of the bar, in ``(0, 1]``.
        damping_ratio: every mode's modal damping ratio (>= 0).
        force_amplitude: ``F`` (N).
        omega: forcing frequency (rad/s).

    Returns:
        A :class:`ModalStructure`; parameter paths ``"force.amplitude"``, ``"force.omega"``,
        ``"law.stiffness"``, ``"law.slip_force"`` (``(c, n_el)``), ``"frequencies"``,
        ``"damping_ratios"``, ``"contact_modes"``, ``"force_modes"``.

    Raises:
        ValueError: naming the argument out of range.
    """
    check_int("n_contacts", n_contacts, minimum=1)
    check_int("elements", elements, minimum=1)
    for name, value in (("stiffness", stiffness), ("slip_force", slip_force)):
        check_real(name, value, positive=True)
    check_real("lap", lap, positive=True)
    if lap > 1:
        raise ValueError(f"lap must be a fraction of the bar in (0, 1], got {lap}")
    check_real("damping_ratio", damping_ratio, nonnegative=True)
    if law not in ("jenkins", "iwan"):
        raise ValueError(f"law must be 'jenkins' or 'iwan', got {law!r}")
    per = 1 if law == "jenkins" else elements
    positions = 1.0 - lap + lap * (np.arange(n_contacts) + 0.5) / n_contacts
    frequencies, phi = bar_modes(n_modes, positions)
    _, tip = bar_modes(n_modes, np.ones(1))
    shares = np.arange(1, per + 1) / per
    slip = np.tile(shares / shares.sum() * slip_force / n_contacts, (n_contacts, 1))
    joint = Iwan(jnp.full((n_contacts, per), stiffness / (n_contacts * per)), jnp.asarray(slip))
    return ModalStructure(law=joint, frequencies=jnp.asarray(frequencies),  # type: ignore[call-arg]
                          damping_ratios=jnp.full(n_modes, float(damping_ratio)), contact_modes=jnp.asarray(phi),
                          force_modes=jnp.asarray(tip[0]), normal=jnp.ones(n_contacts),
                          force=Harmonic(force_amplitude, omega))
