"""How long a lesson takes to study, by the course's measure, for its core and its Going deeper part.

The measure (COURSE_GUIDE, and each lesson's first screen):
    prose at 150 words a minute (References excluded; $...$ math counts as one word),
  + 1 minute per code cell a learner sees (hidden check and setup cells excluded),
  + 10 minutes per exercise.

A lesson's Going deeper part is every section whose heading starts with "Going deeper", down to
the next heading of the same or a higher level. Everything else, References aside, is the core.
Exercises are the numbered items of a section whose level-2 heading names exercises: those under
"## Exercises" are core, those under "## Going deeper: more exercises" count towards Going deeper.

Run `python tools/study_time.py` for a table of every lesson; tests/test_study_time.py holds the
budget (a core of at most 60 minutes, the whole core path at most 7 hours).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 1
MINUTES_PER_EXERCISE = 10

HEADING = re.compile(r"^(#{1,6})\s+(.*)")
INLINE_MATH = re.compile(r"\$[^$]*\$")
# An exercise opens with its number in bold or as a heading: "**2. Title.**", "**Exercise 2.**",
# "### 2. Title". Counted only inside a section whose level-2 heading names exercises.
EXERCISE_ITEM = re.compile(r"^(?:#{1,6}\s+|\*\*)(?:exercise\s*)?\d+\.?(?:\*\*|\s)", re.I)


@dataclass
class Part:
    words: int = 0
    code_cells: int = 0
    exercises: int = 0

    @property
    def minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + self.code_cells * MINUTES_PER_CODE_CELL
                + self.exercises * MINUTES_PER_EXERCISE)


@dataclass
class StudyTime:
    core: Part
    deeper: Part


def hidden(cell: dict) -> bool:
    """A code cell the learner does not read: removed by renderers or collapsed in Jupyter."""
    metadata = cell.get("metadata", {})
    return ("remove-cell" in metadata.get("tags", [])
            or bool(metadata.get("jupyter", {}).get("source_hidden")))


def study_time(path: Path) -> StudyTime:
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    core, deeper = Part(), Part()
    in_deeper, deeper_level, in_references, in_exercises = False, 0, False, False
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code":
            if not hidden(cell) and not in_references:
                (deeper if in_deeper else core).code_cells += 1
            continue
        if cell["cell_type"] != "markdown":
            continue
        # A markdown cell may open a section part-way through: count it line by line.
        for line in source.splitlines():
            match = HEADING.match(line)
            if match:
                level, title = len(match.group(1)), match.group(2).strip()
                if in_deeper and level <= deeper_level:
                    in_deeper = False
                if level <= 2:
                    in_references = title.lower().startswith("references")
                    in_exercises = "exercise" in title.lower()
                if title.lower().startswith("going deeper"):
                    in_deeper, deeper_level = True, level
            if in_references:
                continue
            part = deeper if in_deeper else core
            part.words += len(INLINE_MATH.sub(" x ", line).split())
            if in_exercises and EXERCISE_ITEM.match(line):
                part.exercises += 1
    return StudyTime(core, deeper)


def main(paths: list[str]) -> None:
    root = Path(__file__).resolve().parent.parent
    lessons = [Path(p) for p in paths] or sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    total = 0.0
    print(f"{'lesson':34} {'core':>6} {'deeper':>7}   core: words, code cells, exercises")
    for lesson in lessons:
        time = study_time(lesson)
        total += time.core.minutes
        print(f"{lesson.stem:34} {time.core.minutes:5.0f}m {time.deeper.minutes:6.0f}m   "
              f"{time.core.words}, {time.core.code_cells}, {time.core.exercises}")
    print(f"{'core path':34} {total:5.0f}m")


if __name__ == "__main__":
    main(sys.argv[1:])
