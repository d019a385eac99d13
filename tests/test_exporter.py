"""Real kaleido + system Chromium tests of skbview.exporter."""

from __future__ import annotations

import struct
import threading
import xml.etree.ElementTree as ET

import plotly.graph_objects as go
import pytest

from skbview import exporter

pytestmark = pytest.mark.export

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SVG_NS = "{http://www.w3.org/2000/svg}"


def _fig(title: str = "skb", n: int = 50) -> go.Figure:
    return go.Figure(
        go.Scatter(x=list(range(n)), y=[(i * 7) % 13 for i in range(n)], mode="lines"),
        layout=dict(title=dict(text=title), template="plotly_white"),
    )


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC, data[:8]
    length, ctype = struct.unpack(">I4s", data[8:16])
    assert ctype == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _svg_texts(data: bytes) -> list[str]:
    root = ET.fromstring(data)
    assert root.tag == SVG_NS + "svg"
    return ["".join(el.itertext()) for el in root.iter(SVG_NS + "text")]


@pytest.mark.parametrize("width,height,scale", [(400, 300, 2), (640, 360, 1), (333, 222, 3)])
def test_png_magic_and_pixel_size(width, height, scale):
    data = exporter.figure_to_png(_fig(), width=width, height=height, scale=scale)
    assert isinstance(data, bytes)
    assert _png_size(data) == (width * scale, height * scale)


def test_png_default_scale_is_2():
    data = exporter.figure_to_png(_fig(), width=300, height=200)
    assert _png_size(data) == (600, 400)


def test_svg_parses_and_has_size_and_title():
    data = exporter.figure_to_svg(_fig("SVG title check"), width=500, height=250)
    root = ET.fromstring(data)
    assert root.tag == SVG_NS + "svg"
    assert float(root.get("width")) == 500
    assert float(root.get("height")) == 250
    assert "SVG title check" in _svg_texts(data)


def test_server_stays_warm():
    exporter.figure_to_svg(_fig(), 200, 100)
    assert exporter.is_running()


def test_concurrent_exports_return_their_own_image():
    titles = [f"thread-{i}-title" for i in range(4)]
    rounds = 3
    results: dict[tuple[int, int], bytes] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(titles))

    def work(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            for r in range(rounds):
                results[(i, r)] = exporter.figure_to_svg(_fig(titles[i]), 300, 200)
        except BaseException as exc:  # noqa: BLE001 - any failure in a worker thread is reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(titles))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert len(results) == len(titles) * rounds
    for (i, _r), svg in results.items():
        texts = _svg_texts(svg)
        assert titles[i] in texts, (i, texts)
        for j, other in enumerate(titles):
            if j != i:
                assert other not in texts


def test_missing_chromium_raises_clear_error(monkeypatch):
    exporter.shutdown()
    monkeypatch.setenv("BROWSER_PATH", "/nonexistent/chromium-for-test")
    with pytest.raises(exporter.ExportError, match="Chromium"):
        exporter.figure_to_png(_fig())
    monkeypatch.delenv("BROWSER_PATH")
    # and it recovers once Chromium is back
    assert exporter.figure_to_png(_fig(), 100, 100, scale=1)[:8] == PNG_MAGIC
