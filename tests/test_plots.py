"""The default figure of ``jaxfriction sweep`` (``plot_sweep``), checked with matplotlib's
object model on small datasets that carry the attributes a sweep sets."""

import json

import numpy as np
import pytest
import xarray as xr

from jaxfriction._plots import plot_sweep, sweep_figure

FIXED = {"law.eps": 0.02, "force.omega": 0.5, "force.phase": 0.0, "surface.value": 0.0, "mass": 1.0,
         "stiffness": 1.0, "damping": 0.0, "normal": 1.0}
ATTRS = {"t1": 628.3185307179587, "window": 12.566370614359172, "t_measure": 615.7521601035994, "dt": 0.01,
         "solver": "RK4", "template": "oscillator", "source": "Quinn 2004 eq. 5, Fig. 7(a)",
         "description": "forced friction oscillator, quinn law (eps = 2 dt)", "cycles": 50,
         "frequency": "force.omega", "fixed": json.dumps(FIXED), "gradient": "ForwardMode",
         "flagged": json.dumps({"invalid parameter": 1})}
WRT = ["law.mu", "force.amplitude"]


def dataset(kind):
    """A sweep-like dataset: a 2-D grid (5 x 4), a 1-D grid (7) or 9 samples; one flagged lane."""
    rng = np.random.default_rng(0)
    if kind == "2d":
        coords = {"law.mu": np.linspace(0.1, 1.0, 5), "force.amplitude": np.linspace(0.1, 2.0, 4)}
        dims, shape = ("law.mu", "force.amplitude"), (5, 4)
    elif kind == "1d":
        coords, dims, shape = {"law.mu": np.linspace(0.1, 1.0, 7)}, ("law.mu",), (7,)
    else:
        coords = {"law.mu": ("sample", rng.uniform(0.1, 1, 9)), "force.amplitude": ("sample", rng.uniform(0.1, 2, 9))}
        dims, shape = ("sample",), (9,)
    status = np.zeros(shape, dtype=np.int8)
    status.flat[0] = 4
    data = {name: (dims, rng.uniform(size=shape)) for name in ("dissipation", "stick_fraction", "peak_slip")}
    data["grad_dissipation"] = ((*dims, "wrt"), rng.normal(size=(*shape, len(WRT))))
    data["status"] = (dims, status)
    return xr.Dataset(data, coords={**coords, "wrt": WRT}, attrs=ATTRS)


def parts(fig):
    """The figure's panels (axes that are not colour bars) and its colour bars."""
    bars = [c.colorbar for ax in fig.axes for c in ax.collections if getattr(c, "colorbar", None) is not None]
    bar_axes = {b.ax for b in bars}
    return [ax for ax in fig.axes if ax not in bar_axes], bars


@pytest.mark.parametrize("kind", ["2d", "1d", "samples"])
def test_one_panel_per_observable_and_gradient_with_labels_and_the_window(kind):
    fig = sweep_figure(dataset(kind))
    panels, bars = parts(fig)
    # dissipation and stick fraction (peak_slip is not a default panel) + one gradient per wrt path
    assert len(panels) == 2 + len(WRT)
    titles = [ax.get_title() for ax in panels]
    assert titles[0].startswith("D per cycle") and titles[1].startswith("stick fraction")
    assert titles[2].startswith("dD/d law.mu") and titles[3].startswith("dD/d force.amplitude")
    assert all("1 flagged lane" in t for t in titles)
    if kind == "1d":
        assert not bars
        assert [ax.get_ylabel() for ax in panels] == ["D per cycle [energy]", "stick fraction [-]",
                                                     "dD/d law.mu [energy per unit law.mu]",
                                                     "dD/d force.amplitude [energy per unit force.amplitude]"]
        hatched = [p for p in panels[0].patches if p.get_hatch()]
        assert len(hatched) == 1  # the flagged lane's band
    else:
        assert len(bars) == len(panels)
        labels = [b.ax.get_ylabel() for b in bars]
        assert labels[:2] == ["D per cycle [energy]", "stick fraction [-]"]
        assert labels[2].startswith("dD/d law.mu") and labels[3].startswith("dD/d force.amplitude")
        assert all(ax.get_xlabel() == "law.mu" and ax.get_ylabel() == "force.amplitude" for ax in panels)
    header = fig._suptitle.get_text()
    assert "last of 50 forcing cycles" in header and "t = 615.8 .. 628.3" in header and "12.57" in header
    assert "oscillator" in header and "Quinn 2004 eq. 5" in header and "RK4 dt = 0.01" in header
    fixed = header.splitlines()[-1]
    assert fixed.startswith("fixed: omega = 0.5, eps = 0.02") and fixed.count(" = ") == 6 and "+2 more" in fixed
    assert "1 flagged" in header and "invalid parameter: 1" in header


def test_window_of_a_run_and_observables_without_dissipation(tmp_path):
    ds = dataset("2d")[["peak_slip", "status"]]
    ds.attrs = {k: v for k, v in ATTRS.items() if k not in ("cycles", "frequency")}
    ds.attrs.update(t1=30.0, window=10.0, t_measure=20.0, fixed="{}", flagged="{}")
    fig = sweep_figure(ds)
    panels, bars = parts(fig)
    assert len(panels) == 1 and bars[0].ax.get_ylabel() == "peak slip speed [velocity]"
    assert "measured window: t = 20 .. 30 (length 10)" in fig._suptitle.get_text()
    plot_sweep(ds, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 5_000


def test_a_grid_of_three_paths_is_drawn_at_the_middle_of_the_third():
    base = dataset("2d")
    ds = xr.concat([base, base, base], dim=xr.DataArray([0.0, 0.05, 0.1], dims="damping", name="damping"))
    ds = ds.transpose("law.mu", "force.amplitude", "damping", "wrt")
    ds.attrs = ATTRS
    fig = sweep_figure(ds)
    panels, bars = parts(fig)
    assert len(panels) == len(bars) == 4
    assert all("at damping = 0.05" in ax.get_title() for ax in panels)


def test_fixed_parameters_keep_their_full_path_when_the_last_part_is_ambiguous():
    from jaxfriction._plots import _fixed_phrase

    fixed = json.dumps({"mass": 1.0, "force.value": 0.0, "law.mu_s": 0.6, "force.phase": 0.0})
    assert _fixed_phrase({"fixed": fixed}, swept=["surface.value"]) == (
        "fixed: force.value = 0, mu_s = 0.6, mass = 1, phase = 0")
    assert _fixed_phrase({"fixed": "{}"}) == ""
