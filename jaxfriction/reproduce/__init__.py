"""Reproductions of published results, one module per figure."""

from .quinn_fig5 import quinn_fig5
from .quinn_fig7 import quinn_fig7

#: Name on the command line -> function.
REPRODUCTIONS = {"quinn-fig5": quinn_fig5, "quinn-fig7": quinn_fig7}

__all__ = ["REPRODUCTIONS", "quinn_fig5", "quinn_fig7"]
