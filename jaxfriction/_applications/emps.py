"""The EMPS benchmark: a real prismatic axis with dry friction (measured input and output).

The Electro-Mechanical Positioning System of Janot, Gautier & Brunot (2019, "Data Set and
Reference Models of EMPS", Workshop on Nonlinear System Identification Benchmarks,
Eindhoven; nonlinearbenchmark.org): a ball-screw axis driven by a DC motor under a
proportional-derivative position controller, sampled at 1 kHz. Its model is the paper's::

    M q'' = gtau vir(t) - Fv q' - Fc sgn(q') - offset,

the motor force ``gtau vir`` (``vir``: the controller output in V, ``gtau`` N/V) against
viscous and Coulomb friction and a constant offset. This module reads the benchmark's two
MATLAB files (:func:`load_emps`), builds the axis as an :class:`~jaxfriction.Oscillator`
driven by the measured input, open loop (``vir`` measured: the output-error method, position
as output) or closed loop (the PD controller inside the model, the reference ``qg`` measured:
the input-error method, the controller force as output) (:func:`emps_model`), and computes
the benchmark's figures of merit (:func:`emps_errors`). It is an application of the generic
layers (:class:`~jaxfriction.Sampled`, :class:`~jaxfriction.Measurement`,
:func:`~jaxfriction.fit`, :func:`~jaxfriction.predict`), kept out of them.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from .._checks import check_real

#: The published reference model (IDIM-LS, Janot, Gautier & Brunot 2019): mass (kg), viscous
#: (N s/m), Coulomb (N) and offset (N) of ``M q'' = gtau vir - Fv q' - Fc sgn(q') - offset``.
REFERENCE_IDIM_LS = {"M": 95.1089, "Fv": 203.5034, "Fc": 20.3935, "offset": -3.1648}
#: The published direction-dependent reference model (same paper; no offset): viscous (N s/m)
#: and Coulomb (N) levels for positive and negative velocity; the mass of :data:`REFERENCE_IDIM_LS`.
REFERENCE_ASYMMETRIC = {"Fv_pos": 166.71, "Fc_pos": 20.14, "Fv_neg": 240.42, "Fc_neg": 20.63}
#: Nominal sample interval of the benchmark's records (s).
SAMPLE_INTERVAL = 1e-3
#: Where a bare file name is looked up after the literal path: ``$JAXFRICTION_DATA``, then the
#: shared data folder beside or inside the working directory, then beside the source checkout.
DATA_DIRS = ("../shared/data/emps", "shared/data/emps", str(Path(__file__).resolve().parents[3] / "shared" / "data"
                                                            / "emps"))
#: The variables every EMPS file holds (the pulses file holds ``pulses_N`` too).
VARIABLES = ("t", "qm", "qg", "vir", "gtau", "kp", "kv")


@dataclasses.dataclass(frozen=True, eq=False)
class EMPSRecord:
    """One EMPS record as read from its MATLAB file (:func:`load_emps`).

    Args:
        t: ``(n,)`` sample times (s) on the nominal grid ``t[0] + k * 1 ms``.
        qm: ``(n,)`` measured motor position on the load side (m).
        qg: ``(n,)`` reference position of the controller (m).
        vir: ``(n,)`` controller output (V); the motor force is ``gtau * vir`` (N). In the
            pulses record it already holds the pulses (see :func:`load_emps`).
        gtau: actuation gain (N/V).
        kp: position gain of the controller (1/s).
        kv: velocity gain of the controller (V/(m/s)).
        pulses: ``(n,)`` the pulses added to the controller output (units of ``vir``, V), or
            None for the estimation record.
        t_logged: ``(n,)`` the time stamps as logged (they jitter by about 2e-8 s).
        name: the file name.
    """

    t: np.ndarray
    qm: np.ndarray
    qg: np.ndarray
    vir: np.ndarray
    gtau: float
    kp: float
    kv: float
    pulses: np.ndarray | None = None
    t_logged: np.ndarray | None = None
    name: str = ""

    def __len__(self):
        return int(self.t.shape[0])

    @property
    def force(self) -> np.ndarray:
        """``(n,)`` the motor force ``gtau * vir`` (N): the controller force of the input-error method."""
        return self.gtau * self.vir

    def measurement(self, input_path: str = "force.terms[0]", *, channels: bool = False):
        """The output-error record: position ``qm`` measured, ``vir`` the input at ``input_path``.

        Args:
            input_path: the drive path of the model that plays ``vir`` back (default
                ``"force.terms[0]"``, the :class:`~jaxfriction.Sampled` term of
                :func:`emps_model`'s open-loop force ``gtau vir - offset``).
            channels: also measure the motor force ``gtau * vir`` as channel ``"force"``
                (its model needs ``outputs={"force": ...}``).

        Returns:
            A :class:`~jaxfriction.Measurement` with ``q = qm`` and ``inputs = {input_path: vir}``.
        """
        from .._workflows.fit.measurement import Measurement

        return Measurement(t=self.t, q=self.qm, channels={"force": self.force} if channels else None,
                           inputs={input_path: self.vir}, name=self.name)

    def closed_loop_measurement(self, reference_path: str = "force.terms[0]",
                                pulses_path: str | None = "force.terms[1]", *, position: bool = False):
        """The input-error record: the controller force ``gtau * vir`` as channel ``"force"``,
        the reference ``qg`` the input at ``reference_path`` and the pulses at ``pulses_path``.

        Args:
            reference_path: drive path of the reference position ``qg`` (default the first term
                of :func:`emps_model`'s closed-loop force).
            pulses_path: drive path of the pulses (default the second term of that force), or
                None for a model without one. A record without pulses (the estimation record)
                gives zeros there, so one closed-loop model serves both records.
            position: also measure the position ``q = qm``.

        Returns:
            A :class:`~jaxfriction.Measurement` with ``channels = {"force": gtau vir}``.
        """
        from .._workflows.fit.measurement import Measurement

        inputs = {reference_path: self.qg}
        if pulses_path is not None:
            inputs[pulses_path] = np.zeros_like(self.qg) if self.pulses is None else self.pulses
        return Measurement(t=self.t, q=self.qm if position else None, channels={"force": self.force},
                           inputs=inputs, name=self.name)


def find_emps(name: str | os.PathLike) -> Path:
    """Path of an EMPS file given a path or a bare name (``DATA_EMPS``, ``DATA_EMPS_PULSES.mat``).

    Raises:
        FileNotFoundError: listing the places searched.
    """
    path = Path(name)
    if path.exists():
        return path
    dirs = [os.environ["JAXFRICTION_DATA"]] if os.environ.get("JAXFRICTION_DATA") else []
    for folder in [*dirs, *DATA_DIRS]:
        for candidate in (Path(folder) / name, Path(folder) / f"{name}.mat"):
            if candidate.is_file():
                return candidate
    raise FileNotFoundError(
        f"no EMPS file {str(name)!r} (looked in ., {', '.join([*dirs, *DATA_DIRS])}); give the path of DATA_EMPS.mat "
        f"or DATA_EMPS_PULSES.mat (nonlinearbenchmark.org), or set JAXFRICTION_DATA to their folder")


def load_emps(path: str | os.PathLike) -> EMPSRecord:
    """Read an EMPS benchmark file (``DATA_EMPS.mat`` or ``DATA_EMPS_PULSES.mat``).

    The files are the benchmark's own (Janot, Gautier & Brunot 2019), read with
    :func:`scipy.io.loadmat`: column vectors ``t``, ``qm``, ``qg``, ``vir`` and scalars
    ``gtau``, ``kp``, ``kv`` (and ``pulses_N`` in the pulses file).

    Choices, measured on the two files:

    - Time. The logged stamps jitter by up to 3.2e-8 s around a 1 ms grid; the record is put
      on the nominal grid ``t = t[0] + k * 1 ms`` (the logged stamps are kept in
      ``t_logged``), which :class:`~jaxfriction.Measurement` requires and which the input's
      interpolation reads exactly.
    - Pulses. ``vir`` already holds them: in the pulses file ``vir - kv (kp (qg - qm) - dqm)``
      (``dqm`` the backward difference of ``qm``) is ``1.014 pulses_N - 0.001 V`` with a
      residual of 0.057 V RMS, the same as the whole difference in the estimation file
      (0.051 V RMS, where it is the PD law's own error). ``pulses_N`` is a square wave of 0
      and 5 (period 1 s) in the units of ``vir`` despite its name (5 V, i.e. ``5 gtau = 176 N``
      of motor force). So the output-error record (``vir`` as input) needs nothing more, and
      the closed-loop model adds ``gtau * pulses`` to the controller output
      (:func:`emps_model` with ``closed_loop=True``).

    Args:
        path: the file, or a bare name looked up in ``$JAXFRICTION_DATA`` and
            ``../shared/data/emps`` (:func:`find_emps`).

    Returns:
        The record, an :class:`EMPSRecord` (its :meth:`~EMPSRecord.measurement` is the
            output-error :class:`~jaxfriction.Measurement`).

    Raises:
        FileNotFoundError: no such file (listing the places searched).
        ValueError: naming the file: not a MATLAB file, a missing variable, vectors of
            different lengths, non-finite values, times that are not a 1 ms grid.
    """
    from scipy.io import loadmat

    path = find_emps(path)
    if not path.is_file():
        raise ValueError(f"path must be an EMPS .mat file, got the directory {path}")
    try:
        data = loadmat(path)
    except Exception as exc:  # noqa: BLE001 - scipy raises several types for a file that is not MATLAB
        raise ValueError(f"{path}: not a readable MATLAB file ({type(exc).__name__}: {exc})") from None
    missing = [k for k in VARIABLES if k not in data]
    if missing:
        raise ValueError(f"{path}: not an EMPS file, missing the variable(s) {', '.join(missing)} (an EMPS file holds "
                         f"{', '.join(VARIABLES)})")
    arrays = {}
    for key in ("t", "qm", "qg", "vir", "pulses_N"):
        if key not in data:
            continue
        value = np.asarray(data[key], dtype=float)
        if value.ndim > 2 or (value.ndim == 2 and min(value.shape) != 1):
            raise ValueError(f"{path}: {key} must be a vector, got shape {value.shape}")
        arrays[key] = value.ravel()
    n = arrays["t"].shape[0]
    for key, value in arrays.items():
        if value.shape[0] != n:
            raise ValueError(f"{path}: {key} has {value.shape[0]} samples, t has {n}")
        bad = ~np.isfinite(value)
        if np.any(bad):
            raise ValueError(f"{path}: {key} must be finite, got {value[bad][0]} at sample {int(np.argmax(bad))}")
    if n < 3:
        raise ValueError(f"{path}: t has {n} samples, at least 3 are needed")
    constants = {}
    for key in ("gtau", "kp", "kv"):
        value = np.asarray(data[key], dtype=float).ravel()
        if value.shape != (1,):
            raise ValueError(f"{path}: {key} must be a scalar, got shape {np.shape(data[key])}")
        constants[key] = check_real(f"{path}: {key}", float(value[0]), positive=True)
    logged = arrays["t"]
    grid = logged[0] + SAMPLE_INTERVAL * np.arange(n)
    jitter = float(np.max(np.abs(logged - grid)))
    if jitter > 0.1 * SAMPLE_INTERVAL:
        raise ValueError(f"{path}: t must be a 1 ms grid, but a stamp is {jitter:.3g} s off t[0] + k * 1 ms")
    return EMPSRecord(t=grid, qm=arrays["qm"], qg=arrays["qg"], vir=arrays["vir"], pulses=arrays.get("pulses_N"),
                      t_logged=logged, name=path.name, **constants)


def emps_model(law, *, gtau: float, kp: float | None = None, kv: float | None = None, mass: float = 95.1089,
               viscous: float = 0.0, offset: float = 0.0, closed_loop: bool = False):
    """The EMPS axis as an :class:`~jaxfriction.Oscillator` driven by the record's input.

    Open loop (the output-error method; ``vir`` measured)::

        M q'' = gtau vir(t) - Fv q' + f(q') - offset

    is ``Oscillator(law, force=Sampled(gain=gtau) + Constant(-offset), stiffness=0,
    damping=Fv, mass=M, normal=1)``: ``vir`` plays at ``"force.terms[0]"``, and with ``normal
    = 1`` the law's coefficients are forces (N). Closed loop (the input-error method; the
    reference ``qg`` measured), the PD controller ``vir = kv (kp (qg - q) - q')`` inside::

        M q'' + gtau kv (kp q + q') = gtau kv kp qg(t) + gtau p(t) - Fv q' + f(q') - offset

    is the same oscillator with ``stiffness = gtau kv kp``, ``damping = gtau kv + Fv`` and
    ``force = Sampled(gain=gtau kv kp) + Sampled(gain=gtau) + Constant(-offset)``: ``qg`` at
    ``"force.terms[0]"``, the pulses ``p`` (V; zeros for the estimation record, see
    :meth:`EMPSRecord.closed_loop_measurement`) at ``"force.terms[1]"``; the controller force
    ``gtau vir`` is :func:`emps_controller_force`. Source: Janot, Gautier & Brunot 2019 (the
    model and the controller of the benchmark).

    Parameter paths: ``"mass"``, ``"damping"`` (``Fv``; ``gtau kv + Fv`` in closed loop),
    ``"force.terms[1].value"`` (open loop) or ``"force.terms[2].value"`` (closed loop):
    ``-offset`` (N), and the law's ``"law.<field>"``.

    Args:
        law: a scalar friction law or a dynamic law in force units (N at ``normal = 1``),
            e.g. ``Quinn(mu=Fc, eps=1e-3)``.
        gtau: actuation gain (N/V), the record's ``gtau``.
        kp, kv: controller gains (1/s, V/(m/s)); needed for ``closed_loop``.
        mass: ``M > 0`` (kg; default the published 95.1089).
        viscous: ``Fv >= 0`` (N s/m), as the oscillator's damping.
        offset: the paper's constant ``offset`` (N; the force drive holds ``-offset``).
        closed_loop: put the PD controller inside the model.

    Returns:
        The system, an :class:`~jaxfriction.Oscillator` with placeholder inputs (a
            :class:`~jaxfriction.Measurement`'s ``inputs`` fill them in).

    Raises:
        ValueError: naming ``gtau``, ``kp``, ``kv``, ``mass``, ``viscous`` or ``offset``.
    """
    from .._forcing.drives import Constant
    from .._forcing.sampled import Sampled
    from .._systems.oscillator import Oscillator

    check_real("gtau", gtau, positive=True)
    check_real("mass", mass, positive=True)
    check_real("viscous", viscous, nonnegative=True)
    check_real("offset", offset)
    if not closed_loop:
        return Oscillator(law=law, force=Sampled(gain=gtau) + Constant(-offset), stiffness=0.0, damping=viscous,
                          mass=mass, normal=1.0)
    if kp is None or kv is None:
        raise ValueError("kp and kv (the controller gains) are needed for closed_loop=True")
    check_real("kp", kp, positive=True)
    check_real("kv", kv, positive=True)
    force = Sampled(gain=gtau * kv * kp) + Sampled(gain=gtau) + Constant(-offset)
    return Oscillator(law=law, force=force, stiffness=gtau * kv * kp,
                      damping=gtau * kv + viscous, mass=mass, normal=1.0)


def emps_controller_force(gtau: float, kv: float):
    """The closed-loop model's controller force ``gtau vir`` as a channel function.

    ``gtau vir = gtau kv kp qg(t) + gtau p(t) - gtau kv kp q - gtau kv q'``: the sampled
    terms of :func:`emps_model`'s closed-loop force (every term but the constant offset), less
    the controller's spring ``stiffness q`` and its part ``gtau kv`` of the damping.

    Args:
        gtau: actuation gain (N/V).
        kv: velocity gain (V/(m/s)).

    Returns:
        ``fn(system, t, y) -> scalar`` (N), for ``fit(..., outputs={"force": fn})`` and
            :func:`~jaxfriction.predict`.
    """
    check_real("gtau", gtau, positive=True)
    check_real("kv", kv, positive=True)
    derivative = gtau * kv

    def force(system, t, y):
        terms = system.force.terms
        drive = terms[0](t)
        for term in terms[1:-1]:
            drive = drive + term(t)
        return drive - system.stiffness * y[0] - derivative * y[1]

    return force


def emps_errors(record, prediction) -> dict:
    """The benchmark's figures of merit of a simulation of a record.

    For the position ``q`` and, where both measure it, the controller force channel
    ``"force"``: the RMS of the simulation error ``e = measured - simulated``, the relative
    error ``100 ||e||_2 / ||measured||_2`` (%, the benchmark paper's relative errors of the
    simulated position and force, Janot, Gautier & Brunot 2019), the NRMSE ``rms(e) /
    std(measured)`` and the fit ``100 (1 - ||e|| / ||measured - mean||)`` (%, Ljung's fit).

    Args:
        record: the measured :class:`~jaxfriction.Measurement`.
        prediction: its simulation (:func:`~jaxfriction.predict`), same times.

    Returns:
        dict with ``position_rms`` (m), ``position_relative`` (%), ``position_nrmse``,
            ``position_fit`` (%) and the same with ``force_`` (N, %) where measured.

    Raises:
        ValueError: naming ``prediction`` when its times differ from the record's.
    """
    if len(prediction) != len(record) or not np.allclose(prediction.t, record.t):
        raise ValueError(f"prediction must be on the record's {len(record)} times, got {len(prediction)}")
    out = {}
    pairs = []
    if record.q is not None and prediction.q is not None:
        pairs.append(("position", record.q[:, 0], prediction.q[:, 0]))
    if record.channels and prediction.channels and "force" in record.channels and "force" in prediction.channels:
        pairs.append(("force", record.channels["force"], prediction.channels["force"]))
    for name, measured, simulated in pairs:
        e = measured - simulated
        out[f"{name}_rms"] = float(np.sqrt(np.mean(e**2)))
        out[f"{name}_relative"] = float(100 * np.linalg.norm(e) / np.linalg.norm(measured))
        out[f"{name}_nrmse"] = float(np.sqrt(np.mean(e**2)) / np.std(measured))
        out[f"{name}_fit"] = float(100 * (1 - np.linalg.norm(e) / np.linalg.norm(measured - np.mean(measured))))
    return out
