"""The ways through the built site a self-learner needs, read from its HTML (no browser needed):
the home page is the course map, every lesson leads to its solutions and to the next lesson, the
sidebar lists the lessons in order, and the references page holds every work the lessons cite.
"""

import importlib.util
import json
import re
import sys
from html import unescape
from pathlib import Path

import pytest
from conftest import REPO_ROOT, SITE

LESSONS = sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def site_pages_module():
    """site/pages.py: what the site's build reads from the notebooks."""
    spec = importlib.util.spec_from_file_location("pages", REPO_ROOT / "site" / "pages.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pages"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def html(page: str) -> str:
    path = SITE / page
    if not path.exists():
        pytest.fail(f"{path} missing: `make site` builds the site")
    return path.read_text(encoding="utf-8")


def article(page: str) -> str:
    text = html(page)
    return text[text.index('<article class="bd-article">'):text.index("</article>")]


def ending(page: str) -> str:
    """What follows the last rule of a page: the links the site adds at the end of a notebook."""
    return article(page).rsplit('<hr class="docutils" />', 1)[1]


def links(fragment: str) -> list[str]:
    return re.findall(r'<a [^>]*href="([^"]+)"', fragment)


def solutions_page(lesson: Path) -> str:
    return f"solutions/{lesson.stem}_solutions.html"


def title(notebook: Path) -> str:
    opening = "".join(json.loads(notebook.read_text(encoding="utf-8"))["cells"][0]["source"])
    return re.search(r"^# (.+)$", opening, re.M).group(1).strip()


def test_the_home_page_is_the_course_map():
    home = article("index.html")
    targets = [href.split("#")[0] for href in links(home)]
    for lesson in LESSONS:
        assert f"notebooks/{lesson.stem}.html" in targets, lesson.name
        assert f"notebooks/{solutions_page(lesson)}" in targets, lesson.name
        assert title(lesson) in home.replace("&amp;", "&"), lesson.name
    # In course order.
    order = [targets.index(f"notebooks/{lesson.stem}.html") for lesson in LESSONS]
    assert order == sorted(order)


def plain(html_text: str) -> str:
    """Text as a reader sees it: tags dropped, entities decoded, white space folded, and
    Sphinx's curly quotes (its "smartquotes") read as straight ones."""
    text = unescape(re.sub(r"<[^>]+>", " ", html_text))
    text = text.translate(str.maketrans("\u2018\u2019\u201c\u201d", "''\"\""))
    return " ".join(text.split())


def notebook_objectives(lesson: Path) -> list[str]:
    """The lesson's objectives as its opening cell writes them (wrapped items joined), in
    plain text (code marks and emphasis dropped)."""
    opening = "".join(json.loads(lesson.read_text(encoding="utf-8"))["cells"][0]["source"])
    after = opening.split("You will learn", 1)[1]
    listing = after[after.index("\n- "):].split("\n\n", 1)[0]  # the list, up to a blank line
    items = re.findall(r"^- (.+(?:\n[ \t]+\S.*)*)", listing, re.M)
    return [" ".join(re.sub(r"[`*]", "", item).split()) for item in items]


@pytest.mark.parametrize("lesson", LESSONS, ids=[path.stem for path in LESSONS])
def test_the_home_page_shows_every_objective_whole(lesson):
    home = article("index.html")
    heading = home.index(f'href="notebooks/{lesson.stem}.html')  # the lesson's heading
    listing = home[home.index("<ul", heading):home.index("</ul>", heading)]  # the list under it
    shown = [plain(item) for item in re.findall(r"<li>(.*?)</li>", listing, re.S)]
    wanted = notebook_objectives(lesson)
    assert 3 <= len(wanted) <= 5 and shown == wanted, (shown, wanted)


@pytest.mark.parametrize("lesson", LESSONS, ids=[path.stem for path in LESSONS])
def test_every_lesson_links_to_its_solutions_and_the_next_lesson(lesson):
    footer = ending(f"notebooks/{lesson.stem}.html")
    targets = [href.split("#")[0] for href in links(footer)]
    assert solutions_page(lesson) in targets
    following = LESSONS.index(lesson) + 1
    if following < len(LESSONS):
        assert f"{LESSONS[following].stem}.html" in targets
    else:
        assert "../index.html" in targets  # the last lesson leads back to the course map


@pytest.mark.parametrize("lesson", LESSONS, ids=[path.stem for path in LESSONS])
def test_every_solutions_page_links_back_to_its_lesson(lesson):
    footer = ending(f"notebooks/{solutions_page(lesson)}")
    assert f"../{lesson.stem}.html" in [href.split("#")[0] for href in links(footer)]


def test_the_sidebar_lists_the_lessons_numbered_and_in_order():
    sidebar = html("index.html").split('bd-docs-nav"', 1)[1].split("</nav>", 1)[0]
    entries = re.findall(
        r'href="(notebooks/(?:solutions/)?[0-9][0-9]_[^"]+\.html)"[^>]*>\s*([^<]+)<', sidebar)
    lessons = [(href, text.strip()) for href, text in entries if "/solutions/" not in href]
    assert [href for href, _ in lessons] == [f"notebooks/{path.stem}.html" for path in LESSONS]
    assert all(text.startswith(path.name[:2] + " · ") for (_, text), path in zip(lessons, LESSONS))
    assert any("/solutions/" in href for href, _ in entries), "no solutions in the sidebar"
    for page in ("glossary.html", "references.html", "data.html"):
        assert f'href="{page}"' in sidebar, page


def test_the_references_page_holds_every_work_the_lessons_cite():
    pages = site_pages_module()
    built_from = SITE / "_sources" / "notebooks"  # the notebooks as they were when it was built
    cited = {pages.reference_key(item) for lesson in pages.lessons(built_from)
             for item in lesson.references}
    page = article("references.html")
    entries = re.findall(r"<li>", page)
    assert len(entries) == len(cited)
    urls = {href.rstrip("/").lower() for href in links(page)}
    for key in cited:
        if key.startswith("http"):
            assert key in urls, key


def test_the_data_page_is_data_readme():
    assert "gpt2.tiktoken" in article("data.html") and "the-verdict.txt" in article("data.html")


SOLUTIONS = sorted((REPO_ROOT / "notebooks" / "solutions").glob("*.ipynb"))
NOTEBOOK_PAGES = [path.relative_to(REPO_ROOT).with_suffix("").as_posix()
                  for path in LESSONS + SOLUTIONS]


@pytest.mark.parametrize("docname", NOTEBOOK_PAGES)
def test_every_notebook_page_opens_in_colab_and_downloads_as_stored(docname):
    spec = importlib.util.spec_from_file_location("course", REPO_ROOT / "helpers" / "course.py")
    course = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(course)
    page = html(f"{docname}.html")
    assert f'href="{course.colab_url(docname + ".ipynb")}"' in page  # the launch button
    depth = docname.count("/")
    download = f'{"../" * depth}_sources/{docname}.ipynb'
    assert f'href="{download}"' in page
    # The download is the notebook as stored, not the page's adapted copy (local badge, footer).
    cells = json.loads((SITE / "_sources" / f"{docname}.ipynb").read_text())["cells"]
    assert course.colab_badge(docname + ".ipynb") in "".join(cells[0]["source"])
    assert not [cell for cell in cells if cell.get("id") == "course-footer"]
