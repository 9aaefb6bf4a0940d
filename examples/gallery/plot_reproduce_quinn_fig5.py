"""
Quinn 2004 Fig. 5: rest position of the unforced oscillator
===========================================================

The unforced oscillator ``x'' + x = f`` from ``(2.75, 0)`` with the classical, velocity-limited and
Quinn's laws (RK4, ``dt = 0.01``): Quinn's law comes to rest at ``-0.750090`` as the paper
prints (exact ``-0.75``), without the chatter of the classical law.

The full figure: ``jaxfriction reproduce quinn-fig5``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "quinn_fig5.png"
main(["reproduce", "quinn-fig5", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(14, 3.2), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
