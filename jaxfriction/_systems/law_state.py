"""The internal variables a dynamic friction law gives the system that carries it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import is_concrete
from .._laws.dynamic import AbstractDynamicLaw

if TYPE_CHECKING:
    from .._laws.base import AbstractFrictionLaw


class LawStateMixin:
    """``n_internal`` and the initial internal variables of a system with a ``law`` field.

    A dynamic law (:class:`~jaxfriction.AbstractDynamicLaw`) gives each of the system's
    ``n_contacts`` contacts (1 unless the system says otherwise) its ``n_state`` internal
    variables, stored contact by contact in the state's internal block; a static law gives
    none. Mixed into :class:`~jaxfriction.Oscillator`, :class:`~jaxfriction.SpringSlider`
    and :class:`~jaxfriction.AbstractContactSystem`.
    """

    n_contacts = 1

    if TYPE_CHECKING:  # provided by the system the mixin is mixed into
        law: AbstractFrictionLaw | AbstractDynamicLaw
        normal: ArrayLike

        def internal_state(self, y: Array) -> Array: ...

    @property
    def dynamic(self) -> bool:
        """True when the law carries internal state (:class:`~jaxfriction.AbstractDynamicLaw`)."""
        return isinstance(self.law, AbstractDynamicLaw)

    @property
    def n_internal(self) -> int:
        """``n_contacts`` times the law's ``n_state`` for a dynamic law, else 0."""
        return self.n_contacts * self.law.n_state if self.dynamic else 0  # type: ignore[union-attr]

    def internal_names(self) -> list[str]:
        """The law's ``state_names`` (one contact; RateState: ``["psi"]``), else ``z[j]``."""
        names = getattr(self.law, "state_names", None) if self.dynamic else None
        if names and self.n_contacts == 1:
            return list(names)
        return [f"z[{j}]" for j in range(self.n_internal)]

    def initial_internal(self) -> ArrayLike:
        """The law's ``init_state()`` for every contact, ``(n_internal,)`` (relaxed springs;
        :class:`~jaxfriction.RateState`: steady state at ``V_0``)."""
        dtype = jnp.result_type(float)
        if not self.dynamic:
            return np.zeros(0, dtype)
        z0 = self.law.init_state()  # type: ignore[union-attr]
        xp = np if is_concrete(z0) else jnp  # a concrete state is tiled on the host: a plan dispatches no XLA op
        return xp.tile(xp.asarray(z0, dtype=dtype), self.n_contacts)

    def law_energy(self, y: Array) -> ArrayLike:
        """Energy stored in the dynamic law's internal springs (J), summed over the contacts,
        from states ``(..., state_size)``; 0 for a static law."""
        if not self.dynamic:
            return 0.0
        z = self.internal_state(y)
        z = jnp.reshape(z, (*jnp.shape(z)[:-1], self.n_contacts, self.law.n_state))  # type: ignore[union-attr]
        return jnp.sum(self.law.stored_energy(z, jnp.reshape(self.normal, (-1,))), axis=-1)  # type: ignore[union-attr]
