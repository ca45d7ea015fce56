"""Figures without pyplot (nothing registered globally: safe in a web or Celery worker), rendered to bytes (pure).

matplotlib is imported only when a figure is drawn, so importing this module costs nothing.
"""
from __future__ import annotations

import io
import sys


def new_figure(**kwargs):
    """A matplotlib ``Figure`` on the Agg backend (``kwargs``: figsize, dpi, ...)."""
    import matplotlib  # noqa: PLC0415 - heavy: loaded only to draw

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415 - after matplotlib.use("Agg")

    return Figure(**kwargs)


def figure_bytes(fig, fmt: str = "svg") -> bytes:
    """Render ``fig`` as ``svg`` or ``png`` bytes, then close it.

    SVG keeps text as text (smaller and faster than glyph paths) and is written without a date, so
    the same figure gives the same bytes.
    """
    import matplotlib  # noqa: PLC0415 - heavy: loaded only to draw

    fmt = fmt.lower()
    if fmt not in ("svg", "png"):
        raise ValueError(f"figure format must be 'svg' or 'png', not {fmt!r}")
    buffer = io.BytesIO()
    try:
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mtg"}):
            fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else {"Software": None})
    finally:
        if "matplotlib.pyplot" in sys.modules:  # a pyplot-made figure: drop it from pyplot's list
            sys.modules["matplotlib.pyplot"].close(fig)
        fig.clear()
    return buffer.getvalue()
