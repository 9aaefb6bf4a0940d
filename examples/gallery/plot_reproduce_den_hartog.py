"""
Den Hartog 1931: frequency-response curves by continuation
==========================================================

The figure a structural dynamicist expects of a friction-damped oscillator: the steady
response amplitude against the forcing frequency, on both sides of resonance, continued by
pseudo-arclength from one shooting orbit (``jf.periodic_orbit``, ``jf.continue_orbits``),
stable orbits solid and unstable dashed (Floquet multipliers at every point), with Den
Hartog's closed form of the non-sticking motion as dots. Quinn's law with ``eps = 2 dt``;
the gap to the closed form is the regularization's, O(eps). Smaller settings here: one
friction ratio ``r = mu N / P = 0.3``.

The full figure (r = 0.2 and 0.5): ``jaxfriction reproduce den-hartog``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "den_hartog.png"
main(["reproduce", "den-hartog", "--r", "0.3", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(12, 5), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
