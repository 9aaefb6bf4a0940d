"""Nonlinear modes of friction-damped systems: the extended periodic motion concept (EPMC).

Krack 2015 ("Nonlinear modal analysis of nonconservative systems: extension of the periodic
motion concept", Computers & Structures 154:59): the free, damped system is given an
artificial negative damping ``-xi M v`` that just balances its dissipation, so that its
motion at a modal amplitude ``a`` is periodic; the self-excitation ``xi`` (1/time) and the
frequency ``omega`` are unknowns besides the Fourier coefficients (:mod:`.balance`'s
residual without the drives, with ``xi v`` added to every velocity's rate). The phase is
fixed by a zero sine coefficient of the first harmonic of position ``dof``, the amplitude by
its cosine coefficient ``= a``. Along the amplitudes the solutions are the backbone: the
amplitude-dependent natural frequency ``omega(a)`` and modal damping ratio ``zeta(a) = xi /
(2 omega)`` (Krack 2015, eq. 12), and the dissipation per cycle ``D = xi oint v.M v dt``.

Hysteretic joints (Iwan, Segalman) are marched through the period (:func:`.march.marched`),
so a stuck joint's stiffness and its microslip damping come out of one solve per amplitude.
Derivatives of ``omega``, ``xi`` and the coefficients with respect to the system's parameters
follow from the implicit function theorem at the root (:func:`solve_mode`, as
:func:`~jaxfriction.solve_balance`).
"""

from __future__ import annotations

import warnings
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import check_choice, check_int, check_real, named_modules
from ..._forcing.drives import Harmonic
from ..._paths import set_parameters, traced_parameters
from ..periodic.flow import full_state
from .balance import default_samples, implicit_root, residual_at
from .batch import batch_values, run_batch
from .fourier import n_coefficients
from .march import marched, states_at


def unforced(system):
    """``system`` with the amplitude of every :class:`~jaxfriction.Harmonic` drive set to 0."""
    paths = {f"{path}.amplitude" if path else "amplitude": 0.0 for path, module in named_modules(system)
             if isinstance(module, Harmonic)}
    return set_parameters(system, paths) if paths else system


def _layout(shape, dof: int):
    """Indices of the free coefficients (all but the first harmonic's of position ``dof``)."""
    n = shape[0] * shape[1]
    fixed = (shape[1] + dof, 2 * shape[1] + dof)  # a_1 and b_1 of position dof
    return np.array([i for i in range(n) if i not in fixed]), fixed


def _coefficients(u, shape, dof, amplitude):
    free, (cos, sin) = _layout(shape, dof)
    c = jnp.zeros(shape[0] * shape[1], u.dtype).at[free].set(u[:-2]).at[cos].set(amplitude).at[sin].set(0.0)
    return c.reshape(shape)


def mode_residual(u, system, *, amplitude, dof: int, shape, samples: int, march: bool):
    """The EPMC residual of the unknowns ``u = [free coefficients, omega, xi]`` (the system
    unforced; the first harmonic of position ``dof`` is ``amplitude cos(omega t)``)."""
    c = _coefficients(u, shape, dof, amplitude)
    return residual_at(c, system, u[-2], t0=0.0, samples=samples, march=march, self_excitation=u[-1]).reshape(-1)


def solve_mode(system, u0, *, amplitude, dof: int, shape, samples: int, march: bool, tol: float,
               max_steps: int, refine: bool = True, chord: bool = False) -> dict:
    """The traceable core: Newton on :func:`mode_residual` from ``u0`` (inside ``jit``,
    ``vmap``), the root refined by one Newton step of the unfrozen system so that derivatives
    are the implicit function theorem's (as :func:`~jaxfriction.solve_balance`).

    Args:
        system: the unforced system (:func:`unforced`).
        u0: ``(n_free + 2,)``: free coefficients, ``omega``, ``xi``.
        amplitude: the modal amplitude ``a`` (position units).
        dof, shape, samples, march: the phase-fixed position, the coefficients' shape
            ``(2 H + 1, w)``, the samples, whether the law's states are marched.
        refine: the implicit-function step (False: values only, one Jacobian fewer).
        chord: the chord method instead of Newton (the Jacobian at ``u0`` only; see
            :func:`~jaxfriction._workflows.harmonic.balance.implicit_root`).

    Returns:
        Dict: ``u``, ``coefficients``, ``omega``, ``xi``, ``residual`` (``|R|_inf``),
            ``converged``, ``steps``.
    """
    u0 = jax.lax.stop_gradient(jnp.asarray(u0))

    def fn(u, s):
        return mode_residual(u, s, amplitude=amplitude, dof=dof, shape=shape, samples=samples, march=march)

    scale = jnp.maximum(1.0, jnp.abs(u0[-2]) * jnp.max(jnp.abs(u0[:-2])))
    u, found, steps = implicit_root(fn, u0, system, tol=tol, atol=tol * scale, max_steps=max_steps, refine=refine,
                                    chord=chord)
    residual = jnp.max(jnp.abs(fn(u, system)))
    return {"u": u, "coefficients": _coefficients(u, shape, dof, amplitude), "omega": u[-2], "xi": u[-1],
            "residual": residual, "converged": found & (residual <= tol * scale), "steps": steps}


@eqx.filter_jit
def _solve(system, u0, amplitude, dof, shape, samples, march, tol, max_steps):
    out = solve_mode(system, u0, amplitude=amplitude, dof=dof, shape=shape, samples=samples, march=march, tol=tol,
                     max_steps=max_steps)
    out["dissipation"] = _dissipation(system, out, samples, march)
    return out


def _dissipation(system, out, samples, march):
    """``xi oint v.M v dt`` over a period of the solution ``out`` (J): what the self-excitation
    feeds in, so what the system dissipates per cycle (smooth: a sampled mean is accurate)."""
    c, omega = out["coefficients"], out["omega"]
    states, _ = states_at(c, system, omega, t0=0.0, samples=4 * samples, march=march)
    n = system.n_dof
    masses = getattr(system, "masses", None)
    masses = getattr(system, "mass", 1.0) if masses is None else masses
    m = jnp.broadcast_to(jnp.reshape(jnp.asarray(masses, c.dtype), (-1,)), (n,))
    v = states[:, n:2 * n]
    return out["xi"] * (2 * jnp.pi / omega) * jnp.mean(jnp.sum(m * v * v, axis=1))


def linear_mode(system, mode: int = 0):
    """``(omega, xi, phi)`` of the linearization at rest of the unforced ``system``: the
    ``mode``-th slowest oscillating eigenvalue ``lambda`` of the first-order Jacobian (its
    internal states included: a stuck joint's stiffness), ``omega = Im lambda``, ``xi = -2
    Re lambda`` (the self-excitation that cancels its damping) and the eigenvector ``(d,)``.

    Raises:
        ValueError: naming ``mode`` when the linearization has fewer oscillating modes.
    """
    d = system.dynamical_size
    rest = system.as_state(jnp.zeros(2 * system.n_dof))[:d]
    jac = np.asarray(jax.jacfwd(lambda x: system.vector_field(0.0, full_state(system, x))[:d])(rest))
    values, vectors = np.linalg.eig(jac)
    oscillating = np.flatnonzero(values.imag > 1e-12 * max(1.0, float(np.max(np.abs(values)))))
    if len(oscillating) <= mode:
        raise ValueError(f"mode: the linearization at rest has {len(oscillating)} oscillating mode(s), got mode={mode}")
    i = oscillating[np.argsort(values.imag[oscillating])][mode]
    return float(values[i].imag), float(-2.0 * values[i].real), vectors[:, i]


def _checked(system, amplitudes, harmonics, samples, dof, mode, tol, max_steps):
    """The checked amplitudes ``(k,)`` and samples of :func:`nonlinear_mode` and its batch."""
    a = np.asarray(amplitudes, dtype=float).reshape(-1)
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 0) or np.any(np.diff(a) <= 0):
        raise ValueError(f"amplitudes must be positive and increasing, got {amplitudes!r}")
    check_int("harmonics", harmonics, minimum=1)
    samples = default_samples(harmonics) if samples is None else samples
    check_int("samples", samples, minimum=2 * int(harmonics) + 1)
    check_int("dof", dof, minimum=0)
    if dof >= system.n_dof:
        raise ValueError(f"dof must be below n_dof = {system.n_dof}, got {dof}")
    check_int("mode", mode, minimum=0)
    check_real("tol", tol, positive=True)
    check_int("max_steps", max_steps, minimum=1)
    return a, int(samples)


def _start(system, harmonics, dof, mode):
    """``(unforced system, march, shape, unknowns at unit amplitude, omega0, xi0)``: the
    linear mode at rest (:func:`linear_mode`) as the first guess, ``Re(phi e^{i omega t})``
    with ``phi[dof] = 1``."""
    free_system = unforced(system)
    march = marched(free_system)
    width = 2 * system.n_dof if march else system.dynamical_size
    shape = (n_coefficients(harmonics), width)
    omega0, xi0, phi = linear_mode(free_system, mode)
    phi = phi[:width] / phi[dof]
    c = np.zeros(shape)
    c[1], c[2] = phi.real, -phi.imag
    free, _ = _layout(shape, dof)
    return free_system, march, shape, np.concatenate([c.reshape(-1)[free], [omega0, xi0]]), omega0, xi0


def backbone_rows(free_system, unit, a, dof, shape, samples, march, tol, max_steps, warn) -> list:
    """The solutions (host arrays, :func:`solve_mode`'s dict with ``dissipation``) at the
    increasing amplitudes ``a``, each from the last converged one scaled to its amplitude
    (the first from ``unit``, the unknowns at unit amplitude)."""
    u = np.concatenate([unit[:-2] * a[0], unit[-2:]])
    rows, previous = [], a[0]
    traced = traced_parameters(free_system, keep_zeros=True)  # one program for every amplitude: arrays, not static floats
    for amplitude in a:
        u = np.concatenate([u[:-2] * (amplitude / previous), u[-2:]])
        out = jax.tree.map(np.asarray, _solve(traced, jnp.asarray(u), jnp.asarray(amplitude, jnp.result_type(float)),
                                              int(dof), shape, int(samples), march, float(tol), int(max_steps)))
        if bool(out["converged"]):
            u, previous = out["u"], amplitude
        rows.append(out)
        if warn and not bool(out["converged"]):
            warnings.warn(f"nonlinear_mode: amplitude {amplitude:g} did not converge (residual {float(out['residual']):.3g})",
                          UserWarning, stacklevel=2)
    return rows


def nonlinear_mode(system, amplitudes, *, harmonics: int = 8, samples: int | None = None, dof: int = 0,
                   mode: int = 0, tol: float = 1e-10, max_steps: int = 50, warn: bool = True):
    """The backbone of a nonlinear mode by the extended periodic motion concept (module docstring).

    The amplitudes are solved in increasing order, each from the last solution scaled to its
    amplitude (the first from the linearization at rest, :func:`linear_mode`).

    Args:
        system: a jaxfriction system (its harmonic drives are switched off).
        amplitudes: ``(k,)`` modal amplitudes ``a`` > 0 (position units of ``dof``).
        harmonics: ``H``; samples: per period (default ``max(32, 8 H)``).
        dof: the position whose first harmonic is ``a cos(omega t)``.
        mode: which mode of the linearization to start from (0: the slowest).
        tol: Newton's residual test; max_steps: Newton iterations per amplitude.
        warn: warn (UserWarning) when an amplitude did not converge.

    Returns:
        ``xarray.Dataset`` over ``amplitude``: ``frequency`` (rad per time unit),
            ``damping_ratio`` (``xi / (2 omega)``), ``self_excitation`` (``xi``),
            ``dissipation`` (per cycle, J: ``xi oint v.M v dt``), ``residual``,
            ``converged``, ``coefficients`` (``amplitude, coefficient, component``). Attributes:
            ``harmonics``, ``samples``, ``dof``, ``internal`` (``"marched"`` or ``"unknowns"``),
            ``linear_frequency``, ``linear_damping_ratio`` (of the linearization).

    Raises:
        ValueError: naming the argument: ``amplitudes`` not positive or not increasing,
            ``harmonics``, ``samples``, ``dof``, ``mode``, ``tol``, ``max_steps``.

    Source: Krack 2015, Computers & Structures 154:59, Secs. 2-3 (EPMC, the modal damping
    ratio ``xi / (2 omega)``); harmonic balance with alternating frequency-time evaluation.
    """
    import xarray as xr

    a, samples = _checked(system, amplitudes, harmonics, samples, dof, mode, tol, max_steps)
    free_system, march, shape, unit, omega0, xi0 = _start(system, harmonics, dof, mode)
    rows = backbone_rows(free_system, unit, a, dof, shape, samples, march, tol, max_steps, warn)
    omega = np.array([float(r["omega"]) for r in rows])
    xi = np.array([float(r["xi"]) for r in rows])
    return xr.Dataset(
        {"frequency": ("amplitude", omega), "damping_ratio": ("amplitude", xi / (2 * omega)),
         "self_excitation": ("amplitude", xi),
         "dissipation": ("amplitude", np.array([float(r["dissipation"]) for r in rows])),
         "residual": ("amplitude", np.array([float(r["residual"]) for r in rows])),
         "converged": ("amplitude", np.array([bool(r["converged"]) for r in rows])),
         "coefficients": (("amplitude", "coefficient", "component"), np.stack([r["coefficients"] for r in rows]))},
        coords={"amplitude": a},
        attrs={"harmonics": int(harmonics), "samples": int(samples), "dof": int(dof),
               "internal": "marched" if march else "unknowns", "linear_frequency": omega0,
               "linear_damping_ratio": xi0 / (2 * omega0)})



def nonlinear_mode_batch(system, values: dict, amplitudes, *, harmonics: int = 8, samples: int | None = None,
                         dof: int = 0, mode: int = 0, tol: float = 1e-10, max_steps: int = 50,
                         solver: str = "chord", chunk_size: int = 256, out_dir=None, devices=None,
                         progress: bool = False) -> dict:
    """Backbones of one nonlinear mode for a batch of parameter sets: ``jax.vmap`` over the sets
    of a ``lax.scan`` over the amplitudes (each solve starts from the last, scaled), in chunks
    of ``chunk_size`` sets sharded over ``devices``, and with ``out_dir`` saved chunk by
    chunk and resumable: the sweep engine of :func:`~jaxfriction.sweep` (a run interrupted
    and started again with the same arguments loads the finished chunks and computes the
    rest, with the same result).

    Every set starts from the linearization of ``system`` itself (:func:`linear_mode`) at the
    smallest amplitude, so the sets should be a spread around it (an uncertainty study, a
    design box), not different structures.

    Args:
        system: as :func:`nonlinear_mode` (the nominal parameters).
        values: dict path -> ``(B,)`` values, all of one length.
        amplitudes: ``(k,)`` positive, increasing.
        harmonics, samples, dof, mode, tol, max_steps: as :func:`nonlinear_mode`.
        solver: ``"chord"`` (default): each amplitude's solve takes the Jacobian once, at its
            guess (the last amplitude's solution, scaled), and iterates on it (optimistix's
            ``Chord``); ``"newton"``: a Jacobian at every iteration, as
            :func:`nonlinear_mode`. Both stop at the same tolerance on the residual, so they
            give the same backbone to it (measured on Segalman's 100-element joint, 128 sets
            x 20 amplitudes: frequencies within 1.2e-11, damping ratios and dissipations
            within 1.3e-9, every solve converged); the chord method took 4.0 s against
            10.6 s there. A set that the chord method does not converge within ``max_steps``
            is flagged (``converged`` False, ``STATUS_NOT_PERIODIC``): run it again with
            ``"newton"``.
        chunk_size: sets per vectorized call (>= 1).
        out_dir: folder for the chunk files (None: in memory, not resumable); a folder
            holding a batch of other arguments is refused.
        devices: devices to shard each chunk over (default ``jax.local_devices()``).
        progress: a progress bar over the chunks.

    Returns:
        Dict of NumPy arrays: ``frequency``, ``damping_ratio``, ``dissipation``, ``residual``,
            ``converged`` ``(B, k)``, ``status`` ``(B,)`` (0, or ``STATUS_NOT_PERIODIC``
            where an amplitude did not converge), ``amplitude`` ``(k,)``, and the ints
            ``chunks_computed`` and ``chunks_loaded`` (from ``out_dir``).

    Raises:
        ValueError: as :func:`nonlinear_mode`, or naming ``values`` (no paths, unknown
            paths, lengths that differ), ``chunk_size``, or ``out_dir`` (a file, a batch of
            other arguments).
    """
    a, samples = _checked(system, amplitudes, harmonics, samples, dof, mode, tol, max_steps)
    check_choice("solver", solver, ("chord", "newton"))
    arrays = batch_values(system, values)
    free_system, march, shape, unit, _, _ = _start(system, harmonics, dof, mode)
    # the system's floats as arrays: a batch at other fixed values reuses the compiled chunk program
    lane = _BackboneLane(traced_parameters(free_system, keep_zeros=True), jnp.asarray(unit), jnp.asarray(a),
                         int(dof), shape, int(samples), march, float(tol), int(max_steps), solver == "chord")
    result = run_batch(lane, arrays, "nonlinear_mode_batch", ("frequency", "xi", "dissipation", "residual"),
                       chunk_size=chunk_size, out_dir=out_dir, devices=devices, progress=progress)
    result["damping_ratio"] = result.pop("xi") / (2 * result["frequency"])
    result["amplitude"] = a
    return result


class _BackboneLane(eqx.Module):
    """One parameter set's backbone (a lane of :func:`nonlinear_mode_batch`'s sweep): a
    ``lax.scan`` over the amplitudes, each solve from the last converged one, scaled."""

    system: Any
    unit: jax.Array
    amplitudes: jax.Array
    dof: int = eqx.field(static=True)
    shape: tuple = eqx.field(static=True)
    samples: int = eqx.field(static=True)
    march: bool = eqx.field(static=True)
    tol: float = eqx.field(static=True)
    max_steps: int = eqx.field(static=True)
    chord: bool = eqx.field(static=True)

    def __call__(self, **point):
        from ..._integrate.status import STATUS_NOT_PERIODIC, STATUS_OK

        s = set_parameters(self.system, point)
        amplitudes, u0 = self.amplitudes, self.unit

        def one(carry, amplitude):
            u, previous = carry
            guess = jnp.concatenate([u[:-2] * (amplitude / previous), u[-2:]])
            out = solve_mode(s, guess, amplitude=amplitude, dof=self.dof, shape=self.shape, samples=self.samples,
                             march=self.march, tol=self.tol, max_steps=self.max_steps, refine=False,  # values only
                             chord=self.chord)
            ok = out["converged"]
            carry = (jnp.where(ok, out["u"], u), jnp.where(ok, amplitude, previous))
            return carry, {"frequency": out["omega"], "xi": out["xi"],
                           "dissipation": _dissipation(s, out, self.samples, self.march),
                           "residual": out["residual"], "converged": ok.astype(jnp.int32)}

        start = u0 * jnp.concatenate([jnp.full(u0.shape[0] - 2, amplitudes[0]), jnp.ones(2)])
        _, rows = jax.lax.scan(one, (start, amplitudes[0]), amplitudes)
        status = jnp.where(jnp.all(rows["converged"] > 0), STATUS_OK, STATUS_NOT_PERIODIC)
        return {**rows, "status": status}
