"""A contact whose slip is prescribed: tribometers, friction dampers, displacement-controlled tests."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative
from .._forcing.drives import AbstractDrive
from .._laws.base import AbstractFrictionLaw
from .._laws.dynamic import AbstractDynamicLaw, friction_power
from .base import AbstractFrictionSystem, Rates
from .law_state import LawStateMixin
from .oscillator import check_law, check_one_contact_law


class PrescribedSlip(LawStateMixin, AbstractFrictionSystem):  # type: ignore[override]
    """One contact driven by a prescribed slip velocity or displacement; the output is the
    friction force.

    The rig imposes the motion (a tribometer's stage, the displacement actuator of a friction
    damper test, the load point of a stiff machine) and measures the force. The contact's
    slip velocity is ``velocity(t)``, or ``d displacement / dt`` (a :class:`~jaxfriction.Sampled`
    displacement interpolated linearly has the secant slope of each sample interval). The
    friction force on the sliding body is ``law(v(t), f_eq, N)`` for a static law, with
    ``f_eq = 0`` (no inertia and no other force act on the contact: at zero slip a static law
    gives 0, a regularized one its continuous value), and ``law.force(v(t), z, N)`` for a
    dynamic law (LuGre, Dahl, Maxwell-slip, Iwan, rate-and-state), whose internal variables
    ``z`` are the state (``n_dof = 0``; state ``[z, E_friction, E_damping, W_input]``). The
    rig's work is ``-f v`` (the actuator pushes against friction), so the energy balance reads
    ``W_input = Delta(stored energy) + E_friction``.

    Fit the law to a measured force with ``Measurement(t, channels={"friction_force": F},
    inputs={"velocity": v})`` (or ``{"displacement": x}``): the measured motion drives the
    model, the force is the output (:meth:`~jaxfriction.AbstractFrictionSystem.output`).
    This is :func:`~jaxfriction.drive_law` as a system, so every workflow applies.

    Args:
        law: a scalar static law or a dynamic law.
        velocity: drive ``v(t)`` (m/s), or None with ``displacement``.
        displacement: drive ``x(t)`` (m), or None with ``velocity``.
        normal: normal force ``N >= 0`` (N).

    Parameter paths: ``"law.<field>"``, ``"velocity.<field>"`` or
    ``"displacement.<field>"``, ``"normal"``.

    Raises:
        ValueError: no law or a vector law, not exactly one of ``velocity`` and
            ``displacement`` (a drive), a negative normal force.
    """

    n_dof = 0

    law: AbstractFrictionLaw | AbstractDynamicLaw
    velocity: AbstractDrive | None = None
    displacement: AbstractDrive | None = None
    normal: float = 1.0

    def __check_init__(self):
        check_law(self.law, vector=False, dynamic=True)
        check_one_contact_law(self.law, self.n_internal)
        given = [name for name in ("velocity", "displacement") if getattr(self, name) is not None]
        if len(given) != 1 or not isinstance(getattr(self, given[0]), AbstractDrive):
            raise ValueError(f"give exactly one of velocity and displacement, as a drive (jf.Sampled, jf.Harmonic, "
                             f"...), got velocity={self.velocity!r}, displacement={self.displacement!r}")

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("normal", self.normal),)

    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        """The prescribed slip velocity at ``t`` (m/s)."""
        if self.velocity is not None:
            return jnp.reshape(self.velocity(t), ())
        t = jnp.asarray(t, dtype=jnp.result_type(float))
        return jnp.reshape(jax.jvp(self.displacement, (t,), (jnp.ones_like(t),))[1], ())  # type: ignore[arg-type]

    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        """The force balance, 0: nothing but friction acts on the prescribed contact (N)."""
        return 0.0 * jnp.asarray(t, dtype=jnp.result_type(float))

    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        v = self.slip_velocity(t, y)
        if self.dynamic:
            return self.law.force(v, self.internal_state(y), self.normal)  # type: ignore[union-attr]
        return self.law(v, self.f_eq(t, y), self.normal)  # type: ignore[operator]

    def rates(self, t: ArrayLike, y: Array) -> Rates:
        v = self.slip_velocity(t, y)
        empty = jnp.zeros((0,), dtype=y.dtype)
        if self.dynamic:
            f, dissipated, z_dot = friction_power(self.law, v, self.internal_state(y), self.normal)  # type: ignore[arg-type]
            return Rates(empty, empty, dissipated, -f * v, internal=z_dot)
        f = self.law(v, self.f_eq(t, y), self.normal)  # type: ignore[operator]
        return Rates(empty, empty, -f * v, -f * v)

    def mechanical_energy(self, y: Array) -> Array:
        """Energy stored in the law's internal springs (J); no mass moves freely."""
        return 0.0 * y[..., -1] + self.law_energy(y)
