"""Vector (tangential, 2-D/3-D) friction laws: the slip velocity and ``f_eq`` are vectors.

Same call shape as the scalar laws, ``force = law(v, f_eq, normal)``, with the components on
the last axis (``v``, ``f_eq`` of shape ``(..., d)``, ``normal`` of shape ``(...)``). The
friction is isotropic: in slip it opposes the slip direction ``v / |v|``; at ``v = 0`` the
force balance holds up to the static disc, ``f = f_eq`` if ``|f_eq| <= mu N``, else ``mu N
f_eq / |f_eq|`` (Quinn 2004 eq. 2, which is written for vectors). Norms and unit vectors use
the double-``where`` pattern, so gradients are finite at zero slip and ``f_eq = 0``.
Restricted to one axis (the other components 0) every law equals its scalar counterpart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, nonnegative, positive
from .base import AbstractFrictionLaw
from .threlfall import _NORM, _odd_exponential


def safe_norm(x: ArrayLike) -> Array:
    """``|x|`` over the last axis, with a finite (zero) gradient at ``x = 0``."""
    sq = jnp.sum(x * x, axis=-1)
    nonzero = sq > 0
    return jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def _scale_to(x, length):
    """``length * x / |x|`` (0 where ``x = 0``), gradient-safe."""
    n = safe_norm(x)
    return x * jnp.asarray(jnp.where(n > 0, length / jnp.where(n > 0, n, 1.0), 0.0))[..., None]


def project_to_disc(x: ArrayLike, radius: ArrayLike) -> Array:
    """``x`` clipped to the disc ``|x| <= radius`` (the vector force balance, Quinn eq. 2)."""
    n = safe_norm(x)
    return jnp.where(jnp.asarray(n <= radius)[..., None], x, _scale_to(x, radius))


def tangential_projection(v: ArrayLike, normal_vector: ArrayLike) -> Array:
    """``(I - n n^T) v``: the tangential part of ``v`` for a unit contact normal ``n`` (Ratel)."""
    return v - jnp.sum(v * normal_vector, axis=-1, keepdims=True) * normal_vector


def vector_coulomb(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike,
                   viscous: ArrayLike = 0.0) -> Array:
    """Isotropic Coulomb friction (+ optional viscous ``-F_v v``) with the vector force balance.

    Slip (``|v| > 0``): ``-mu N v/|v| - F_v v``; stick: ``project_to_disc(f_eq, mu N)``
    (Quinn eqs. 1-2; Ratel Coulomb and viscous damping). Returns ``(..., d)`` (N).
    """
    limit = mu * normal
    slip = -_scale_to(v, limit) - viscous * v
    return jnp.where((safe_norm(v) > 0)[..., None], slip, project_to_disc(f_eq, limit))


def vector_threlfall(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike, v0: ArrayLike,
                     viscous: ArrayLike = 0.0) -> Array:
    """Threlfall's law in vector form (Ratel): magnitude of :func:`~jaxfriction.threlfall`, direction ``-v/|v|``.

    Written as ``-v h(|v|)`` with ``h(s) = |f|(s) / s`` and ``h(0) = 3 mu N / (v0 (1 - e^-3))``,
    so the law is smooth through ``v = 0`` and its Jacobian there is ``-h(0) I``.
    """
    del f_eq
    speed = safe_norm(v)
    limit = jnp.asarray(mu * normal)
    moving = speed > 0
    s = jnp.where(moving, speed, 1.0)
    inside = jnp.where(moving, limit * _odd_exponential(jnp.minimum(s, v0), v0) / s, 3.0 * limit / (v0 * _NORM))
    outside = (limit + viscous * (s - v0)) / s
    return -v * jnp.where(speed <= v0, inside, outside)[..., None]


def vector_quinn(v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike, mu: ArrayLike, eps: ArrayLike) -> Array:
    """Quinn's regularization in vector form (Quinn 2004 Sec. 1: it carries over to 3-D contacts).

    ``zeta = eps f_eq / (mu N)`` projected onto the disc of radius ``eps``; then
    ``f = -(mu N / eps)(v - zeta)`` for ``|v - zeta| <= eps`` and ``-mu N (v - zeta)/|v - zeta|``
    beyond, i.e. ``-(mu N / eps) project_to_disc(v - zeta, eps)``. At ``v = 0`` it is the vector
    force balance exactly; with ``mu N = 0`` it returns 0.

    As in the scalar :func:`~jaxfriction.quinn`, ``zeta -> eps f_eq / |f_eq|`` as ``mu N -> 0+``,
    so the derivative in ``mu`` at ``mu = 0`` is the one-sided limit from ``mu > 0``: a zero or
    subnormal ``mu N`` takes a huge finite reciprocal (``sqrt`` of the largest float) instead
    of ``1 / (mu N)``, which would overflow, and tangents stay finite.
    """
    limit = jnp.asarray(mu * normal)
    huge = jnp.sqrt(jnp.finfo(jnp.result_type(limit, f_eq, float)).max)
    positive = limit > 1.0 / huge
    inv_limit = jnp.where(positive, 1.0 / jnp.where(positive, limit, 1.0), huge)
    zeta = project_to_disc(f_eq * (eps * inv_limit)[..., None], eps)
    return -(limit / eps)[..., None] * project_to_disc(v - zeta, eps)


class _AbstractVectorLaw(AbstractFrictionLaw):
    vector = True

    if TYPE_CHECKING:  # a field of every vector law
        mu: ArrayLike

    def static_limit(self, normal: ArrayLike) -> ArrayLike:
        return self.mu * normal

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return jnp.broadcast_to(self.static_limit(normal), jnp.shape(v)[:-1])


class VectorCoulomb(_AbstractVectorLaw):
    """Isotropic Coulomb friction with vector force balance, optional viscous term (Ratel).

    Args:
        mu: friction coefficient, >= 0.
        viscous: viscous coefficient ``F_v`` >= 0 (N s/m).

    Raises:
        ValueError: negative or non-finite values.
    """

    mu: float = 0.3
    viscous: float = 0.0

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), nonnegative("viscous", self.viscous))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return vector_coulomb(v, f_eq, normal, self.mu, self.viscous)

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return self.mu * normal + self.viscous * safe_norm(v)


class VectorQuinn(_AbstractVectorLaw):
    """Quinn's regularization in vector form (:func:`vector_quinn`).

    Args:
        mu: friction coefficient, >= 0.
        eps: regularization width, > 0 (m/s).

    Raises:
        ValueError: invalid values.
    """

    slope_bounded: ClassVar[bool] = True  # |f(v) - f(0)| = mu N min(|v|/eps, 1) <= (mu N/eps) |v|

    mu: float = 0.3
    eps: float = 1e-3

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), positive("eps", self.eps))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return vector_quinn(v, f_eq, normal, self.mu, self.eps)

    def stick_band(self) -> ArrayLike:
        return self.eps


class VectorThrelfall(_AbstractVectorLaw):
    """Threlfall's law in vector form (:func:`vector_threlfall`; Ratel defaults).

    Args:
        mu: friction coefficient, >= 0 (0.1).
        v0: tolerance velocity, > 0 (0.05 m/s).
        viscous: viscous coefficient, >= 0 (0).

    Raises:
        ValueError: invalid values.
    """

    keeps_coulomb_structure = False

    mu: float = 0.1
    v0: float = 0.05
    viscous: float = 0.0

    def constraints(self) -> tuple[Constraint, ...]:
        return (nonnegative("mu", self.mu), positive("v0", self.v0), nonnegative("viscous", self.viscous))

    def __call__(self, v: ArrayLike, f_eq: ArrayLike, normal: ArrayLike) -> Array:
        return vector_threlfall(v, f_eq, normal, self.mu, self.v0, self.viscous)

    def bound(self, v: ArrayLike, normal: ArrayLike) -> Array:
        return self.mu * normal + self.viscous * jnp.maximum(safe_norm(v) - self.v0, 0.0)
