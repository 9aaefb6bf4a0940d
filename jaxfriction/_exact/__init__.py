"""Exact (non-regularized) Coulomb friction: Moreau-Jean and event-driven solvers.

The event-driven solver needs diffrax; :mod:`.event_driven` is imported only when it runs.
"""

from .moreau_jean import MoreauJean, contact_moreau_jean_step, moreau_jean_step
from .solver import EventDriven

__all__ = ["EventDriven", "MoreauJean", "contact_moreau_jean_step", "moreau_jean_step"]
