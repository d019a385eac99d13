"""No setting is lost: from each starting page that carries a case (``STARTS``), set a control that lives on
one page only (the Overview's path, a Design stage, a scenario-B control on Compare), then walk every page
and come back. The address bar, the share link and the numbers keep what was set at every step.

One server, one browser and one tab: each start is a fresh session (``goto`` opens a new one)."""
from __future__ import annotations

import random
from urllib.parse import urlsplit

import pytest

from skbmodel import answers
from skbmodel import composer, model
from skbmodel.question import Question
from skbmodel.links import pages, state as sk_state
from skbview import tables
from skbview.app import ui
from tests.browser_util import one_tab, NAV_LINK, eventually, wait_for_app

pytestmark = pytest.mark.browser

SLUGS = [p.slug for p in pages.PAGES] + [p.slug for p in pages.TOOLS]
#: Where a walk starts: every walk visits every page, so what the start decides is only which page a fresh
#: session first binds the address bar on and which settings are made late in the walk.  The cases: the
#: default page at ``/`` (where the Overview's setting is made), each other page that makes a setting
#: (Design, Compare: the page with B), the page outside the navigation's model pages (Calibrate), and one
#: plain model page drawn with a fixed seed from the rest (which settings are made first and last changes).
STARTS = [pages.DEFAULT_PAGE, "design", "compare", pages.CALIBRATE.slug,
          random.Random(31).choice([s for s in SLUGS
                                    if s not in ("overview", "design", "compare", *(p.slug for p in pages.TOOLS))])]
TITLES = {p.slug: p.title for p in (*pages.PAGES, *pages.TOOLS)}

#: What the walk sets, each on the one page that draws its control: (page, key, value).
SETTINGS = (("overview", "path", "cpumap"), ("design", "d_skb", "slab_one"), ("compare", "b_zero", "memset"))


def _expected_state() -> dict:
    st = sk_state.defaults()
    st.update({k: v for _, k, v in SETTINGS})
    return st


EXPECTED = _expected_state()


def _cost_text(params: dict) -> str:
    return ui.fmt(model.evaluate(params, sk_state.profile_for(EXPECTED))["path.ns_per_packet"], 4)


#: The Overview's cost of the chosen path, the Design page's cost of the composition (both defaults
#: but for the settings): they differ from the defaults' numbers, so a lost setting shows.
OVERVIEW_COST = _cost_text(sk_state.scenario(EXPECTED))
DESIGN_COST = _cost_text(tables.design_params_ab(Question.of_state(EXPECTED))[0])
assert OVERVIEW_COST != _cost_text(sk_state.scenario(sk_state.defaults()))
assert DESIGN_COST != _cost_text(tables.design_params_ab(Question.of_state(sk_state.defaults()))[0])


@pytest.fixture(scope="module")
def tab():
    with one_tab() as t:
        yield t


def _go(page, slug: str, attempts: int = 2) -> None:
    """Click the navigation's link to ``slug`` and wait until the page is on it.

    Once, in a shuffled run with a second browser busy on the other core, a click left the page where it
    was for 60 s (a click dispatched on a link that the sidebar's redraw replaces goes to a detached node);
    a user whose click did nothing clicks the link again, and so does this, once.  A click that took the
    page anywhere, or a second click that does nothing, still fails."""
    before = _path(page)
    for attempt in range(attempts):
        # titles are unique and no title contains another (the link's text starts with its icon's name)
        page.locator(NAV_LINK, has_text=TITLES[slug]).first.dispatch_event("click")
        wait_for_app(page)
        try:
            eventually(lambda: _on(page, slug))
            return
        except AssertionError:
            if attempt == attempts - 1 or _path(page) != before:  # it went somewhere: a failure
                raise


def _path(page) -> str:
    # the document's own address: Playwright's page.url can lag a same-document URL change
    return urlsplit(page.evaluate("location.href")).path.rstrip("/").rsplit("/", 1)[-1]


def _on(page, slug: str) -> None:
    path = _path(page)
    assert path == slug or (slug == pages.DEFAULT_PAGE and path in ("", slug)), page.evaluate("location.href")


def _label(key: str, value) -> str:
    """The text a control shows for ``value`` (the Design page's stages show short option texts)."""
    return composer.OPTION_SHORT[value] if key.startswith("d_") else sk_state.PARAMS[key].label_of(value)


def _shows(page, key: str, value) -> None:
    """The control of ``key`` shows ``value`` (a select box its option text, a radio its checked label)."""
    label = _label(key, value)
    box = page.locator(f".st-key-{key}")
    combo = box.locator("input[role='combobox']")
    if combo.count():
        shown = combo.first.input_value() or combo.first.get_attribute("aria-label") or ""
        assert label in shown or label in box.inner_text(), (key, shown, box.inner_text())
    else:
        checked = box.locator("input[type='radio']:checked").first
        assert checked.evaluate("e => e.closest('label').innerText").strip() == label


def _set(page, key: str, value, attempts: int = 3) -> None:
    """Pick ``value`` in the control of ``key`` and wait until the control shows it.

    A pick made while the page is still being redrawn after a navigation can land on a list that is
    replaced before the click (the list closes, nothing is chosen); a user then picks again, and so
    does this, up to ``attempts`` times.  What the walk checks is that a setting, once shown, survives.
    """
    label = _label(key, value)
    box = page.locator(f".st-key-{key}")
    if key.startswith(sk_state.B_PREFIX) and not box.count():  # B differs from A only where a difference is added
        add = page.locator(".st-key-add_difference input[role='combobox']")
        add.click()
        name = sk_state.PARAMS[key[len(sk_state.B_PREFIX):]].label
        page.keyboard.type(name)  # the list is long and virtualised: filter it to the one option
        page.locator("[role='option']", has_text=name).first.click()
        wait_for_app(page)
        eventually(lambda: _count_is(box, 1))
    for attempt in range(attempts):
        if box.locator("input[role='combobox']").count():
            box.locator("input[role='combobox']").click()
            page.locator("[role='option']", has_text=label).first.click()
        else:  # a radio
            box.locator("label", has_text=label).first.click()
        wait_for_app(page)
        try:
            eventually(lambda: _shows(page, key, value))
            return
        except AssertionError:
            if attempt == attempts - 1:
                raise


def _metric(page, label: str) -> str:
    m = page.locator('[data-testid="stMetric"]', has=page.locator('[data-testid="stMetricLabel"]', has_text=label))
    return m.first.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _check(page, slug: str, done: set[str]) -> None:
    """The address bar and the share link carry every setting made so far; the page shows its numbers."""
    want = {k: v for p, k, v in SETTINGS if p in done}

    def url_ok():
        st, warnings = sk_state.decode(urlsplit(page.evaluate("location.href")).query)
        assert not warnings, warnings
        has_b = slug in pages.BY_SLUG and pages.BY_SLUG[slug].has_b
        for k, v in want.items():
            if k.startswith(sk_state.B_PREFIX) and not has_b:  # a page without B: its link carries none of B
                assert k not in st, (slug, k)
                continue
            # the Design page shows (and its link says) the composed path; the Overview's choice is kept
            expect = "design" if (k == "path" and slug == "design") else v
            assert st[k] == expect, (slug, k, st[k], expect, sorted(done))
        for k in ("d_skb", "path"):
            if k not in want:
                assert st[k] == ("design" if (k == "path" and slug == "design") else sk_state.defaults()[k]), (slug, k)
        if "b_zero" not in want:
            assert "b_zero" not in st, (slug, "B differs from A in nothing yet")
        if slug not in {p.slug for p in pages.TOOLS}:  # a tool page has no scenario of its own
            assert st["page"] == slug
        link = page.locator(".st-key-share_link code").inner_text().strip()
        assert sk_state.decode(urlsplit(link).query)[0] == st, "the share link differs from the address bar"
        return st

    eventually(url_ok)
    if slug == "overview":
        expect = OVERVIEW_COST if "overview" in done else _cost_text(sk_state.scenario(sk_state.defaults()))
        eventually(lambda: _metric_is(page, "Cost (ns/packet)", expect))
    if slug == "design":
        expect = DESIGN_COST if "design" in done else _cost_text(
            tables.design_params_ab(Question.of_state(sk_state.defaults()))[0])
        eventually(lambda: _metric_is(page, "Cost (ns/packet)", expect))
    for p, k, v in SETTINGS:
        if p == slug and p in done:  # the control itself shows the value again
            _shows(page, k, v)


def _metric_is(page, label: str, value: str) -> None:
    assert _metric(page, label) == value


def _count_is(locator, n: int) -> None:
    assert locator.count() == n


@pytest.mark.parametrize("start", STARTS)
def test_settings_survive_every_walk(tab, start):
    url, page, errors = tab
    page.goto(f"{url}/{start}" if start != pages.DEFAULT_PAGE else url)
    wait_for_app(page)
    eventually(lambda: _on(page, start))
    done: set[str] = set()
    order = SLUGS[SLUGS.index(start):] + SLUGS[:SLUGS.index(start)]  # every start walks in its own order
    setters = {p: (k, v) for p, k, v in SETTINGS}
    for i, slug in enumerate(order + [p for p, _, _ in SETTINGS]):
        if i:
            _go(page, slug)
        _check(page, slug, done)
        if slug in setters and slug not in done:
            _set(page, *setters[slug])
            done.add(slug)
            _check(page, slug, done)
    assert done == set(setters)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not errors


def test_a_link_cut_at_76_characters_warns_in_the_browser(tab):
    url, page, errors = tab
    author = {**sk_state.defaults(), "path": "cpumap", "page": "overview"}
    link = (url + "/?" + answers.share_query(author))[:76]
    assert "&h=" in link and "path=" not in link
    page.goto(link)
    wait_for_app(page)
    h = float(link.split("&h=", 1)[1].split("&", 1)[0])
    note = page.locator(".st-key-version_notice [data-testid='stAlert']", has_text="appears truncated or edited")
    eventually(lambda: _count_is(note, 1))
    assert f"the author saw Throughput (Mpps) = {h:.4g}" in note.first.inner_text()
    assert not errors
