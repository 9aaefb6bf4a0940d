"""The jointed oscillator: a mass on a spring with an Iwan joint in parallel (issue 13)."""

from __future__ import annotations

from .._forcing.drives import Harmonic
from .._laws.dynamic import AbstractDynamicLaw
from .._laws.iwan import SegalmanIwan
from .oscillator import Oscillator


def jointed_oscillator(law: AbstractDynamicLaw | None = None, *, force_amplitude: float = 0.1,
                       omega: float = 0.5, mass: float = 1.0, stiffness: float = 1.0,
                       damping: float = 0.0) -> Oscillator:
    """A mass on a linear spring with a bolted-joint model in parallel, forced harmonically.

    ``m x'' + c x' + k x = F sin(omega t) + f_joint``, where ``f_joint = law.force(x', z)`` is
    the force of an Iwan-type joint (a dynamic law: :class:`~jaxfriction.SegalmanIwan`,
    :class:`~jaxfriction.Iwan`, or any :class:`~jaxfriction.AbstractDynamicLaw`) whose
    elements hang between the mass and the fixed ground. The model of amplitude-dependent
    stiffness and damping of jointed structures (Segalman 2005; Quinn & Segalman 2003):

    - small ``F`` (joint force ``<< F_S``): the joint sticks, its stiffness adds to the
      spring's, natural frequency ``sqrt((k + K_T) / m)``; microslip dissipates
      ``D ~ F_joint^(3 + chi)`` per cycle (:meth:`SegalmanIwan.small_amplitude_dissipation`);
    - large ``F``: the joint slips macroscopically at ``F_S``, the stiffness drops to ``k``
      (natural frequency ``sqrt(k / m)``) and the joint acts as a Coulomb damper.

    This is :class:`~jaxfriction.Oscillator` with a dynamic law on a fixed floor and a
    :class:`~jaxfriction.Harmonic` force: that class already carries the law's internal
    states, counts the joint's stored energy in the mechanical energy and only its
    dissipation in ``E_friction``, and serves every workflow. A factory adds no second
    implementation to keep consistent; it names the system, fixes the joint's default and
    checks that the law is a joint model (a dynamic law).

    Args:
        law: the joint, a dynamic law; default ``SegalmanIwan(F_S=1, K_T=3, chi=-0.5,
            beta=0.1)`` (256 elements). Its forces are in N (they do not scale with the
            normal force, which stays 1).
        force_amplitude: ``F`` (N).
        omega: forcing frequency (rad/s).
        mass: ``m > 0`` (kg).
        stiffness: ``k >= 0`` (N/m), the spring in parallel with the joint.
        damping: ``c >= 0`` (N s/m), viscous damping in parallel (0: a literal zero, left
            out of the arithmetic).

    Returns:
        An :class:`~jaxfriction.Oscillator`; parameter paths ``"force.amplitude"``,
            ``"force.omega"``, ``"mass"``, ``"stiffness"``, ``"damping"`` and the joint's
            ``"law.F_S"``, ``"law.K_T"``, ``"law.chi"``, ``"law.beta"`` (Segalman) or
            ``"law.stiffness[i]"``, ``"law.slip_force[i]"`` (Iwan). The state is ``[x, x',
            z (n_state), E_friction, E_damping, W_input]``; start it from ``[x0, v0]``.

    Raises:
        ValueError: a law that is not a dynamic law, or invalid numbers (naming them).
    """
    law = SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1) if law is None else law
    if not isinstance(law, AbstractDynamicLaw):
        raise ValueError(f"law must be a joint model with internal state (SegalmanIwan, Iwan, another dynamic "
                         f"law), got {type(law).__name__}")
    return Oscillator(law=law, force=Harmonic(force_amplitude, omega), mass=mass, stiffness=stiffness,
                      damping=damping)
