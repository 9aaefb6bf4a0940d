"""Reproductions of published results, one module per figure."""

from .quinn_fig5 import quinn_fig5

#: Name on the command line -> function returning ``(numbers, figure_data)``.
REPRODUCTIONS = {"quinn-fig5": quinn_fig5}

__all__ = ["REPRODUCTIONS", "quinn_fig5"]
