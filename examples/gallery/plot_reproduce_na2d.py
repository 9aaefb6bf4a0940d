"""
Paper 003 Fig. 2: four friction models of a block on a shaking floor
=====================================================================

Quinn's vector law, Griffin's spring model, Na et al.'s own algorithm and exact Coulomb
(Moreau-Jean) on paper 003's validation case (m = 1 kg, mu = 0.3, dt = 0.2 ms), against
Moreau-Jean at a 200 times smaller step. Griffin's spring rings after the block starts to
slide; Na et al.'s algorithm, as printed, holds the y component of the slip at zero once it
crosses (case 2.2 repeated) and its acceleration chatters. Shorter run here (0.5 s).

The full figure: ``jaxfriction reproduce na2d``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "na2d.png"
main(["reproduce", "na2d", "--t1", "0.5", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(10, 5.5), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
