"""Sphinx settings of the course website; `site/build.py` runs Sphinx with them."""

import importlib.util
import json
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent
sys.path.insert(0, str(SITE))
import pages  # noqa: E402

# The repository's address lives in helpers/course.py alone (read as a file: importing the
# helpers package would need torch, which the site's toolchain does not have).
_spec = importlib.util.spec_from_file_location("course", pages.ROOT / "helpers" / "course.py")
course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course)
LESSONS = pages.lessons()
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
LOCAL_BADGE = "/colab-badge.svg"  # from the top of the site's sources (site/build.py puts it there)

project = "Positions"
html_title = "Positions: positional embeddings in transformers"
author = "the Positions course"
html_show_copyright = False

extensions = ["myst_nb", "sphinx-mathjax-offline"]  # MathJax copied into _static/, no CDN
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The notebooks are shown as stored (executed, with their figures), never run here.
nb_execution_mode = "off"
# Cells tagged remove-cell (the setup cell, the check cells) are dropped by myst-nb itself.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3  # links to sections (glossary, references) are checked at build time

html_theme = "sphinx_book_theme"
html_theme_options = {
    "repository_url": f"https://github.com/{course.REPOSITORY}",
    "repository_branch": course.BRANCH,
    "path_to_docs": "",  # the site's sources are laid out as the repository is
    "use_repository_button": True,
    "use_download_button": True,  # the .ipynb as stored, and the page as PDF via print
    "launch_buttons": {"colab_url": "https://colab.research.google.com"},
    "show_navbar_depth": 1,
    "home_page_in_toc": True,
}
html_last_updated_fmt = None
html_show_sourcelink = False


def adapt_notebook(app, docname, source):
    """Three changes to a lesson or solutions page, made as Sphinx reads it (the notebook files,
    and the copy a reader downloads, stay as they are):
    - its Colab badge, an image on Colab's server, is drawn from the site's own copy;
    - its links to the course's pages and to solutions (GitHub and Colab addresses, which open
      from Colab) lead to the site's own pages (pages.site_links);
    - it ends with links to its solutions and the next lesson (a solutions page: back and on).
    """
    links = pages.footer(docname, LESSONS)
    if links is None:
        return
    notebook = json.loads(source[0])
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = pages.site_links(pages.text(cell).replace(COLAB_BADGE, LOCAL_BADGE),
                                              depth=docname.count("/"))
    notebook["cells"].append({"cell_type": "markdown", "id": "course-footer", "metadata": {},
                              "source": links})
    source[0] = json.dumps(notebook)


def setup(app):
    app.connect("source-read", adapt_notebook)
