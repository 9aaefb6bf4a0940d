import json

import numpy as np
import xarray as xr
from click.testing import CliRunner

from jaxfriction.cli import main


def test_sweep_writes_results_and_figure(tmp_path):
    out, fig = tmp_path / "s.nc", tmp_path / "s.png"
    result = CliRunner().invoke(main, ["sweep", "--mu", "0.2", "1.0", "3", "--alpha", "0.1", "2.0", "4", "--cycles",
                                       "3", "--out", str(out), "--figure", str(fig), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "trajectory-steps/s" in result.output
    ds = xr.open_dataset(out, engine="h5netcdf")
    assert ds["dissipation"].shape == (3, 4) and ds.attrs["law"] == "quinn"
    assert ds["dissipation"].dtype == np.float64 and np.isclose(ds.attrs["eps"], 0.02)
    assert fig.stat().st_size > 10_000


def test_reproduce_quinn_fig5_json(tmp_path):
    result = CliRunner().invoke(main, ["reproduce", "quinn-fig5", "--json", "--t1", "20",
                                       "--figure", str(tmp_path / "f.png")])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    assert round(numbers["laws"]["quinn"]["rest_position"], 6) == -0.750090
    assert round(numbers["quinn_rest_position_by_eps"]["2dt"], 6) == -0.750352
    assert numbers["exact_rest_position"] == -0.75
    assert numbers["laws"]["coulomb"]["chatter_count"] > 1000
    assert numbers["laws"]["velocity_limited"]["rest_position"] > -0.7  # drifts toward the origin


def test_bad_input_gives_one_line_and_nonzero_exit(tmp_path):
    for args, word in [(["sweep", "--dt", "-1"], "dt"), (["sweep", "--law", "magic"], "law"),
                       (["sweep", "--mu", "1", "0", "3"], "--mu"), (["reproduce", "quinn-fig5", "--dt", "0"], "dt")]:
        result = CliRunner().invoke(main, args + ["--figure", str(tmp_path / "x.png")])
        assert result.exit_code != 0
        assert "Traceback" not in result.output and word in result.output
        assert result.output.strip().startswith("Error:")


def test_reproduce_quinn_fig7_orders(tmp_path):
    result = CliRunner().invoke(main, ["reproduce", "quinn-fig7", "--json", "--cycles", "10", "--dt", "0.02",
                                       "--dt", "0.01", "--dt", "0.005", "--figure", str(tmp_path / "f7.png")])
    assert result.exit_code == 0, result.output
    a = json.loads(result.output)["cases"]["a_sticking"]
    assert 1.8 < a["laws"]["quinn"]["order"] < 2.2
    assert 0.8 < a["laws"]["velocity_limited"]["order"] < 1.2
    assert abs(a["laws"]["quinn"]["percent_error"][-1]) < 0.01
    assert (tmp_path / "f7.png").stat().st_size > 10_000
