"""The confidence band drawn around a model belongs to that model: it contains the model's line everywhere."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scalecheck.core.compare import prediction_band
from scalecheck.core.modeler import fit_kernels
from scalecheck.data.views import plot_grid
from scalecheck.formats import read_measurements

INPUTS = Path(__file__).resolve().parents[1] / "inputs" / "extrap"


@pytest.mark.parametrize("name", ["relearn_data.txt", "mpi_data_mean.txt"])
def test_every_band_contains_its_model_up_to_the_target(name: str) -> None:
    run = read_measurements(INPUTS / name, None, "weak")
    series = list(run.series)
    checked = 0
    for s, km in zip(series, fit_kernels(series)):
        if not km.ok:
            continue
        target = {s.parameters[0]: 65536.0} if len(s.parameters) == 1 else None
        _, grid = plot_grid(s, target)
        band = prediction_band(s, km, grid)
        inside = (band.low <= band.model * (1 + 1e-9)) & (band.model <= band.high * (1 + 1e-9))
        assert inside.all(), f"{s.kernel}: the model leaves its band at {grid[~inside][:3].tolist()}"
        checked += 1
    assert checked >= 10


def test_the_legend_says_when_resamples_select_another_model() -> None:
    run = read_measurements(INPUTS / "relearn_data.txt", None, "weak")
    [s] = [s for s in run.series if s.kernel == "Update global tree"]
    [km] = fit_kernels([s])
    _, grid = plot_grid(s, None)
    note = prediction_band(s, km, grid).note
    assert note.startswith("the resamples select another model in ") and ", most often c + c * " in note
    steady = [t for t in run.series if t.kernel == "Create synapses (w/ Alltoall)"]
    assert prediction_band(steady[0], fit_kernels(steady)[0], plot_grid(steady[0], None)[1]).note == ""
