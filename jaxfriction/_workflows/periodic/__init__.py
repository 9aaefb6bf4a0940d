"""Periodic steady states: shooting, Floquet multipliers, continuation, implicit sensitivities.

One concept a module: :mod:`.period` (how a system's period is known), :mod:`.flow` (the
period map of the fixed-step RK4 flow), :mod:`.floquet` (multipliers and their flags),
:mod:`.shooting` (:func:`~jaxfriction.periodic_orbit`), :mod:`.exact_orbit` (its exact
event-driven flow), :mod:`.sensitivity`
(:func:`~jaxfriction.orbit_sensitivity`), :mod:`.continuation`
(:func:`~jaxfriction.continue_orbits`), :mod:`.measure` (the steady-state measure of a sweep
lane) and :mod:`.plot`. Nothing is imported here.
"""
