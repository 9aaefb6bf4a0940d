"""
Quinn 2004 Fig. 11: two blocks on a belt, coupled contacts
==========================================================

Two blocks on a belt with coupled contacts, Quinn's law against exact Moreau-Jean: positions
and stick intervals. Smaller settings here: ``t1 = 20``.

The full figure: ``jaxfriction reproduce quinn-fig11``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "quinn_fig11.png"
main(["reproduce", "quinn-fig11", "--t1", "20", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(10, 6), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
