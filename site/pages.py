"""What the website knows about the course, read from the stored notebooks at build time.

Lessons are `notebooks/NN_*.ipynb` (two digits, sortable), each with its solutions in
`notebooks/solutions/NN_*_solutions.ipynb`; a new notebook appears on the site without touching
its configuration. Titles and learning objectives come from each notebook's first cell, the
works cited from each lesson's final "References" section: the notebooks are the one source.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

# The course's study-time measure (tools/study_time.py, plain Python), so that the home page's
# times are the ones the budget test holds.
_spec = importlib.util.spec_from_file_location("study_time", ROOT / "tools" / "study_time.py")
study_time = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("study_time", study_time)
_spec.loader.exec_module(study_time)

# The one place the repository's address lives (helpers/course.py is plain Python; importing it
# as `helpers.course` would load the whole package, torch included, which the site needs not).
_spec = importlib.util.spec_from_file_location("course", ROOT / "helpers" / "course.py")
course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course)

# The short way through for a reader who wants to read Llama-style model code: attention, the
# sinusoidal table's question, RoPE, stretching it, and the model at inference.
FAST_PATH = ("01", "04", "05", "08", "10")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@dataclass
class Lesson:
    path: Path        # notebooks/NN_topic.ipynb
    number: str       # "04"
    title: str        # from the first "# " heading
    objectives: list[str]
    solutions: Path | None
    references: list[str] = field(default_factory=list)

    @property
    def docname(self) -> str:  # the page's name on the site, as in the repository
        return f"notebooks/{self.path.stem}"

    @property
    def solutions_docname(self) -> str | None:
        return None if self.solutions is None else f"notebooks/solutions/{self.solutions.stem}"


def first_heading(source: str) -> str:
    match = re.search(r"^# (.+)$", source, re.M)
    return match.group(1).strip() if match else ""


def objectives(source: str) -> list[str]:
    """The bullet list after "You will learn" in the opening cell, each item whole: an item that
    wraps goes on in indented lines, which join it."""
    if "You will learn" not in source:
        return []
    items: list[str] = []
    for line in source.split("You will learn", 1)[1].split("\n\n#", 1)[0].splitlines():
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif items and line.startswith((" ", "\t")) and line.strip():
            items[-1] += " " + line.strip()
    return items


def section(markdown_cells: list[str], heading: str) -> str | None:
    """The text under the last `## <heading>` of a notebook, up to the next heading of level 1-2."""
    found = None
    for source in markdown_cells:
        lines = source.splitlines()
        for index, line in enumerate(lines):
            if re.match(rf"^##\s+{re.escape(heading)}\s*$", line, re.I):
                found = []
                lines = lines[index + 1:]
                break
        if found is None:
            continue
        for line in lines:
            if re.match(r"^#{1,2}\s", line):  # the section ends at the next chapter heading
                return "\n".join(found)
            found.append(line)
    return "\n".join(found) if found is not None else None


def list_items(markdown: str) -> list[str]:
    """The items of a bullet or numbered list, each with its continuation lines joined."""
    items: list[str] = []
    for line in markdown.splitlines():
        start = re.match(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+(.*)$", line)
        if start:
            items.append(start.group(1).strip())
        elif line.strip() and items:
            items[-1] += " " + line.strip()
    return items


def lessons(notebooks: Path = NOTEBOOKS) -> list[Lesson]:
    """The lessons in `notebooks` (the repository's, or a built site's copies), in order."""
    found = []
    for path in sorted(notebooks.glob("[0-9][0-9]_*.ipynb")):
        notebook = cells(path)
        opening = text(notebook[0]) if notebook else ""
        markdown = [text(cell) for cell in notebook if cell["cell_type"] == "markdown"]
        references = section(markdown, "References")
        solutions = notebooks / "solutions" / f"{path.stem}_solutions.ipynb"
        found.append(Lesson(path=path, number=path.name[:2],
                            title=first_heading(opening) or path.stem,
                            objectives=objectives(opening),
                            solutions=solutions if solutions.exists() else None,
                            references=list_items(references or "")))
    return found


def headings(path: Path) -> list[str]:
    """The section headings (levels 2 and 3) of a notebook, in order, without their #s."""
    return [line.lstrip("#").strip() for cell in cells(path) if cell["cell_type"] == "markdown"
            for line in text(cell).splitlines() if re.match(r"^#{2,3}\s", line)]


# -- generated pages ------------------------------------------------------------------------------

SECTION_LINK = re.compile(r"\{\{\s*(\d\d)\s*:\s*(.+?)\s*\}\}")


def section_links(markdown: str, all_lessons: list[Lesson]) -> str:
    """Replace each `{{NN: start}}` with a link to the first section of lesson NN whose heading
    starts with `start` (a number such as `3.5`, or the heading's first words), titled as the
    lesson titles it now. A page written this way follows a renamed heading; a section that is
    gone stops the build."""
    from myst_parser.slugs import github_slugify  # as myst names the heading's anchor

    by_number = {lesson.number: lesson for lesson in all_lessons}

    def link(match: re.Match) -> str:
        number, start = match.groups()
        if number not in by_number:
            raise ValueError(f"{match.group(0)}: there is no lesson {number}")
        lesson = by_number[number]
        found = [heading for heading in headings(lesson.path) if heading.startswith(start)]
        if not found:
            raise ValueError(f"{match.group(0)}: no heading of {lesson.path.name} starts with "
                             f"{start!r}")
        return f"[{number} · {found[0]}]({lesson.docname}.ipynb#{github_slugify(found[0])})"

    return SECTION_LINK.sub(link, markdown)



def link(docname: str, here: str = "") -> str:
    """A MyST link to a page, relative to the page `here` (both given as docnames)."""
    target = Path(docname + ".ipynb" if docname.startswith("notebooks/") else docname + ".md")
    start = Path(here).parent
    return Path(*([".."] * len(start.parts)), target).as_posix() if start.parts else str(target)


def site_links(text: str, depth: int) -> str:
    """A notebook's links to the course's own pages give their GitHub address (which opens from
    Colab too); on the site those pages sit at the top, `depth` folders above the notebook:
    `](https://github.com/OWNER/REPO/blob/main/site/glossary.md#x)` -> `](../glossary.md#x)`.
    Links to other notebooks by their Colab address become links to their pages."""
    text = text.replace(f"]({course.github_url('site/')}", "](" + "../" * depth)
    # Notebooks are linked by their Colab address (they open in Colab from GitHub or Colab); on
    # the site, their page. Not the Colab badge, whose image ends in ".svg)": it stays Colab's.
    notebooks = re.escape(f"]({course.colab_url('notebooks/')}")
    return re.sub(rf"(?<!\.svg\)){notebooks}", "](" + "../" * (depth - 1), text)


def minutes(lesson: Lesson) -> tuple[int, int]:
    """(core, Going deeper) study minutes of a lesson, rounded to 5 as its first screen says."""
    time = study_time.study_time(lesson.path)
    return tuple(5 * round(part.minutes / 5) for part in (time.core, time.deeper))


def duration(total: int) -> str:
    hours, rest = divmod(total, 60)
    return f"{hours} h {rest:02d} min" if hours else f"{rest} min"


def reading_paths(all_lessons: list[Lesson]) -> str:
    """The whole course and the fast path for Llama-style code, with their study times."""
    cores = {lesson.number: minutes(lesson) for lesson in all_lessons}
    fast = [number for number in FAST_PATH if number in cores]
    whole_core = sum(core for core, _ in cores.values())
    whole_deeper = sum(deeper for _, deeper in cores.values())
    return "\n".join([
        f"- **The whole course**, lessons {all_lessons[0].number} to {all_lessons[-1].number}: "
        f"the cores take about {duration(whole_core)}, one sitting each; the Going deeper "
        f"sections add about {duration(whole_deeper)}.",
        f"- **The fast path to reading Llama-style code**, lessons {', '.join(fast)}: the cores "
        f"take about {duration(sum(cores[n][0] for n in fast))}."])


def course_map(all_lessons: list[Lesson]) -> str:
    """The lessons in order, each with its study time, what it teaches and its solutions."""
    blocks = []
    for lesson in all_lessons:
        core, deeper = minutes(lesson)
        block = [f"### {lesson.number} · [{lesson.title}]({link(lesson.docname)})", "",
                 f"*Core about {core} minutes; Going deeper about {deeper} minutes more.*", ""]
        block += [f"- {objective}" for objective in lesson.objectives]
        if lesson.solutions_docname:
            block += ["", f"[Solutions to the exercises of {lesson.number}]"
                          f"({link(lesson.solutions_docname)})"]
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


def toctrees(all_lessons: list[Lesson]) -> str:
    lesson_entries = "\n".join(f"{lesson.number} · {lesson.title} <{lesson.docname}>"
                               for lesson in all_lessons)
    solution_entries = "\n".join(f"{lesson.number} · {lesson.title} <{lesson.solutions_docname}>"
                                 for lesson in all_lessons if lesson.solutions_docname)
    return (f"```{{toctree}}\n:caption: Lessons\n:hidden:\n\n{lesson_entries}\n```\n\n"
            f"```{{toctree}}\n:caption: Solutions\n:hidden:\n\n{solution_entries}\n```\n\n"
            "```{toctree}\n:caption: Reference\n:hidden:\n\nglossary\nclaims\nreferences\ndata\n```\n")


def reference_key(item: str) -> str:
    """Two lessons cite the same work when they give the same link (or, without one, the same
    words)."""
    url = re.search(r"https?://[^\s)>\]]+", item)
    if url:
        return url.group(0).rstrip(".,;").removesuffix("/").lower()
    return re.sub(r"\W+", " ", item).strip().lower()


def references_page(all_lessons: list[Lesson]) -> str:
    cited: dict[str, tuple[str, list[Lesson]]] = {}
    for lesson in all_lessons:
        for item in lesson.references:
            first, where = cited.setdefault(reference_key(item), (item, []))
            if lesson not in where:
                where.append(lesson)
    lines = ["# References", "",
             "Every work the lessons cite, gathered from the References section at the end of "
             "each lesson when this site was built. Each entry names the lessons that cite it.",
             ""]
    if not cited:
        lines.append("No lesson has a References section yet.")
    for item, where in sorted(cited.values(), key=lambda entry: entry[0].lower()):
        lessons_citing = ", ".join(f"[{lesson.number}]({link(lesson.docname, 'references')}"
                                   f"#references)" for lesson in where)
        lines.append(f"- {item} (cited in {lessons_citing})")
    return "\n".join(lines) + "\n"


def footer(lesson_or_solutions: str, all_lessons: list[Lesson]) -> str | None:
    """The links at the end of a lesson (its solutions, the next lesson) or of a solutions page
    (back to its lesson, on to the next one). None for other pages."""
    for index, lesson in enumerate(all_lessons):
        following = all_lessons[index + 1] if index + 1 < len(all_lessons) else None
        if lesson_or_solutions == lesson.docname:
            here = lesson.docname
            parts = []
            if lesson.solutions_docname:
                parts.append(f"**Solutions:** [the exercises of {lesson.number}, worked]"
                             f"({link(lesson.solutions_docname, here)})")
        elif lesson_or_solutions == lesson.solutions_docname:
            here = lesson.solutions_docname
            parts = [f"**Back to the lesson:** [{lesson.number} · {lesson.title}]"
                     f"({link(lesson.docname, here)})"]
        else:
            continue
        if following:
            parts.append(f"**Next lesson:** [{following.number} · {following.title}]"
                         f"({link(following.docname, here)})")
        else:
            parts.append(f"**End of the course.** [Back to the course map]({link('index', here)})")
        return "\n\n".join(["---", *parts])
    return None
