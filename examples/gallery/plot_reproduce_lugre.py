"""
LuGre: the Stribeck curve and the presliding loop
=================================================

The LuGre model (Canudas de Wit et al. 1995) with the paper's parameters, driven at a
prescribed velocity: steady sliding at 16 velocities lands on the closed-form Stribeck curve
``sgn(v) (F_c + (F_s - F_c) exp(-(v / v_s)^2)) + sigma2 v`` to round-off, and a 2 um
sinusoidal displacement gives the presliding hysteresis loop, which follows its closed form
and starts from each reversal with a slope near sigma0.

The full figure: ``jaxfriction reproduce lugre``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "lugre.png"
main(["reproduce", "lugre", "--n-velocities", "8", "--figure", str(figure)], standalone_mode=False)

fig, ax = plt.subplots(figsize=(10, 4), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
