"""The "A law with internal state" example of docs/howto/own-law.md runs and its numbers hold."""

import re
from pathlib import Path

import numpy as np

DOC = Path(__file__).resolve().parents[1] / "docs" / "howto" / "own-law.md"


def test_the_own_dynamic_law_example_runs():
    section = DOC.read_text().split("## 5. A law with internal state", 1)[1]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, flags=re.S))
    namespace = {"__name__": "own_dynamic_law_example"}
    exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 - the documented example
    ts, f, traj = namespace["ts"], namespace["f"], namespace["traj"]
    jf = namespace["jf"]
    loading = np.max(np.abs(-np.asarray(f) - 0.5 * (1 - np.exp(-100.0 * np.asarray(ts) / 0.5))))
    assert loading < 1e-8
    assert int(traj.status) == 0 and float(jf.relative_energy_residual(traj)) < 1e-9
    assert float(traj.friction_dissipation[-1]) > 0.0
