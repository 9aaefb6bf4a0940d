"""Exact (non-regularized) Coulomb references: closed forms."""

from .closed_form import belt_limit_cycle, den_hartog_response, unforced_rest_position

__all__ = ["belt_limit_cycle", "den_hartog_response", "unforced_rest_position"]
