"""Contract checks for friction laws and systems: run them on your own (``jaxfriction.testing``).

A law or system that passes works in every workflow (sweep, fit, sensitivity, the command
line). The library's own laws and systems pass them (``tests/test_contracts.py``).

>>> import jaxfriction as jf
>>> from jaxfriction.testing import check_law
>>> check_law(jf.Quinn(mu=0.5, eps=0.02))  # raises AssertionError naming what fails
Quinn passes the friction-law contract: bound, odd symmetry, force balance at zero slip, finite derivatives, constraints, slope bounded

:func:`check_dynamic_law` does the same for laws with internal state
(:class:`~jaxfriction.AbstractDynamicLaw`: LuGre, Dahl, Iwan, rate-and-state).
:func:`check_fused` checks that a system runs in the fused GPU kernel
(:class:`~jaxfriction.FusedKernel`) as it runs on the XLA path, and that the kernel lowers
for a GPU; with ``kernel="compiled"``, the same for the compiled CPU loop
(:class:`~jaxfriction.CompiledLoopKernel`).

The functions raise ``AssertionError`` listing every property that fails, and return a
:class:`ContractReport` naming what was checked when all hold. Run them with JAX's 64-bit mode on, as the tests do (the tolerances
are float64's).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from ._checks import constraints_hold
from ._integrate.rk4 import rk4_step
from ._integrate.simulate import simulate
from ._integrate.trajectory import Trajectory
from ._laws.base import AbstractFrictionLaw
from ._laws.dynamic import AbstractDynamicLaw, friction_power
from ._laws.passivity import passivity as run_passivity
from ._laws.passivity import passivity_margin
from ._laws.vector import project_to_disc
from ._observables.energy import relative_energy_residual
from ._paths import get_parameter, scalar_parameter_paths, set_parameters
from ._systems.base import AbstractFrictionSystem

if TYPE_CHECKING:
    import xarray as xr


class ContractReport(NamedTuple):
    """What a contract check verified: ``subject`` (the law's or system's class name),
    ``contract`` (which one), ``checks`` (the properties, all of which hold) and ``notes``
    (findings that are reported but not required, e.g. a dynamic law that is not passive).
    Printed, one line."""

    subject: str
    contract: str
    checks: tuple
    notes: tuple = ()

    def __repr__(self):
        notes = "".join(f"; note: {n}" for n in self.notes)
        return f"{self.subject} passes the {self.contract} contract: {', '.join(self.checks)}{notes}"


def _fail(what, problems, contract=None, checks=(), notes=()):
    """Raise listing the problems; else the report of what was checked (None without a contract)."""
    if problems:
        raise AssertionError(f"{what} fails its contract:\n- " + "\n- ".join(problems))
    return None if contract is None else ContractReport(what, contract, tuple(checks), tuple(notes))


def _law_points(law, normal):
    """Slip velocities and force balances that probe a law: zeros, band edges, static limits,
    points just inside and outside them, and far slip."""
    limit = float(np.max(np.asarray(law.static_limit(normal))))
    band = float(np.max(np.asarray(law.stick_band())))
    scale = max(band, 1e-3)
    vs = sorted({0.0, *(s * x for s in (1.0, -1.0) for x in (band, 0.5 * band, band * (1 + 1e-9), 1e-12, 0.1 * scale,
                                                                 3 * scale, 100 * scale))})
    limits = {limit}
    if hasattr(law, "static_limits"):  # direction-dependent limits: probe the edges of both
        limits |= {float(np.max(np.asarray(x))) for x in law.static_limits(normal)}
    fs = sorted({0.0, *(s * x for s in (1.0, -1.0) for lim in limits for x in (
        lim, 0.5 * lim, lim * (1 - 1e-12), lim * (1 + 1e-12), 2 * lim + 1.0))})
    return np.array(vs), np.array(fs), limit


@eqx.filter_jit
def _probe_law(law, v, f_eq, normal, params):
    """Everything :func:`check_law` tests, in one compiled call."""
    force = jnp.asarray(law(v, f_eq, normal))
    size = jnp.sqrt(jnp.sum(force**2, axis=-1)) if law.vector else jnp.abs(force)
    static = law.static_limit(normal)
    held = law(jnp.zeros_like(v), f_eq, normal)
    if hasattr(law, "zero_slip_force"):  # direction- or load-dependent static limits
        expected = law.zero_slip_force(f_eq, normal)
    else:
        expected = project_to_disc(f_eq, static) if law.vector else jnp.clip(f_eq, -static, static)
    mirror = law.mirrored() if hasattr(law, "mirrored") else law
    bound = law.load_bound(v, f_eq, normal) if hasattr(law, "load_bound") else law.bound(v, normal)
    d_v, d_f = jax.vmap(jax.jacfwd(law, argnums=(0, 1)), in_axes=(0, 0, None))(v, f_eq, normal)

    def with_params(p, v, f_eq) -> Array:
        return set_parameters(law, p)(v, f_eq, normal)

    d_p = jax.vmap(lambda v, f_eq: jax.jacfwd(with_params)(params, v, f_eq))(v, f_eq) if params else {}
    return {"force": force, "size": size, "bound": bound, "odd": jnp.abs(mirror(-v, -f_eq, normal) + force),
            "held": held, "expected": expected, "d_v": d_v, "d_f": d_f, "d_p": d_p}


def check_law(law: AbstractFrictionLaw, normal: float = 1.0, *, atol: float = 1e-12) -> ContractReport:
    """Check the friction-law contract (:class:`~jaxfriction.AbstractFrictionLaw`).

    Properties, on slip velocities and force balances that include zero, the stick band's
    edges, the static limit and points within 1e-12 of them:

    - bound: ``|f| <= law.bound(v, N)`` (``atol``; ``law.load_bound(v, f_eq, N)`` for laws
      whose force grows with the load, :class:`~jaxfriction.LoadDependent`);
    - odd symmetry: ``law(-v, -f_eq) = -law(v, f_eq)``; for direction-dependent laws, which
      define ``mirrored()`` (the law with the slip axis reversed,
      :class:`~jaxfriction.AsymmetricFriction`), mirror symmetry ``law.mirrored()(-v, -f_eq) =
      -law(v, f_eq)``;
    - force balance at zero slip (laws with ``keeps_coulomb_structure``): ``law(0, f_eq)``
      is ``f_eq`` clipped to the static limit (Quinn 2004 eq. 2; the disc for vector laws),
      or ``law.zero_slip_force(f_eq, N)`` for laws that define it (static limits that depend
      on the direction or on the load);
    - finite derivatives with respect to ``v``, ``f_eq`` and every parameter leaf
      (forward mode), at every point, zero slip included;
    - the law's ``constraints()`` hold for its own parameters;
    - laws that declare ``slope_bounded``: ``|law(v, 0, N) - law(0, 0, N)| <= |df/dv(0)| |v|``
      (``atol``), the secant never above the slope at zero slip;
    - vector laws: the same in 2-D (components on the last axis), and the law restricted
      to one axis has the symmetry and bound of a scalar law.

    Args:
        law: the law.
        normal: the normal force probed (N).
        atol: tolerance (N).

    Returns:
        A :class:`ContractReport` of the properties checked.

    Raises:
        AssertionError: listing every failing property.
    """
    if not isinstance(law, AbstractFrictionLaw):
        raise AssertionError(f"{law!r} is not an AbstractFrictionLaw")
    problems = []
    vs, fs, limit = _law_points(law, normal)
    if not bool(constraints_hold(law)):
        problems.append("its constraints() do not hold for its own parameters")
    if law.vector:
        angle = 0.7
        pairs = [(v * np.array([np.cos(angle), np.sin(angle)]), f * np.array([np.cos(1.9), np.sin(1.9)]))
                 for v, f in itertools.product(vs, fs)]
        pairs += [(v * np.array([1.0, 0.0]), f * np.array([1.0, 0.0])) for v, f in itertools.product(vs, fs)]
        v = jnp.asarray(np.array([p[0] for p in pairs]))
        f_eq = jnp.asarray(np.array([p[1] for p in pairs]))
    else:
        grid_v, grid_f = np.meshgrid(vs, fs, indexing="ij")
        v, f_eq = jnp.asarray(grid_v.ravel()), jnp.asarray(grid_f.ravel())
    paths = scalar_parameter_paths(law)
    out = jax.device_get(_probe_law(law, v, f_eq, normal, {p: jnp.asarray(get_parameter(law, p), float) for p in paths}))
    force, size, bound, odd = out["force"], out["size"], out["bound"], out["odd"]
    if force.shape != v.shape:
        problems.append(f"output shape {force.shape} differs from the slip velocity's {v.shape}")
    if not np.all(np.isfinite(force)):
        problems.append("non-finite forces")
    over = size - bound
    if np.any(over > atol):
        i = int(np.argmax(over))
        problems.append(f"bound: |f| = {float(size[i])} > bound {float(bound[i])} at v = {v[i]}, f_eq = {f_eq[i]}")
    symmetry = "mirror symmetry" if hasattr(law, "mirrored") else "odd symmetry"
    if np.any(odd > atol):
        i = int(np.argmax(odd.reshape(len(v), -1).max(axis=1)))
        problems.append(f"{symmetry}: law(-v, -f_eq) != -law(v, f_eq) at v = {v[i]}, f_eq = {f_eq[i]}")
    if law.keeps_coulomb_structure:
        gap = np.abs(out["held"] - out["expected"])
        if np.any(gap > atol):
            i = int(np.argmax(gap.reshape(len(v), -1).max(axis=1)))
            problems.append(f"force balance at zero slip: law(0, f_eq) = {out['held'][i]} != clip(f_eq) = "
                            f"{out['expected'][i]} at f_eq = {f_eq[i]}")
    if not (np.all(np.isfinite(out["d_v"])) and np.all(np.isfinite(out["d_f"]))):
        problems.append("non-finite derivative with respect to v or f_eq")
    for path in paths:
        if not np.all(np.isfinite(out["d_p"][path])):
            problems.append(f"non-finite derivative with respect to {path}")
    checks = ["bound", symmetry] + (["force balance at zero slip"] if law.keeps_coulomb_structure else []) + \
        ["finite derivatives", "constraints"]
    if law.slope_bounded:
        problems += _secant_problems(law, vs, normal, atol)
        checks.append("slope bounded")
    return _fail(f"{type(law).__name__}", problems, "friction-law", checks)


def _secant_problems(law, vs, normal, atol) -> list[str]:
    """``slope_bounded``: the secant ``|law(v, 0, N) - law(0, 0, N)| / |v|`` at most the
    slope at zero slip, at ``vs`` and out to 100 times the largest of them."""
    speeds = np.unique(np.abs(np.concatenate([vs, np.geomspace(1e-9, 100.0 * max(np.max(np.abs(vs)), 1.0), 64)])))
    unit = np.array([1.0, 0.0]) if law.vector else np.array(1.0)
    v = jnp.asarray(speeds[:, None] * unit if law.vector else speeds)
    zero = jnp.zeros_like(v[0])

    def force(u) -> Array:
        return law(u, jnp.zeros_like(u), normal)

    slope = float(np.max(np.abs(np.asarray(jax.jvp(force, (zero,), (jnp.asarray(unit, zero.dtype),))[1]))))
    change = np.asarray(jax.vmap(force)(v) - force(zero))
    change = np.linalg.norm(change, axis=-1) if law.vector else np.abs(change)
    over = change - slope * speeds
    if np.any(over > atol):
        i = int(np.argmax(over))
        return [(f"slope bounded: |law(v) - law(0)| = {change[i]} > |df/dv(0)| |v| = {slope * speeds[i]} at "
                 f"|v| = {speeds[i]}")]
    return []


@eqx.filter_jit
def _probe_dynamic_law(law, v, z, normal, params):
    """Everything :func:`check_dynamic_law` tests, in one compiled call."""
    def outputs(p, v, z) -> tuple[Array, Array, Array]:
        f, power, z_dot = friction_power(set_parameters(law, p), v, z, normal)
        return f, z_dot, power

    f, z_dot, power = jax.vmap(outputs, in_axes=(None, 0, 0))(params, v, z)
    d_vz = jax.vmap(jax.jacfwd(lambda v, z: outputs(params, v, z)[:2], argnums=(0, 1)))(v, z)
    d_p = jax.vmap(jax.jacfwd(lambda p, v, z: outputs(p, v, z)[:2]), in_axes=(None, 0, 0))(params, v, z) \
        if params else {}
    bound = law.bound(v, normal)
    return {"force": f, "rate": z_dot, "power": power, "d_vz": d_vz, "d_p": d_p,
            "bound": jnp.full_like(f, jnp.inf) if bound is None else bound}


def check_dynamic_law(law: AbstractDynamicLaw, normal: float = 1.0, *, states=None, speeds=None,
                      atol: float = 1e-12, passivity: str | None = "auto",
                      require_passive: bool = False) -> ContractReport:
    """Check the contract of a law with internal state (:class:`~jaxfriction.AbstractDynamicLaw`).

    Properties, at every pair of a slip velocity (zero, +-1e-12 and ``speeds``) and a state
    (``init_state()`` and ``states``, e.g. springs on their slip limits):

    - ``n_state`` is an int and ``init_state()`` has shape ``(n_state,)``;
    - ``force``, ``state_rate`` and the dissipated power (``-f v - d/dt stored_energy``) are
      finite with shapes ``()``, ``(n_state,)``, ``()``; the force is 0-dimensional per contact;
    - bound (when ``law.bound`` is not None): ``|f| <= law.bound(v, N)`` (``atol``);
    - finite derivatives of the force and the rate with respect to ``v``, ``z`` and every
      parameter leaf (forward mode), zero slip and states on bounds included;
    - the law's ``constraints()`` hold for its own parameters;
    - where the law defines its own :meth:`~jaxfriction.AbstractDynamicLaw.viscous_force`, it
      equals ``force + sum d stored_energy / dz`` (the definition the base class computes);
    - where the law defines :meth:`~jaxfriction.AbstractDynamicLaw.interval_update` (a
      closed-form update over an interval of constant slip speed; by default a
      rate-independent law's return map :meth:`~jaxfriction.AbstractDynamicLaw.slip_update`),
      it agrees with the state equation integrated along the same monotone slip over a unit
      time (2,000 RK4 steps, to 1e-3 of the increment), from every probed state, for
      increments of both signs;
    - passivity (:func:`~jaxfriction.passivity`): with ``passivity="auto"`` the closed-form
      margin :func:`~jaxfriction.passivity_margin` where the law has one (LuGre, Bouc-Wen,
      the spring-slider laws), else the numerical energy test at the smallest and largest
      of ``speeds``; ``"numerical"`` runs the energy test always (and the margin where there
      is one); None skips it. A passive law lists ``passive`` among its checks; a law that
      is not is a note of the report (the published LuGre parameters, the class defaults, are
      not passive), or a failure with ``require_passive=True``.

    Args:
        law: the law.
        normal: the normal force probed (N).
        states: extra states to probe, ``(k, n_state)``.
        speeds: slip velocities to probe besides 0 and +-1e-12 (default ``+-1e-3, +-1``).
        atol: tolerance of the bound (N).
        passivity: ``"auto"``, ``"numerical"`` or None (above).
        require_passive: fail when the law is not passive.

    Returns:
        A :class:`ContractReport` of the properties checked.

    Raises:
        AssertionError: listing every failing property.
        ValueError: an unknown ``passivity`` mode.
    """
    if passivity not in ("auto", "numerical", None):
        raise ValueError(f"passivity must be 'auto', 'numerical' or None, got {passivity!r}")
    if not isinstance(law, AbstractDynamicLaw):
        raise AssertionError(f"{law!r} is not an AbstractDynamicLaw")
    problems = []
    if not bool(constraints_hold(law)):
        problems.append("its constraints() do not hold for its own parameters")
    n = law.n_state
    if not isinstance(n, (int, np.integer)):
        problems.append(f"n_state must be a Python int, got {n!r}")
    z0 = jnp.asarray(law.init_state(), dtype=float)
    if z0.shape != (n,):
        problems.append(f"init_state() has shape {z0.shape}, expected ({n},)")
        _fail(type(law).__name__, problems)  # raises
    zs = z0[None] if states is None else jnp.concatenate([z0[None], jnp.reshape(jnp.asarray(states, float), (-1, n))])
    speeds = (1e-3, 1.0) if speeds is None else speeds
    vs = np.array(sorted({0.0, *(s * x for s in (1.0, -1.0) for x in (1e-12, *speeds))}))
    grid_v = jnp.asarray(np.repeat(vs, zs.shape[0]))
    grid_z = jnp.tile(zs, (len(vs), 1))
    paths = scalar_parameter_paths(law)
    params = {p: jnp.asarray(get_parameter(law, p), float) for p in paths}
    out = jax.device_get(_probe_dynamic_law(law, grid_v, grid_z, normal, params))
    if out["force"].shape != grid_v.shape or out["rate"].shape != grid_z.shape:
        problems.append(f"shapes: force {out['force'].shape}, rate {out['rate'].shape} for v {grid_v.shape}, "
                        f"z {grid_z.shape}")
    for name in ("force", "rate", "power"):
        if not np.all(np.isfinite(out[name])):
            problems.append(f"non-finite {name}")
    over = np.abs(out["force"]) - out["bound"]
    if np.any(over > atol):
        i = int(np.argmax(over))
        problems.append(f"bound: |f| = {abs(out['force'][i])} > bound {out['bound'][i]} at v = {grid_v[i]}, "
                        f"z = {grid_z[i]}")
    if not all(np.all(np.isfinite(d)) for d in jax.tree_util.tree_leaves(out["d_vz"])):
        problems.append("non-finite derivative with respect to v or z")
    for path in paths:
        if not all(np.all(np.isfinite(d[path])) for d in out["d_p"]):
            problems.append(f"non-finite derivative with respect to {path}")
    checks, notes = ["state shapes", "finite force and rate", "bound", "finite derivatives", "constraints"], []
    if not problems and type(law).viscous_force is not AbstractDynamicLaw.viscous_force:
        problems += _viscous_force_problems(law, grid_v, grid_z, normal, atol)
        checks.append("viscous force")
    if not problems and law.interval_update(z0[None], jnp.zeros(1), jnp.ones(1), jnp.full(1, normal)) is not None:
        problems += _interval_update_problems(law, normal, zs)
        checks.append("interval update")
    if passivity is not None and not problems:
        verdict = _passivity_verdict(law, normal, vs, passivity)
        if verdict is None:
            checks.append("passive")
        elif require_passive:
            problems.append(verdict)
        else:
            notes.append(verdict)
    return _fail(type(law).__name__, problems, "dynamic-law", checks, notes)


def _viscous_force_problems(law, v, z, normal, atol) -> list:
    """A law's own :meth:`~jaxfriction.AbstractDynamicLaw.viscous_force` against its
    definition, ``force + sum d stored / dz`` (the base class's), at the probed pairs."""
    own = np.asarray(law.viscous_force(v, z, normal))
    defined = np.asarray(AbstractDynamicLaw.viscous_force(law, v, z, normal))
    if own.shape != defined.shape or not np.allclose(own, defined, rtol=1e-12, atol=atol):
        i = int(np.argmax(np.abs(own - defined))) if own.shape == defined.shape else 0
        return [f"viscous_force differs from force + sum d stored / dz (e.g. {own.ravel()[i]} against "
                f"{defined.ravel()[i]} at v = {v[i]}, z = {z[i]}; shapes {own.shape}, {defined.shape})"]
    return []


def _interval_update_problems(law, normal, zs) -> list:
    """Where ``law.interval_update`` and ``state_rate`` integrated along the same slip disagree."""
    problems = []
    n = jnp.full(zs.shape[0], normal)
    for du in (0.5, -0.5, 5e-3, -5e-3):
        v = jnp.full(zs.shape[0], du)  # over a unit time: the slip is du
        z = jax.lax.fori_loop(0, 2000, lambda _, z, v=v: rk4_step(lambda t, z, a: law.state_rate(v, z, n),
                                                                  0.0, z, 1.0 / 2000), zs)
        jumped = law.interval_update(zs, v, jnp.ones(zs.shape[0]), n)
        gap = float(jnp.max(jnp.abs(jumped - z)))
        if not gap <= 1e-3 * abs(du) + 1e-12:
            problems.append(f"interval_update (the slip_update unless overridden) differs from the integrated "
                            f"state_rate by {gap:.3g} for a slip of {du}")
    return problems


def _passivity_verdict(law, normal, vs, mode) -> str | None:
    """None when ``law`` is passive, else what shows it is not (:func:`check_dynamic_law`)."""
    try:
        margin = float(passivity_margin(law, normal))
    except ValueError:
        margin = None
    if margin is not None and mode == "auto":
        return None if margin >= 0 else (f"not passive: passivity_margin = {margin:.4g} < 0 "
                                         f"(jaxfriction.passivity_margin)")
    positive = np.abs(vs[vs != 0])
    report = run_passivity(law, normal, speeds=(float(positive.min()), float(positive.max())))
    return None if report.passive else f"not passive: {report!r}"


def check_system(system: AbstractFrictionSystem, y0: ArrayLike | None = None, *, t1: float = 5.0,
                 dt: float = 1e-3, energy_rtol: float = 1e-6) -> ContractReport:
    """Check the system contract (:class:`~jaxfriction.AbstractFrictionSystem`).

    Properties:

    - ``vector_field`` returns a finite state derivative of length ``state_size`` and runs
      under ``jit`` and ``vmap``;
    - ``positions``, ``velocities``, ``friction_force``, ``slip_velocity``, ``f_eq`` and
      ``mechanical_energy`` evaluate to finite values;
    - a run of ``t1`` with RK4 at step ``dt`` from ``y0`` ends with status 0 and its energy
      balance (input work = change of mechanical energy + dissipated energy) holds to
      ``energy_rtol`` relative (:func:`~jaxfriction.relative_energy_residual`; use a looser
      value for discontinuous laws, whose residual is O(dt));
    - the derivative of the final state with respect to every scalar parameter (array
      leaves by element) is finite (forward mode: their sum along all parameters, then each
      one only where the sum is not, to name them), and the ``constraints()`` of every
      module hold.

    Args:
        system: the system to check.
        y0: initial positions and velocities ``(2 n_dof,)`` (default: a small displacement of
            the first coordinate, so that something moves).
        t1: length of the run (time units).
        dt: step of the run (time units).
        energy_rtol: the energy-balance tolerance.

    Returns:
        A :class:`ContractReport` of the properties checked.

    Raises:
        AssertionError: listing every failing property.
    """
    if not isinstance(system, AbstractFrictionSystem):
        raise AssertionError(f"{system!r} is not an AbstractFrictionSystem")
    problems = []
    n = system.n_dof
    y0 = jnp.zeros(2 * n).at[0].set(0.1) if y0 is None else jnp.asarray(y0, dtype=float)
    y = system.as_state(y0)
    if not bool(constraints_hold(system)):
        problems.append("the constraints() of its modules do not hold")
    dy = system.vector_field(0.0, y)
    if jnp.shape(dy) != (system.state_size,):
        problems.append(f"vector_field returns shape {jnp.shape(dy)}, expected ({system.state_size},)")
    elif not bool(jnp.all(jnp.isfinite(dy))):
        problems.append("vector_field is not finite at y0")
    try:
        batch = jax.jit(jax.vmap(system.vector_field, in_axes=(None, 0)))(0.0, jnp.stack([y, y]))
        if not bool(jnp.all(jnp.isfinite(batch))):
            problems.append("vector_field under jit/vmap is not finite")
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        problems.append(f"vector_field fails under jit/vmap: {type(exc).__name__}: {exc}")
    for name in ("friction_force", "slip_velocity", "f_eq"):
        if not bool(jnp.all(jnp.isfinite(jnp.asarray(getattr(system, name)(0.0, y))))):
            problems.append(f"{name} is not finite at y0")
    if not bool(jnp.isfinite(system.mechanical_energy(y))):
        problems.append("mechanical_energy is not finite at y0")
    scalars = {p: jnp.asarray(get_parameter(system, p), dtype=float) for p in scalar_parameter_paths(system)}

    def run(values) -> tuple[Array, tuple[Array, Array, Array]]:
        traj = simulate(set_parameters(system, values), y0, 0.0, t1, dt, save_every=10)
        return traj.ys[-1], (traj.ts, traj.ys, traj.status)

    # One compiled run gives the trajectory and the derivative of its final state along every
    # parameter at once (forward mode, each tangent 1): the sum of the partial derivatives is
    # finite exactly when each is (IEEE: NaN and inf stay in a sum), and the program compiles in
    # about half the time of the whole Jacobian (the jointed oscillator's 12 parameters: 10 s
    # against 18 s on a loaded 2-core machine), which is taken only to name the parameters
    # when the sum is not finite.
    ones = jax.tree.map(jnp.ones_like, scalars)
    _, d_all, (ts, ys, status) = jax.jit(lambda s: jax.jvp(run, (s,), (ones,), has_aux=True))(scalars)
    if not bool(jnp.all(jnp.isfinite(d_all))):
        jac = jax.jit(jax.jacfwd(lambda s: run(s)[0]))(scalars)
        problems += [f"non-finite derivative of the final state with respect to {path}"
                     for path, d in jac.items() if not bool(jnp.all(jnp.isfinite(d)))]
    traj = Trajectory(ts=ts, ys=ys, system=system, status=status)
    if int(traj.status) != 0:
        problems.append(f"the run from y0 ended with status {int(traj.status)}")
    residual = float(relative_energy_residual(traj))
    if not residual <= energy_rtol:
        problems.append(f"energy balance: relative residual {residual:.3g} > {energy_rtol:g}")
    return _fail(f"{type(system).__name__}", problems, "system",
                 ["vector field under jit and vmap", "finite observables", f"status 0 over t1 = {t1:g}",
                  f"energy balance to {energy_rtol:g}", "finite parameter derivatives", "constraints"])


def check_fused(system: AbstractFrictionSystem, grid: dict, *, block: int = 8, rtol: float = 1e-9,
                atol: float = 1e-12, lower: bool = True, kernel: str = "fused",
                **sweep_options) -> tuple[xr.Dataset, xr.Dataset]:
    """Check that the fused GPU kernel (or the compiled CPU loop) runs a system as the XLA
    path does.

    Runs :func:`~jaxfriction.sweep` twice on the same lanes, once with
    :class:`~jaxfriction.VmapKernel` and once with :class:`~jaxfriction.FusedKernel`
    (Pallas' interpret mode off a GPU) or, with ``kernel="compiled"``,
    :class:`~jaxfriction.CompiledLoopKernel` (numba), and compares every output: observables, gradients
    and status codes (the values of lanes whose status is not 0 are not compared: an
    unstable run amplifies round-off; so does a switch law, e.g. exact Coulomb friction,
    whose stick test ``v == 0`` round-off can flip: check such laws in slip; nor the
    ``energy_residual`` of a lane whose window dissipation is below 1e-9 of the largest: stuck
    through the window, its energy flows are round-off and their ratio is too). With
    ``lower=True`` it also lowers the kernel for an NVIDIA GPU through Triton (no GPU
    needed) and verifies the Triton modules, which shows that every operation of the
    system's vector field has a valid GPU lowering. Run it on your own law or system (keep
    the run short: interpret mode is slow).

    Args:
        system: a system or :class:`~jaxfriction.Template`.
        grid: as :func:`~jaxfriction.sweep` (a few lanes are enough).
        block: lanes per kernel program (a power of two) or per block of the compiled loop.
        rtol, atol: agreement of the floating-point outputs (round-off).
        lower: also lower the kernel for the ``cuda`` platform (Triton); not with
            ``kernel="compiled"``.
        kernel: ``"fused"`` (the Pallas kernel), ``"compiled"`` (the numba loop, as
            :class:`~jaxfriction.CompiledLoopKernel` chooses its form) or ``"looped"`` (the
            numba loop written as loops over each lane's arrays, whatever the state's size:
            the form that many contacts take).
        **sweep_options: passed to :func:`~jaxfriction.sweep` (``t1``, ``window``, ``dt``,
            ``wrt``, ``observables``, ...).

    Returns:
        ``(xla, fused)``: the two datasets.

    Raises:
        AssertionError: listing every disagreement, an unsupported system (with the reason)
            or a failed lowering.
    """
    from ._lanes.compiled import CompiledLoopKernel
    from ._lanes.fused import FusedKernel
    from ._workflows.sweep.sweep import plan_sweep, sweep

    if kernel not in ("fused", "compiled", "looped"):
        raise ValueError(f"kernel must be 'fused', 'compiled' or 'looped', got {kernel!r}")
    option = FusedKernel(block=block) if kernel == "fused" else \
        CompiledLoopKernel(lanes=block, loops=True if kernel == "looped" else None)
    lower = lower and kernel == "fused"
    sweep_options = {"progress": False, **sweep_options}
    xla = sweep(system, grid, kernel="vmap", **sweep_options)
    try:
        fused = sweep(system, grid, kernel=option, **sweep_options)
    except ValueError as exc:
        raise AssertionError(f"{type(getattr(system, 'system', system)).__name__}: {exc}") from None
    problems = []
    ok = np.asarray(xla["status"]) == 0
    if "dissipation" in xla:  # a lane stuck through its window: the relative energy residual is noise over noise
        d = np.abs(np.where(ok, np.asarray(xla["dissipation"]), 0.0))
        resolved = ok & (d > 1e-9 * d.max(initial=0.0))
    for name in xla.data_vars:
        a, b = np.asarray(xla[name]), np.asarray(fused[name])
        if a.dtype.kind != "f":
            if not np.array_equal(a, b):
                problems.append(f"{name}: {a.ravel().tolist()} (XLA) != {b.ravel().tolist()} (fused)")
            continue
        mask = resolved if name == "energy_residual" and "dissipation" in xla else ok
        keep = mask.reshape(mask.shape + (1,) * (a.ndim - mask.ndim))
        a, b = np.where(keep, a, 0.0), np.where(keep, b, 0.0)  # a flagged (unstable) lane amplifies round-off
        if not np.allclose(b, a, rtol=rtol, atol=atol, equal_nan=True):
            problems.append(f"{name}: largest difference {np.nanmax(np.abs(a - b)):.3g}")
    if lower:  # choosing the kernel for a GPU lowers it through Triton and verifies it
        try:
            plan = plan_sweep(system, grid, kernel="vmap", **sweep_options)
            FusedKernel(block=block, interpret=False).program(plan.lane, list(grid), jax.local_devices(), dry=True)
        except ValueError as exc:  # the reason names what does not lower or verify
            problems.append(str(exc))
    where = "the fused kernel" if kernel == "fused" else "the compiled loop"
    _fail(f"{type(getattr(system, 'system', system)).__name__} in {where}", problems)
    return xla, fused
