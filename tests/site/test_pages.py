"""Every page of the built website, opened in headless Chromium (`make test-site`).

Each page must render its math (MathJax served by the site itself), load every image, make no
request outside the site, show no test machinery (no `VBox(` text, no nbval marker, no assert,
no setup or check cell), show each notebook's code cells minus its `remove-cell` ones with a
figure under each slider cell, and link only to pages and anchors that exist. A screenshot of
each page lands in test-artifacts/site/. The self-test plants one fault of each kind in a copy
of a lesson page and requires every one to be reported.
"""

import shutil

import pytest
from conftest import REPO_ROOT, SITE, SiteServer
from site_check import SETUP_FIRST_LINE, check_page, site_pages

PAGES = site_pages(SITE) if SITE.exists() else []


def test_the_site_has_every_page():
    notebooks = REPO_ROOT / "notebooks"
    lessons = sorted(path.stem for path in notebooks.glob("[0-9][0-9]_*.ipynb"))
    solutions = sorted(path.stem for path in (notebooks / "solutions").glob("*.ipynb"))
    assert lessons, "no lessons in notebooks/"
    expected = ({"index.html", "glossary.html", "references.html", "data.html", "search.html"}
                | {f"notebooks/{stem}.html" for stem in lessons}
                | {f"notebooks/solutions/{stem}.html" for stem in solutions})
    missing = expected - set(PAGES)
    assert not missing, f"pages missing from {SITE} (run `make site`): {sorted(missing)}"


@pytest.mark.parametrize("site_page", PAGES)
def test_the_page_reads_well(site_page, page, site, site_server, artifacts):
    problems = check_page(page, site_server.url, site, site_page,
                          artifacts / site_page.replace(".html", ".png"))
    assert not problems, f"{site_page}:\n" + "\n".join(problems)


# -- the checks can fail ------------------------------------------------------------------------

LESSON = "notebooks/04_sinusoidal.html"
# Inside the lesson's section, which MathJax is told to skip except for its .math elements: math
# that myst did not recognise stays raw there, as it would for a reader.
FAULTS = f"""
<p>Raw inline math \\(x^2\\)</p>
<p>Raw display math $$y$$</p>
<p>A raw $\\omega_i$</p>
<div class="math notranslate nohighlight">\\[\\frac{{1}}{{\\]</div>
<p><span class="math notranslate nohighlight">\\(\\frac{{1}}\\)</span></p>
<img src="../_images/no-such-figure.png" alt="a missing figure">
<img src="https://example.org/remote-badge.svg" alt="a remote image">
<p>VBox(children=(HBox(children=(IntSlider(value=4),)),))</p>
<p>NBVAL_IGNORE_OUTPUT</p>
<pre>assert table.shape == (4, 4)</pre>
<pre>AssertionError: rows differ</pre>
<p>Prose may say that CUDA stops at a device-side assert: the word alone is no test code.</p>
<div class="cell docutils container"><div class="cell_input docutils container">
<pre>{SETUP_FIRST_LINE}</pre></div></div>
<pre># @title Check: every row has norm sqrt(d/2)</pre>
<p><a href="no-such-page.html">a page that is not there</a>,
<a href="05_rope.html#no-such-section">a section that is not there</a></p>
"""
EXPECTED = [
    "raw TeX in the text: '\\\\('",
    "raw TeX in the text: '$$'",
    "math not rendered",
    "MathJax error",
    "image not loaded: ../_images/no-such-figure.png",
    "request outside the site: https://example.org/remote-badge.svg",
    "widget text VBox( instead of a figure in view",
    "an nbval marker in view",
    "an assert in view: 'assert table.shape == (4, 4)'",
    "a failed assert in view",
    "the setup cell in view",
    "a check cell in view",
    "code cells shown, the notebook has",
    "broken link /notebooks/no-such-page.html: no file notebooks/no-such-page.html",
    "broken link /notebooks/05_rope.html#no-such-section: no anchor #no-such-section",
]


def broken_copy(site, folder):
    """The site, linked file by file, with the lesson page replaced by a copy with faults."""
    for path in site.rglob("*"):
        if path.is_file():
            target = folder / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    lesson = folder / LESSON
    html = (site / LESSON).read_text(encoding="utf-8")
    opening = html.index(">", html.index('<section class="tex2jax_ignore')) + 1
    lesson.unlink()
    lesson.write_text(html[:opening] + FAULTS + html[opening:], encoding="utf-8")
    return folder


def test_the_checks_report_each_planted_fault(page, site, artifacts, tmp_path):
    broken = broken_copy(site, tmp_path / "site")
    server = SiteServer(broken)
    try:
        problems = check_page(page, server.url, broken, LESSON,
                              artifacts / "selftest" / "planted_faults.png")
    finally:
        server.stop()
    report = "\n".join(problems)
    print(report)
    for expected in EXPECTED:
        assert any(expected in problem for problem in problems), f"not reported: {expected}"
    assert not [problem for problem in problems if "device-side" in problem], report
    shutil.rmtree(tmp_path / "site")


def test_search_finds_the_lessons(page, site_server):
    page.goto(f"{site_server.url}/search.html?q=rotary", wait_until="load")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=30_000)
    found = results.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert any("notebooks/05_rope.html" in href for href in found), found
