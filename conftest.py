"""Doctests of the package run in float64, as the published numbers they show."""

import jax

jax.config.update("jax_enable_x64", True)
