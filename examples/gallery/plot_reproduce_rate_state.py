"""
Rate-and-state friction on a spring-slider: velocity steps and the stability boundary
======================================================================================

(a) A velocity step V -> 10 V of the load point on a stiff machine: the friction jumps by the
direct effect a ln 10 and decays over D_c of slip to the new steady state, on the closed forms
of the velocity-controlled test, for the aging (Dieterich) and slip (Ruina) laws. (b, c) The
growth rate and frequency of small perturbations of steady sliding against k / k_c, simulated
(RK4) and from the linearization: unstable below k_c = N (b - a)/D_c (1 + m V^2/(N a D_c)),
neutral at k_c with omega_c = (V/D_c) sqrt((b - a)/a). Three stiffnesses here.

The full figure: ``jaxfriction reproduce rate-state``.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from jaxfriction.cli import main

figure = Path(tempfile.mkdtemp()) / "rate-state.png"
main(["reproduce", "rate-state", "--ratio", "0.9", "--ratio", "1.0", "--ratio", "1.1", "--figure", str(figure)],
     standalone_mode=False)

fig, ax = plt.subplots(figsize=(12, 3.6), constrained_layout=True)
ax.imshow(mpimg.imread(figure))
ax.set_axis_off()
