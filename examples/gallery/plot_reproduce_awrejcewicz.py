"""
Paper 002: disc on a driving disc, bifurcation and Lyapunov exponent
====================================================================

The disc on a driving disc with the Awrejcewicz continuous friction model: the bifurcation
diagram over the driving speed ``omega_dr`` with the largest Lyapunov exponent beside it.
Smaller settings here: 6 values of ``omega_dr`` instead of 100.

The full figure: ``jaxfriction reproduce awrejcewicz``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "awrejcewicz.png"
main(["reproduce", "awrejcewicz", "--n-params", "6", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(10, 7), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
