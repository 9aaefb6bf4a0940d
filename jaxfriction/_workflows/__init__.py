"""Workflows on the physics core: sweeps, fits and sensitivities over leaf paths.

Kept apart from the core (which never imports them) and loaded on first use: they bring
xarray, tqdm, optax and optimistix. Nothing is imported here, so that the gradient-mode
objects (:mod:`.gradient`) stay light.
"""
