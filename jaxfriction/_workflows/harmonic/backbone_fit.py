"""Joint parameters from a measured backbone: amplitude-dependent frequency and damping.

A ring-down or a stepped-sine (phase-resonance) test of a jointed structure gives its
backbone: at each vibration amplitude ``a_i`` the natural frequency ``omega_i`` and the
modal damping ratio ``zeta_i``. :func:`fit_backbone` finds the parameters of a model whose
nonlinear mode (:func:`~jaxfriction.nonlinear_mode`, the extended periodic motion concept of
Krack 2015) reproduces them: weighted least squares on the differences at the measured
amplitudes, solved by optimistix's Levenberg-Marquardt with every amplitude's mode solved
inside the residual (:func:`~jaxfriction.solve_mode`, vmapped over the amplitudes) and
differentiated by the implicit function theorem, so the Jacobian is exact and no mode is
differentiated through its Newton iterations. Each solve starts from the backbone at the
guess.
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

from ..._checks import check_real
from ..._paths import check_paths, set_parameters, traced_parameters
from ..fit.problem import natural_parameters
from ..fit.result import FitWarning
from .modes import _checked, _start, backbone_rows, solve_mode

#: An estimate within this fraction of its box's width from an edge is reported at the bound;
#: within :data:`NEAR_EDGE` when the optimizer stopped unconverged (the logistic map of a boxed
#: parameter only approaches its edges: an optimum beyond one draws the estimate towards it
#: ever more slowly, 1.4e-3 of the width away after 100 iterations in the tests).
EDGE = 1e-3
NEAR_EDGE = 2e-2


@dataclasses.dataclass(frozen=True)
class BackboneFit:
    """The result of :func:`fit_backbone` (host-side values).

    Attributes:
        names: the fitted parameter paths.
        params: path -> estimate; stderr: path -> standard error (from the Jacobian at the
            estimate: ``s^2 (J^T J)^-1`` with ``s^2`` the residual variance, or with
            ``noise`` given the measurement variances themselves).
        converged: Levenberg-Marquardt converged, every amplitude's mode solve converged and
            no estimate is at a bound.
        message: how the optimizer stopped.
        steps: its iterations.
        amplitudes: ``(k,)`` the measured amplitudes (position units of ``dof``).
        frequency, damping_ratio: ``(k,)`` the fitted model's backbone there (rad per time
            unit; ratio).
        measured_frequency, measured_damping_ratio: ``(k,)`` the data (None where not given).
        residual_std: the standard deviation of the weighted residuals (relative differences,
            or in units of ``noise``).
        n_data: number of residuals.
        bound_edges: path -> ``"lower"`` or ``"upper"`` for estimates within 1e-3 of the
            box's width from an edge, or 2e-2 when the optimizer stopped unconverged (their
            standard errors mean little).
        system: the system with the estimates set.
    """

    names: tuple
    params: dict
    stderr: dict
    converged: bool
    message: str
    steps: int
    amplitudes: np.ndarray
    frequency: np.ndarray
    damping_ratio: np.ndarray
    measured_frequency: np.ndarray | None
    measured_damping_ratio: np.ndarray | None
    residual_std: float
    n_data: int
    bound_edges: dict
    system: Any

    def summary(self) -> str:
        """A text report: estimates and standard errors (estimates at a bound marked), the
        residuals of each series, and how the optimizer stopped."""
        width = max(12, *(len(n) for n in self.names))
        lines = [f"{'parameter':<{width}} {'estimate':>14} {'stderr':>12} {'rel. stderr':>12}"]
        for name in self.names:
            value, err = self.params[name], self.stderr[name]
            rel = abs(err / value) if value != 0 else math.inf
            row = f"{name:<{width}} {value:>14.6g} {err:>12.3g} {rel:>12.2%}"
            if name in self.bound_edges:
                row += f"  AT {self.bound_edges[name].upper()} BOUND"
            lines.append(row)
        for label, model, data in (("frequency", self.frequency, self.measured_frequency),
                                   ("damping ratio", self.damping_ratio, self.measured_damping_ratio)):
            if data is not None:
                rel = np.abs(model - data) / np.maximum(np.abs(data), 1e-300)
                lines.append(f"{label}: largest relative difference {np.max(rel):.3g} over {len(data)} amplitudes")
        lines.append(f"residual std {self.residual_std:.4g} ({self.n_data} residuals, {len(self.names)} parameters)")
        lines.append(f"{'converged' if self.converged else 'NOT converged'} ({self.message}, {self.steps} steps)")
        return "\n".join(lines)


def _series(name, values, k):
    if values is None:
        return None
    v = np.asarray(values, dtype=float).reshape(-1)
    if v.shape != (k,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be {k} finite values, one per amplitude, got {np.shape(values)}")
    return v


def fit_backbone(system, guess: dict, amplitudes, *, frequency=None, damping_ratio=None, bounds: dict | None = None,
                 noise: tuple | None = None, harmonics: int = 8, samples: int | None = None, dof: int = 0,
                 mode: int = 0, max_steps: int = 100, tol: float = 1e-10, warn: bool = True) -> BackboneFit:
    """Fit parameters of ``system`` to a measured backbone (module docstring).

    Args:
        system: a jaxfriction system (its harmonic drives are switched off), e.g.
            :func:`~jaxfriction.jointed_oscillator` or :func:`~jaxfriction.jointed_bar`.
        guess: path -> initial value of every fitted scalar parameter (``{"law.K_T": 2.5}``).
        amplitudes: ``(k,)`` increasing modal amplitudes ``a > 0`` of the measurements: the
            first harmonic's amplitude of position ``dof`` (its units).
        frequency: ``(k,)`` measured natural frequencies (rad per time unit), or None.
        damping_ratio: ``(k,)`` measured modal damping ratios, or None (at least one of the
            two).
        bounds: path -> ``(low, high)`` boxes for some or all parameters (the guess inside).
        noise: ``(sigma_frequency, sigma_damping_ratio)``, the measurements' standard
            deviations; None (default): residuals are relative differences and their variance
            is estimated from the fit.
        harmonics, samples, dof, mode: as :func:`~jaxfriction.nonlinear_mode`.
        max_steps: Levenberg-Marquardt iterations at most (and each mode solve's Newton).
        tol: the mode solves' residual test.
        warn: a :class:`~jaxfriction.FitWarning` when the fit did not converge or an estimate
            is at a bound.

    Returns:
        A :class:`BackboneFit`.

    Raises:
        ValueError: naming the argument: an empty or unknown ``guess``, non-finite values,
            ``amplitudes`` not positive and increasing, series of another length, neither
            series given, a box that does not hold its guess, ``noise`` not two positive
            numbers, or a backbone that does not converge at the guess.

    Source: the extended periodic motion concept (Krack 2015, Computers & Structures 154:59);
    identification of joint parameters from backbones as in Segalman 2005 (J. Appl. Mech.
    72:752) and Krack & Gross 2019, Sec. 5.
    """

    if not isinstance(guess, dict) or not guess:
        raise ValueError("guess must be a non-empty dict path -> initial value")
    names = tuple(guess)
    check_paths(system, list(names), "guess")
    p0 = np.array([check_real(f"guess[{n!r}]", v, scalar=True) for n, v in guess.items()], dtype=float)
    a, samples = _checked(system, amplitudes, harmonics, samples, dof, mode, tol, max_steps)
    f_data, z_data = _series("frequency", frequency, a.size), _series("damping_ratio", damping_ratio, a.size)
    if f_data is None and z_data is None:
        raise ValueError("frequency, damping_ratio: give at least one measured series")
    lo, hi = np.full(len(names), -np.inf), np.full(len(names), np.inf)
    for path, box in (bounds or {}).items():
        if path not in names:
            raise ValueError(f"bounds: {path!r} is not a fitted parameter (one of {list(names)})")
        low, high = (float(b) for b in box)
        i = names.index(path)
        if not (math.isfinite(low) and math.isfinite(high) and low < p0[i] < high):
            raise ValueError(f"bounds[{path!r}] = {box} must be finite with the guess {p0[i]:g} strictly inside")
        lo[i], hi[i] = low, high
    if noise is not None:
        if len(noise) != 2 or not all(math.isfinite(float(s)) and float(s) > 0 for s in noise):
            raise ValueError(f"noise must be (sigma_frequency, sigma_damping_ratio), both > 0, got {noise!r}")
    started = set_parameters(system, dict(zip(names, p0)))
    free_system, march, shape, unit, _, _ = _start(started, harmonics, dof, mode)
    rows = backbone_rows(free_system, unit, a, dof, shape, samples, march, tol, max_steps, warn=False)
    failed = [float(x) for x, r in zip(a, rows) if not bool(r["converged"])]
    if failed:
        raise ValueError(f"guess: the backbone at the guess did not converge at amplitudes {failed}")
    starts = jnp.asarray(np.stack([r["u"] for r in rows]))
    bounded = np.isfinite(lo)
    scale_f = np.full(a.size, float(noise[0])) if noise is not None else np.abs(f_data) if f_data is not None else None
    scale_z = None
    if z_data is not None:
        scale_z = np.full(a.size, float(noise[1])) if noise is not None else \
            np.maximum(np.abs(z_data), 1e-3 * np.max(np.abs(z_data)))
    kinds = tuple("interval" if b else "free" for b in bounded)
    data = {"a": jnp.asarray(a), "starts": starts, "p0": jnp.asarray(p0), "lo": jnp.asarray(np.where(bounded, lo, 0.0)),
            "hi": jnp.asarray(np.where(bounded, hi, 1.0))}
    series = tuple((jnp.asarray(d), jnp.asarray(s), kind) for d, s, kind in
                   ((f_data, scale_f, "frequency"), (z_data, scale_z, "damping")) if d is not None)
    static = (names, kinds, dof, shape, samples, march, float(tol), int(max_steps), series)
    # the system's floats (the guess among them) as arrays: another guess compiles nothing
    out = jax.tree.map(np.asarray, _fit(traced_parameters(free_system, keep_zeros=True), data, static, int(max_steps)))
    theta = out["theta"]
    jac, resid = out["jacobian"], out["residuals"]
    n, p = resid.size, len(names)
    variance = 1.0 if noise is not None else float(resid @ resid) / max(n - p, 1)
    try:
        cov = variance * np.linalg.inv(jac.T @ jac)
        stderr = np.sqrt(np.maximum(np.diag(cov), 0.0))
    except np.linalg.LinAlgError:
        stderr = np.full(p, np.inf)
    edges = {}
    margin = EDGE if bool(out["successful"]) else NEAR_EDGE
    for i, name in enumerate(names):
        if bounded[i]:
            width = hi[i] - lo[i]
            if theta[i] - lo[i] <= margin * width:
                edges[name] = "lower"
            elif hi[i] - theta[i] <= margin * width:
                edges[name] = "upper"
    converged = bool(out["successful"]) and bool(np.all(out["converged"])) and not edges
    message = "Levenberg-Marquardt converged" if bool(out["successful"]) else "Levenberg-Marquardt stopped unconverged"
    if edges:  # the optimum lies outside the box: the logistic map drives the estimate to its edge
        message = f"stopped at a bound of the box ({', '.join(f'{n} {e}' for n, e in edges.items())})"
    if not np.all(out["converged"]):
        message += f"; mode solves failed at amplitudes {a[~out['converged']].tolist()}"
    result = BackboneFit(
        names=names, params=dict(zip(names, map(float, theta))), stderr=dict(zip(names, map(float, stderr))),
        converged=converged, message=message, steps=int(out["steps"]), amplitudes=a, frequency=out["omega"],
        damping_ratio=out["zeta"], measured_frequency=f_data, measured_damping_ratio=z_data,
        residual_std=float(np.std(resid)), n_data=n, bound_edges=edges,
        system=set_parameters(system, dict(zip(names, map(float, theta)))))
    if warn and edges:
        warnings.warn(f"fit_backbone: estimates at a bound: {edges} (the optimum lies outside the box; their "
                      "standard errors mean little)", FitWarning, stacklevel=2)
    elif warn and not converged:
        warnings.warn(f"fit_backbone did not converge: {message}", FitWarning, stacklevel=2)
    return result


@eqx.filter_jit
def _fit(free_system, data, static, max_steps):
    import optimistix as optx

    names, kinds, dof, shape, samples, march, tol, newton_steps, series = static

    def backbone(theta):
        s = set_parameters(free_system, {n: theta[i] for i, n in enumerate(names)})
        outs = jax.vmap(lambda u0, amplitude: solve_mode(
            s, u0, amplitude=amplitude, dof=dof, shape=shape, samples=samples, march=march, tol=tol,
            max_steps=newton_steps))(data["starts"], data["a"])
        return outs["omega"], outs["xi"] / (2 * outs["omega"]), outs["converged"]

    def residuals(theta):
        omega, zeta, _ = backbone(theta)
        model = {"frequency": omega, "damping": zeta}
        return jnp.concatenate([(model[kind] - d) / scale for d, scale, kind in series])

    def natural(x):  # the transforms of jf.fit: a logistic map into a box, p0 + |p0| x without one
        return natural_parameters(x, kinds, data["lo"], data["hi"], data["p0"])

    def unconstrained(x, _):
        return residuals(natural(x))

    solver = optx.LevenbergMarquardt(rtol=1e-10, atol=1e-12)
    sol = optx.least_squares(unconstrained, solver, jnp.zeros_like(data["p0"]), max_steps=max_steps, throw=False)
    theta = natural(sol.value)
    omega, zeta, converged = backbone(theta)
    return {"theta": theta, "jacobian": jax.jacfwd(residuals)(theta), "residuals": residuals(theta), "omega": omega,
            "zeta": zeta, "converged": converged, "successful": sol.result == optx.RESULTS.successful,
            "steps": sol.stats["num_steps"]}
