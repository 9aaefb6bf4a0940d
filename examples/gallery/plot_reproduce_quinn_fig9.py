"""
Quinn 2004 Fig. 9: the Burridge-Knopoff chain
=============================================

The dissipation of the ``n = 32`` Burridge-Knopoff chain against the RK4 step (reference at
``dt = 1e-4``). Smaller settings here: two steps.

The full figure: ``jaxfriction reproduce quinn-fig9``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "quinn_fig9.png"
main(["reproduce", "quinn-fig9", "--dt", "0.01", "--dt", "0.005", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(10, 5), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
