"""Classical RK4 with its stage written once: the rate of a stage, the next stage's state, the
step's end (:class:`Stages`), run by :func:`staged_rk4_step` in
:func:`~jaxfriction._integrate.rk4.rk4_step`'s order and arithmetic. A program that loops over
the stages instead of writing each (the sweep's looped lane program) and the
marched step of :mod:`jaxfriction._integrate.marched` (whose stages carry the slip and the
power besides the rate) are written from them."""

from __future__ import annotations

from typing import Any

import equinox as eqx
from jax import Array


class Stages(eqx.Module):
    """Classical RK4 as its stage written once: ``rate(t, Y)`` of a stage state, ``state(y,
    a, K)`` the next stage's state from the step's start ``y`` along the previous stage's
    ``K`` over ``a`` (``h / 2`` or ``h``), and ``finish(y, h, A)`` the step's end from the
    weighted sum ``A = K1 + 2 K2 + 2 K3 + K4``; :func:`staged_rk4_step` runs them in the
    order and arithmetic of :func:`~jaxfriction._integrate.rk4.rk4_step` (the sweep's looped
    lane program writes the later three stages once, in a loop over them).
    This class: the system's vector field, ``K = f(t, Y)``; subclasses change what a stage
    carries (:class:`~jaxfriction._integrate.marched.MarchedStages`)."""

    system: Any
    args: Any = None

    def rate(self, t, y_stage: Array) -> Array:
        """The stage's rate ``K`` ``(n_k,)`` (here the vector field, ``n_k = state_size``)."""
        return self.system.vector_field(t, y_stage, self.args)

    def state(self, y: Array, a, k: Array) -> Array:
        """The stage state ``y + a K`` ``(state_size,)``."""
        return y + a * k

    def finish(self, y: Array, h, weighted: Array) -> Array:
        """The step's end ``y + (h / 6) A`` ``(state_size,)``."""
        return y + (h / 6.0) * weighted


def staged_rk4_step(stages: Stages, t, y: Array, h) -> Array:
    """One classical RK4 step from ``(t, y)`` through ``stages``' three functions: the same
    arithmetic, in the same order, as :func:`~jaxfriction._integrate.rk4.rk4_step`."""
    k1 = stages.rate(t, y)
    k2 = stages.rate(t + 0.5 * h, stages.state(y, 0.5 * h, k1))
    k3 = stages.rate(t + 0.5 * h, stages.state(y, 0.5 * h, k2))
    k4 = stages.rate(t + h, stages.state(y, h, k3))
    return stages.finish(y, h, k1 + 2.0 * k2 + 2.0 * k3 + k4)
