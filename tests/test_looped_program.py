"""The compiled loop written as loops over each lane's arrays (many contacts) against the XLA path.

The looped program (``jaxfriction._lanes.looped``) has the same size whatever the number of
blocks, sliders or elements; many blocks give the XLA path's observables, forward-mode gradients
and status codes to round-off through it, in float64 and float32, with one lane per block (the
loops over a lane's elements vectorized) or eight. The laws and contract systems through it are
in ``test_executors.py`` (executor ``looped``).
"""

import dataclasses
import re

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest
from test_contracts import SYSTEMS

import jaxfriction as jf
from jaxfriction._lanes.compiled_loop import CompiledLoop
from jaxfriction._lanes.traced import LaneProgram
from jaxfriction.testing import check_fused


def _chain(n, **options):
    return jf.BurridgeKnopoffChain(law=jf.Quinn(mu=1.0, eps=0.05), n=n, **options)


def _source(system, grid, lanes=1, **options):
    plan = jf.plan_sweep(system, grid, kernel="vmap", **options)
    kernel, _ = LaneProgram(plan.lane).pieces(list(grid), analyse_live=False)
    return CompiledLoop(kernel, lanes, compile=False, looped=True).source


def test_the_program_does_not_grow_with_the_contacts():
    """The chain of 32 blocks and of 1,024 write the same loops (only their bounds and the
    constant arrays differ); one expression per component wrote 5,018 lines at n = 32."""
    options = {"t1": 0.2, "dt": 0.01, "wrt": ("alpha",)}
    small, large = (_source(_chain(n), {"alpha": [0.2]}, **options) for n in (32, 1024))
    lines = [len([x for x in s.splitlines() if not x.startswith("KA")]) for s in (small, large)]
    assert lines[0] == lines[1] < 2000  # the end blocks of the chain are parts of their own: their law apart
    assert "for k in range(1024):" in large and "for k in range(32):" in small


def test_a_block_of_one_lane_indexes_its_rows_without_the_lane():
    """With one lane per block (``L = 1``, the looped default) an index ``(row) * L + j`` is
    written as the row: numba types each integer operation of an index (29 % of the compile
    of a 100-block chain with a tangent). Blocks of several lanes keep the lane index."""
    one, eight = (_source(_chain(32), {"alpha": [0.2]}, lanes, t1=0.2, dt=0.01) for lanes in (1, 8))
    assert "L = 1\n" in one and "* L + j" not in one and not re.search(r"\[\d+ \+ j\]", one)
    assert re.search(r"\bC[ZK]?\[1( \+ k)?\]", one)  # a carry row (or a stage's row), read by row alone
    assert eight.count("* L + j") > 100


def test_the_chain_step_keeps_pads_and_concatenations_as_parts():
    """The chain's spring forces (pads of ``jax.grad``), its load vector and its rates (a
    concatenation) stay in parts: the step holds no loop that only copies, the friction law
    runs once per part, and each sum over the blocks is added up in the loop that computes its
    terms (no loop of its own, no stored terms)."""
    source = _source(_chain(32), {"alpha": [0.2]}, t1=0.2, dt=0.01)
    step = source[source.index("if n < "):]
    copy = re.compile(r"^\s*(X_\w+|CN)\[[^\]]*\] = (X_\w+|C)\[[^\]]*\]$")  # C = CN: the schedule's
    assert [line for line in step.splitlines() if copy.match(line)] == []
    assert "radd(" in step and "for k in range(0, " not in step  # a loop of its own: in fours


def test_a_joint_of_100_elements_lowers_to_loops_and_agrees_at_trace_time():
    """Segalman's joint of 100 elements (constants folded from parts, clamps with a lane
    scalar): the looped program is written (no numba compile here; its numbers against the
    XLA path are the slow test below)."""
    law = jf.SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=100)
    system = jf.jointed_oscillator(law, force_amplitude=0.1, omega=0.3, damping=0.01)
    source = _source(system, {"force.amplitude": [0.1]}, t1=1.0, dt=0.01, wrt=("force.amplitude",))
    assert "radd(" in source and len(source.splitlines()) < 1500


@pytest.mark.slow
def test_a_joint_of_100_elements_agrees_with_the_xla_path():
    law = jf.SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=100)
    system = jf.jointed_oscillator(law, force_amplitude=0.1, omega=0.3, damping=0.01)
    check_fused(system, {"force.amplitude": [0.05, 0.5, 2.0]}, kernel="looped", wrt=("force.amplitude",),
                t1=40.0, window=20.0, dt=0.02)


def _iwan_tables(n, smoothing=0.0):
    """An Iwan joint of ``n`` Jenkins sliders given by tables (Segalman's discretization)."""
    segalman = jf.SegalmanIwan(F_S=1.0, K_T=3.0, chi=-0.5, beta=0.1, n_elements=n - 1)
    law = jf.Iwan(*(np.asarray(a) for a in segalman.elements()), smoothing=smoothing)
    return jf.jointed_oscillator(law, omega=0.5)


def test_sums_over_tables_shared_by_every_lane_are_reduced_once_per_piece():
    """An Iwan joint's stiffness and slip-force tables are the template's, shared by every lane:
    the step rule's sums over them are written once per piece, before the lane loops (the
    looped program refused them, and such a joint ran on the XLA path). The joint's switch is
    smoothed: its states are integrated through their rate and the switch rule sums the tables
    (the exact switch is marched, and its rule has no sum)."""
    source = _source(_iwan_tables(100, smoothing=0.05), {"force.amplitude": [0.1]}, t1=1.0, dt=0.01)
    shared_sum = re.compile(r"^\s*for k in range\(100\):\n\s*(v\d+) = radd\(\1, ", re.M)
    assert shared_sum.search(source), "no sum over a shared table before the lane loops"
    # the step reads its lane values (the velocity, a stage's scalar inputs) before the loops
    # over the sliders: a read of an array at a fixed row inside a loop that also stores rows of
    # it kept LLVM from vectorizing the loop (the joint of 1,000 sliders ran 2.9x slower)
    step = source[source.index("if n < "):]
    fixed_row = re.compile(r"\b(X_\w+|C[ZK]?)\[\(?\d+( \+ 0\))?\]")  # a row, the lane index folded (L = 1)
    loops = _blocks(step, "for k in range(100):")
    assert loops and not [b for b in loops if fixed_row.search(b)]


def _blocks(source, header):
    """The bodies of the blocks of ``source`` opened by the line ``header`` (by indentation)."""
    lines, bodies = source.splitlines(), []
    for at, line in enumerate(lines):
        if line.strip() == header:
            depth, body = len(line) - len(line.lstrip()), []
            for inner in lines[at + 1:]:
                if inner.strip() and len(inner) - len(inner.lstrip()) <= depth:
                    break
                body.append(inner)
            bodies.append("\n".join(body))
    return bodies


def test_values_of_the_shared_tables_alone_are_computed_once_before_the_time_loop():
    """An Iwan joint's slip displacements ``phi_i / k_i`` (a division per slider) depend on
    its tables alone: they are written once per call of the program, before its time loop,
    instead of at every RK4 stage of every lane (the joint of 100 sliders: 425 to 459 M
    slider-steps/s, ``docs/performance.md``)."""
    source = _source(_iwan_tables(16), {"force.amplitude": [0.3]}, t1=0.1, dt=0.01)
    before, loop = source.split("for n in range(", 1)
    assert re.search(r"^\s*v\d+\[k\] = S\[16 \+ k\] / v\d+\[k\]$", before, re.M)
    assert not re.search(r"S\[[^\]]*\] / ", loop)


@pytest.mark.slow
def test_an_iwan_joint_of_tables_agrees_with_the_xla_path():
    check_fused(_iwan_tables(16), {"force.amplitude": [0.1, 0.6, 1.5]}, kernel="looped", wrt=("force.amplitude",),
                t1=20.0, dt=0.01)


def _bar(elements, smoothing=0.0):
    bar = jf.jointed_bar(n_contacts=6, n_modes=3, law="iwan", elements=elements, force_amplitude=0.3)
    return eqx.tree_at(lambda s: s.law, bar, dataclasses.replace(bar.law, smoothing=smoothing))


def test_per_contact_sums_over_tables_shared_by_every_lane_are_written_once_per_piece():
    """A reduced-order structure whose contacts each carry an Iwan joint: the step rule sums
    each contact's shared tables over its elements (a reduction over some axes of a value
    shared by every lane, which the looped program refused: the jointed bar ran on the XLA
    path). With several elements per contact the sums go to a table written once per call
    of the program, before its time loop (the tables are the same at every step); with one
    element the table is read as it is. (The contacts' switch is smoothed, so that the switch
    rule sums the tables, as in the test above.)"""
    options = {"t1": 0.1, "dt": 0.01}
    several = _source(_bar(3, 0.05), {"force.amplitude": [0.3]}, **options)
    # the sum of each contact's elements of a shared table (read from S), over r
    summed = r"^\s*v\d+ = np\.empty\(6, np\.float64\)\n\s*for k in range\(6\):\n.*\n\s*for r in range\(3\):\n\s*v\d+ = radd\(v\d+, S\["
    assert re.search(summed, several, re.M)
    assert not re.search(summed.replace("3", r"\d+"), _source(_bar(1, 0.05), {"force.amplitude": [0.3]}, **options), re.M)


def test_a_product_reads_a_transposed_shared_table_through_the_table():
    """The modal structure's generalized force ``Phi^T f`` transposes the contact modes,
    shared by every lane: the product reads ``Phi`` where its elements are, instead of copying
    each of its columns into a lane buffer at every stage (four copy loops of 40 a stage on a
    40-contact bar: 47 M against 58 M contact-steps/s, the same numbers to the bit). Agreement
    with the XLA path: ``test_executors.py``'s jointed bar through the looped program."""
    source = _source(jf.jointed_bar(n_contacts=40, n_modes=4), {"force.amplitude": [0.1]}, t1=0.1, dt=0.01)
    assert not re.search(r"^\s*X_\w+\[[^\]]*\] = S\[", source, re.M)  # no shared value copied per lane
    assert re.search(r"radd\(v\d+, S\[\d+ \+ \d+ \+ 4 \* k \+ 1 \* r\] \*", source)  # Phi^T read in Phi


def test_a_product_the_step_repeats_is_computed_once_per_stage():
    """The bar's contact slips ``Phi q'`` are read by the law and by the dissipation's
    booking: two equal products in the trace of each RK4 stage, computed twice (the bar of 40
    contacts: 59 M to 75 M contact-steps/s once computed once, ``docs/performance.md``)."""
    source = _source(jf.jointed_bar(n_contacts=40, n_modes=4), {"force.amplitude": [0.1]}, t1=0.1, dt=0.01)
    step = source[source.index("if n < "):]
    slips = re.findall(r"radd\(v\d+, S\[88 \+ 0 \+ 4 \* k \+ 1 \* r\] \*", step)  # Phi's rows times q'
    assert len(slips) == 4  # one per RK4 stage


def test_an_iwan_stage_sums_the_force_alone():
    """Per RK4 stage of an Iwan joint (its switch marched), the sliders' loop holds one sum:
    the force ``sum k_i z_i``. It held four: the force again (its table read through a view
    of itself, an index written otherwise), the stored energy's rate along the stages' zero
    state rate (the dissipation rate the march replaces), and the springs' forces, whose
    power on the slip cancels the force's in the stages' viscous power (Jenkins elements have
    none: ``Iwan.viscous_force``). The march's own booking at the step's end adds one sum."""
    source = _source(_iwan_tables(100), {"force.amplitude": [0.1]}, t1=0.1, dt=0.01)
    step = source[source.index("if n < "):]
    assert step.count("radd(") == 4 + 1  # four stages and the step's end


@pytest.mark.parametrize("case", ["chain", "bar"])
def test_a_long_program_writes_the_later_rk4_stages_once_and_loops_over_them(case):
    """A looped program that written stage by stage is past ``STAGED_LINES`` lines (a chain
    with a tangent: 1,656 lines, 7.9 s of numba compile) writes RK4's later three stages once,
    in a loop over them (their time, the next stage's state and the weighted sum of the
    stages' rates in its body): 687 lines, 4.2 s. A bar whose contacts' states are marched,
    with a tangent, the same. The forcing's sine is then written in two places (the first
    stage and the loop) instead of three. A shorter program is written out stage by stage
    (the loop costs run time: ``STAGED_LINES``)."""
    from jaxfriction._lanes.compiled_loop import STAGED_LINES

    if case == "chain":
        system, grid = _chain(32), {"alpha": [0.2]}
    else:
        system, grid = jf.jointed_bar(n_contacts=40, n_modes=4), {"force.amplitude": [0.1]}
    source = _source(system, grid, t1=0.1, dt=0.01, wrt=tuple(grid))
    step = source[source.index("if n < "):]
    assert "for st in range(1, 4):" in step and step.count("math.sin(") == 2
    assert len(source.splitlines()) < STAGED_LINES
    short = _source(system, grid, t1=0.1, dt=0.01)
    # written out: one sine per stage time (the second and third stages share theirs)
    assert "for st in range(" not in short and short[short.index("if n < "):].count("math.sin(") == 3


@pytest.mark.parametrize("case", ["bar", pytest.param("lugre-chain", marks=pytest.mark.slow)])  # XLA: 15 s
def test_a_program_with_its_stages_looped_over_agrees_with_the_xla_path(case):
    """The stage loop's arithmetic is RK4's (``staged_rk4_step``): a bar whose contacts'
    states are marched (the marched stage's rate, its state along the previous stage's slip,
    the booked end) and a chain of LuGre contacts, both with a tangent (so written with the
    loop), give the XLA path's observables, gradients and statuses to round-off. (The chain of
    100 Quinn blocks with a tangent above runs the loop too.)"""
    if case == "bar":
        system, grid = jf.jointed_bar(n_contacts=2, n_modes=2, force_amplitude=0.3), {"force.amplitude": [0.1, 0.3]}
    else:
        system, grid = jf.BurridgeKnopoffChain(law=jf.LuGre(), n=8, alpha=0.5), {"alpha": [0.3, 0.8]}
    source = _source(system, grid, t1=1.0, dt=0.01, wrt=tuple(grid))
    assert "for st in range(1, 4):" in source
    check_fused(system, grid, kernel="looped", block=1, wrt=tuple(grid), t1=1.0, dt=0.01)


def test_a_step_of_many_operations_is_written_as_loops_without_trying_one_expression(monkeypatch):
    """The bar of 40 contacts has 48 numbers of state (under ``LOOPED_STATE``) but a step of
    about 19,000 per-lane operations: the default plan writes it as loops at once (1.3 s)
    instead of writing one expression per component first (9,425 lines, over the limit: 5.3 s
    of planning). The operations are counted on the array-level trace."""
    from jaxfriction._lanes import compiled
    from jaxfriction._lanes.pieces import _lane_operations

    a = np.arange(12.0).reshape(3, 4)
    closed = jax.make_jaxpr(lambda t, y, s: jnp.dot(a, y) * t + jnp.sum(s))(1.0, jnp.ones(4), jnp.ones(5))
    # the product 3 * 2 * 4, the time's conversion, the scaling and the sum by lane: 3 each;
    # the sum over the shared ``s`` counts nothing
    assert _lane_operations(closed.jaxpr, [True, True, False]) == 24 + 1 + 3 + 3
    written = []
    emitted = compiled.emitted
    monkeypatch.setattr(compiled, "emitted", lambda pieces, lanes, looped: written.append(looped) or
                        emitted(pieces, lanes, looped))
    system = jf.jointed_bar(n_contacts=40, n_modes=4)
    plan = jf.plan_sweep(system, {"force.amplitude": [0.1]}, t1=0.1, dt=0.01, progress=False)
    assert plan.kernel == "compiled" and "loops" in plan.kernel_reason
    assert False not in written  # no program of one expression per component was written
    pieces, _ = LaneProgram(plan.lane).pieces(["force.amplitude"], analyse_live=False)
    assert pieces.lane_operations > compiled.LOOPED_OPERATIONS > compiled.MAX_SOURCE_LINES


@pytest.mark.slow  # 35-70 s of numba compile; the per-contact tables' trace is the fast test above
def test_a_contact_value_times_its_elements_is_broadcast_along_them():
    """``(contacts, 1) * (contacts, elements)``: an elementwise primitive of equal rank
    broadcasts size-1 axes itself (a contact's slip times its elements' states). The loops read
    operands element for element, so the smaller operand was read past its contacts: a jointed
    bar of two-element Iwan contacts drifted from the XLA path (4 % in ``final_position`` over
    200 steps, energy residual 0.014 after 5) before the operand was broadcast as
    ``broadcast_in_dim`` is."""
    system = jf.jointed_bar(n_contacts=2, n_modes=2, law="iwan", elements=2, force_amplitude=0.3)
    check_fused(system, {"force.amplitude": [0.1, 0.3]}, kernel="looped", wrt=("force.amplitude",), t1=0.5,
                dt=0.01)



# the reduced-order bar's dense contact Jacobian reduces values shared by every lane (its row
# sums): the looped program refuses it and its sweeps run on the XLA path
CHAIN_OPTIONS = {"t1": 1.0, "window": 0.5, "dt": 0.005, "wrt": ("law.mu",), "progress": False}
CHAIN_OUTPUTS = ("dissipation", "grad_dissipation", "stick_fraction", "peak_slip", "final_position")


def test_a_chain_of_many_blocks_one_lane_per_block_agrees():
    """n = 100 through the default choice (loops, one lane per block) against the XLA path; the
    sweep says it ran loops."""
    system, grid = _chain(100, alpha=0.5), {"alpha": [0.3, 0.6, 0.9]}
    xla = jf.sweep(system, grid, kernel="vmap", **CHAIN_OPTIONS)
    one = jf.sweep(system, grid, kernel="compiled", **CHAIN_OPTIONS)
    assert "loops over each lane's arrays" in one.attrs["kernel_reason"]
    assert np.all(one["status"].values == 0) and np.nanmax(xla["dissipation"].values) > 1e-3
    for name in CHAIN_OUTPUTS:
        np.testing.assert_allclose(one[name].values, xla[name].values, rtol=1e-10, atol=1e-13, err_msg=name)


@pytest.mark.slow
def test_a_chain_of_many_blocks_eight_lanes_per_block_agree_with_one():
    system, grid = _chain(100, alpha=0.5), {"alpha": [0.3, 0.6, 0.9]}
    one = jf.sweep(system, grid, kernel="compiled", **CHAIN_OPTIONS)
    eight = jf.sweep(system, grid, kernel=jf.CompiledLoopKernel(lanes=8, loops=True), **CHAIN_OPTIONS)
    for name in CHAIN_OUTPUTS:
        np.testing.assert_allclose(eight[name].values, one[name].values, rtol=1e-12, atol=1e-15, err_msg=name)


@pytest.mark.slow
def test_float32_chain_agrees_with_the_xla_path():
    with jax.enable_x64(False):
        xla, loop = check_fused(_chain(40), {"alpha": [0.3, 0.8]}, kernel="looped", t1=0.5, dt=0.01,
                                rtol=1e-4, atol=1e-5)
        assert loop["dissipation"].dtype == np.float32


def test_auto_takes_loops_for_many_contacts_and_names_what_loops_cannot_run():
    plan = jf.plan_sweep(_chain(64), {"alpha": [0.5]}, t1=0.1, dt=0.01)
    assert plan.kernel == "compiled" and "loops" in plan.kernel_reason
    small = jf.plan_sweep(jf.template("oscillator"), {"law.mu": [0.5]}, cycles=1)
    assert small.kernel == "compiled" and "loops" not in small.kernel_reason
    with pytest.raises(ValueError, match="kernel: the compiled loop .*component-wise.*solve"):
        jf.plan_sweep(SYSTEMS["two-blocks"][0], {"law.mu[0]": [0.5]}, t1=0.1, dt=0.01,
                      kernel=jf.CompiledLoopKernel(loops=True))
    with pytest.raises(ValueError, match="loops"):
        jf.CompiledLoopKernel(loops="yes")
