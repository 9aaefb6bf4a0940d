"""The EMPS benchmark: identify a real axis's friction on one record, validate on another.

Janot, Gautier & Brunot 2019, "Data Set and Reference Models of EMPS" (nonlinearbenchmark.org;
the files are in ``../shared/data/emps``, or set ``JAXFRICTION_DATA``). A ball-screw axis under
a PD position controller, sampled at 1 kHz: ``M q'' = gtau vir(t) - Fv q' - Fc sgn(q') - offset``.

1. the published reference model (IDIM-LS) simulated over the validation (pulses) record;
2. output-error fits on the estimation record only (position ``qm`` measured, the controller
   output ``vir`` as input), from a box of plausible values: Coulomb + viscous with one and
   with 12 shooting segments, and the direction-dependent law;
3. the input-error fit (the PD controller inside the model, the reference ``qg`` as input,
   the controller force ``gtau vir`` as output);
4. every model simulated free over the validation record with its own input, and the
   benchmark's figures of merit beside the published model's.

Run from the repository root: ``python examples/emps.py`` (several minutes on two cores;
``scripts/benchmarks/bench_emps.py`` fits the static/kinetic, LuGre and Dahl laws as well and times
each fit).
"""

import jax

jax.config.update("jax_enable_x64", True)  # float64: positions of 0.25 m measured to 5e-8 m

import jaxfriction as jf

est = jf.load_emps("DATA_EMPS")  # estimation record
val = jf.load_emps("DATA_EMPS_PULSES")  # validation record: the same trajectory, pulses added to vir
print(f"{len(est)} samples at 1 ms; gtau = {est.gtau:.4g} N/V, kp = {est.kp}, kv = {est.kv}")

EPS = 1e-3  # Quinn's band (m/s): with normal = 1 the law's mu is the Coulomb force in N
fit_data = est.measurement().decimate(10)  # residuals at 100 Hz; the input stays at 1 kHz, RK4 at 1 ms
validation = val.measurement()  # the pulses record, with its own vir as input
search = jf.GlobalSearch(candidates=64, refine=4, steps=20)
box = {"mass": (50.0, 200.0), "damping": (50.0, 500.0), "law.mu": (5.0, 50.0),
       "force.terms[1].value": (-10.0, 10.0)}  # force.terms[1] holds -offset


def show(name, model, record=validation, outputs=None):
    e = jf.emps_errors(record, jf.predict(model, record, outputs=outputs))
    force = f", force relative error {e['force_relative']:.2f} %" if "force_relative" in e else ""
    print(f"{name:<34} position RMS {1e3 * e['position_rms']:6.3f} mm, relative {e['position_relative']:.3f} %"
          f"{force}")
    return e


# 1. the published IDIM-LS model, open loop (driven by the measured vir) and closed loop
published = jf.emps_model(jf.Quinn(mu=20.3935, eps=EPS), gtau=val.gtau, mass=95.1089, viscous=203.5034,
                          offset=-3.1648)
show("published IDIM-LS (open loop)", published)
closed_record = val.closed_loop_measurement(position=True)
controller = {"force": jf.emps_controller_force(val.gtau, val.kv)}
closed = jf.emps_model(jf.Quinn(mu=20.3935, eps=EPS), gtau=val.gtau, kp=val.kp, kv=val.kv, mass=95.1089,
                       viscous=203.5034, offset=-3.1648, closed_loop=True)
show("published IDIM-LS (closed loop)", closed, closed_record, controller)

# 2. output-error fits on the estimation record only
model = jf.emps_model(jf.Quinn(mu=20.0, eps=EPS), gtau=est.gtau)
# multiple shooting on every sample: 3.8 mm on validation, against 5.5 mm on every 10th sample
# (the validation error is very sensitive to the offset; docs/howto/emps.md)
for segments, data in ((1, fit_data), (12, est.measurement())):
    res = jf.fit(model, None, data, bounds=box, shooting_segments=segments, search=search)
    p = res.params
    print(f"Coulomb + viscous, {segments:2d} segment(s): M = {p['mass']:.2f} kg, Fv = {p['damping']:.1f} N s/m, "
          f"Fc = {p['law.mu']:.2f} N, offset = {-p['force.terms[1].value']:.3f} N")
    show(f"  validation ({segments} segment(s))", res.system)

asymmetric = jf.emps_model(jf.AsymmetricFriction(mu_c_pos=20.0, mu_c_neg=20.0, viscous_pos=200.0,
                                                 viscous_neg=200.0, eps=EPS), gtau=est.gtau)
res = jf.fit(asymmetric, None, fit_data, search=search, shooting_segments=12,
             bounds={"mass": (50.0, 200.0), "force.terms[1].value": (-10.0, 10.0), "law.mu_c_pos": (5.0, 50.0),
                     "law.mu_c_neg": (5.0, 50.0), "law.viscous_pos": (50.0, 500.0),
                     "law.viscous_neg": (50.0, 500.0)})
print("direction-dependent:", {k: round(v, 2) for k, v in res.params.items()},
      "(published Fc+ 20.14, Fc- 20.63, Fv+ 166.71, Fv- 240.42)")
show("  validation (12 segments)", res.system)

# 3. the input-error fit: the controller in the model, the controller force as output
gkv = est.gtau * est.kv  # the controller's share of the damping
loop = jf.emps_model(jf.Quinn(mu=20.0, eps=EPS), gtau=est.gtau, kp=est.kp, kv=est.kv, closed_loop=True)
res = jf.fit(loop, None, est.closed_loop_measurement().decimate(10), search=search,
             outputs={"force": jf.emps_controller_force(est.gtau, est.kv)},
             bounds={"mass": (50.0, 200.0), "damping": (gkv + 50.0, gkv + 500.0), "law.mu": (5.0, 50.0),
                     "force.terms[2].value": (-10.0, 10.0)})
p = res.params
print(f"input-error: M = {p['mass']:.2f} kg, Fv = {p['damping'] - gkv:.1f} N s/m, Fc = {p['law.mu']:.2f} N, "
      f"offset = {-p['force.terms[2].value']:.3f} N")
show("  validation (closed loop)", res.system, closed_record, controller)
