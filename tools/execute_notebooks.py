"""Execute notebooks in place, so that their stored outputs come from the code beside them.

    python tools/execute_notebooks.py notebooks/*.ipynb notebooks/solutions/*.ipynb

Each notebook runs in its own folder with the `python3` kernel (nbval starts kernels in the
same place), then is saved with outputs and execution counts but without noisy metadata
(timings, widget state, kernel versions), so a re-run changes only what really changed.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
# Progress bars are for learners watching; in stored outputs they are noise.
os.environ["TQDM_DISABLE"] = "1"
os.environ["POSITIONS_STRICT_CHECKS"] = "1"  # a stored notebook holds no missed claim (helpers.checks)
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def without_machine_paths(line: str) -> str:
    """Tracebacks name files by absolute path; store them relative to the repo (or ~)."""
    return line.replace(f"{ROOT}/", "").replace(str(Path.home()), "~")


def tidy(notebook: nbformat.NotebookNode) -> None:
    notebook.metadata = nbformat.from_dict({
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python"},
    })
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
        if cell.cell_type == "code":
            for output in cell.outputs:
                # A widget view names a widget of the kernel that ran the notebook. Stored, none
                # is left: JupyterLab shows "Error displaying widget: model not found" in its
                # place once the notebook is trusted, and the id changes at every run. Without
                # it, every front end shows the PNG beside it (helpers.widgets.FigureWithSliders).
                if "data" in output:
                    output.data.pop("application/vnd.jupyter.widget-view+json", None)
                if output.output_type == "error":
                    output.traceback = [without_machine_paths(line) for line in output.traceback]


def execute(path: Path, timeout: int = 900) -> float:
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = KERNELSPEC
    start = time.perf_counter()
    # IPC sockets in a private folder, not TCP ports: kernels started side by side could race
    # for the same port and die or hang.
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        kernel = KernelManager(kernel_name="python3", transport="ipc",
                               ip=os.path.join(sockets, "kernel"))
        NotebookClient(notebook, km=kernel, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    tidy(notebook)
    nbformat.write(notebook, path)
    return seconds


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"{name}: {execute(Path(name)):.1f} s", flush=True)
