"""The SVG plots of the HTML reports: what they draw and where, their axes and ticks, escaped text, and reports
that render without matplotlib."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from scalecheck.data.views import KernelPlot, PlotSide
from scalecheck.report.plots import COLORS, _labels, _linear_ticks, _log_ticks, kernel_svg
from scalecheck.text import visible

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
X = np.array([2.0, 4.0, 8.0, 16.0])
LINE = 2.0 ** np.arange(1.0, 6.5, 0.5)  # the grid: 2, 2^1.5, 4, ... 64


def parse(svg: str) -> ET.Element:
    """The plot as an XML tree (failing on malformed SVG), warnings being errors while it is drawn."""
    return ET.fromstring(svg)


def draw(plot: KernelPlot, salt: str = "k") -> ET.Element:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse(kernel_svg(plot, salt=salt))


def find(root: ET.Element, tag: str, cls: str, role: str | None = None) -> list[ET.Element]:
    """Elements `tag` of class `cls` (inside the side of `role`, if given)."""
    where = root if role is None else root.find(f"{SVG}g[@class='side'][@data-role='{role}']")
    assert where is not None
    return [e for e in where.iter(f"{SVG}{tag}") if e.get("class") == cls]


def ticks(root: ET.Element, axis: str) -> dict[str, float]:
    """{label: px position} of the ticks of `axis` ('x' or 'y')."""
    group = root.find(f"{SVG}g[@class='{axis}-ticks']")
    assert group is not None
    return {e.text or "": float(e.get(axis) or "nan") for e in group}


def numbers(path: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path)]


def model_side(role: str = "model", scale: float = 1.0, **extra: object) -> PlotSide:
    """Measured medians 10, 100, 1000, 10000 at p = 2 .. 16 with ranges a factor 10 either way, and the model
    10**(log2 p) along the grid with a band a factor 2 either way."""
    median = scale * 10.0 ** np.log2(X)
    model = scale * 10.0 ** np.log2(LINE)
    values: dict[str, object] = {"model": model, "band_low": model / 2, "band_high": model * 2}
    values.update(extra)
    return PlotSide(role, X, median, median / 10, median * 10, start=2.0, measured_top=16.0,
                    **values)  # type: ignore[arg-type]


def one_plot(*sides: PlotSide, target: float | None = 64.0, log_base: int | None = 2,
             line: np.ndarray = LINE) -> KernelPlot:
    return KernelPlot("p", "time [s]", line, target, log_base, sides or (model_side(),))


def points(root: ET.Element, role: str) -> tuple[list[float], list[float]]:
    """The px columns and rows of the measured points of the side of `role`."""
    group = root.find(f"{SVG}g[@data-role='{role}']/{SVG}g[@class='points']")
    assert group is not None
    return [float(c.get("cx") or "nan") for c in group], [float(c.get("cy") or "nan") for c in group]


def test_points_and_bars_sit_on_the_ticks_of_their_values() -> None:
    root = draw(one_plot())
    x_ticks, y_ticks = ticks(root, "x"), ticks(root, "y")
    assert list(x_ticks) == ["2", "4", "8", "16", "32", "64"]
    assert list(y_ticks) == ["1", "10", "100", "1,000", "10,000", "100,000", "1e+06"]
    cols, rows = points(root, "model")
    assert cols == pytest.approx([x_ticks[t] for t in ("2", "4", "8", "16")], abs=0.06)
    assert rows == pytest.approx([y_ticks[t] for t in ("10", "100", "1,000", "10,000")], abs=0.06)
    (bars,) = find(root, "path", "bars", "model")
    # per point: the bar from its low to its high, then a cap at each end
    runs = re.findall(r"M([\d.]+),([\d.]+)V([\d.]+)", bars.get("d") or "")
    assert [float(c) for c, _, _ in runs] == pytest.approx(cols, abs=0.06)
    assert [float(lo) for _, lo, _ in runs] == pytest.approx([y_ticks[t] for t in ("1", "10", "100", "1,000")],
                                                             abs=0.06)
    assert [float(hi) for _, _, hi in runs] == pytest.approx(
        [y_ticks[t] for t in ("100", "1,000", "10,000", "100,000")], abs=0.06)
    assert (bars.get("d") or "").count("h5") == 8


def test_model_band_target_and_axis_labels_are_drawn() -> None:
    root = draw(one_plot())
    (model,) = find(root, "path", "model", "model")
    (beyond,) = find(root, "path", "beyond", "model")
    x_ticks = ticks(root, "x")
    # solid up to the largest measured value, dotted beyond it up to the target
    model_cols = numbers(model.get("d") or "")[0::2]
    beyond_cols = numbers(beyond.get("d") or "")[0::2]
    assert model_cols[0] == pytest.approx(x_ticks["2"], abs=0.06)
    assert model_cols[-1] == pytest.approx(x_ticks["16"], abs=0.06) == beyond_cols[0]
    assert beyond_cols[-1] == pytest.approx(x_ticks["64"], abs=0.06)
    assert model.get("stroke-dasharray") is None and beyond.get("stroke-dasharray") == "1.5 2.5"
    (band,) = find(root, "path", "band")
    assert band.get("data-role") == "model" and (band.get("d") or "").endswith("Z")
    assert band.get("fill") == COLORS["model"] and band.get("fill-opacity") == "0.15"
    assert len(numbers(band.get("d") or "")) == 2 * 2 * LINE.size  # along the grid and back
    target = find(root, "path", "target")[0]
    assert numbers(target.get("d") or "")[0] == pytest.approx(x_ticks["64"], abs=0.06)
    assert [e.text for e in find(root, "text", "target")] == ["target"]
    assert [e.text for e in find(root, "text", "x-label")] == ["p"]
    assert [e.text for e in find(root, "text", "y-label")] == ["time [s]"]
    legend = root.find(f"{SVG}g[@class='legend']")
    assert legend is not None
    assert [e.text for e in legend.iter(f"{SVG}text")] == ["measured (median, range)", "confidence band", "model"]
    assert root.get("id") == "k-plot" and root.findtext(f"{SVG}title") == "time [s] against p"


def test_baseline_and_candidate_have_their_colours_dashes_segments_and_change_points() -> None:
    segment = (LINE[:4], 10.0 ** np.log2(LINE[:4]))
    base = model_side("baseline")
    cand = model_side("candidate", scale=3.0, segments=(segment,), change_points=(5.0,),
                      band_note="another model in 12% of draws")
    root = draw(one_plot(base, cand))
    for role, dashes in (("baseline", "6 3"), ("candidate", None)):
        (model,) = find(root, "path", "model", role)
        assert model.get("stroke-dasharray") == dashes
        side = root.find(f"{SVG}g[@data-role='{role}']")
        assert side is not None and side.get("stroke") == COLORS[role]
    assert len(find(root, "path", "segment", "candidate")) == 1 and not find(root, "path", "segment", "baseline")
    (change,) = find(root, "path", "change-point", "candidate")
    col = numbers(change.get("d") or "")[0]
    x_ticks = ticks(root, "x")
    expected = x_ticks["4"] + (x_ticks["8"] - x_ticks["4"]) * math.log2(5 / 4)  # 5 on a log axis
    assert col == pytest.approx(expected, abs=0.1)
    legend = root.find(f"{SVG}g[@class='legend']")
    assert legend is not None
    assert [e.text for e in legend.iter(f"{SVG}text")] == [
        "baseline measured (median, range)", "baseline confidence band", "baseline model",
        "candidate measured (median, range)", "candidate confidence band (another model in 12% of draws)",
        "candidate model"]
    rows = [float(e.get("y") or "nan") for e in legend.iter(f"{SVG}text")]
    assert rows[0] == rows[1] == rows[2] < rows[3]  # each side's entries from a new row
    assert rows == sorted(rows) and rows[-1] < float(find(root, "path", "axis")[0].get("d", "M0,0")[1:].split("V")[0]
                                                     .split(",")[1])  # above the data area


def test_values_that_are_not_positive_give_a_linear_y_axis_with_round_ticks() -> None:
    median = np.array([-5.0, -1.0, 2.0, 5.0])
    side = PlotSide("model", X, median, median, median, start=2.0, measured_top=16.0)
    root = draw(one_plot(side, target=None))
    y_ticks = ticks(root, "y")
    assert list(y_ticks) == ["-4", "-2", "0", "2", "4"]
    steps = np.diff(list(y_ticks.values()))
    assert steps == pytest.approx([steps[0]] * 4, abs=0.11)  # evenly spaced: linear
    _, rows = points(root, "model")
    assert rows[1] == pytest.approx(y_ticks["0"] - (y_ticks["0"] - y_ticks["-2"]) / 2, abs=0.06)  # -1


def test_nothing_drawable_gives_linear_axes_from_0_to_1() -> None:
    nan = np.full(4, np.nan)
    side = PlotSide("model", X, nan, nan, nan, start=2.0, measured_top=16.0, model=np.full(LINE.size, np.inf))
    root = draw(one_plot(side, target=None))
    assert list(ticks(root, "x")) == list(ticks(root, "y")) == ["0", "0.2", "0.4", "0.6", "0.8", "1"]
    assert not list(root.iter(f"{SVG}circle")) and not find(root, "path", "model", "model")


@pytest.mark.parametrize("median, model, target", [
    (np.array([1e-320, 1e-300, 1.0, 1.7e308]), np.geomspace(1e-320, 1.7e308, 11), 1e300),
    (np.array([-1e308, 1e299, 1.0, np.nan]), np.linspace(-1.0, 1.0, 11) * 1e308, None),
    (np.array([3.0, 3.0, 3.0, 3.0]), np.full(11, 3.0), 1e308),
    (np.array([5e-324, 5e-324, 5e-324, 5e-324]), np.full(11, 5e-324), None),
], ids=["300-decades", "beyond-linear-limit", "constant", "smallest-float"])
def test_extreme_values_give_well_formed_svg_with_finite_coordinates(median: np.ndarray, model: np.ndarray,
                                                                     target: float | None) -> None:
    side = PlotSide("model", X, median, median, median, start=2.0, measured_top=16.0, model=model,
                    band_low=model, band_high=model, change_points=(5.0,))
    svg = kernel_svg(one_plot(side, target=target, line=np.geomspace(2.0, 1e300, 11)), salt="k")
    root = draw(one_plot(side, target=target, line=np.geomspace(2.0, 1e300, 11)))
    width, height = (float(v) for v in (root.get("width") or "", root.get("height") or ""))
    coordinates = [float(v) for v in re.findall(r'(?:c[xy]|[xy])="(-?[\d.]+)"', svg)]
    coordinates += [v for d in re.findall(r' d="([^"]*)"', svg) for v in numbers(d)]
    assert coordinates and all(-5 <= v <= max(width, height) + 5 for v in coordinates)
    assert "nan" not in svg.lower().replace("nan-", "") and "inf" not in svg.lower()
    assert len(ticks(root, "y")) >= 2


def test_texts_are_made_visible_and_escaped() -> None:
    hostile = "<script>alert(1)</script>\n::error::x \u202e\"'&"
    plot = KernelPlot(hostile, hostile + " [s]", LINE, 64.0, 2, (model_side(band_note=hostile),))
    svg = kernel_svg(plot, salt='a"b')
    assert "<script" not in svg and "\u202e" not in svg and "\n::" not in svg
    root = parse(svg)
    assert root.get("id") == 'a"b-plot'
    assert [e.text for e in find(root, "text", "x-label")] == [visible(hostile)]
    (y_label,) = find(root, "text", "y-label")
    assert y_label.findtext(f"{SVG}title") == visible(hostile + " [s]")  # cut to fit, in full as a tooltip
    assert root.findtext(f"{SVG}title") == visible(f"{hostile} [s] against {hostile}")
    texts = " ".join(e.text or "" for e in root.iter(f"{SVG}text"))
    assert visible(hostile) in texts


def test_a_long_label_is_cut_with_an_ellipsis_and_kept_whole_in_a_tooltip() -> None:
    long = "p (" + ", ".join(f"q{i} = {i}" for i in range(60)) + ")"
    plot = KernelPlot(long, "time [s]", LINE, 64.0, 2, (model_side(),))
    (label,) = find(draw(plot), "text", "x-label")
    assert label.findtext(f"{SVG}title") == long
    shown = "".join(label.itertext()).removeprefix(long)
    assert shown.endswith("\u2026") and long.startswith(shown[:-1]) and 60 < len(shown) < len(long)


def test_tick_values_and_labels() -> None:
    assert _linear_ticks(-5.5, 5.5) == [-4.0, -2.0, 0.0, 2.0, 4.0]
    assert _linear_ticks(0.0, 1.0) == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert _log_ticks(0.3, 4.9, 2) == [4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0]  # every 2nd
    assert _log_ticks(-320.0, 308.0, 10) == [1e-300, 1e-200, 1e-100, 1.0, 1e100, 1e200, 1e300]
    assert _log_ticks(0.0, 1.0, 10) == [1.0, 2.0, 5.0, 10.0]  # 2 powers of ten: 1, 2 and 5 times them
    assert _log_ticks(0.1, 0.9, 10) == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]  # then 1 to 9 times them
    assert _log_ticks(1.2, 1.5, 10) == [20.0, 25.0, 30.0]  # no 1, 2 or 5: round values
    assert _labels([1.0001, 1.0002, 1.0003], 10) == ["1.0001", "1.0002", "1.0003"]
    assert _labels([-0.0, 1000.0, 1e6, 0.5], 10) == ["0", "1,000", "1e+06", "0.5"]
    assert _labels([2.0**-6, 0.25, 1024.0, 2.0**20], 2) == ["2^-6", "0.25", "1,024", "2^20"]


def test_a_plot_stays_small() -> None:
    plot = one_plot(model_side("baseline"), model_side("candidate", scale=3.0))
    assert len(kernel_svg(plot, salt="k").encode()) < 12_000


def test_reports_render_their_plots_without_matplotlib(tmp_path: Path) -> None:
    blocked = ("import sys\n"
               "class Block:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] == 'matplotlib':\n"
               "            raise ImportError('matplotlib is blocked')\n"
               "sys.meta_path.insert(0, Block())\n"
               "from scalecheck.cli import main\n"
               f"code = main(['model', 'examples/mpi_data_mean.txt', '--html', {str(tmp_path / 'm.html')!r}])\n"
               f"code += main(['check', 'examples/check/candidate.json', '--baseline', 'examples/check/baseline.json',"
               f" '--bootstrap', '20', '--no-github', '--html', {str(tmp_path / 'c.html')!r}])\n"
               "assert 'matplotlib' not in sys.modules\n"
               "sys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", blocked], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr  # the example check fails: one planted regression
    model_page = (tmp_path / "m.html").read_text(encoding="utf-8")
    check_page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert model_page.count('<figure class="plot"><svg') == 14 and check_page.count('<figure class="plot"><svg') == 1
    for page in (model_page, check_page):
        for svg in re.findall(r"<svg.*?</svg>", page, re.S):
            root = parse(svg)
            assert find(root, "path", "model") or list(root.iter(f"{SVG}circle"))
