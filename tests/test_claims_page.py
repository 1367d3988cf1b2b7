"""The "Common claims, checked" page (site/claims.md) and the lessons that link to it.

Lessons keep one sentence and a link `../site/claims.md#<anchor>` where another text's claim comes
up; the anchor must name a heading of the page, as GitHub and the website (MyST,
myst_heading_anchors = 3) both slug it. The page must cite each of the five public texts the
course draws on, by names a reader can search for, and its `{{NN: start}}` section links (made into
links by site/pages.py when the site is built) must name sections that exist. Fast: no Sphinx.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "site" / "claims.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "notebooks" / "solutions").glob("[0-9][0-9]_*.ipynb"))

CLAIMS_LINK = re.compile(r"claims\.md#([A-Za-z0-9_-]*)")
SECTION_LINK = re.compile(r"\{\{\s*(\d\d)\s*:\s*(.+?)\s*\}\}")  # as site/pages.py reads them


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading (MyST's github_slugify gives the same): lowercase, every
    character that is not a letter, digit, space, hyphen or underscore dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def markdown_headings(markdown: str, levels: str = "1,6") -> list[str]:
    """The text of each ATX heading outside fenced code blocks."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := re.match(rf"^#{{{levels}}}\s+(.*?)\s*#*\s*$", line)):
            found.append(match.group(1))
    return found


def page_anchors() -> set[str]:
    anchors, seen = set(), {}
    for heading in markdown_headings(PAGE.read_text(encoding="utf-8")):
        slug = github_slug(heading)
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def notebook_markdown(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def test_slugs_follow_github():
    assert github_slug("nn.Dropout() in a BERT-style Embeddings class") == \
        "nndropout-in-a-bert-style-embeddings-class"
    assert github_slug("Absolute Positional Encoding (Relative Encoding with Attention)") == \
        "absolute-positional-encoding-relative-encoding-with-attention"
    assert github_slug("The table's length is the input sequence length") == \
        "the-tables-length-is-the-input-sequence-length"


def test_every_claims_link_names_a_heading_of_the_page():
    anchors = page_anchors()
    links = {(path.name, anchor) for path in NOTEBOOKS
             for anchor in CLAIMS_LINK.findall(notebook_markdown(path))}
    assert links, "no lesson links to site/claims.md"
    broken = sorted(f"{name}: claims.md#{anchor}" for name, anchor in links if anchor not in anchors)
    assert not broken, "links to no heading of site/claims.md:\n" + "\n".join(broken)


def test_each_claim_heading_is_unique():
    slugs = [github_slug(h) for h in markdown_headings(PAGE.read_text(encoding="utf-8"), "3")]
    assert len(slugs) == len(set(slugs)), "two claims share an anchor"


@pytest.mark.parametrize("text, names", [
    ("Jupyter Book page (pantelis/eng-ai-agents)",
     ["Pantelis Monogioudis", "Positional Embeddings", "pantelis/eng-ai-agents"]),
    ("GitHub Q&A page (planetopenllms/llms.prompts)",
     ["ChatGPT", "planetopenllms/llms.prompts",
      "what are some options for positional encoding of word embeddings?"]),
    ("Rohit Gupta on dev.to", ["Rohit Gupta", "dev.to", "https://dev.to/rohitgupta24"]),
    ("Rahul Lokurte's blog post",
     ["Rahul Lokurte", "Understanding Token and Positional Embeddings in Transformers"]),
    ("RCortez25's Colab notebook", ["RCortez25", "RCortez25/PhD", "Positional_embeddings.ipynb"]),
])
def test_each_public_text_is_cited(text, names):
    page = PAGE.read_text(encoding="utf-8")
    missing = [name for name in names if name not in page]
    assert not missing, f"site/claims.md does not cite {text}: missing {missing}"


def test_section_links_name_existing_sections():
    lessons = {path.name[:2]: path for path in NOTEBOOKS if path.parent.name == "notebooks"}
    wrong = []
    for number, start in SECTION_LINK.findall(PAGE.read_text(encoding="utf-8")):
        headings = (markdown_headings(notebook_markdown(lessons[number]), "2,3")
                    if number in lessons else [])
        if not any(heading.startswith(start) for heading in headings):
            wrong.append(f"{{{{{number}: {start}}}}}")
    assert not wrong, "site/claims.md links to sections that do not exist: " + ", ".join(wrong)
