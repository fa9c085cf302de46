"""`aks-kueue report`: capacity.png and summary.md, and the README's example image."""

from __future__ import annotations

import pytest
from PIL import Image
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.judge.capacity import CapacityRow
from aks_kueue.cli.chart import OVERCOMMITTED, UNJUDGED, WITHIN, bars
from tests.conftest import ROOT


OVER = ROOT / "tests" / "fixtures" / "feasibility" / "quota-above-capacity.yaml"
runner = CliRunner()


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def pixels_of(image: Image.Image, colour: str) -> int:
    """How many pixels have exactly this colour (bar interiors are drawn flat)."""
    return dict((c, n) for n, c in image.convert("RGB").getcolors(maxcolors=1 << 20)).get(rgb(colour), 0)


def check_picture(path) -> Image.Image:
    image = Image.open(path)
    image.load()
    assert image.format == "PNG"
    width, height = image.size
    assert width >= 800 and height >= 300
    colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    # Not blank: many colours, and no single colour covers nearly everything.
    assert len(colours) > 20 and max(n for n, _ in colours) < 0.95 * width * height
    return image


def test_an_overcommitted_flavor_is_marked_in_the_chart(fake_pack, tmp_path):
    code, out, err = invoke("report", "--config", OVER, "--out", tmp_path / "report")
    assert code == 0, err
    assert "capacity.png" in out and "summary.md" in out
    image = check_picture(tmp_path / "report" / "capacity.png")
    # One of six bars is overcommitted (t4 nvidia.com/gpu, 150%): a large red area.
    assert pixels_of(image, OVERCOMMITTED) > 2000
    assert pixels_of(image, WITHIN) > 2000


def test_a_stack_within_capacity_shows_no_red(fake_pack, tmp_path):
    code, _, err = invoke("report", "--stack", "prod", "--out", tmp_path)
    assert code == 0, err
    image = check_picture(tmp_path / "capacity.png")
    assert pixels_of(image, OVERCOMMITTED) == 0 and pixels_of(image, WITHIN) > 2000


def test_the_summary_is_the_preview_markdown(tmp_path):
    code, _, _ = invoke("report", "--config", OVER, "--out", tmp_path)
    assert code == 1  # written, and rejected like the preview
    _, markdown, _ = invoke("preview", "--config", OVER, "--format", "markdown")
    assert (tmp_path / "summary.md").read_text() == markdown
    assert (tmp_path / "capacity.png").stat().st_size > 0


def test_out_must_be_a_directory(fake_pack, tmp_path):
    target = tmp_path / "file"
    target.write_text("")
    code, out, err = invoke("report", "--stack", "dev", "--out", target)
    assert code == 2 and "is not a directory" in err and fake_pack.configs == []


def test_out_is_required():
    assert invoke("report", "--stack", "dev")[0] == 2


def row(flavor, resource, quota, capacity, verdict):
    return CapacityRow(flavor, resource, quota, capacity, verdict)


@pytest.mark.parametrize("capacity_row, colour, percent, note", [
    (row("a", "cpu", 3000, 2000, "over"), OVERCOMMITTED, 150.0, "OVERCOMMITTED 150%: 3 of 2 cores"),
    (row("a", "cpu", 1000, 2000, "ok"), WITHIN, 50.0, "50%: 1 of 2 cores"),
    (row("a", "nvidia.com/gpu", 2, 0, "missing"), OVERCOMMITTED, 200.0, "OVERCOMMITTED: quota 2, its nodes have none"),
    (row("a", "memory", 2**30, 0, "nowhere"), OVERCOMMITTED, 200.0,
     "OVERCOMMITTED: quota 1.00Gi, no pool matches the flavor"),
    (row("a", "nvidia.com/gpu", 0, 0, "ok"), UNJUDGED, 0.0, "no quota, no capacity"),
    (row("a", "example.com/fpga", 4, None, "not modelled"), UNJUDGED, 0.0, "quota 4; capacity not modelled"),
])
def test_bars(capacity_row, colour, percent, note):
    bar = bars([capacity_row])[0]
    assert (bar.label, bar.colour, bar.percent, bar.note) == (f"a · {capacity_row.resource}", colour, percent, note)


def test_the_readme_shows_the_example_image():
    example = ROOT / "docs" / "capacity-example.png"
    assert "](docs/capacity-example.png)" in (ROOT / "README.md").read_text()
    image = check_picture(example)
    assert pixels_of(image, OVERCOMMITTED) > 2000  # the example shows what an overcommit looks like
