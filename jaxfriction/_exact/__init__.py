"""Exact (non-regularized) Coulomb friction: event-driven and Moreau-Jean solvers."""

from .event_driven import STATUS_EVENT_BUDGET, EventLog, simulate_event_driven
from .moreau_jean import contact_moreau_jean_step, moreau_jean_step, simulate_moreau_jean

__all__ = ["STATUS_EVENT_BUDGET", "EventLog", "contact_moreau_jean_step", "moreau_jean_step", "simulate_event_driven", "simulate_moreau_jean"]
