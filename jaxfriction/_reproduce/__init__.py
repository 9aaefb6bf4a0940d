"""Reproductions of published results, one module per figure."""

from .awrejcewicz import awrejcewicz
from .iwan import iwan
from .lugre import lugre
from .na2d import na2d
from .periodic import den_hartog_branches
from .quinn_fig5 import quinn_fig5
from .quinn_fig7 import quinn_fig7
from .quinn_fig9 import quinn_fig9
from .quinn_fig11 import quinn_fig11
from .rate_state import rate_state

#: Name on the command line -> function.
REPRODUCTIONS = {"awrejcewicz": awrejcewicz, "iwan": iwan, "lugre": lugre, "na2d": na2d, "den-hartog": den_hartog_branches, "quinn-fig5": quinn_fig5,
                 "quinn-fig7": quinn_fig7, "quinn-fig9": quinn_fig9, "quinn-fig11": quinn_fig11, "rate-state": rate_state}

__all__ = ["REPRODUCTIONS", "awrejcewicz", "den_hartog_branches", "iwan", "lugre", "na2d", "quinn_fig11", "quinn_fig5", "quinn_fig7",
           "quinn_fig9", "rate_state"]
