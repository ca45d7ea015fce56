"""Figures rendered to bytes (pure): SVG without a date (same figure, same bytes), PNG, nothing else."""
import pytest

from common.figures import figure_bytes, new_figure


def figure():
    fig = new_figure(figsize=(3, 2), dpi=50)
    fig.add_subplot().plot([0, 1, 2], [1, 0, 2], label="loss")
    return fig


def test_svg_is_deterministic_and_png_is_png():
    svg = figure_bytes(figure(), "svg")
    assert svg.startswith(b"<?xml") and figure_bytes(figure(), "SVG") == svg
    assert figure_bytes(figure(), "png").startswith(b"\x89PNG")


def test_other_formats_are_refused():
    with pytest.raises(ValueError, match="'svg' or 'png'"):
        figure_bytes(figure(), "jpg")
