import jax

jax.config.update("jax_enable_x64", True)

import numpy as np
import pytest
import xarray as xr
from click.testing import CliRunner

from jaxfriction.cli import main


@pytest.mark.slow
def test_default_sweep_end_to_end(tmp_path):
    """The README's main job on its defaults: 64 x 64 grid, 50 cycles, Quinn's law."""
    out = tmp_path / "sweep"
    result = CliRunner().invoke(main, ["sweep", "--out", str(out), "--figure", str(tmp_path / "s.png"),
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "0 of 4096 trajectories flagged" in result.output
    ds = xr.open_dataset(out / "result.nc", engine="h5netcdf")
    assert ds["dissipation"].shape == (64, 64)
    assert int(ds["status"].max()) == 0
    d = np.asarray(ds["dissipation"])
    assert np.all(d >= -1e-12)
    # more forcing never dissipates less at fixed mu N (columns increase with alpha)
    assert np.all(np.diff(d, axis=1) >= -1e-9)
    assert np.all(np.isfinite(ds["grad_dissipation"].sel(wrt="law.mu")))
