"""The build files agree with each other: one dependency list, read by every way to install."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def requirement_lines():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_requirement_is_pinned():
    for line in requirement_lines():
        assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][A-Za-z0-9.+]*", line), line


def test_torch_is_the_cpu_build_version():
    assert "torch==2.13.0" in requirement_lines()


def test_pyproject_reads_requirements_txt():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "dependencies" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["dependencies"]["file"] == ["requirements.txt"]
    assert project["project"]["requires-python"] == ">=3.11"


def test_environment_yml_points_at_the_same_list():
    text = (ROOT / "environment.yml").read_text()
    pip_section = text.split("- pip:", 1)[1]
    entries = re.findall(r"^\s+-\s+(.+)$", pip_section, re.M)
    assert entries == ["-r requirements.txt", "-e ."]
    assert re.search(r"^\s+- python=3\.11$", text, re.M)
    # No second list: nothing pinned in environment.yml itself.
    assert "==" not in text


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make test" in ci
