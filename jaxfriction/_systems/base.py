"""The system interface and its state layout.

Every system's state is a flat array

    ``y = [q (n), v (n), z (m), E_friction, E_damping, W_input]``

of positions ``q``, velocities ``v``, ``m = n_internal`` internal variables ``z`` of the
contacts (the elongation of a tangential spring today; the states of LuGre, Dahl,
Maxwell-slip, Iwan or rate-and-state laws next), and three running integrals,

- ``E_friction = int -f . v_slip dt`` (energy dissipated by friction, >= 0),
- ``E_damping  = int c v^2 dt``       (energy dissipated by viscous damping, >= 0),
- ``W_input    = int P_in dt``        (work done by the prescribed drives),

so every run carries its energy balance ``W_input = Delta E_mech + E_friction +
E_damping`` (see :mod:`jaxfriction._observables.energy`); energy stored in internal springs
belongs to ``E_mech`` (``mechanical_energy``), never to the dissipated integrals. The
integrals are integrated by the same scheme as the motion, so the balance residual measures
the scheme's accuracy. They are quadratures along the trajectory: nothing in the motion
depends on them, and adaptive solvers keep them out of their step-size control
(:func:`~jaxfriction.dynamics_rms_norm`), so they take the steps the motion alone needs.

Why a documented flat array and not a named pytree state: the RK4 scan steps small states
component by component (the fastest layout on CPU, :mod:`jaxfriction._integrate.rk4`), diffrax,
the Lyapunov tangents (QR of ``(d, k)`` blocks), Moreau-Jean and saved trajectories
``(n_saves, state_size)`` all work on one array, and the names are recovered at no cost from
the layout (:meth:`AbstractFrictionSystem.state_names`, the slices of the accessors). The
internal block sits between the velocities and the integrals, so ``y[..., -3:]`` are the
integrals and ``y[..., :2n]`` the mechanics for every system (the first
:attr:`AbstractFrictionSystem.dynamical_size` entries are the dynamical state).

A system implements :meth:`AbstractFrictionSystem.rates` (velocities, accelerations,
internal rates and the three powers); the base class owns the state layout and assembles
``vector_field`` and the energy integrals from them.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from .._checks import Constraint, check_constraints, is_concrete

N_INTEGRALS = 3


class Rates(NamedTuple):
    """What :meth:`AbstractFrictionSystem.rates` returns at ``(t, y)``.

    Attributes:
        velocity: ``dq/dt``, ``(n,)`` (a scalar for one degree of freedom).
        acceleration: ``dv/dt``, shaped like ``velocity``.
        friction_power: ``-sum f . v_slip`` (W), the rate of ``E_friction`` (>= 0 for a
            dissipative law).
        input_power: power of the prescribed drives (W), the rate of ``W_input``.
        damping_power: ``sum c v^2`` (W), the rate of ``E_damping`` (default 0).
        internal: ``dz/dt``, ``(n_internal,)`` (None when the system has none).
    """

    velocity: Any
    acceleration: Any
    friction_power: Any
    input_power: Any
    damping_power: Any = 0.0
    internal: Any = None


class AdaptiveSolve(NamedTuple):
    """The adaptive solve a system asks for when it is simulated without a step
    (:meth:`AbstractFrictionSystem.default_solver`): a diffrax method by its class name and the
    tolerances of its PID controller. :func:`~jaxfriction.simulate` (and ``as_solver``) turn it
    into ``Diffrax(getattr(diffrax, method)(), rtol=rtol, atol=atol)``. It is a plain record so
    that a system states its solver without importing the integrators, which sit above the
    systems.

    Args:
        method: a diffrax solver class name (``"Tsit5"``, ``"Kvaerno5"``, ...).
        rtol: relative tolerance.
        atol: absolute tolerance (in the state's units).
    """

    method: str = "Tsit5"
    rtol: float = 1e-10
    atol: float = 1e-10


class AbstractFrictionSystem(eqx.Module):
    """Base of every system: a ``vector_field(t, y, args)`` that diffrax accepts.

    A final subclass sets ``n_dof`` (and ``n_internal`` if its contacts carry internal
    variables) in one way: a class attribute (``n_dof = 1``) when the count is fixed, a
    read-only ``@property`` returning an ``int`` when it follows from the system's fields (the
    chain's ``n``; a dynamic law's ``n_state`` per contact, which
    :class:`~jaxfriction.AbstractContactSystem` derives itself). Either is a Python ``int``
    known before tracing, never a field (a field would become a leaf, and a path). It declares its parameters as fields (their paths, ``"law.mu"``,
    ``"stiffness"``, are the names every workflow uses), returns their valid ranges from
    ``constraints()``, and implements :meth:`rates`, :meth:`mechanical_energy`,
    :meth:`friction_force`, :meth:`slip_velocity` and :meth:`f_eq`. Systems of lumped masses
    with contacts are easier to write as an :class:`~jaxfriction.AbstractContactSystem`
    (masses, a potential and a contact Jacobian; the library does the rest).
    :func:`jaxfriction.testing.check_system` tests the contract.
    """

    n_dof: ClassVar[int]
    n_internal: ClassVar[int] = 0

    def __check_init__(self):
        check_constraints(self)

    def constraints(self) -> tuple[Constraint, ...]:
        """The parameters' valid ranges (see :mod:`jaxfriction._checks`); laws and drives
        inside the system declare their own."""
        return ()

    def contact_mobility(self) -> tuple | None:
        """``(mobility, normal, zero, tangent)`` of the contacts, for RK4's step rules
        (:mod:`jaxfriction._integrate.stability`): the mobility (``1/m`` for one body, the
        Delassus diagonal for several), the normal force, a zero slip velocity and a unit
        slip direction, each of the contacts' shape. None (the default): the step rules that
        need them are not checked for this system."""
        return None

    def default_solver(self) -> AdaptiveSolve | None:
        """The solve :func:`~jaxfriction.simulate` and :func:`~jaxfriction.fit` use when given
        neither a solver nor ``dt``: None (the default: RK4, which needs ``dt``), or an
        :class:`AdaptiveSolve` for a system whose equations want adaptive steps
        (:class:`~jaxfriction.QuasiStaticSlider`)."""
        return None

    @property
    def state_size(self) -> int:
        """Length of the state vector, ``2 n_dof + n_internal + 3``."""
        return self.dynamical_size + N_INTEGRALS

    @property
    def dynamical_size(self) -> int:
        """Number of dynamical state entries, ``2 n_dof + n_internal``: positions, velocities
        and the internal variables of the contacts, i.e. the state less its
        ``N_INTEGRALS = 3`` energy integrals (which are ``y[..., dynamical_size:]``). The
        integrals never feed back into the motion, so adaptive step control leaves them out
        (:func:`~jaxfriction.dynamics_rms_norm`)."""
        return 2 * self.n_dof + self.n_internal

    def state_names(self) -> list[str]:
        """Names of the state entries: ``q``, ``v`` (``q[i]``, ``v[i]`` for several degrees of
        freedom), ``z[j]``, ``E_friction``, ``E_damping``, ``W_input``."""
        n = self.n_dof
        q = ["q"] if n == 1 else [f"q[{i}]" for i in range(n)]
        v = ["v"] if n == 1 else [f"v[{i}]" for i in range(n)]
        return [*q, *v, *(f"z[{j}]" for j in range(self.n_internal)), "E_friction", "E_damping", "W_input"]

    def jump_times(self) -> tuple:
        """Times where a drive of the system jumps (sharp steps), sorted, ``()`` if none.

        Collected from the system's fields that are drives
        (:meth:`~jaxfriction.AbstractDrive.jump_times`: a sharp :class:`~jaxfriction.Step`,
        :class:`~jaxfriction.Steps`). :class:`~jaxfriction.Diffrax`'s adaptive runs pass them
        to diffrax as breakpoints (``diffrax.ClipStepSizeController(jump_ts=...)``): a step
        ends exactly at each and the solver restarts there (Runge-Kutta methods with the
        first-same-as-last property re-evaluate the field)."""
        from .._checks import is_concrete
        from .._forcing.drives import AbstractDrive

        times: list[Any] = []
        for name in getattr(self, "__dataclass_fields__", {}):
            value = getattr(self, name, None)
            if isinstance(value, AbstractDrive):
                times.extend(value.jump_times())
        if times and is_concrete(times):
            times = sorted(times, key=float)
        return tuple(times)

    def initial_internal(self) -> ArrayLike:
        """Initial internal variables ``z`` (zeros: relaxed internal springs), a NumPy array in
        the default float type (no XLA op is dispatched to make it)."""
        return np.zeros(self.n_internal, jnp.result_type(float))

    def initial_state(self, q: ArrayLike, v: ArrayLike, z: ArrayLike | None = None) -> Array:
        """Full state from positions ``q``, velocities ``v`` and internal variables ``z``
        (default :meth:`initial_internal`); the integrals start at 0."""
        dtype = jnp.result_type(float)
        z = self.initial_internal() if z is None else z
        # concrete parts are assembled on the host (no XLA op dispatched), traced ones in the trace
        xp = np if is_concrete(q) and is_concrete(v) and is_concrete(z) else jnp
        parts = [xp.reshape(xp.asarray(x, dtype=dtype), (n,)) for x, n in
                 ((q, self.n_dof), (v, self.n_dof), (z, self.n_internal))]
        return jnp.asarray(xp.concatenate([*parts, xp.zeros(N_INTEGRALS, dtype=dtype)]))

    def as_state(self, y0: ArrayLike) -> Array:
        """Full state from ``y0``: positions and velocities ``(2 n_dof,)`` get the initial
        internal variables and zero integrals appended, ``(2 n_dof + n_internal,)`` zero
        integrals; a full state ``(state_size,)`` is returned as is (to continue a run).

        Raises:
            ValueError: naming ``y0`` for a wrong shape or non-finite values.
        """
        concrete = is_concrete(y0)
        if concrete:
            try:
                if isinstance(y0, (str, bytes)) or y0 is None:
                    raise TypeError
                finite = np.all(np.isfinite(np.asarray(y0, dtype=float)))
            except (TypeError, ValueError):
                raise ValueError(f"y0 must be an array of numbers, got {y0!r}") from None
            if not finite:
                raise ValueError(f"y0 must be finite, got {y0}")
        # a concrete y0 is checked and cut on the host (a plan's start state dispatches no XLA op)
        y0 = np.asarray(y0) if concrete else jnp.asarray(y0)
        n, m = self.n_dof, self.n_internal
        sizes = sorted({2 * n, 2 * n + m, self.state_size})
        if y0.ndim != 1 or y0.shape[0] not in sizes:
            raise ValueError(
                f"y0 must have shape ({2 * n},) (positions, velocities)"
                + (f", ({2 * n + m},) (with the {m} internal variables)" if m else "")
                + f" or ({self.state_size},) (full state), got shape {y0.shape}"
            )
        y0 = y0.astype(jnp.result_type(float))
        if y0.shape[0] == self.state_size:
            return jnp.asarray(y0)
        return self.initial_state(y0[:n], y0[n : 2 * n], y0[2 * n :] if y0.shape[0] > 2 * n else None)

    def positions(self, y: Array) -> Array:
        """Positions from a state ``(..., state_size)``: ``(...)`` for 1 dof, else ``(..., n)``."""
        q = y[..., : self.n_dof]
        return q[..., 0] if self.n_dof == 1 else q

    def velocities(self, y: Array) -> Array:
        """Velocities from a state, shaped like :meth:`positions`."""
        v = y[..., self.n_dof : 2 * self.n_dof]
        return v[..., 0] if self.n_dof == 1 else v

    def internal_state(self, y: Array) -> Array:
        """Internal variables ``z`` from a state, ``(..., n_internal)``."""
        return y[..., 2 * self.n_dof : 2 * self.n_dof + self.n_internal]

    def internal_names(self) -> list[str]:
        """Names of the internal variables, ``["z[0]", ...]`` unless the system names them
        (a rate-and-state law: ``"psi"``)."""
        return [f"z[{j}]" for j in range(self.n_internal)]

    def internal(self, ys: Array, name: str) -> Array:
        """One internal variable by name from states ``(..., state_size)``, ``(...)``.

        ``name`` is one of :meth:`internal_names`, or a quantity the system's law derives
        from its state (``law.named_state(z, name)``: :class:`~jaxfriction.RateState`'s
        ``"theta" = D_c exp(psi) / V_0``). :meth:`~jaxfriction.Trajectory.internal` reads a run.

        Raises:
            ValueError: an unknown name (the message lists the known ones).
        """
        names = self.internal_names()
        if name in names:
            j = names.index(name)
            return ys[..., 2 * self.n_dof + j]
        law = getattr(self, "law", None)
        if law is not None and hasattr(law, "named_state") and name in getattr(law, "derived_names", ()):
            z = self.internal_state(ys)[..., names.index(law.state_names[0]):][..., : law.n_state]
            return law.named_state(z, name)
        derived = list(getattr(law, "derived_names", ())) if law is not None else []
        raise ValueError(f"name must be one of {names + derived} for {type(self).__name__}, got {name!r}")

    #: Quantities every system computes from ``(t, y)``, read by :meth:`output` (with ``[i]``
    #: for the ``i``-th contact of a system with several).
    FORCE_OUTPUTS: ClassVar[tuple] = ("friction_force", "f_eq", "slip_velocity")

    def output_names(self) -> list[str]:
        """Every name :meth:`output` accepts: :meth:`internal_names`, the quantities the law
        derives from its state, and :attr:`FORCE_OUTPUTS` (``"friction_force[i]"`` etc. for
        the ``i``-th of several contacts)."""
        law = getattr(self, "law", None)
        derived = list(getattr(law, "derived_names", ())) if law is not None else []
        shape = self._force_shape()
        forces = list(self.FORCE_OUTPUTS) if not shape else [
            f"{n}[{i}]" for n in self.FORCE_OUTPUTS for i in range(shape[0])]
        return self.internal_names() + derived + forces

    def _force_shape(self) -> tuple:
        import jax

        dtype = jnp.result_type(float)
        try:
            return jax.eval_shape(self.friction_force, jax.ShapeDtypeStruct((), dtype),
                                  jax.ShapeDtypeStruct((self.state_size,), dtype)).shape
        except Exception:  # noqa: BLE001 - a system whose forces cannot be traced alone: none offered
            return ()

    def output(self, ts: Array, ys: Array, name: str) -> Array:
        """A quantity by name at every saved point: ``(n,)`` from times ``(n,)`` and states
        ``(n, state_size)``.

        ``name`` is an internal variable or a quantity the law derives from its state
        (:meth:`internal`), or one of :attr:`FORCE_OUTPUTS`: ``"friction_force"`` (N, the
        friction force on the body, :meth:`friction_force`), ``"f_eq"`` (N, the force
        balance, :meth:`f_eq`), ``"slip_velocity"`` (:meth:`slip_velocity`), with ``[i]``
        for the ``i``-th of several contacts. These are what a
        :class:`~jaxfriction.Measurement`'s ``channels`` can measure: a tribometer's or a
        friction damper's force record is ``channels={"friction_force": ...}``.

        Raises:
            ValueError: an unknown name (the message lists :meth:`output_names`).
        """
        import re

        import jax

        match = re.fullmatch(r"(friction_force|f_eq|slip_velocity)(?:\[(\d+)\])?", name)
        if match is None:
            try:
                return self.internal(ys, name)
            except ValueError:
                raise ValueError(f"name must be one of {self.output_names()} for {type(self).__name__}, got "
                                 f"{name!r}") from None
        shape = self._force_shape()
        index = match.group(2)
        if (index is None) != (not shape) or (index is not None and int(index) >= shape[0]):
            raise ValueError(f"name must be one of {self.output_names()} for {type(self).__name__}, got {name!r}")
        values = jax.vmap(getattr(self, match.group(1)))(ts, ys)
        return values if index is None else values[:, int(index)]

    @staticmethod
    def friction_dissipation(y: Array) -> Array:
        """Running friction dissipation ``E_friction`` from a state (J)."""
        return y[..., -3]

    @staticmethod
    def damping_dissipation(y: Array) -> Array:
        """Running viscous dissipation ``E_damping`` from a state (J)."""
        return y[..., -2]

    @staticmethod
    def input_work(y: Array) -> Array:
        """Running work of the prescribed drives ``W_input`` from a state (J)."""
        return y[..., -1]

    def vector_field(self, t: ArrayLike, y: Array, args=None) -> Array:
        """Time derivative of the state ``y`` at time ``t`` (diffrax ``ODETerm`` shape).

        Assembled from :meth:`rates` in the layout of the module docstring.
        """
        r = self.rates(t, y)
        parts = [r.velocity, r.acceleration]
        if self.n_internal:
            parts.append(r.internal)
        parts += [r.friction_power, r.damping_power, r.input_power]
        if self.n_dof == 1 and not self.n_internal:
            return jnp.stack([jnp.reshape(p, ()) for p in parts])  # plain scalars: no concatenate
        return jnp.concatenate([jnp.reshape(p, (-1,)) for p in parts])

    @abc.abstractmethod
    def rates(self, t: ArrayLike, y: Array) -> Rates:
        """Velocities, accelerations, internal rates and the three powers at ``(t, y)``."""

    @abc.abstractmethod
    def mechanical_energy(self, y: Array) -> Array:
        """Kinetic plus potential energy of a state, internal springs included (J)."""

    @abc.abstractmethod
    def friction_force(self, t: ArrayLike, y: Array) -> Array:
        """Friction force(s) on the body(ies) at ``(t, y)`` (N)."""

    @abc.abstractmethod
    def slip_velocity(self, t: ArrayLike, y: Array) -> Array:
        """Slip velocity(ies) of the contact(s) at ``(t, y)``."""

    @abc.abstractmethod
    def f_eq(self, t: ArrayLike, y: Array) -> Array:
        """Force balance ``f_eq`` at the contact(s) (N)."""
