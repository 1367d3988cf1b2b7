"""Facts about the course itself: where it lives, and the two cells every notebook starts with.

The repository's address is set here and nowhere else; `tests/test_notebook_style.py` checks
that every notebook's badge and setup cell agree with this file.
"""

REPOSITORY = "positions-course/positions"
BRANCH = "main"


def colab_url(notebook_path: str) -> str:
    """Colab's address for a notebook, given its path in the repository (notebooks/...)."""
    return f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/{notebook_path}"


def github_url(path: str) -> str:
    """GitHub's address for a file of the repository. Lessons link the course's own pages
    (site/glossary.md, site/claims.md) this way: a relative link does not open from Colab, and
    the website's build turns these addresses into links to its own pages."""
    return f"https://github.com/{REPOSITORY}/blob/{BRANCH}/{path}"


def colab_badge(notebook_path: str) -> str:
    return (
        "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({colab_url(notebook_path)})"
    )


# Where Colab's setup cell clones the course; `helpers.data` looks for the data there too.
COLAB_CLONE = "/content/positions"

# The first code cell of every notebook. Outside Colab it only selects the inline backend.
# In Colab it installs tiktoken first (the one package Colab lacks), then the course with
# --no-deps, so nothing of Colab's is replaced and pip finds no conflict to report; with
# --no-build-isolation pip builds it with Colab's own setuptools instead of downloading one.
# A good run prints nothing. Once `helpers` imports, running the cell again does nothing more.
SETUP_CELL = f'''\
# @title Setup: run this cell first
# On your own machine (after `make lab`) this only picks the inline plotting backend.
# In Colab it fetches the course and installs its helpers, keeping Colab's own torch, numpy,
# matplotlib and ipywidgets; once they are installed, running it again does nothing more.
import importlib, os, subprocess, sys

if "google.colab" in sys.modules:
    course = "{COLAB_CLONE}"
    if not os.path.isdir(course):
        subprocess.run(["git", "clone", "--quiet", "--depth", "1",
                        "https://github.com/{REPOSITORY}", course], check=True)
    try:
        import helpers
    except ImportError:
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--root-user-action=ignore"]
        subprocess.run(pip + ["tiktoken"], check=True)
        subprocess.run(pip + ["--no-deps", "--no-build-isolation", course], check=True)
        importlib.invalidate_caches()  # so that Python sees the new package

%matplotlib inline'''
