"""Build the course website into build/site/ from the stored notebooks (`make site`).

    build/site-venv/bin/python site/build.py

Nothing is executed: the pages show the outputs stored in the notebooks. Nothing is downloaded:
MathJax is served from the site itself (sphinx-mathjax-offline). Any Sphinx warning fails the
build, so a broken link or a missing page stops it.

The sources are gathered first into build/site-src/, laid out as in the repository (so a page's
Colab and download buttons point at the right notebook): the hand-written pages of site/, every
lesson and solutions notebook, the data page (data/README.md), and the pages made from the
notebooks (the course map on the home page, the references, the glossary's links to sections).
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from sphinx.cmd.build import build_main

import pages

SITE = Path(__file__).resolve().parent
ROOT = SITE.parent
SOURCE = ROOT / "build" / "site-src"
OUTPUT = ROOT / "build" / "site"
DOCTREES = ROOT / "build" / "site-doctrees"
HAND_WRITTEN = ["index.md", "glossary.md", "claims.md", "colab-badge.svg"]


def gather() -> None:
    for stale in (SOURCE, OUTPUT, DOCTREES):  # a page removed from the course leaves no trace
        shutil.rmtree(stale, ignore_errors=True)
    (SOURCE / "notebooks" / "solutions").mkdir(parents=True)
    lessons = pages.lessons()
    for lesson in lessons:
        shutil.copy2(lesson.path, SOURCE / "notebooks" / lesson.path.name)
        if lesson.solutions:
            shutil.copy2(lesson.solutions, SOURCE / "notebooks" / "solutions")
    for name in HAND_WRITTEN:
        shutil.copy2(SITE / name, SOURCE / name)
    for linked in ("glossary.md", "claims.md"):  # {{NN: start}} -> a link to that section
        page = SOURCE / linked
        page.write_text(pages.section_links(page.read_text(encoding="utf-8"), lessons),
                        encoding="utf-8")
    index = SOURCE / "index.md"
    index.write_text(index.read_text(encoding="utf-8")
                     .replace("{{ reading_paths }}", pages.reading_paths(lessons))
                     .replace("{{ course_map }}", pages.course_map(lessons))
                     .replace("{{ toctrees }}", pages.toctrees(lessons)), encoding="utf-8")
    shutil.copy2(ROOT / "data" / "README.md", SOURCE / "data.md")
    (SOURCE / "references.md").write_text(pages.references_page(lessons), encoding="utf-8")


def build() -> int:
    # -E: read every page afresh, so every warning is seen (an incremental build stays silent
    # about pages it does not reread); -W --keep-going: list all warnings, then fail.
    return build_main(["-b", "html", "-E", "-W", "--keep-going", "-q", "-c", str(SITE),
                       "-d", str(DOCTREES), str(SOURCE), str(OUTPUT)])


if __name__ == "__main__":
    start = time.perf_counter()
    gather()
    status = build()
    print(f"site: {OUTPUT.relative_to(ROOT)}/index.html "
          f"({'built' if status == 0 else 'FAILED'} in {time.perf_counter() - start:.1f} s)")
    sys.exit(status)
