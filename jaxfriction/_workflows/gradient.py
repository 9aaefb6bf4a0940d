"""Gradient modes: one small option object shared by sweeps, fits and sensitivities.

- :class:`ForwardMode`: forward-mode AD (``jax.jvp``), one tangent per parameter carried
  along the run; no stored trajectory, the primal computed once. Cheapest for few
  parameters: its cost grows with their number.
- :class:`ReverseMode`: reverse-mode AD (``jax.jacrev``), one backward pass per output
  whatever the number of parameters; a sweep runs its RK4 transient as a checkpointed scan
  (memory O(sqrt(steps))), at the cost of many forward runs.
- :class:`AutoMode`: forward up to ``max_forward`` parameters, reverse beyond.

Strings ``"forward"``, ``"reverse"`` and ``"auto"`` are shortcuts for the defaults.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from .._options import as_option


class AbstractGradientMode(eqx.Module):
    """How derivatives with respect to named parameters are computed."""

    @abc.abstractmethod
    def resolve(self, n_params: int) -> ForwardMode | ReverseMode:
        """The concrete mode used for ``n_params`` parameters."""


class ForwardMode(AbstractGradientMode):
    """Forward-mode AD: ``jax.jvp`` with one tangent per parameter (batched)."""

    kind: ClassVar[str] = "forward"  #: what a lane program asks of a resolved mode

    def resolve(self, n_params: int) -> ForwardMode:
        return self

    def value_and_jacobian(self, fn, params: dict) -> tuple[dict, dict, Any]:
        """Values and derivatives of ``fn(params) -> (out, aux)`` (``out`` a dict of arrays).

        Returns:
            ``(out, jac, aux)`` with ``jac[name][key] = d out[key] / d params[name]`` (shape
                of ``out[key]``; parameters are scalars). One ``jax.jvp`` per parameter,
                vmapped over the tangents (one plain jvp for a single parameter).
        """
        names = list(params)
        dtype = jnp.result_type(float)
        if len(names) == 1:
            tangent = {names[0]: jnp.ones((), dtype)}
            out, d_out, aux = jax.jvp(fn, (params,), (tangent,), has_aux=True)
            return out, {names[0]: d_out}, aux
        eye = jnp.eye(len(names), dtype=dtype)
        basis = {name: eye[i] for i, name in enumerate(names)}
        out, d_out, aux = jax.vmap(lambda tangent: jax.jvp(fn, (params,), (tangent,), has_aux=True),
                                   out_axes=(None, 0, None))(basis)
        return out, {name: {k: d[i] for k, d in d_out.items()} for i, name in enumerate(names)}, aux


class ReverseMode(AbstractGradientMode):
    """Reverse-mode AD: ``jax.jacrev``, one backward pass per scalar output.

    A sweep in reverse mode runs its RK4 transient under ``jax.checkpoint`` (memory
    O(sqrt(steps)) instead of every stage of every step, for about one extra forward run);
    elsewhere choose ``RK4(checkpoint=True)`` as the solver.
    """

    kind: ClassVar[str] = "reverse"  #: what a lane program asks of a resolved mode

    def resolve(self, n_params: int) -> ReverseMode:
        return self

    def value_and_jacobian(self, fn, params: dict) -> tuple[dict, dict, Any]:
        """As :meth:`ForwardMode.value_and_jacobian`, by ``jax.jacrev``."""

        def with_value(p) -> tuple[dict, tuple[dict, Any]]:
            out, aux = fn(p)
            return out, (out, aux)

        jac, (out, aux) = jax.jacrev(with_value, has_aux=True)(params)
        return out, {name: {k: jac[k][name] for k in out} for name in params}, aux


class AutoMode(AbstractGradientMode):
    """Forward mode for up to ``max_forward`` parameters, reverse mode beyond.

    The default 8 is where the two modes' measured costs cross on the default sweep (forward
    mode grows with the number of parameters, reverse mode does not; the numbers are in
    ``docs/performance.md``, "Numbers behind the defaults"). ``fit`` uses
    ``AutoMode(max_forward=16)`` by default: its forward pass also yields the Jacobian of
    the residuals, which the Gauss-Newton solvers and the covariance need anyway.
    """

    max_forward: int = eqx.field(default=8, static=True)

    def resolve(self, n_params: int) -> ForwardMode | ReverseMode:
        return ForwardMode() if n_params <= self.max_forward else ReverseMode()


def as_gradient_mode(mode) -> AbstractGradientMode:
    """The mode object for ``mode``: an object, ``"forward"``, ``"reverse"`` or ``"auto"``.

    Raises:
        ValueError: naming ``gradient`` for anything else.
    """
    return as_option(mode, AbstractGradientMode, {"forward": ForwardMode, "reverse": ReverseMode, "auto": AutoMode},
                     "gradient")
