"""The public address (``SKB_PUBLIC_URL`` / ``.streamlit/skbmodel.toml``): every link the dashboard, the CLI and
the reports write starts with it when it is set, and with the address the page was opened at when it is not."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from skbmodel import answers
from skbmodel import cli
from skbmodel.links import shortlink, state as sk_state
from skbview import report

PUBLIC = "https://perf.example.org/skbmodel/"
QUERY = "page=slub&bulk=32&zero=memset"


@pytest.fixture(autouse=True)
def _no_setting(tmp_path, monkeypatch):
    """No address from the developer's environment or home directory; the working directory is empty."""
    monkeypatch.delenv(shortlink.PUBLIC_URL_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def _write_file(root, text: str) -> None:
    path = root / shortlink.PUBLIC_URL_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _short(query: str) -> str:
    return shortlink.shorten(answers.share_query(sk_state.decode(query)[0]))


def test_without_a_setting_links_keep_the_address_they_are_given():
    assert shortlink.public_base_url() is None
    assert shortlink.page_address("slub") == shortlink.DEFAULT_BASE_URL + "slub"
    assert shortlink.page_address("slub", "http://10.0.0.5:8502/slub?bulk=3") == "http://10.0.0.5:8502/slub"


def test_the_variable_names_the_address_and_wins_over_the_file(tmp_path, monkeypatch):
    _write_file(tmp_path, 'public_url = "https://from-file.example.org/x/"\n')
    assert shortlink.public_base_url() == "https://from-file.example.org/x/"
    monkeypatch.setenv(shortlink.PUBLIC_URL_ENV, PUBLIC.rstrip("/"))  # the trailing slash is added
    assert shortlink.public_base_url() == PUBLIC
    # the browser's own address no longer counts: readers open the public one
    assert shortlink.page_address("veth", "http://127.0.0.1:8501/skbmodel/physics/veth") == PUBLIC + "veth"


def test_the_home_file_counts_when_the_working_directory_has_none(tmp_path):
    _write_file(tmp_path / "home", 'public_url = "http://dash.lab:8080/skb"\n')
    assert shortlink.public_base_url() == "http://dash.lab:8080/skb/"
    _write_file(tmp_path, 'public_url = ""\n')  # the working directory's file says "none", the home's is not read
    assert shortlink.public_base_url() is None


@pytest.mark.parametrize("bad", ["perf.example.org/skbmodel/", "ftp://perf.example.org/", "https:///x/",
                                 "https://perf.example.org/?page=slub"])
def test_a_value_that_is_no_http_address_is_refused_with_its_source(monkeypatch, capsys, bad):
    monkeypatch.setenv(shortlink.PUBLIC_URL_ENV, bad)
    with pytest.raises(shortlink.PublicUrlError, match=shortlink.PUBLIC_URL_ENV):
        shortlink.public_base_url()
    assert cli.main(["eval", QUERY, "--text"]) == 2
    assert f"error: {shortlink.PUBLIC_URL_ENV}: " in capsys.readouterr().err


def test_cli_eval_text_and_link_write_the_public_address(monkeypatch, capsys):
    monkeypatch.setenv(shortlink.PUBLIC_URL_ENV, PUBLIC)
    assert cli.main(["eval", QUERY, "--text"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{PUBLIC}slub?{_short(QUERY)}"
    # a link copied from a local dashboard is rewritten to the public address, page kept
    assert cli.main(["link", f"http://localhost:8501/slub?{QUERY}"]) == 0
    assert capsys.readouterr().out.strip() == f"{PUBLIC}slub?{_short(QUERY)}"
    assert cli.main(["link", QUERY]) == 0
    assert capsys.readouterr().out.strip() == f"{PUBLIC}slub?{_short(QUERY)}"
    # --base still names the address explicitly
    assert cli.main(["link", QUERY, "--base", "http://other/slub"]) == 0
    assert capsys.readouterr().out.strip() == f"http://other/slub?{_short(QUERY)}"


def test_cli_without_the_setting_writes_what_it_did_before(capsys):
    assert cli.main(["link", QUERY]) == 0
    assert capsys.readouterr().out.strip() == _short(QUERY)
    assert cli.main(["eval", QUERY, "--text"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{shortlink.DEFAULT_BASE_URL}slub?{_short(QUERY)}"


def test_report_and_png_zip_made_outside_a_browser_carry_the_public_address(monkeypatch):
    monkeypatch.setenv(shortlink.PUBLIC_URL_ENV, PUBLIC)
    state = sk_state.decode(QUERY)[0]
    link = f"{PUBLIC}slub?{_short(QUERY)}"
    assert report.share_link(state) == link
    html = report.build_html_report(state, pages_=["slub"], light=True)
    assert f'id=share-link href="{link.replace("&", "&amp;")}"' in html
    assert "localhost" not in html
    with zipfile.ZipFile(io.BytesIO(report.build_png_zip(state, pages_=[]))) as zf:
        assert zf.read("share-link.txt").decode() == link + "\n"


def test_the_dashboard_s_link_box_and_copy_as_text_carry_the_public_address(monkeypatch):
    from tests.test_app_pages import _app, _navigation_mode, copied  # noqa: F401 - the fixture applies here too

    monkeypatch.setenv(shortlink.PUBLIC_URL_ENV, PUBLIC)
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # where the dashboard runs
    at = _app(dict(parse_qsl(QUERY)))
    at.toggle(key="copy_as_text").set_value(True).run()
    assert not at.exception, at.exception
    link, block = copied(at.sidebar)
    assert link.startswith(PUBLIC + "slub?v=2&")
    assert block.splitlines()[-1] == link
