"""Exports of the dashboard's charts for reports: file names, PNG/SVG, a self-contained HTML report, a PNG zip.

Every static image goes through :mod:`skbview.exporter` (the one warm, lock-serialised kaleido server);
nothing here calls ``fig.to_image``.  The figures come from :func:`skbview.charts.figures_for_page`,
which already gives each one a title, axis titles with units, a legend, a caption line (scenario
parameters, model version, CPU profile) and an explicit template, so a downloaded image looks like the
chart on screen.  This module imports no Streamlit: the CLI (``python -m skbmodel export``) uses it too.
"""
from __future__ import annotations

import base64
import datetime as _dt
import functools
import hashlib
import html
import io
import re
import zipfile
from collections.abc import Mapping

import plotly.io as pio
from plotly.offline import get_plotlyjs

import skbmodel
from skbmodel import provenance
from skbmodel.links import shortlink
from skbmodel.links import state as sk_state
from skbmodel import answers
from skbmodel.evidence import validation
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbmodel.machine.profile import load_profile
from skbmodel.question import Question, scenario_of

from . import exporter

__all__ = [
    "DEFAULT_BASE_URL", "file_stem", "export_size", "figure_png", "figure_svg", "all_figures", "share_query",
    "share_link", "camera_config", "build_html_report", "build_png_zip", "report_file_name",
]

DEFAULT_BASE_URL = shortlink.DEFAULT_BASE_URL
DEFAULT_WIDTH = exporter.DEFAULT_WIDTH
DEFAULT_HEIGHT = exporter.DEFAULT_HEIGHT
PNG_SCALE = 2

_SAFE = re.compile(r"[^A-Za-z0-9.+-]+")


def _items(state: Mapping) -> tuple:
    """A state as a hashable key: each value with its type, so that 1 and 1.0 stay apart."""
    return tuple(sorted(((k, type(v).__name__, v) for k, v in state.items()), key=lambda kv: kv[0]))


def _full(state: Mapping) -> dict:
    """A complete, valid state (missing keys filled exactly as a partial share link would be)."""
    return dict(_full_of_items(_items(state)))


@functools.lru_cache(maxsize=64)
def _full_of_items(items: tuple) -> dict:
    # A page names its files five times per redraw (camera button, PNG, SVG, the report buttons), each time
    # for the same scenario: read its link once.  The state holds every parameter and version the result
    # depends on; profile files do not change while a process runs.
    full, _ = provenance.read_link(sk_state.encode({k: v for k, _, v in items}))
    return full


def _slug(text: object) -> str:
    return _SAFE.sub("-", str(text)).strip("-.") or "x"


def state_hash(state: Mapping) -> str:
    """6 hex digits of the scenario (every A and B parameter, not the page): different scenarios give
    different file names; the same chart of the same scenario always gets the same name."""
    return _hash_full(_full(state))


# the question grid's keys are not the scenario (its file names carry them as key parameters)
_HASH_KEYS = [k for k in sk_state.PARAMS if k not in sk_state.NAV_KEYS and k not in sk_state.DISPLAY_KEYS
              and k not in sk_state.GRID_KEYS] \
    + list(sk_state.PROFILE_KEYS) \
    + list(sk_state.PV_KEYS)  # an archived profile version gives other numbers: another file name


#: Parameters added after the file names were fixed: at their default they stay out of the hash, so that every
#: file exported before keeps its name; set to anything else, they enter it.
_HASH_WHEN_SET = tuple(p.key for p in sk_state.MODEL_PARAMS if p.hash_when_set)


def _hash_full(full: Mapping) -> str:
    return _hash_of_items(_items(full))


@functools.lru_cache(maxsize=64)
def _hash_of_items(items: tuple) -> str:
    full = {k: v for k, _, v in items}
    later = {sk_state.key_of(k, which) for k in _HASH_WHEN_SET for which in ("a", "b")}
    # The hash reads B written out in full (A plus its overrides), as file names were made when every state
    # held all of B: the whole scenario, whichever page is open.
    b = Question.of_state(full).scenario("b").params
    named = {**full, **{sk_state.key_of(p.key, "b"): b[p.key] for p in sk_state.MODEL_PARAMS}}
    keys = [k for k in _HASH_KEYS
            if k not in later or named.get(k, sk_state.PARAMS[k].default) != sk_state.PARAMS[k].default]
    query = sk_state.encode(named, keys=keys)
    # place replaced numa (model 0.7.0) in the same position: at the old default (same node, now the same L3) the
    # hash reads the old key, so that every file exported before keeps its name
    query = re.sub(r"(^|&)(b_)?place=same_l3(?=&|$)", r"\1\2numa=same", query)
    return hashlib.sha1(query.encode()).hexdigest()[:6]


def _key_params(page: str, state: Mapping) -> list[str]:
    keys = list(PAGE_BY_SLUG[page].key_params)
    if page == "compare":
        over = sk_state.b_overrides(state)
        keys = ["cpu"] + ([sk_state.key_of("cpu", "b")] if "cpu" in over else [])
        keys += [k for k in sk_state.MODEL_KEYS if k != "cpu" and k in over][:4]
        keys += [sk_state.key_of(k, "b") for k in keys if k in sk_state.MODEL_KEYS and k != "cpu"]
    # how the chart is drawn is not part of the scenario (its hash): a chart drawn otherwise says so in its name
    return keys + [k for k in sk_state.DISPLAY_KEYS if state.get(k) != sk_state.PARAMS[k].default]


def file_stem(page: str, name: str, state: Mapping) -> str:
    """``<page>_<chart name>_<key=value...>_<hash>`` using only ``[A-Za-z0-9.+_-]``.

    e.g. ``slub_per_object_cpu-e5-1650v4_bulk-32_3fa9c1``.  The key parameters are readable; the hash
    of the full share link keeps two scenarios that differ elsewhere from overwriting each other.
    """
    st = _full(state)
    parts = [_slug(page), _slug(name)]
    parts += [f"{_slug(k)}-{_slug(sk_state.fmt_value(st[k]))}" for k in _key_params(page, st)]
    parts.append(_hash_full(st))
    return "_".join(parts)


def report_file_name(state: Mapping, ext: str = "html", light: bool = False) -> str:
    st = _full(state)
    return f"skbmodel-report{'-light' if light else ''}_cpu-{_slug(st['cpu'])}_{_hash_full(st)}.{ext}"


def export_size(fig) -> tuple[int, int]:
    """CSS-pixel size a chart is exported at: its own layout width/height, else the exporter's default."""
    w = fig.layout.width or DEFAULT_WIDTH
    h = fig.layout.height or DEFAULT_HEIGHT
    return int(w), int(h)


def figure_png(fig, scale: float = PNG_SCALE) -> bytes:
    """PNG of ``fig`` at its export size times ``scale`` (2x by default) via the warm exporter."""
    w, h = export_size(fig)
    return exporter.figure_to_png(fig, width=w, height=h, scale=scale)


def figure_svg(fig) -> bytes:
    w, h = export_size(fig)
    return exporter.figure_to_svg(fig, width=w, height=h)


def camera_config(page: str, name: str, state: Mapping) -> dict:
    """Plotly ``config`` for ``st.plotly_chart``: camera button gives a 2x PNG with the export's file name."""
    return {
        "toImageButtonOptions": {"format": "png", "scale": PNG_SCALE, "filename": file_stem(page, name, state)},
        "displaylogo": False,
    }


def _charts():
    from . import charts  # ~0.1 s to import (figure template): not at start-up of every `python -m skbmodel` command
    return charts


def question(state: Mapping) -> Question:
    """The question of the report and the exports: that of the complete state (:func:`_full`); each page's
    charts read it on their page (:meth:`skbmodel.question.Question.on_page`)."""
    return Question.of_state(_full(state))


def all_figures(state: Mapping, pages_=None) -> list[tuple[str, str, object]]:
    """``[(page, chart name, figure), ...]`` for every chart of every page (or of ``pages_``)."""
    q = state if isinstance(state, Question) else question(state)
    out = []
    if pages_ is None:
        pages_ = sk_state.PAGES
    for page in pages_:
        for name, fig in _charts().figures_for_page(page, q):
            out.append((page, name, fig))
    return out


def share_query(state: Mapping) -> str:
    """The short query of a share link (``v=2``: what differs from the defaults, the versions, the page)."""
    return shortlink.shorten(answers.share_query(_full(state)))


#: What a link to a page outside the scenario pages (Calibrate) carries: no ``page`` to switch to, no headline
_NO_PAGE_KEYS = tuple(k for k in sk_state.PARAMS if k not in sk_state.NAV_KEYS
                      and k not in sk_state.GRID_KEYS) + sk_state.PROFILE_KEYS + tuple(
    k for k in sk_state.VERSION_KEYS if k != "h")


def share_link(state: Mapping, base_url: str | None = None, with_page: bool = True) -> str:
    """Share link: ``base_url`` (the page's address; default: :func:`skbmodel.links.shortlink.page_address`, the
    public address when one is set, else :data:`DEFAULT_BASE_URL`) + ``?`` + :func:`share_query`.
    ``with_page=False``: a link that opens the page of ``base_url`` itself (the Calibrate page: its link carries
    the scenario and the custom profile, not the Overview's page and headline)."""
    full = _full(state)
    if not with_page:
        return shortlink.share_link(answers.share_query(full, _NO_PAGE_KEYS), base_url, "calibrate")
    return shortlink.share_link(answers.share_query(full), base_url, full["page"])


def _profile(state: Mapping, which: str = "a"):
    return scenario_of(state, which).profile


def profile_version(state_or_cpu, which: str = "a") -> str:
    """``<id> (format v<n>, version <hash>)``: the version a share link records as ``pv`` (the hash of the
    constant values, :func:`skbmodel.machine.profile.profile_version`; it changes whenever a recalibration changes a
    value)."""
    from skbmodel.machine.profile import profile_version as _pv
    if isinstance(state_or_cpu, str):
        prof = load_profile(state_or_cpu)
    else:
        prof = _profile(state_or_cpu, which)
    return f"{prof.id} (format v{prof.format_version}, version {_pv(prof)})"


# ------------------------------------------------------------------ zip of PNGs
def build_png_zip(state: Mapping, pages_=None, base_url: str | None = None) -> bytes:
    """A zip with one 2x PNG per chart of every page (names from :func:`file_stem`) and the share link
    (at ``base_url``, as :func:`share_link`)."""
    st = _full(state)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:  # PNGs are compressed already
        for page, name, fig in all_figures(question(st), pages_):
            zf.writestr(file_stem(page, name, st) + ".png", figure_png(fig))
        zf.writestr("share-link.txt", share_link(st, base_url) + "\n")
    return buf.getvalue()


# ------------------------------------------------------------------ HTML report
_CSS = """
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;color:#222;max-width:1000px;margin:24px auto;padding:0 16px}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.3em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:1.2em 0 .3em}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.diff td{background:#fff4e0} tr.bad td{background:#fde2e2}
.link{word-break:break-all;font-family:monospace;font-size:.85em;background:#f6f6f6;padding:6px;display:block}
.meta{color:#555;font-size:.9em} .chart{margin:0 0 1.5em 0}
"""


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _param_table(st: dict) -> str:
    rows = []
    b_params = scenario_of(st, "b").params
    for p in sk_state.MODEL_PARAMS:
        a, b = st[p.key], b_params[p.key]
        rng = ", ".join(p.choices) if p.kind == "choice" else f"{sk_state.fmt_value(p.lo)} – {sk_state.fmt_value(p.hi)}"
        cls = ' class="diff"' if a != b else ""
        rows.append(f"<tr{cls}><td><code>{_e(p.key)}</code></td><td>{_e(p.label)}</td>"
                    f"<td class=num>{_e(sk_state.fmt_value(a))}</td><td class=num>{_e(sk_state.fmt_value(b))}</td>"
                    f"<td>{_e(p.unit)}</td><td>{_e(rng)}</td></tr>")
    for k in sk_state.PROFILE_KEYS[:1]:
        a, b = st.get(k) or "", b_params.get(k) or ""
        if a or b:
            cls = ' class="diff"' if a != b else ""
            rows.insert(1, f"<tr{cls}><td><code>{_e(k)}</code></td><td>Custom CPU profile (link form)</td>"
                           f"<td>{_e(a or '—')}</td><td>{_e(b or '—')}</td><td></td>"
                           "<td>see skbmodel.machine.custom</td></tr>")
    return ("<table><tr><th>key</th><th>parameter</th><th>A</th><th>B (<code>b_</code>)</th><th>unit</th>"
            "<th>allowed</th></tr>" + "".join(rows) + "</table>")


def _validation_html() -> str:
    rows = validation.validate()
    n_ok = sum(r["ok"] for r in rows)
    body = []
    for r in rows:
        cls = "" if r["ok"] else ' class="bad"'
        body.append(f"<tr{cls}><td>{_e(r['id'])}</td><td>{_e(r['profile'])}</td><td>{_e(r['quantity'])}</td>"
                    f"<td class=num>{r['measured']:.6g}</td><td class=num>{r['predicted']:.6g}</td>"
                    f"<td>{_e(r['unit'])}</td><td class=num>{r['rel_error'] * 100:+.2f} %</td>"
                    f"<td>{_e(r['tolerance'])}</td><td>{'yes' if r['ok'] else 'NO'}</td></tr>")
    nc = "".join(f"<li><code>{_e(k)}</code>: {_e(v)}</li>" for k, v in validation.NOT_COVERED.items())
    return (f"<p><b>{n_ok} of {len(rows)} covered seed rows within tolerance</b> "
            f"(each row evaluated under its own conditions and CPU profile): "
            f"{_e(validation.evidence_summary(rows))}.</p>"
            "<table><tr><th>row</th><th>profile</th><th>quantity</th><th>measured</th><th>predicted</th>"
            "<th>unit</th><th>error</th><th>tolerance</th><th>ok</th></tr>" + "".join(body) + "</table>"
            + (f"<p>Not covered:</p><ul>{nc}</ul>" if nc else ""))


def _static_chart(fig, page: str, name: str) -> str:
    """A chart of the light report: its SVG as an image (no script; a data URI keeps each SVG's ids apart)."""
    w, h = export_size(fig)
    data = base64.b64encode(figure_svg(fig)).decode("ascii")
    return (f"<img id=\"{_e(page)}-{_e(name)}\" width={w} height={h} alt=\"{_e(PAGE_BY_SLUG[page].title)}: "
            f"{_e(name)}\" src=\"data:image/svg+xml;base64,{data}\">")


def _numbers_html(res: answers.Answers) -> str:
    """The page's numbers as text (:func:`skbmodel.answers.of_question`: the ones its metrics and text block
    give)."""
    if res.problem:
        return f"<p>No numbers: {_e(res.problem)}.</p>"
    rows = [f"<tr><td>{_e(v.label)}</td><td class=num>{_e(v.text(v.unit_text))}</td>"
            f"<td>{_e(v.verdict or '')}</td></tr>" for v in res.values]
    for d, vb in zip(res.differences, res.b_values):
        runs = d.runs_text()
        rows.append(f"<tr><td>B − A: {_e(d.label)} (B {_e(vb.text(vb.unit_text))})</td>"
                    f"<td class=num>{_e(d.text(d.unit_text))}</td><td>{_e((d.verdict or '') + runs)}"
                    "</td></tr>")
    if res.has_b and not res.differences and not res.problem_b:
        rows.append("<tr><td>B − A</td><td class=num>0</td><td>B changes nothing the model computes</td></tr>")
    return ("<table><tr><th>number</th><th>value (90 % prediction interval)</th><th>verdict</th></tr>"
            + "".join(rows) + "</table>")


def _drivers_html(res: answers.Answers) -> str:
    """The constants the page's answer rests on (:mod:`skbmodel.attribution`), flagged when assumed."""
    reports = [(f"B − A of <code>{_e(d.output)}</code>", d, d.drivers) for d in res.differences if d.drivers]
    if res.drivers and res.values:
        reports.append((f"<code>{_e(res.values[0].output)}</code>", res.values[0], res.drivers))
    if not reports:
        return "<p>A and B agree on every output: no difference to explain.</p>" if res.has_b else ""
    out = []
    for what, ans, rep in reports:
        out.append(f"<p><b>{what}: {_e(ans.text(ans.unit_text))}</b>"
                   + (f" — <b class=flag>{_e(rep['flag'])}</b>" if rep["flag"] else "") + "</p>")
        rows = "".join(f"<tr><td><code>{_e(r['constant'])}</code></td><td>{_e(r['kind'])}</td>"
                       f"<td class=num>{r['value_share'] * 100:+.0f} %</td>"
                       f"<td class=num>{r['variance_share'] * 100:.0f} %</td><td>{_e(r['source'])}</td></tr>"
                       for r in rep["rows"])
        out.append("<table><tr><th>constant</th><th>kind</th><th>share of the value</th><th>share of the variance"
                   "</th><th>source</th></tr>" + rows + "</table>")
    return "".join(out)


def build_html_report(state: Mapping, base_url: str | None = None, pages_=None, warnings=(),
                      light: bool = False) -> str:
    """One self-contained HTML file: every chart of every page for this scenario, the parameters (A and B),
    the share link, model/profile versions and the validation summary.  Opens offline; no network access.

    The charts are interactive (plotly.js inlined once, about 5 MB), or with ``light`` static SVG images and
    no script at all: small enough to attach to a mail (under 1 MB).
    """
    st = _full(state)
    link = share_link(st, base_url)
    q = question(st)
    res = answers.of_question(q, drivers=True)
    figs = all_figures(q, pages_)
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>skbmodel report — {_e(st['cpu'])} — {_e(state_hash(st))}</title>",
        f"<style>{_CSS}</style>",
        "" if light else f"<script type=\"text/javascript\">{get_plotlyjs()}</script>",
        "</head><body>",
        "<h1>skbmodel report</h1>",
        f"<p class=meta>skbmodel {_e(skbmodel.__version__)} · share-link format v{shortlink.FORMAT_VERSION} · "
        f"profile {_e(res.profile_a.full_text())}"
        + (f" · profile B {_e(res.profile_b.full_text())}" if res.profile_b is not None else "")
        + f" · generated {now}</p>",
        "<h2>Share link</h2>",
        f"<p>Opens the dashboard with exactly this scenario:</p><a class=link id=share-link href=\"{_e(link)}\">"
        f"{_e(link)}</a>",
    ]
    if warnings:
        out.append("<p><b>Link warnings:</b></p><ul>" + "".join(f"<li>{_e(w)}</li>" for w in warnings) + "</ul>")
    out += [f"<h2>Numbers: {_e(PAGE_BY_SLUG[st['page']].title)}</h2>", _numbers_html(res)]
    out += ["<h2>Parameters</h2>", _param_table(st)]
    why = _drivers_html(res)
    if why:
        out += ["<h2>What the answer rests on</h2>", why]
    out.append("<h2>Charts</h2>")
    out.append("<ul>" + "".join(f"<li><a href=\"#{_e(p)}-{_e(n)}\">{_e(PAGE_BY_SLUG[p].title)}: {_e(n)}</a></li>"
                                for p, n, _ in figs) + "</ul>")
    last_page = None
    for page, name, fig in figs:
        if page != last_page:
            out.append(f"<h3>{_e(PAGE_BY_SLUG[page].title)}</h3>")
            last_page = page
        if light:
            out.append(f"<div class=chart data-page=\"{_e(page)}\" data-name=\"{_e(name)}\">"
                       f"{_static_chart(fig, page, name)}</div>")
            continue
        w, h = export_size(fig)
        div = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=f"{page}-{name}",
                          default_width=f"{w}px", default_height=f"{h}px",
                          config={"displaylogo": False, "toImageButtonOptions": {
                              "format": "png", "scale": PNG_SCALE, "filename": file_stem(page, name, st)}})
        out.append(f"<div class=chart data-page=\"{_e(page)}\" data-name=\"{_e(name)}\">{div}</div>")
    out += ["<h2>Validation</h2>", _validation_html(), "</body></html>"]
    return "\n".join(out)
