"""The model's prediction of a record: the simulation a record's own inputs drive, read as the
record is measured (open loop, one run from the record's start)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ..._systems.base import AbstractFrictionSystem
from ..._templates import Template, split_template
from .measurement import Measurement
from .outputs import check_outputs
from .problem import _simulate_record, predicted
from .setup import build_problem, check_data


@eqx.filter_jit
def _run(system, rec, start, outputs):
    ys, _, _ = _simulate_record(rec.system(system), rec, start[None])
    return predicted(rec.system(system), rec, ys, outputs)


def predict(model, record: Measurement, *, dt: float | None = None, outputs: dict | None = None,
            y0=None) -> Measurement:
    """Simulate ``model`` over ``record`` as the record was measured: driven by the record's
    inputs, from the record's start, read at its sample times (a free run, no correction by
    the data: the simulation error of system identification, Ljung 1999 sec. 16.4).

    Args:
        model: a system, a :class:`~jaxfriction.Template` (its ``dt`` is the default) or a
            :class:`~jaxfriction.FitResult` (its fitted system).
        record: a :class:`~jaxfriction.Measurement`; its ``inputs`` drive the model, its
            columns say what is predicted.
        dt: largest RK4 step (default as in :func:`~jaxfriction.fit`: the template's, the
            finer of the sample and input intervals); a system with a ``default_solver()``
            uses that adaptive run when ``dt`` is None.
        outputs: user channel functions, as in :func:`~jaxfriction.fit`.
        y0: the start state ``(2 n_dof,)`` or ``(2 n_dof + n_internal,)``; default the
            record's known ``y0``, else measured positions' value and slope from a local
            quadratic fit of the first samples, measured velocities' first sample, and the
            model's initial internal variables (unmeasured positions and velocities 0).

    Returns:
        A :class:`~jaxfriction.Measurement` on the record's times with the same columns
            (``q``, ``v``, channels), named ``"prediction of <record>"``; it holds no inputs.

    Raises:
        ValueError: naming ``model``, ``record`` (a channel the model cannot compute, an
            input path that is not one of its drives, a degree of freedom it lacks),
            ``dt`` or ``y0``; ``RuntimeError`` if the simulation is not finite.
    """
    if not isinstance(model, (Template, AbstractFrictionSystem)):
        fitted = getattr(model, "system", None)  # a FitResult: its fitted system
        if not isinstance(fitted, AbstractFrictionSystem):
            raise ValueError(f"model must be a system, a Template or a FitResult, got {type(model).__name__}")
        model = fitted
    system, tpl = split_template(model, "model")
    if dt is None and tpl is not None:
        dt = tpl.dt
    own = check_outputs(outputs)
    if y0 is not None:
        record = record._replace(np.arange(len(record)), y0=y0)
    [record], _ = check_data(record, system.n_dof, None, system.n_internal, system, own, what="record")
    problem = build_problem(system, (), [], [], [record], [1.0], segments=[1], dt=dt, velocity_weight=1.0,
                            continuity_weight=1.0, outputs=own)
    rec = problem.records[0]
    start = rec.y0 if rec.y0 is not None else problem.state0
    q, v, channels = (None if x is None else np.asarray(x, dtype=float)
                      for x in _run(system, rec, jnp.asarray(start, dtype=float), own))
    for x in (q, v, channels):
        if x is not None and not np.all(np.isfinite(x)):
            raise RuntimeError(f"the simulation of {record.name or 'the record'} is not finite (the model diverged: "
                               f"reduce dt or check the parameters)")
    names = list(record.channels or ())
    return Measurement(t=record.t, q=q, v=v, q_dofs=record.q_dofs if q is not None else None,
                       v_dofs=record.v_dofs if v is not None else None,
                       channels=None if channels is None else {n: channels[:, j] for j, n in enumerate(names)},
                       name=f"prediction of {record.name or 'the record'}")
