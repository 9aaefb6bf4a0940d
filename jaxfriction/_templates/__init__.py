"""Templates: a system with the run settings of its source paper, ready for every workflow.

A :class:`Template` holds a system (the template system whose leaf paths name what varies)
and the defaults a workflow needs to run it: the RK4 step of the paper, the run length and
the measured window (or a number of forcing cycles and the path of the forcing frequency),
the initial state, and a default grid and gradient for the command line. ``jf.sweep``,
``jf.fit`` and ``jaxfriction sweep`` accept a template wherever they accept a system and
take these defaults from it; explicit arguments win.

The named templates (:data:`TEMPLATES`, built by :func:`template`) are the demo systems of
the source papers. Their builders tie the regularization width to the step the way the
papers do (Quinn's ``eps = 2 dt`` for the oscillator and belt, ``eps = 10 omega dt`` for the
chain), so ``template("oscillator", dt=0.005)`` halves both. A researcher's own template is
a :class:`Template` of their own system (or a function returning one, which the command
line finds as ``--system package.module:function``).
"""

from .base import Template, check_times, run_times, split_template
from .builtin import BELT_LAWS, OSCILLATOR_LAWS, TEMPLATES, template
from .loading import load_template

__all__ = ["BELT_LAWS", "OSCILLATOR_LAWS", "TEMPLATES", "Template", "check_times", "load_template", "run_times",
           "split_template", "template"]
