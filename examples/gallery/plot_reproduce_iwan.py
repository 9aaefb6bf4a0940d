"""
Segalman's power law: dissipation of a jointed oscillator versus force amplitude
==================================================================================

A mass on a spring with Segalman's four-parameter Iwan joint in parallel
(``jf.jointed_oscillator``), forced quasi-statically over a log range of force amplitudes.
At small amplitude the joint sticks except for microslip, and the dissipation per cycle
follows ``D ~ F_j^(3 + chi)`` with Segalman's prefactor; once the displacement passes
``phi_max`` the whole joint slides (macroslip). Coarser run here (12 amplitudes, 128
elements).

The full figure: ``jaxfriction reproduce iwan``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "iwan.png"
main(["reproduce", "iwan", "--n-amplitudes", "12", "--steps", "1000", "--n-elements", "128", "--figure", str(figure)],
     standalone_mode=False)

fig, ax = plt.subplots(figsize=(10, 4.5), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
