"""The steady-state measure of a sweep lane: a short transient, a shooting solve, one period.

``jf.sweep(system, grid, steady_state=True)`` (or a :class:`SteadyState` with options)
measures every lane on its periodic steady state instead of the last of many transient
cycles: the lane runs ``transient_cycles`` forcing periods from ``y0`` with the step of the
period map, solves ``phi_T(x) = x`` by Newton from there (:func:`~.shooting.shoot`, forward-mode
Jacobian of the RK4 period map), saves the orbit's period at every step and evaluates the
sweep's observables on it (the same functions of a :class:`~jaxfriction.Trajectory` as a
window: ``dissipation`` is then Quinn's D of the steady state), plus ``residual``
(``|phi_T(x) - x|_inf``) and ``period``. Derivatives (``wrt``) come from the implicit function
theorem at the orbit (optimistix's implicit adjoint), never through the transient.

A lane whose solve does not converge (or whose orbit is not finite) gets
``STATUS_NOT_PERIODIC`` and keeps its observables, residual included, so the dataset shows
how far from periodic it is; a lane whose RK4 step is unstable keeps that status.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from ..._checks import check_choice, check_int, check_real
from ..._integrate.rk4 import rk4_scan
from ..._integrate.status import STATUS_NOT_PERIODIC, STATUS_OK, combine_status
from .period import forcing_period
from .shooting import SOLVERS, shoot


class SteadyState(eqx.Module):
    """Options of a steady-state sweep (``jf.sweep(..., steady_state=SteadyState(...))``;
    ``steady_state=True`` is ``SteadyState()``).

    Attributes:
        transient_cycles: forcing periods run from ``y0`` before the solve (int >= 0); a few
            suffice where the 50-cycle default spends 49.
        tol: the residual test ``|phi_T(x) - x|_inf <= tol max(1, |x|_inf)``.
        max_steps: Newton (or LM) iterations allowed; a lane that needs more is
            ``STATUS_NOT_PERIODIC``. Under ``vmap`` a chunk's Newton loop runs until its
            slowest lane stops, so this bound is what every lane of a chunk with one
            non-periodic lane pays: 12 covers all but one of the 1,024 lanes of the
            oscillator template's grid at 32 x 32 (most converge in 1-7 iterations; the one
            left has a multiplier of 1.0002 and no period-1 orbit nearby).
        solver: ``"newton"`` or ``"lm"``.

    Raises:
        ValueError: naming an invalid field.
    """

    transient_cycles: int = eqx.field(default=5, static=True)
    tol: float = eqx.field(default=1e-10, static=True)
    max_steps: int = eqx.field(default=12, static=True)
    solver: str = eqx.field(default="newton", static=True)

    def __check_init__(self):
        check_int("transient_cycles", self.transient_cycles, minimum=0)
        check_real("tol", self.tol, positive=True, scalar=True)
        check_int("max_steps", self.max_steps, minimum=1)
        check_choice("solver", self.solver, SOLVERS)


def as_steady_state(option) -> SteadyState | None:
    """None for ``None``/``False``, :class:`SteadyState()` for ``True``, the object itself.

    Raises:
        ValueError: naming ``steady_state`` for anything else.
    """
    if option is None or option is False:
        return None
    if option is True:
        return SteadyState()
    if isinstance(option, SteadyState):
        return option
    raise ValueError(f"steady_state must be True, False or a jaxfriction.SteadyState, got {option!r}")


class SteadyStateMeasure(eqx.Module):
    """A lane's periodic steady state measured by ``observables`` (module docstring)."""

    y0: jax.Array
    frequency: str = eqx.field(static=True)
    n_steps: int = eqx.field(static=True)
    options: SteadyState = eqx.field(static=True)
    observables: tuple = eqx.field(static=True)  # ((name, ByCode(function of a Trajectory)), ...)

    #: why the fused kernel does not run it (read by the kernel's support check)
    fused_reason = "a steady-state lane solves for its orbit (Newton), which the fused kernel does not"

    def __call__(self, system, kind):
        period = forcing_period(system, self.frequency)
        n, opts = self.n_steps, self.options
        d = system.dynamical_size
        y = self.y0
        if opts.transient_cycles:  # no derivative through the transient: the orbit's comes from the IFT
            frozen = jax.tree.map(lambda x: jax.lax.stop_gradient(x) if eqx.is_array(x) else x, system)
            _, ys = rk4_scan(frozen.vector_field, y, 0.0, jax.lax.stop_gradient(period) / n, 1,
                             opts.transient_cycles * n)
            y = ys[-1]
        out = shoot(system, y[:d], frequency=self.frequency, t0=0.0, n_steps=n, tol=opts.tol,
                    max_steps=opts.max_steps, solver=opts.solver)
        traj = out["trajectory"]
        outputs = {name: jnp.asarray(fn(traj)) for name, fn in self.observables}
        outputs.update(residual=out["residual"], period=out["period"])
        status = combine_status(traj.status, jnp.where(out["converged"], STATUS_OK, STATUS_NOT_PERIODIC))
        return outputs, status


def steady_state_parts(system, grid, options: SteadyState, *, frequency, dt, y0, observables):
    """The steady-state measure of a sweep and its settings: ``(measure, settings, attrs,
    steps_per_lane)`` for :func:`~jaxfriction._workflows.sweep.sweep._plan`.

    The steps per period ``n`` are fixed for every lane (a static loop length): ``n =
    ceil(T_max / dt)`` with ``T_max`` the longest forcing period of the grid (a swept
    frequency's smallest value), so ``h = T / n <= dt`` in every lane.

    Raises:
        ValueError: naming ``steady_state`` for an autonomous system (no forcing to take the
            period from), ``frequency`` or ``dt`` when missing or invalid.
    """
    import math

    import numpy as np

    from ..._integrate.resolution import check_step_resolution
    from ..._paths import get_parameter
    from ..identity import ByCode, function_digest
    from .flow import steps_per_period
    from .period import forcing_frequency_path

    frequency = forcing_frequency_path(system, frequency)
    if frequency is None:
        raise ValueError("steady_state: the system has no forcing to take the period from (an autonomous system); "
                         "use jf.periodic_orbit with a period guess, or a window sweep")
    if dt is None:
        raise ValueError("dt is required for a steady-state sweep (the RK4 step bound), unless a Template gives it")
    check_real("dt", dt, positive=True)
    omegas = np.abs(np.asarray(grid[frequency] if frequency in grid else get_parameter(system, frequency),
                               dtype=float))
    if not np.all(np.isfinite(omegas)) or np.any(omegas <= 0):
        raise ValueError(f"frequency: {frequency} must be finite and non-zero for a steady-state sweep, got {omegas}")
    longest = 2 * math.pi / float(np.min(omegas))
    check_step_resolution(system, dt, swept=grid, frequency=frequency)
    n = max(steps_per_period(longest, dt), 20)
    measure = SteadyStateMeasure(y0=y0, frequency=frequency, n_steps=n, options=options,
                                 observables=tuple((k, ByCode(f)) for k, f in observables.items()))
    settings = {"steady_state": [options.transient_cycles, options.tol, options.max_steps, options.solver],
                "frequency": frequency, "dt": float(dt), "n_steps": n, "y0": np.asarray(y0).tolist(),
                "observables": sorted((k, function_digest(f)) for k, f in observables.items())}
    attrs = {"steady_state": 1, "transient_cycles": options.transient_cycles, "tol": options.tol,
             "max_steps": options.max_steps, "shooting_solver": options.solver, "frequency": frequency,
             "dt": float(dt), "steps_per_period": n,
             "observables": ",".join([*observables, "residual", "period"])}
    return measure, settings, attrs, (options.transient_cycles + 1) * n
