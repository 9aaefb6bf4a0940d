"""The figure of a continued branch: a response curve, stable parts solid, unstable dashed."""

from __future__ import annotations

import numpy as np


def plot_branch(branch, y: str = "amplitude", ax=None, label: str | None = None, color=None):
    """Plot a branch of :func:`~jaxfriction.continue_orbits` against its parameter.

    The structural dynamicist's frequency-response figure: ``y`` (default the amplitude)
    against the continued parameter, stable orbits solid, unstable dashed, folds and
    bifurcation points marked.

    Args:
        branch: the ``xarray.Dataset`` of :func:`~jaxfriction.continue_orbits`.
        y: a variable of the branch over ``point`` (``"amplitude"``, ``"dissipation"``,
            ``"stick_fraction"``, ``"max_multiplier"``); a per-dof amplitude plots its
            first dof.
        ax: a matplotlib axes (default a new figure's).
        label: legend label of the stable part.
        color: line color.

    Returns:
        The matplotlib axes.

    Raises:
        ValueError: naming ``y`` when the branch has no such variable.
    """
    import matplotlib.pyplot as plt

    if y not in branch:
        raise ValueError(f"y must be a variable of the branch ({sorted(branch.data_vars)}), got {y!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    path = branch.attrs["path"]
    p = np.asarray(branch[path].values, dtype=float)
    v = np.asarray(branch[y].values, dtype=float)
    v = v if v.ndim == 1 else v[:, 0]
    stable = np.asarray(branch["stable"].values, dtype=bool)
    line = None
    # consecutive runs of equal stability, each drawn with the point that joins it to the next
    edges = np.flatnonzero(np.diff(stable.astype(int))) + 1
    for a, b in zip(np.r_[0, edges], np.r_[edges, len(p)]):
        stop = min(b + 1, len(p))
        style = "-" if stable[a] else "--"
        lab = (label if stable[a] else (f"{label} (unstable)" if label else "unstable")) if line is None or \
            stable[a] != stable[0] else None
        (line,) = ax.plot(p[a:stop], v[a:stop], style, color=color if line is None else line.get_color(), label=lab)
    marks = np.flatnonzero(np.asarray(branch["fold"].values, dtype=bool) |
                           (np.asarray(branch["bifurcation"].values).astype(str) != ""))
    if marks.size:
        ax.plot(p[marks], v[marks], "o", color=line.get_color(), mfc="white", label="fold / bifurcation")  # type: ignore[union-attr]
    ax.set_xlabel(path)
    ax.set_ylabel(y)
    return ax
