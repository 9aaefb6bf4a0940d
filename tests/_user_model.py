"""A researcher's own model that the library has never seen (used by tests/test_extension.py).

A two-degree-of-freedom oscillator with a frictional joint: body 1 on a spring ``k1`` to the
ground, forced by ``amplitude sin(omega t)``; body 2 tied to body 1 by a spring ``k2`` and
rubbing on it through a joint with a smooth friction law of our own, ``f = -mu N tanh(v /
eps) - c v`` (no Coulomb structure at zero slip). Written as a user would, against the
public API only.
"""

import jax.numpy as jnp

import jaxfriction as jf


class TanhViscous(jf.AbstractFrictionLaw):
    """``f = -mu N tanh(v / eps) - c v``: a smooth Coulomb law plus viscous friction."""

    keeps_coulomb_structure = False

    mu: float = 0.3
    eps: float = 0.01
    c: float = 0.05

    def constraints(self):
        return (jf.nonnegative("mu", self.mu), jf.positive("eps", self.eps), jf.nonnegative("c", self.c))

    def __call__(self, v, f_eq, normal):
        return -self.mu * normal * jnp.tanh(v / self.eps) - self.c * v + 0.0 * f_eq

    def static_limit(self, normal):
        return self.mu * normal

    def stick_band(self):
        return self.eps

    def bound(self, v, normal):
        return self.mu * normal + self.c * jnp.abs(v)


class FrictionJoint(jf.AbstractContactSystem):
    """Two bodies, one frictional joint between them (contact slip velocity ``v2 - v1``)."""

    n_dof = 2

    law: jf.AbstractFrictionLaw
    k1: float = 1.0
    k2: float = 0.5
    m1: float = 1.0
    m2: float = 0.5
    amplitude: float = 1.0
    omega: float = 0.8
    joint_normal: float = 1.0

    def constraints(self):
        return (jf.positive("m1", self.m1), jf.positive("m2", self.m2), jf.nonnegative("k1", self.k1),
                jf.nonnegative("k2", self.k2), jf.real("amplitude", self.amplitude), jf.real("omega", self.omega),
                jf.nonnegative("joint_normal", self.joint_normal))

    @property
    def masses(self):
        return jnp.stack([jnp.asarray(self.m1, float), jnp.asarray(self.m2, float)])

    @property
    def normal(self):
        return jnp.reshape(jnp.asarray(self.joint_normal, float), (1,))

    @property
    def damping(self):
        return 0.0

    def potential_energy(self, q):
        return 0.5 * self.k1 * q[0] ** 2 + 0.5 * self.k2 * (q[1] - q[0]) ** 2

    def contact_jacobian(self):
        return jnp.array([[-1.0, 1.0]])

    def external_force(self, t):
        return jnp.stack([self.amplitude * jnp.sin(self.omega * t), 0.0 * t])

    def surface_velocity(self, t):
        return None


def joint_template(dt=0.01):
    """The joint with its run settings: 10 forcing periods from rest, the last measured."""
    return jf.Template(FrictionJoint(law=TanhViscous()), dt=dt, cycles=10, frequency="omega",
                       grid={"law.mu": "0.1:0.5:3"}, wrt=("law.mu",), name="friction-joint")
