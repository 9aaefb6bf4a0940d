"""Harmonic balance: periodic steady states of forced friction systems in the frequency domain.

The unknowns are the Fourier coefficients ``c`` (``H`` harmonics, :mod:`.fourier`) of the
dynamical state ``x(t)`` (positions, velocities and a dynamic law's internal variables; the
energy integrals are left out, as in :mod:`~jaxfriction._workflows.periodic.flow`) of a
system forced at ``omega``. The residual is the Galerkin projection of the system's own
first-order equations onto the harmonics,

    ``R(c) = D c - P f(t_j, E c)``,

with ``E`` the synthesis at ``N`` phases of the period, ``P`` the analysis and ``D`` the
derivative (:mod:`.fourier`): the friction forces are evaluated in the time domain at the
samples and brought back to the frequency domain (the alternating frequency-time scheme,
Cameron & Griffin 1989; Krack & Gross 2019, "Harmonic Balance for Nonlinear Vibration
Problems", Sec. 3.3), so any law of the library, static or dynamic with smooth state
equations, enters through the system's ``vector_field`` unchanged. The Jacobian ``dR/dc`` is
JAX's forward-mode derivative of that residual (no hand-written derivatives), the root is
optimistix's Newton, and derivatives of a solution with respect to the system's parameters
come from the implicit function theorem at the root (one Newton step on the unfrozen system,
as :func:`~jaxfriction._workflows.periodic.shooting.shoot` does).

Hysteretic elements with a closed-form update over an interval of slip (Jenkins, Iwan and
Segalman elements with an exact stick/slip switch, Dahl's model, Maxwell-slip elements: laws
with a :meth:`~jaxfriction.AbstractDynamicLaw.interval_update`) are not unknowns: their
states are marched through the period along the sampled slip, sample by sample with that
update, from the relaxed state at the period's mean slip over
:data:`.march.MARCH_PERIODS` periods (after one full cycle a Masing element's state repeats), and
the last period's forces enter the residual. The unknowns are then the positions' and velocities' coefficients only, and each
orbit is unique: with the states as unknowns (or by shooting) every stuck element's offset
is a free constant, and the orbits form a continuum. Other non-smooth laws (exact Coulomb)
have Fourier coefficients that decay slowly; regularized laws (Quinn, Awrejcewicz, LuGre) converge
spectrally once ``H omega`` resolves the regularization. Every solution carries an estimate
of its truncation and sampling error: the largest difference over the period to the solution
with half the harmonics and half the samples (:func:`harmonic_balance`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import check_int, check_real
from ..._paths import get_parameter, traced_parameters
from ..periodic.floquet import floquet_multipliers, is_stable
from ..periodic.flow import full_state, period_map, period_trajectory
from ..periodic.period import forcing_frequency_path
from ..periodic.shooting import frozen
from .fourier import analysis, derivative, extremes, resized, synthesis
from .hill import hill_multipliers
from .march import marched, marched_period_map, states_at

#: Samples per period for ``H`` harmonics when none are given: ``max(32, 8 H)``.
SAMPLES_PER_HARMONIC = 8
#: RK4 steps per period of the time-domain check and the Floquet multipliers: at least this
#: many, and 8 per harmonic-balance sample.
FLOW_STEPS = 1000


def default_samples(harmonics: int) -> int:
    """The alternating frequency-time samples per period for ``H`` harmonics: ``max(32, 8 H)``."""
    return max(32, SAMPLES_PER_HARMONIC * int(harmonics))


def _omega(system, frequency: str):
    return jnp.abs(jnp.asarray(get_parameter(system, frequency), dtype=jnp.result_type(float)))


def _rates(system, x, ts):
    """``(N, state_size)``: the full state rates at the samples ``x`` ``(N, d)``, times ``ts``."""
    return jax.vmap(lambda t, xj: system.vector_field(t, full_state(system, xj)))(ts, x)


def sampled_states(coefficients, system, *, frequency: str, t0, samples: int, march: bool):
    """The dynamical states ``(N, d)`` at the ``N`` phases ``t0 + j T / N`` of the solution
    with ``coefficients``, and the march's repeat mismatch (0 without a march).

    Without a march the coefficients are those of the whole dynamical state. With one
    (:func:`marched`) they are those of the positions and velocities ``(2 H + 1, 2 n_dof)``,
    and the law's states come from marching its update
    (:meth:`~jaxfriction.AbstractDynamicLaw.interval_update`) along the slip, in
    :func:`.march.march_substeps` increments per sample interval (:mod:`.march`), over
    :data:`.march.MARCH_PERIODS` periods, starting relaxed at the period's mean slip displacement
    (a virgin loading from there to the slip at ``t0``: an element that never slides stays
    centred on the vibration; one that slides forgets the start within a cycle, as Masing
    elements do); the mismatch is ``max |z(T) - z(0)|`` over the last period (m, for
    elongations).
    """
    return states_at(coefficients, system, _omega(system, frequency), t0=t0, samples=samples, march=march)


def balance_residual(coefficients, system, *, frequency: str, t0, samples: int, march: bool = False):
    """The harmonic-balance residual ``D c - P f(t_j, x_j)`` (units of the state per time).

    Args:
        coefficients: ``(2 H + 1, d)``: the Fourier coefficients of the dynamical state
            (:mod:`.fourier`'s layout; ``d = system.dynamical_size``), or with ``march`` of
            the positions and velocities ``(2 H + 1, 2 n_dof)``.
        system: a forced jaxfriction system.
        frequency: the path of its forcing frequency (``"force.omega"``).
        t0: the phase (time) at which the Fourier basis starts.
        samples: ``N > 2 H`` phases of the period where the forces are evaluated.
        march: march the law's states (:func:`sampled_states`) instead of reading them from
            the coefficients.

    Returns:
        Shaped like ``coefficients``.
    """
    return residual_at(coefficients, system, _omega(system, frequency), t0=t0, samples=samples, march=march)


def residual_at(coefficients, system, omega, *, t0, samples: int, march: bool, self_excitation=None):
    """:func:`balance_residual` at the fundamental frequency ``omega`` (may be traced), with
    ``self_excitation`` ``xi`` (1/time) adding ``xi v`` to every velocity's rate (the negative
    damping of the extended periodic motion concept, :mod:`.modes`)."""
    c = jnp.asarray(coefficients)
    harmonics = (c.shape[0] - 1) // 2
    ts = t0 + jnp.arange(samples) * (2 * jnp.pi / omega / samples)
    states, _ = states_at(c, system, omega, t0=t0, samples=samples, march=march)
    f = _rates(system, states, ts)[:, :c.shape[1]]
    if self_excitation is not None:
        n = system.n_dof
        f = f.at[:, n:2 * n].add(self_excitation * states[:, n:2 * n])
    return derivative(harmonics, omega).astype(c.dtype) @ c - analysis(harmonics, samples, c.dtype) @ f


def _scale(c, omega):
    """The residual test's scale: ``max(1, |D c|_inf)`` (the state's rate)."""
    harmonics = (c.shape[0] - 1) // 2
    return jnp.maximum(1.0, jnp.max(jnp.abs(derivative(harmonics, omega).astype(c.dtype) @ c)))


def solve_balance(system, coefficients, *, frequency: str, t0, samples: int, tol: float, max_steps: int,
                  march: bool = False, refine: bool = True) -> dict:
    """The traceable core: Newton on :func:`balance_residual` from ``coefficients`` (usable
    inside ``jit`` and ``vmap``; nothing raises inside a batch).

    The root is found on the system with its derivatives stopped; the returned coefficients
    are the root refined by one Newton step of the unfrozen system, whose derivative is the
    implicit function theorem's ``dc/dp = -(dR/dc)^-1 dR/dp`` in forward and reverse mode.
    ``march``: the coefficients are the positions' and velocities' and the law's states are
    marched (:func:`sampled_states`; :func:`marched` says whether a system's are).
    ``refine=False`` skips the last step (values only: :func:`implicit_root`).

    Returns:
        Dict: ``coefficients`` ``(2 H + 1, d)``, ``residual`` (``|R|_inf``), ``converged``
            (optimistix succeeded and ``|R|_inf <= tol max(1, |D c|_inf)``), ``steps``.
    """
    c0 = jax.lax.stop_gradient(jnp.asarray(coefficients))
    shape = c0.shape

    def fn(u, s):
        return balance_residual(u.reshape(shape), s, frequency=frequency, t0=t0, samples=samples,
                                march=march).reshape(-1)

    u, found, steps = implicit_root(fn, c0.reshape(-1), system, tol=tol,
                                    atol=tol * _scale(c0, _omega(system, frequency)), max_steps=max_steps,
                                    refine=refine)
    c = u.reshape(shape)
    residual = jnp.max(jnp.abs(fn(u, system)))
    converged = found & (residual <= tol * _scale(c, _omega(system, frequency)))
    return {"coefficients": c, "residual": residual, "converged": converged, "steps": steps}


def implicit_root(fn, u0, system, *, tol: float, atol, max_steps: int, refine: bool = True, chord: bool = False):
    """A root of ``fn(u, system)`` whose derivative in the system's parameters is the implicit
    function theorem's: optimistix's Newton on the system with its derivatives stopped (from
    ``u0``, which a failed solve keeps), then one Newton step of the unfrozen system, ``u =
    root - J^-1 fn(root, system)`` (its value ~0 at the root, its derivative ``-J^-1
    dfn/dp``). Traceable; nothing raises inside a batch. ``refine=False`` skips that step (and
    its Jacobian) where no derivative is taken (a batch of values). ``chord=True`` solves by
    the chord method instead (optimistix's ``Chord``: the Jacobian at ``u0`` only, linear
    convergence to the same root; cheaper where ``u0`` is close, e.g. continued from a
    neighbouring solution).

    Returns:
        ``(u, found, steps)``: the refined root, whether Newton succeeded with a finite root,
            and its iterations.
    """
    import optimistix as optx

    u0 = jax.lax.stop_gradient(u0)
    fixed = frozen(system)
    method = optx.Chord if chord else optx.Newton
    sol: Any = optx.root_find(fn, method(rtol=tol, atol=jax.lax.stop_gradient(atol)), u0, fixed,
                              max_steps=max_steps, throw=False)
    found = (sol.result == optx.RESULTS.successful) & jnp.all(jnp.isfinite(sol.value))
    root = jnp.where(found, sol.value, u0)
    if not refine:
        return root, found, sol.stats["num_steps"]
    jac = jax.jacfwd(lambda u: fn(u, fixed))(root)
    step = jnp.linalg.solve(jac, fn(root, system))
    u = jnp.where(jnp.all(jnp.isfinite(jax.lax.stop_gradient(step))), root - step, root)
    return u, found, sol.stats["num_steps"]


@eqx.filter_jit
def _solve(system, coefficients, frequency, t0, samples, tol, max_steps, march):
    return solve_balance(system, coefficients, frequency=frequency, t0=t0, samples=samples, tol=tol,
                         max_steps=max_steps, march=march)


def transient_guess(system, y0, *, frequency: str, t0, harmonics: int, samples: int, cycles: int,
                    per_sample: int = 1):
    """Coefficients ``(2 H + 1, d)`` of the last of ``cycles`` forcing periods run by RK4 from
    the state ``y0`` with ``per_sample`` steps between two of the ``samples`` phases
    (traceable): the start of Newton's iterations."""
    from ..._integrate.rk4 import rk4_scan

    d = system.dynamical_size
    omega = _omega(system, frequency)
    period = 2 * jnp.pi / omega
    n = samples * per_sample
    h = period / n
    _, ys = rk4_scan(system.vector_field, y0, t0 - cycles * period, h, 1, cycles * n)
    _, last = rk4_scan(system.vector_field, ys[-1], t0, h, samples, per_sample)
    return analysis(harmonics, samples, last.dtype) @ last[:samples, :d]


@eqx.filter_jit
def _guess(system, y0, frequency, t0, harmonics, samples, cycles, per_sample):
    return transient_guess(system, y0, frequency=frequency, t0=t0, harmonics=harmonics, samples=samples,
                           cycles=cycles, per_sample=per_sample)


def steps_between_samples(period: float, samples: int, dt: float | None) -> int:
    """RK4 steps between two samples of the transient guess: at least 256 steps per period,
    and ``h <= dt``."""
    bound = 1 if dt is None else math.ceil(period / (samples * dt) * (1 - 1e-12))
    return max(1, -(-256 // samples), bound)


def observables(system, c, frequency: str, t0, fine: int, march: bool) -> dict:
    """Of the solution ``c`` (traceable): ``amplitude`` ``(n_dof,)``, ``input_work``,
    ``damping_dissipation`` and ``dissipation`` per cycle (their difference: friction's own
    power jumps at every slip onset, where a sampled mean converges only like ``1 / N``, while
    the drives' and dampers' power is smooth), over ``fine`` samples; ``x0``, the state at
    ``t0``, and the march's ``mismatch``."""
    period = 2 * jnp.pi / _omega(system, frequency)
    ts = t0 + jnp.arange(fine) * (period / fine)
    states, mismatch = sampled_states(c, system, frequency=frequency, t0=t0, samples=fine, march=march)
    rates = _rates(system, states, ts)
    hi, lo = extremes(c[:, :system.n_dof], fine)
    work, damping = period * jnp.mean(rates[:, -1]), period * jnp.mean(rates[:, -2])
    return {"amplitude": 0.5 * (hi - lo), "dissipation": work - damping, "damping_dissipation": damping,
            "input_work": work, "x0": states[0], "mismatch": mismatch}


def measure(system, c, frequency: str, t0, fine: int, flow_steps: int, march: bool, monodromy: bool = True) -> dict:
    """:func:`observables`, and the time-domain check at ``x(t0)`` (traceable): one period of
    the RK4 flow at ``flow_steps`` steps (``flow_residual``, ``flow_status``,
    ``stick_fraction``), with ``monodromy`` the monodromy of the period map (forward-mode AD:
    of that RK4 flow, or with ``march`` of :func:`.march.marched_period_map`), and the
    ``period``."""
    from ..._observables.stick import stick_fraction

    d = system.dynamical_size
    out = observables(system, c, frequency, t0, fine, march)
    period = 2 * jnp.pi / _omega(system, frequency)
    x0 = out["x0"]
    traj = period_trajectory(system, x0, t0, period, flow_steps)
    if monodromy:  # with marched elements, the period map that clips their states (module march)
        flow = (lambda z: marched_period_map(system, z, t0, period, flow_steps)) if march else \
            (lambda z: period_map(system, z, t0, period, flow_steps)[:d])
        out["monodromy"] = jax.jacfwd(flow)(x0)
    out["flow_residual"], out["flow_status"] = jnp.max(jnp.abs(traj.ys[-1, :d] - x0)), traj.status
    out["stick_fraction"], out["period"] = stick_fraction(traj), period
    return out


_measure = eqx.filter_jit(measure)


def check_stability(stability: str, march: bool) -> str:
    """``stability`` (``"floquet"`` or ``"hill"``), checked.

    Raises:
        ValueError: naming ``stability``: another value, or ``"hill"`` where hysteretic
            elements are marched (their states are a memory of the slip path, not states
            of the Hill matrix: :mod:`.hill`).
    """
    if stability not in ("hill", "floquet"):
        raise ValueError(f"stability must be 'floquet' or 'hill', got {stability!r}")
    if stability == "hill" and march:
        raise ValueError("stability='hill' needs the law's states among the unknowns; this system's hysteretic "
                         "elements are marched (use stability='floquet')")
    return stability


@eqx.filter_jit
def _balance_jacobian(system, c, frequency, t0, samples, march):
    """``dR/dc`` ``(K w, K w)`` of :func:`balance_residual` at ``c`` ``(K, w)``, flattened row by row."""
    return jax.jacfwd(lambda v: balance_residual(v.reshape(c.shape), system, frequency=frequency, t0=t0,
                                                 samples=samples, march=march).reshape(-1))(c.reshape(-1))


def _difference(fine_c, coarse_c, points: int):
    """``max_t |x_fine(t) - x_coarse(t)|`` per component over ``points`` phases."""
    h_fine = (fine_c.shape[0] - 1) // 2
    diff = fine_c - resized(coarse_c, h_fine)
    return np.max(np.abs(np.asarray(synthesis(h_fine, points, diff.dtype) @ diff)), axis=0)


@dataclasses.dataclass(frozen=True)
class HarmonicBalance:
    """A periodic steady state found by :func:`harmonic_balance` (host-side NumPy values).

    Attributes:
        system: the system (its parameters are the solution's).
        frequency: the path of the forcing frequency; ``omega`` its value (rad per time unit).
        t0: the phase (time) where the Fourier basis starts.
        harmonics, samples: ``H`` and the alternating frequency-time samples ``N`` per period.
        coefficients: ``(2 H + 1, w)``: ``[a_0, a_1, b_1, ..., a_H, b_H]`` of each unknown
            component (``x(t) = a_0 + sum a_k cos(k omega (t - t0)) + b_k sin(...)``): the
            whole dynamical state (``w = d``), or the positions and velocities (``w = 2
            n_dof``) where the law's states are marched (``internal``).
        internal: ``"unknowns"`` (the law's internal variables, if any, are among the
            coefficients) or ``"marched"`` (a hysteretic law's states marched through the
            period: :func:`sampled_states`).
        repeat_mismatch: the marched states' ``max |z(T) - z(0)|`` over the last period (0
            without a march): their orbit closes when it is at round-off.
        residual: ``|R(c)|_inf`` (state per time).
        converged, status: whether Newton converged (``"converged"``, ``"not converged"``,
            ``"non-finite"``).
        iterations: Newton steps of the last solve.
        error_estimate: ``(w,)``: per unknown component, the largest difference over the period to the
            solution with half the harmonics and half the samples (state units; NaN where it
            was not estimated): an estimate of the truncation and sampling error that errs
            on the safe side (the returned solution has the more harmonics of the two).
        relative_error: ``max_i error_estimate_i / max_i |x_i|`` over the positions and
            velocities.
        amplitude: ``(n_dof,)``: half the peak-to-peak range of each position (its extremes
            refined by Newton on the Fourier series: :func:`.fourier.extremes`).
        dissipation, damping_dissipation, input_work: friction and viscous energy dissipated
            and the drives' work per period (J). The drives' and the dampers' power are smooth
            and their sampled mean is spectrally accurate; friction's dissipation is their
            difference (on an orbit every stored energy repeats), because its own power jumps at
            every stick-slip transition, where a sampled mean converges only like ``1 / N``.
        y0: ``(d,)``: the dynamical state at ``t0`` (the marched states included).
        flow_residual: ``|phi_T(y0) - y0|_inf`` of the system's RK4 flow over one period at
            ``flow_steps`` steps: the agreement of the solution with the time-domain orbit
            (small where both resolve the motion).
        flow_status: the status of that RK4 period (0: a stable step).
        stability: how ``multipliers`` were found: ``"floquet"``, the monodromy of the period
            map at ``y0`` (``(d,)``: forward-mode AD of that RK4 flow, or where elements are
            marched of :func:`.march.marched_period_map`, whose stuck elements give
            multipliers 1), or ``"hill"``, Hill's method on the residual's Jacobian
            (:mod:`.hill`; ``(d,)``).
        multipliers: complex Floquet multipliers, by decreasing modulus; ``stable``: all in
            the closed unit circle up to 1e-6 (and the RK4 period ran with status 0).
    """

    system: Any
    frequency: str
    omega: float
    t0: float
    harmonics: int
    samples: int
    coefficients: np.ndarray
    internal: str
    repeat_mismatch: float
    residual: float
    converged: bool
    status: str
    iterations: int
    error_estimate: np.ndarray
    relative_error: float
    amplitude: np.ndarray
    dissipation: float
    damping_dissipation: float
    input_work: float
    y0: np.ndarray
    flow_residual: float
    flow_status: int
    flow_steps: int
    stability: str
    multipliers: np.ndarray
    stable: bool

    def states(self, t) -> np.ndarray:
        """The unknown components at times ``t`` (any shape): ``t.shape + (w,)`` (the whole
        dynamical state, or its positions and velocities where the law's states are marched)."""
        t = np.asarray(t, dtype=float)
        theta = self.omega * (t[..., None] - self.t0) * np.arange(1, self.harmonics + 1)
        c = self.coefficients
        return c[0] + np.cos(theta) @ c[1::2] + np.sin(theta) @ c[2::2]


def _check_guess(guess, d: int):
    g = np.asarray(guess, dtype=float)
    if g.ndim != 2 or g.shape[1] != d or g.shape[0] % 2 != 1:
        raise ValueError(f"guess must be Fourier coefficients of shape (2 H + 1, {d}), got {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError("guess must be finite")
    return g


def _checked(system, harmonics, samples, tol, max_steps, cycles, t0, dt, frequency):
    """The checks shared by :func:`harmonic_balance` and its batch; returns ``(samples,
    frequency path)``."""
    check_int("harmonics", harmonics, minimum=1)
    samples = default_samples(harmonics) if samples is None else samples
    check_int("samples", samples, minimum=2 * int(harmonics) + 1)
    check_real("tol", tol, positive=True)
    check_int("max_steps", max_steps, minimum=1)
    check_int("cycles", cycles, minimum=0)
    check_real("t0", t0)
    if dt is not None:
        check_real("dt", dt, positive=True)
    frequency = forcing_frequency_path(system, frequency)
    if frequency is None:
        raise ValueError(f"system: harmonic balance needs a forced system (a Harmonic drive, or frequency=); "
                         f"{type(system).__name__} has no forcing frequency")
    return int(samples), frequency


def harmonic_balance(system, y0=None, *, harmonics: int = 16, samples: int | None = None,
                     frequency: str | None = None, t0: float = 0.0, guess=None, accuracy: float | None = None,
                     max_harmonics: int = 512, tol: float = 1e-10, max_steps: int = 50, cycles: int = 20,
                     dt: float | None = None, estimate: bool = True, stability: str = "floquet",
                     warn: bool = True) -> HarmonicBalance:
    """The periodic steady state of a forced system by harmonic balance (module docstring).

    The start is the last period of a ``cycles``-period RK4 transient from ``y0`` (or
    ``guess``). With ``estimate`` (default) the problem is solved again with ``2 H``
    harmonics and ``2 N`` samples from the first solution, and the finer solution is returned
    with the difference of the two as its error estimate. With ``accuracy`` the harmonics and
    samples double until that estimate, relative to the largest position or velocity, is at
    most ``accuracy`` (or ``max_harmonics`` is reached: then ``warn``).

    Args:
        system: a jaxfriction system forced by a :class:`~jaxfriction.Harmonic` drive (or with
            ``frequency`` naming the forcing frequency), or a :class:`~jaxfriction.Template`.
        y0: ``(2 n_dof,)`` positions and velocities (or ``(dynamical_size,)``) to start the
            transient from; default rest at the origin.
        harmonics: ``H >= 1`` (the first solve's).
        samples: alternating frequency-time samples per period, ``> 2 H`` (default
            ``max(32, 8 H)``); doubled with the harmonics.
        frequency: the path of the forcing frequency (default: the Harmonic drives').
        t0: the phase (time) where the Fourier basis starts.
        guess: ``(2 H' + 1, w)`` coefficients to start Newton from instead of the transient
            (e.g. a neighbouring solution's; resized to ``H`` harmonics; ``w`` as in
            :attr:`HarmonicBalance.coefficients`).
        accuracy: target of :attr:`HarmonicBalance.relative_error` (> 0), or None.
        max_harmonics: the most harmonics ``accuracy`` may double to.
        tol: Newton's residual test ``|R|_inf <= tol max(1, |D c|_inf)``.
        max_steps: Newton iterations per solve.
        cycles: forcing periods of the transient (>= 0).
        dt: the largest RK4 step of the transient and of the time-domain check (time units;
            default ``T / 256`` and ``T / max(1000, 8 N)``): give it for a stiff law (LuGre's
            bristles, a fast attraction), whose RK4 transient is unstable at those steps.
        estimate: solve once more at ``2 H``, ``2 N`` for the error estimate.
        stability: ``"floquet"`` (default: the Floquet multipliers of the period map's
            monodromy at ``y0``, by forward-mode AD of the RK4 flow, or where hysteretic
            elements are marched of :func:`.march.marched_period_map`) or ``"hill"`` (Hill's
            method on the balance's Jacobian, :mod:`.hill`: no time integration; not for
            marched elements).
        warn: warn (UserWarning) when a solve did not converge or ``accuracy`` was not met.

    Returns:
        A :class:`HarmonicBalance`.

    Raises:
        ValueError: naming the argument: a system with no forcing frequency (``system``), bad
            ``harmonics``, ``samples``, ``tol``, ``max_steps``, ``cycles``, ``accuracy``,
            ``max_harmonics``, ``t0``, ``dt``, or a ``y0`` or ``guess`` of the wrong shape.

    Source: harmonic balance with alternating frequency-time evaluation (Cameron & Griffin
    1989, J. Appl. Mech. 56:149; Krack & Gross 2019, Sec. 3); Floquet multipliers of the
    time-domain orbit (:mod:`~jaxfriction._workflows.periodic.floquet`) or by Hill's method
    (Lazarus & Thomas 2010; :mod:`.hill`).

    Example::

        system = jf.Oscillator(law=jf.Quinn(mu=0.3, eps=0.05), force=jf.Harmonic(1.0, 0.8))
        hb = jf.harmonic_balance(system, harmonics=16)
        hb.amplitude, hb.dissipation, hb.relative_error, hb.stable
    """
    from ..._templates import split_template

    system, tpl = split_template(system)
    if tpl is not None:
        y0 = tpl.y0 if y0 is None else y0
        frequency = tpl.frequency if frequency is None else frequency
    samples, frequency = _checked(system, harmonics, samples, tol, max_steps, cycles, t0, dt, frequency)
    check_int("max_harmonics", max_harmonics, minimum=int(harmonics))
    if accuracy is not None:
        check_real("accuracy", accuracy, positive=True)
    d = system.dynamical_size
    march = marched(system)
    method = check_stability(stability, march)
    width = 2 * system.n_dof if march else d
    harmonics, samples, t0 = int(harmonics), int(samples), float(t0)
    period = float(2 * np.pi / np.asarray(_omega(system, frequency)))
    traced = traced_parameters(system, keep_zeros=True)  # another forcing frequency or mu reuses the compiled programs
    if guess is None:
        y = system.as_state(jnp.zeros(2 * system.n_dof) if y0 is None else y0)
        c = _guess(traced, y, frequency, t0, harmonics, samples, int(cycles),
                   steps_between_samples(period, samples, dt))[:, :width]
    else:
        c = resized(jnp.asarray(_check_guess(guess, width), jnp.result_type(float)), harmonics)
    out = jax.tree.map(np.asarray, _solve(traced, c, frequency, t0, samples, float(tol), int(max_steps), march))
    outs = [(harmonics, samples, out)]
    error = np.full(width, np.nan)
    while estimate or accuracy is not None:
        h, n, coarse = outs[-1]
        if 2 * h > max_harmonics:
            break
        fine = jax.tree.map(np.asarray, _solve(traced, resized(coarse["coefficients"], 2 * h), frequency, t0, 2 * n,
                                               float(tol), int(max_steps), march))
        outs.append((2 * h, 2 * n, fine))
        error = _difference(fine["coefficients"], coarse["coefficients"], 8 * n)
        if not (coarse["converged"] and fine["converged"]):  # a failed solve keeps its guess: no estimate
            error = np.full(width, np.nan)
        if accuracy is None or _relative(error, fine["coefficients"], system.n_dof) <= accuracy \
                or not fine["converged"]:
            break
    harmonics, samples, out = outs[-1]
    c = out["coefficients"]
    n_fine = 4 * samples
    flow_steps = max(FLOW_STEPS, 8 * samples, 1 if dt is None else math.ceil(period / dt * (1 - 1e-12)))
    m = jax.tree.map(np.asarray, _measure(traced, jnp.asarray(c), frequency, t0, n_fine, flow_steps, march,
                                          method == "floquet"))
    converged = all(bool(o["converged"]) for _, _, o in outs[-2:])
    status = "converged" if converged else ("non-finite" if not np.all(np.isfinite(c)) else "not converged")
    omega = float(np.asarray(_omega(system, frequency)))
    if method == "hill":
        jacobian = _balance_jacobian(traced, jnp.asarray(c), frequency, t0, samples, march)
        multipliers = hill_multipliers(jacobian, omega, width)
    else:
        multipliers = floquet_multipliers(m["monodromy"]) if np.all(np.isfinite(m["monodromy"])) else \
            np.full(d, np.nan + 0j)
    relative = _relative(error, c, system.n_dof)
    result = HarmonicBalance(
        system=system, frequency=frequency, omega=omega, t0=t0,
        harmonics=harmonics, samples=samples, coefficients=c, internal="marched" if march else "unknowns",
        repeat_mismatch=float(m["mismatch"]), residual=float(out["residual"]), converged=converged,
        status=status, iterations=int(out["steps"]), error_estimate=error, relative_error=relative,
        amplitude=m["amplitude"], dissipation=float(m["dissipation"]),
        damping_dissipation=float(m["damping_dissipation"]), input_work=float(m["input_work"]), y0=m["x0"],
        flow_residual=float(m["flow_residual"]), flow_status=int(m["flow_status"]), flow_steps=flow_steps,
        stability=method, multipliers=multipliers,
        stable=converged and int(m["flow_status"]) == 0 and is_stable(multipliers, False))
    if warn and not converged:
        warnings.warn(f"harmonic_balance did not converge ({status}): residual {result.residual:.3g} with "
                      f"{harmonics} harmonics; try another guess or y0, more cycles, or more harmonics",
                      UserWarning, stacklevel=2)
    elif warn and accuracy is not None and not relative <= accuracy:
        warnings.warn(f"harmonic_balance: estimated relative error {relative:.3g} above accuracy {accuracy:g} at "
                      f"{harmonics} harmonics (max_harmonics {max_harmonics})", UserWarning, stacklevel=2)
    return result


def _relative(error, c, n_dof: int) -> float:
    """The error estimate relative to the largest position or velocity over the period."""
    h = (c.shape[0] - 1) // 2
    x = np.asarray(synthesis(h, 8 * (2 * h + 1), c.dtype) @ jnp.asarray(c))[:, :2 * n_dof]
    size = float(np.max(np.abs(x))) if x.size else 0.0
    return float(np.max(error[:2 * n_dof]) / size) if size > 0 else float(np.max(error[:2 * n_dof]))
