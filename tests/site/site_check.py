"""Open one page of the built website in Chromium and list everything a reader would see go wrong.

`check_page` returns problems as strings instead of stopping at the first, so one run reports
everything, and so the self-test can plant one fault of each kind and see each one reported:
- math that MathJax did not render (raw `\\(`, `$$`, or a MathJax error);
- an image that did not load, or any request that left the site (the site must work offline)
  or failed;
- test machinery in view: `VBox(` text where a figure should be, nbval's `NBVAL` markers, an
  `assert`, the setup cell or a check cell;
- on a lesson or solutions page: a different number of code cells than the notebook shows once
  its `remove-cell` cells are dropped, or a slider cell without its figure;
- a link inside the site to a page or an anchor that does not exist.
"""

from __future__ import annotations

import importlib.util
import json
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

from playwright.sync_api import Page

LOAD_TIMEOUT = 60_000  # ms: a long lesson page with MathJax, on two busy cores
REPO_ROOT = Path(__file__).resolve().parents[2]


def course_module():
    """helpers/course.py, read as a file: the helpers package needs torch, this venv has none."""
    spec = importlib.util.spec_from_file_location("course", REPO_ROOT / "helpers" / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SETUP_FIRST_LINE = course_module().SETUP_CELL.splitlines()[0]
CHECK_FIRST_LINE = "# @title Check:"

WAIT_FOR_MATH = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    return 'typeset';
  }
  return document.querySelector('.math') ? 'no MathJax' : 'no math';
}"""

# Lazy images load only when scrolled to: ask for all of them now, then wait until each is done.
LOAD_IMAGES = """() => {
  document.querySelectorAll('img').forEach(img => { img.loading = 'eager'; });
}"""
IMAGES_SETTLED = "() => [...document.images].every(img => img.complete)"

PAGE_FACTS = """() => {
  const article = document.querySelector('article.bd-article') || document.body;
  // Prose only: code and outputs may hold dollar signs and backslashes of their own.
  const prose = [...article.querySelectorAll('p, li, td, th, h1, h2, h3, h4, dt, dd')]
    .filter(node => !node.closest('pre, code, .cell_output, .math, mjx-container'))
    .map(node => node.innerText);
  const cells = [...article.querySelectorAll('div.cell')];
  return {
    text: article.innerText,
    code: [...article.querySelectorAll('pre')].map(node => node.innerText),
    prose,
    mathUnrendered: [...document.querySelectorAll('.math')]
      .filter(node => !node.querySelector('mjx-container')).map(node => node.textContent.trim()),
    mathErrors: [...document.querySelectorAll('mjx-merror')].map(node => node.textContent),
    images: [...document.images].map(img => ({src: img.getAttribute('src'),
                                              loaded: img.complete && img.naturalWidth > 0})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    cells: cells.map(cell => ({
      images: cell.querySelectorAll('.cell_output img').length,
      text: cell.innerText.slice(0, 80)})),
  };
}"""

ASSERT = re.compile(r"^\s*assert\b.{0,50}", re.M)
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\$[^$\s][^$]*[\\^_{}][^$]*\$")


def site_pages(site: Path) -> list[str]:
    """Every page of the site, as paths relative to its root (the theme's own files aside)."""
    return sorted(path.relative_to(site).as_posix() for path in site.rglob("*.html")
                  if not path.relative_to(site).parts[0].startswith("_"))


def notebook_of(site_page: str, site: Path) -> Path | None:
    """The notebook a lesson or solutions page was built from: the copy the site offers for
    download (so a notebook edited since the build does not count against it)."""
    if not site_page.startswith("notebooks/"):
        return None
    path = site / "_sources" / Path(site_page).with_suffix(".ipynb")
    return path if path.exists() else None


def shown_code_cells(notebook: Path) -> list[str]:
    """The sources of the code cells a reader should see: all but those tagged remove-cell."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"
            and "remove-cell" not in cell.get("metadata", {}).get("tags", [])]


@lru_cache(maxsize=None)
def ids_in(html_file: Path) -> frozenset[str]:
    return frozenset(re.findall(r'\sid="([^"]+)"', html_file.read_text(encoding="utf-8")))


def broken_link(href: str, base_url: str, site: Path) -> str | None:
    """Why a link into the site leads nowhere (None if it resolves or leaves the site)."""
    if not href.startswith(base_url + "/"):
        return None
    address, fragment = urldefrag(href)
    path = unquote(urlparse(address).path).lstrip("/")
    target = site / path
    if path == "" or path.endswith("/"):
        target = target / "index.html"
    if not target.is_file():
        return f"no file {path or 'index.html'}"
    if fragment and target.suffix == ".html" and unquote(fragment) not in ids_in(target):
        return f"no anchor #{fragment} in {target.relative_to(site).as_posix()}"
    return None


def check_page(page: Page, base_url: str, site: Path, site_page: str,
               screenshot: Path) -> list[str]:
    problems: list[str] = []
    outside: list[str] = []
    failed: list[str] = []
    # A request that leaves the site is noted and stopped: the site must need no network.
    page.route(lambda url: not url.startswith((base_url, "data:", "blob:")),
               lambda route: (outside.append(route.request.url), route.abort()))
    page.on("response", lambda response: failed.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)
    page.on("requestfailed", lambda request: failed.append(f"failed {request.url}")
            if request.url.startswith(base_url) else None)  # those outside are listed apart

    page.goto(f"{base_url}/{site_page}", wait_until="load", timeout=LOAD_TIMEOUT)
    math = page.evaluate(WAIT_FOR_MATH)
    if math == "no MathJax":
        problems.append("the page has math but MathJax did not start")
    page.evaluate(LOAD_IMAGES)
    try:
        page.wait_for_function(IMAGES_SETTLED, timeout=LOAD_TIMEOUT, polling=100)
    except Exception:  # noqa: BLE001 - reported below as images not loaded
        pass
    facts = page.evaluate(PAGE_FACTS)
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=screenshot, full_page=True)

    # Math
    for tex in facts["mathUnrendered"]:
        problems.append(f"math not rendered: {tex[:60]!r}")
    for error in facts["mathErrors"]:
        problems.append(f"MathJax error: {error[:60]!r}")
    for text in facts["prose"]:
        if RAW_TEX.search(text):
            problems.append(f"raw TeX in the text: {RAW_TEX.search(text).group(0)[:60]!r} "
                            f"in {text[:60]!r}")

    # Images and requests
    for image in facts["images"]:
        if not image["loaded"]:
            problems.append(f"image not loaded: {image['src']}")
    for url in sorted(set(outside)):
        problems.append(f"request outside the site: {url}")
    for what in sorted(set(failed)):
        problems.append(f"request failed: {what}")

    # Test machinery in view
    text = facts["text"]
    for needle, what in [("VBox(", "widget text VBox( instead of a figure"),
                         ("NBVAL", "an nbval marker"),
                         ("AssertionError", "a failed assert"),
                         (SETUP_FIRST_LINE, "the setup cell"),
                         ("google.colab", "the setup cell"),
                         (CHECK_FIRST_LINE, "a check cell")]:
        if needle in text:
            problems.append(f"{what} in view: {needle!r}")
    for code in facts["code"]:  # an assert statement, not the word in a sentence
        assertion = ASSERT.search(code)
        if assertion:
            problems.append(f"an assert in view: {assertion.group(0).strip()!r}")
            break

    # Cells of a notebook page
    notebook = notebook_of(site_page, site)
    if site_page.startswith("notebooks/") and notebook is None:
        problems.append("no notebook to download for this page")
    if notebook is not None:
        expected = shown_code_cells(notebook)
        if len(facts["cells"]) != len(expected):
            problems.append(f"{len(facts['cells'])} code cells shown, the notebook has "
                            f"{len(expected)} without its remove-cell cells")
        else:
            for number, (source, cell) in enumerate(zip(expected, facts["cells"])):
                if "interactive_plot(" in source and not cell["images"]:
                    problems.append(f"code cell {number} (sliders) shows no figure: "
                                    f"{cell['text'][:50]!r}")

    # Links inside the site
    for href in sorted(set(facts["links"])):
        why = broken_link(href, base_url, site)
        if why:
            problems.append(f"broken link {href.removeprefix(base_url)}: {why}")
    return problems
