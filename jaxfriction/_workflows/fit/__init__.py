"""Parameter identification from measured trajectories."""
