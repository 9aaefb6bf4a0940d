"""
Quinn 2004 Fig. 7: dissipation error against the step
=====================================================

The error of the dissipation per cycle of the forced oscillator against the RK4 step, with
the exact event-driven solution as the reference, for three laws and the paper's two
forcing cases. Smaller settings here: four steps and 20 cycles.

The full figure: ``jaxfriction reproduce quinn-fig7``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "quinn_fig7.png"
steps = ["--dt", "0.1", "--dt", "0.05", "--dt", "0.02", "--dt", "0.01"]
main(["reproduce", "quinn-fig7", *steps, "--cycles", "20", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(10, 5), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
