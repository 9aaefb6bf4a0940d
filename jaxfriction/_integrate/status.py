"""Per-trajectory status codes: a lane of a batch is flagged, never lost and never silently wrong.

Every :class:`~jaxfriction.Trajectory` carries one, and every sweep dataset has a
``status`` variable with these codes (``flag_values`` / ``flag_meanings`` attributes, the
CF convention); ``jaxfriction sweep`` counts them in its summary.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

#: The run is fine.
STATUS_OK = 0
#: A state became NaN or infinite.
STATUS_NONFINITE = 1
#: The diffrax solver failed: its step budget (``max_steps``) was used up, most often because
#: an implicit solver's Newton iterations stall and the steps shrink. Known case: an inertial
#: rate-and-state :class:`~jaxfriction.SpringSlider` with a tiny mass (1e-9 to 1e-12 of the
#: spring's units), whose acceleration ``(k delta - N mu) / m`` is round-off amplified by
#: ``1 / m``: use :class:`~jaxfriction.QuasiStaticSlider`, its mass-free limit (the inertial
#: run differs from it by O(m); docs/howto/rate-and-state.md).
STATUS_SOLVER_FAILED = 2
#: The event-driven solver used its whole event budget before ``t1``.
STATUS_EVENT_BUDGET = 3
#: A parameter of the lane is out of its range (e.g. a negative ``mu`` or a NaN forcing
#: scale); the lane's observables are NaN.
STATUS_INVALID_PARAMETER = 4
#: Fixed-step RK4 is unstable inside a contact's stick band (``h * rate > 2.785``, see
#: :func:`~jaxfriction.stick_band_rate`): the trajectory stays bounded by the law's clip,
#: but it chatters in stick and its derivatives grow without bound. Also: the step is too
#: long for a dynamic law's fastest rate at a saved state (``h * rate > 2.785``, or ``h``
#: times the slip-rate stiffness ``-dv'/dv`` past 1.5: LuGre's
#: bristles at speed, Maxwell-slip's attraction ``C / (alpha g)``, the stick/slip switch of
#: Iwan and Maxwell-slip elements, rate-and-state's slip-rate stiffness near rest; see
#: :meth:`~jaxfriction.AbstractDynamicLaw.max_state_rate`), where the run itself goes
#: wrong. The system is stiff for this step: use a smaller ``dt`` or an implicit solver,
#: ``jf.Diffrax(diffrax.Kvaerno5())``, whose runs are never flagged 5. Also: a law with a
#: jump at zero slip (exact Coulomb) stuck at a saved state of a smooth fixed-step run,
#: which crosses zero instead of sticking (:func:`~jaxfriction._integrate.stability.secant_rate`);
#: no step fixes that: use an exact solver (``jf.EventDriven()``, ``jf.MoreauJean()``) or a
#: regularized law (``jf.Quinn``). Judged every saved step of a sweep's window and at the
#: same cadence in its transient.
STATUS_UNSTABLE_STEP = 5
#: A requested gradient is NaN or infinite although the run itself is fine.
STATUS_NONFINITE_GRADIENT = 6

#: A steady-state lane's periodic orbit was not found: the shooting solve did not converge
#: to ``|phi_T(x) - x| <= tol`` (``jf.sweep(..., steady_state=True)``); its observables are
#: those of the last iterate, with its ``residual``.
STATUS_NOT_PERIODIC = 7

#: code -> meaning, for reports.
STATUS_MEANINGS = {
    STATUS_OK: "ok",
    STATUS_NONFINITE: "non-finite state",
    STATUS_SOLVER_FAILED: "solver failed (step budget used up: a stiff system for this solver)",
    STATUS_EVENT_BUDGET: "event budget exhausted",
    STATUS_INVALID_PARAMETER: "invalid parameter",
    STATUS_UNSTABLE_STEP: "RK4 step too long (stick band, internal state, or exact-Coulomb stick)",
    STATUS_NONFINITE_GRADIENT: "non-finite gradient",
    STATUS_NOT_PERIODIC: "steady state not found",
}

#: Severity rank of every status code (lower wins when several apply): invalid parameter,
#: non-finite state, solver failure, event budget, unstable step, steady state not found,
#: non-finite gradient, ok.
_RANK = np.array([7, 1, 2, 3, 0, 4, 6, 5])


def combine_status(*codes: ArrayLike) -> Array:
    """The most severe of several status codes (traceable), ranked as :data:`_RANK`."""
    codes = jnp.stack([jnp.asarray(c, dtype=jnp.int32) for c in codes])  # type: ignore[assignment]  # the codes, stacked
    return codes[jnp.argmin(jnp.asarray(_RANK)[codes])]  # type: ignore[return-value]
