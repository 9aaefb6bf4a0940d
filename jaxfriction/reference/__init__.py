"""Exact (non-regularized) Coulomb references: closed forms."""

from .closed_form import unforced_rest_position

__all__ = ["unforced_rest_position"]
