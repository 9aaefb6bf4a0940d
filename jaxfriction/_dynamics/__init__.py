"""Nonlinear dynamics: Lyapunov exponents, Poincare samples, stick-slip periods."""

from .lyapunov import LyapunovResult, lyapunov_spectrum, system_dynamics
from .poincare import peak_samples, stick_slip_period, stroboscopic_samples

__all__ = ["LyapunovResult", "lyapunov_spectrum", "peak_samples", "stick_slip_period", "stroboscopic_samples",
           "system_dynamics"]
