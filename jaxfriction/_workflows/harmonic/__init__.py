"""Steady states in the frequency domain: harmonic balance with alternating frequency-time
evaluation of the friction forces (:mod:`.balance`) on a real Fourier basis (:mod:`.fourier`)."""
