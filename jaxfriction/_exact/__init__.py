"""Exact (non-regularized) Coulomb friction: Moreau-Jean and event-driven solvers.

The event-driven solver needs diffrax; :mod:`.event_driven` is imported only when it runs.
"""

from .moreau_jean import MoreauJean, contact_moreau_jean_step, moreau_jean_step
from .na_eltawil import NaEltawil2D, na_eltawil_step
from .solver import EventDriven
from .westermo_udwadia import WestermoUdwadia, westermo_udwadia_step

__all__ = ["EventDriven", "MoreauJean", "NaEltawil2D", "WestermoUdwadia", "contact_moreau_jean_step", "moreau_jean_step",
           "na_eltawil_step", "westermo_udwadia_step"]
