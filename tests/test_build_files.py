"""The build files agree with each other and with what `helpers` needs.

Two lists, two jobs: pyproject.toml declares what the `helpers` package needs to run, as lower
bounds that Colab's own versions meet; requirements.txt (the lock file) pins the exact versions
behind the stored outputs, plus Jupyter and the test tools. These tests keep them honest.
"""

import ast
import json
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.txt"
COLAB_LOCK = ROOT / "tests" / "colab" / "requirements.txt"
TEST_TOOLS = {"pytest", "pytest-xdist", "nbval", "hypothesis", "nbclient", "nbformat",
              "jupyterlab", "ipykernel", "playwright"}


def pins(path):
    """{canonical name: version} of a requirements file; every entry must be `name==version`."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][A-Za-z0-9.+]*", line), line
            name, version = line.split("==")
            found[canonicalize_name(name)] = version
    return found


def declared():
    """pyproject.toml's dependencies as {canonical name: Requirement}."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "dependencies" not in project.get("dynamic", [])
    requirements = [Requirement(text) for text in project["dependencies"]]
    return {canonicalize_name(r.name): r for r in requirements}


def imported_distributions():
    """The distributions whose modules `helpers` imports (standard library and itself aside)."""
    modules = set()
    for path in (ROOT / "helpers").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split(".")[0])
    modules -= set(sys.stdlib_module_names) | {"__future__", "helpers"}
    owners = packages_distributions()
    return {canonicalize_name(owners[module][0]) for module in modules}


# --- the lock file ---------------------------------------------------------------------------------

def test_lock_pins_every_line():
    assert len(pins(LOCK)) >= 10


def test_torch_is_the_cpu_build_version():
    # On the course's machines torch==2.13.0 resolves to a CPU build on local disk; any other
    # torch pulls a multi-GB CUDA build.
    assert pins(LOCK)["torch"] == "2.13.0"


def test_lock_meets_the_package_lower_bounds():
    locked = pins(LOCK)
    for name, requirement in declared().items():
        assert name in locked, f"{name} is a dependency of helpers but not pinned in the lock"
        assert requirement.specifier.contains(locked[name]), (requirement, locked[name])


# --- the package ---------------------------------------------------------------------------------

def test_package_declares_exactly_what_helpers_imports():
    assert set(declared()) == imported_distributions()
    assert set(declared()) == {"torch", "numpy", "matplotlib", "ipywidgets", "ipython",
                               "tiktoken", "tqdm"}


def test_dependencies_are_lower_bounds_only():
    for requirement in declared().values():
        operators = [spec.operator for spec in requirement.specifier]
        assert operators == [">="], requirement
        assert not requirement.extras and requirement.marker is None and requirement.url is None


def test_no_test_tool_is_a_dependency():
    assert not TEST_TOOLS & set(declared())
    # They are in the lock, where `make test` finds them.
    assert TEST_TOOLS - {"playwright"} <= set(pins(LOCK))


def test_built_metadata_requires_only_the_runtime_list():
    # What pip itself reads from the package (as `pip install <repo>` would), without installing.
    report = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--report", "-", str(ROOT)],
        capture_output=True, text=True, check=True).stdout
    (package,) = json.loads(report)["install"]
    requires = [Requirement(text) for text in package["metadata"]["requires_dist"]]
    assert {canonicalize_name(r.name): str(r.specifier) for r in requires} == {
        name: str(r.specifier) for name, r in declared().items()}


def test_python_version_agrees_everywhere():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    assert re.search(r"^\s+- python=3\.11$", (ROOT / "environment.yml").read_text(), re.M)
    assert "Python 3.11" in (ROOT / "README.md").read_text()


# --- Colab ---------------------------------------------------------------------------------------

def test_colab_stand_in_has_colabs_versions():
    colab = pins(COLAB_LOCK)
    assert {name: colab[name] for name in ("ipywidgets", "ipython", "ipykernel", "numpy",
                                           "matplotlib", "torch")} == {
        "ipywidgets": "7.7.1", "ipython": "7.34.0", "ipykernel": "6.17.1", "numpy": "2.0.2",
        "matplotlib": "3.10.0", "torch": "2.13.0"}
    # Colab has neither: the setup cell installs them.
    assert "tiktoken" not in colab and "positions-course" not in colab
    # Colab preinstalls transformers, an older major than the lock's: the setup cell keeps it.
    assert colab["transformers"].startswith("4.")


def test_colabs_versions_meet_the_package_lower_bounds():
    # Otherwise installing the course in Colab would replace Colab's own packages, or pip would
    # print a dependency conflict in red under the setup cell.
    colab = pins(COLAB_LOCK)
    for name, requirement in declared().items():
        if name in colab:
            assert requirement.specifier.contains(colab[name]), (requirement, colab[name])


# --- the ways to install agree ---------------------------------------------------------------------

def test_make_installs_the_lock_then_the_package_on_top():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("$(INSTALLED):", 1)[1].split("\n\n", 1)[0]
    lock = recipe.index("pip install --quiet -r requirements.txt")
    package = recipe.index("pip install --quiet --no-deps -e .")
    assert lock < package < recipe.index("-m pip check")


def test_environment_yml_installs_the_lock_then_the_package():
    text = (ROOT / "environment.yml").read_text()
    pip_section = text.split("- pip:", 1)[1]
    entries = re.findall(r"^\s+-\s+(.+)$", pip_section, re.M)
    assert entries == ["-r requirements.txt", "-e ."]
    # No third list: nothing pinned in environment.yml itself.
    assert "==" not in text


def test_readme_names_only_real_make_targets():
    readme = (ROOT / "README.md").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), re.M))
    named = set(re.findall(r"`make ([a-z][a-z-]*)`", readme)) | set(
        re.findall(r"^make ([a-z][a-z-]*)", readme, re.M))
    assert {"lab", "test", "test-colab"} <= named <= targets


def test_ci_runs_the_tests_then_the_colab_stand_in():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M)
    assert ci.index("make test\n") < ci.index("make test-colab")


def test_the_tests_and_the_stored_notebooks_hold_every_claim_strictly():
    """helpers.checks.claim only notes a miss unless $POSITIONS_STRICT_CHECKS is 1: the notebook
    tests and the tool that stores executed notebooks must set it, or a miss would pass."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\nnotebook-test:", 1)[1].split("\n\n", 1)[0]
    assert "POSITIONS_STRICT_CHECKS=1" in recipe and "--nbval-lax" in recipe
    tool = (ROOT / "tools" / "execute_notebooks.py").read_text()
    assert 'os.environ["POSITIONS_STRICT_CHECKS"] = "1"' in tool
