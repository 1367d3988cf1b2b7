"""The course as a Colab learner meets it, rebuilt on this machine (`make test-colab`).

Colab cannot be reached from here, but its situation can be rebuilt:
- a Python with Colab's versions of what the course touches (tests/colab/requirements.txt:
  ipywidgets 7, IPython 7.34, numpy 2.0.2, ...), without tiktoken or the course, in
  build/colab/venv;
- a stand-in `google.colab` package, imported by an IPython startup file, so that
  `"google.colab" in sys.modules` when a kernel starts, as in Colab;
- the course's GitHub address redirected to a bare clone of this repository (git's
  `url.<base>.insteadOf`), so the setup cell's `git clone` fetches the committed HEAD;
- kernels that start in /content, with pip configured as on a plain machine.

Then, as a learner would:
1. Notebooks 01 and 02, each in a fresh runtime: the setup cell clones and installs the course
   and must print nothing to stderr, twice in a row; the story's download fails here (no
   network beyond package registries) and must say where the file goes, so the story is then
   "uploaded" (copied from data/) and every cell must run without error.
2. A runtime restart without the setup cell: `helpers` must still find the clone's data/.
3. Every other notebook, lessons and solutions, with the course and the story in place.

Prints one line per notebook and ends with "N passed, N failed". Run as root (it uses
/content, like Colab); needs data/the-verdict.txt.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from queue import Empty

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = Path(__file__).resolve().parent / "requirements.txt"
WORK = ROOT / "build" / "colab"
VENV = WORK / "venv"
PYTHON = VENV / "bin" / "python"
BARE = WORK / "positions.git"
STORY = ROOT / "data" / "the-verdict.txt"
CONTENT = Path("/content")
CELL_TIMEOUT = 600


def course_module():
    """helpers/course.py of this working tree, read without importing helpers (and torch)."""
    spec = importlib.util.spec_from_file_location("course", ROOT / "helpers" / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COURSE = course_module()
CLONE = Path(COURSE.COLAB_CLONE)
GITHUB = f"https://github.com/{COURSE.REPOSITORY}"


def run(*command, **options):
    """Run a command quietly; on failure show what it printed."""
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                          **options)
    if done.returncode:
        sys.exit(f"failed: {' '.join(map(str, command))}\n{done.stdout}{done.stderr}")
    return done.stdout


# --- the stand-in ----------------------------------------------------------------------------------

def build_environment():
    """Colab's packages in build/colab/venv, rebuilt only when requirements.txt changes."""
    stamp = VENV / ".requirements-sha256"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if not (stamp.is_file() and stamp.read_text() == wanted):
        shutil.rmtree(VENV, ignore_errors=True)
        started = time.monotonic()
        run(sys.executable, "-m", "venv", VENV)
        run(PYTHON, "-m", "pip", "install", "--quiet", "-r", REQUIREMENTS)
        stamp.write_text(wanted)
        print(f"built the stand-in's Python in {time.monotonic() - started:.0f} s", flush=True)
    site = Path(run(PYTHON, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip())
    colab = site / "google" / "colab"
    colab.mkdir(parents=True, exist_ok=True)
    (colab / "__init__.py").write_text(
        '"""Stand-in for Colab\'s google.colab (tests/colab/run.py): the course only checks '
        'that it is imported."""\n')
    startup = WORK / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-colab.py").write_text("import google.colab  # as Colab's kernel does\n")
    kernel = WORK / "jupyter" / "kernels" / "colab"
    kernel.mkdir(parents=True, exist_ok=True)
    (kernel / "kernel.json").write_text(
        '{"argv": ["%s", "-m", "ipykernel_launcher", "-f", "{connection_file}"], '
        '"display_name": "Colab stand-in", "language": "python"}' % PYTHON)
    # The runner's own nbclient finds the kernel here; the kernel runs in the stand-in's Python.
    os.environ["JUPYTER_PATH"] = str(WORK / "jupyter")

    # The setup cell's `git clone https://github.com/...` fetches this repository's HEAD.
    shutil.rmtree(BARE, ignore_errors=True)
    run("git", "clone", "--quiet", "--bare", ROOT, BARE)
    (WORK / "gitconfig").write_text(f'[url "file://{BARE}"]\n\tinsteadOf = {GITHUB}\n')
    # pip as on a plain machine: none of this machine's settings (pip.conf, PIP_* variables),
    # a cache of its own (so pip's once-a-week version check runs), certificates as the host's.
    (WORK / "pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
    shutil.rmtree(WORK / "pip-cache", ignore_errors=True)


def kernel_environment():
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("PIP_", "POSITIONS_", "JUPYTER_", "VIRTUAL_ENV", "PYTHON",
                                   "MPLBACKEND", "TQDM_"))}
    env.update(
        PATH=f"{VENV / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
        IPYTHONDIR=str(WORK / "ipython"),
        GIT_CONFIG_GLOBAL=str(WORK / "gitconfig"),
        PIP_CONFIG_FILE=str(WORK / "pip.conf"),
        PIP_CACHE_DIR=str(WORK / "pip-cache"),
        OMP_NUM_THREADS="1",  # two notebooks at a time on two cores
        PYDEVD_DISABLE_FILE_VALIDATION="1",  # no debugger notice in the log at kernel start
    )
    return env


def fresh_runtime():
    """What a new Colab runtime has: no clone, no course, no tiktoken."""
    shutil.rmtree(CLONE, ignore_errors=True)
    subprocess.run([PYTHON, "-m", "pip", "uninstall", "--yes", "--quiet", "positions-course",
                    "tiktoken"], capture_output=True, env=kernel_environment())


# --- running notebooks -----------------------------------------------------------------------------

class Failure(Exception):
    pass


def committed_notebook(path: str, setup_cell: str | None):
    """The notebook as GitHub (here: the bare clone) serves it to Colab."""
    text = run("git", f"--git-dir={BARE}", "show", f"HEAD:{path}")
    nb = nbformat.reads(text, as_version=4)
    if '"google.colab" in sys.modules' not in nb.cells[1].source:
        raise Failure(f"{path}: its second cell is not the setup cell")
    if setup_cell is not None:
        nb.cells[1].source = setup_cell
    return nb


def stderr_of(*cells):
    return "".join(output.get("text", "") for cell in cells for output in cell.get("outputs", [])
                   if output.get("output_type") == "stream" and output.get("name") == "stderr")


def printed(cell):
    return "".join(output.get("text", "") for output in cell.get("outputs", [])
                   if output.get("output_type") == "stream")


def poll_in_steps(get_msg, step=1.0):
    """`get_msg(timeout)` as a series of short polls.

    nbclient waits for a cell's reply with one long asyncio poll of the zmq socket. Here, with
    this kernel, that poll now and then missed a reply already waiting in the socket (the kernel
    idle, the run stuck for up to the cell timeout); a fresh poll every second finds it.
    """
    async def patient_get_msg(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = step if deadline is None else max(0.0, min(step, deadline - time.monotonic()))
            try:
                return await get_msg(timeout=left)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    return patient_get_msg


class Kernel:
    """One kernel in /content, executing the cells we hand it, as a learner's clicks would."""

    def __init__(self, nb):
        self.nb = nb
        self.client = NotebookClient(nb, kernel_name="colab", timeout=CELL_TIMEOUT,
                                     force_raise_errors=True,
                                     resources={"metadata": {"path": str(CONTENT)}})

    def __enter__(self):
        self._context = self.client.setup_kernel(env=kernel_environment(), cwd=str(CONTENT))
        self._context.__enter__()
        for channel in (self.client.kc.shell_channel, self.client.kc.iopub_channel):
            channel.get_msg = poll_in_steps(channel.get_msg)
        return self

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)

    def cell(self, index):
        cell = self.nb.cells[index]
        try:
            self.client.execute_cell(cell, index)
        except CellExecutionError as error:
            raise Failure(f"cell {index} raised:\n{error}") from None
        return cell

    def code(self, source):
        """Run code of our own (not a notebook cell) and return its cell with outputs."""
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)  # nbclient stores a cell's outputs at its index
        try:
            self.client.execute_cell(cell, len(self.nb.cells) - 1)
        except CellExecutionError as error:
            raise Failure(f"stand-in check raised:\n{error}") from None
        finally:
            self.nb.cells.pop()
        return cell

    def setup(self, what):
        """The setup cell, then a pause: output a subprocess writes late still lands in it."""
        cell = self.cell(1)
        late = self.code("import time; time.sleep(1)")
        red = stderr_of(cell, late)
        if red:
            raise Failure(f"the setup cell ({what}) wrote to stderr:\n{red}")

    def rest(self, start=2):
        for index in range(start, len(self.nb.cells)):
            if self.nb.cells[index].cell_type == "code":
                self.cell(index)


def first_run(path, setup_cell):
    """A fresh runtime: the setup cell's clone-and-install path, silent, twice."""
    fresh_runtime()
    nb = committed_notebook(path, setup_cell)
    with Kernel(nb) as kernel:
        kernel.setup("first run")
        if not (CLONE / ".git").is_dir():
            raise Failure(f"the setup cell did not clone the course into {CLONE}")
        kernel.setup("run again")
        story = CLONE / "data" / "the-verdict.txt"
        # No network here: the download fails, and must say where the file goes and how.
        said = printed(kernel.code(
            "import helpers\n"
            "try:\n    helpers.load_the_verdict()\n"
            "except FileNotFoundError as error:\n    print(error)\n"))
        if said and not (f"!curl -fL -o {story} " in said and "Files pane" in said):
            raise Failure(f"the failed download says:\n{said}")
        if not story.exists():
            shutil.copy(STORY, story)  # the learner's upload through the Files pane
        kernel.rest()


def after_restart():
    """A restart forgets os.environ and imports; the clone and the installed course remain."""
    nb = nbformat.v4.new_notebook()
    with Kernel(nb) as kernel:
        said = printed(kernel.code(
            "import os, helpers\n"
            "print(os.environ.get('POSITIONS_DATA_DIR'), helpers.__file__)\n"
            "print(helpers.find_data_dir(), len(helpers.load_the_verdict()))\n"))
    variable, module, folder, length = said.split()
    if not (variable == "None" and "site-packages" in module and folder == f"{CLONE}/data"
            and length == "20479"):
        raise Failure(f"after a restart, helpers says: {said}")


def later_run(path, setup_cell):
    """A notebook opened after the course is in place (setup cell's quick path)."""
    nb = committed_notebook(path, setup_cell)
    with Kernel(nb) as kernel:
        kernel.setup("course already installed")
        kernel.rest()


def timed(step, *args):
    started = time.monotonic()
    try:
        step(*args)
        return None, time.monotonic() - started
    except Failure as failure:
        return str(failure), time.monotonic() - started
    except Exception as error:  # a timeout, a dead kernel: report it with the rest
        return f"{type(error).__name__}: {error}", time.monotonic() - started


# --- main ----------------------------------------------------------------------------------------

FIRST = ["notebooks/01_token_embeddings.ipynb", "notebooks/02_dataloader.ipynb"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apply-setup-cell", action="store_true",
                        help="replace each notebook's setup cell with helpers.course.SETUP_CELL "
                             "of this working tree (to try a new setup cell before syncing it)")
    parser.add_argument("--only", nargs="*", help="notebook paths after the first two (default: all)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    setup_cell = COURSE.SETUP_CELL if args.apply_setup_cell else None
    if not STORY.is_file():
        sys.exit(f"{STORY} is missing: copy the story there first (CI takes ../shared/data/).")
    CONTENT.mkdir(exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    lock = open(WORK / "lock", "w")
    try:  # two runs would share /content and the stand-in's site-packages
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit("another Colab stand-in run is under way (build/colab/lock)")
    started = time.monotonic()
    build_environment()

    results = []

    def report(name, outcome):
        error, seconds = outcome
        results.append(error is None)
        print(f"{'PASSED' if error is None else 'FAILED'} {name} ({seconds:.0f} s)"
              + (f"\n{error}" if error else ""), flush=True)

    for path in FIRST:
        report(f"{path}: fresh runtime, setup cell clones and installs", timed(first_run, path, setup_cell))
    report("runtime restart without the setup cell finds the data", timed(after_restart))

    committed = run("git", f"--git-dir={BARE}", "ls-tree", "-r", "--name-only", "HEAD",
                    "notebooks").split()
    rest = [path for path in committed if path.endswith(".ipynb") and path not in FIRST]
    if args.only is not None:
        rest = [path for path in rest if path in args.only]
    # Longest first, so that the two workers finish together.
    rest.sort(key=lambda path: ("07_" not in path, "08_" not in path, path))
    # Fresh worker processes ("spawn"): a forked copy of this one would share its zmq sockets.
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=get_context("spawn")) as pool:
        futures = {path: pool.submit(timed, later_run, path, setup_cell) for path in rest}
        for path, future in futures.items():
            report(path, future.result())

    passed = sum(results)
    print(f"Colab stand-in: {time.monotonic() - started:.0f} s in all")
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
