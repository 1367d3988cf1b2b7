"""A throwaway JupyterLab server for the browser tests: loopback only, a free port, no token.

Its settings live in a temporary folder, so the tests neither read nor change a maintainer's own
JupyterLab settings, and two settings matter for correctness:
- autosave off: running the cells makes a notebook "dirty", and an autosave would overwrite the
  stored, executed notebook with the test's outputs;
- news and update checks off: they would reach for the network and pop up a toast over the
  screenshots.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

START_TIMEOUT = 120  # seconds; the first start also builds JupyterLab's caches
STOP_TIMEOUT = 20

USER_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
    "@jupyterlab/extensionmanager-extension/plugin": {"enabled": False},
}


def free_loopback_port() -> int:
    """A port the OS has just handed out as free (a race is possible but very unlikely)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_user_settings(settings_dir: Path) -> None:
    for plugin, values in USER_SETTINGS.items():
        path = settings_dir / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


class LabServer:
    """`jupyter lab` started from the repository root; `stop()` is safe to call at any time."""

    def __init__(self, repo_root: Path, state_dir: Path, log_path: Path):
        self.repo_root = repo_root
        self.port = free_loopback_port()
        self.url = f"http://127.0.0.1:{self.port}"
        write_user_settings(state_dir / "settings")
        env = dict(os.environ,
                   OMP_NUM_THREADS="1",  # two cores, shared with the browser
                   JUPYTERLAB_SETTINGS_DIR=str(state_dir / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(state_dir / "workspaces"),
                   JUPYTER_RUNTIME_DIR=str(state_dir / "runtime"))
        # The command from the course guide; --allow-root because CI and containers run as root.
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
                   f"--port={self.port}", "--port-retries=0", "--allow-root",
                   "--IdentityProvider.token=", "--ServerApp.disable_check_xsrf=True",
                   "--LabApp.expose_app_in_browser=True"]
        self.log_path = log_path
        self._log = open(log_path, "w")
        # Own process group, so that a last-resort kill reaches the server and nothing else.
        self.process = subprocess.Popen(command, cwd=repo_root, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def request(self, method: str, api_path: str, timeout: float = 10):
        request = urllib.request.Request(self.url + api_path, method=method)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def wait_until_ready(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self.process.returncode}; "
                                   f"see {self.log_path}")
            try:
                self.request("GET", "/api/status", timeout=2)
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)
        raise TimeoutError(f"JupyterLab did not answer within {timeout} s; see {self.log_path}")

    def shut_down_kernels(self) -> None:
        """End every session and kernel this server runs (the server is ours alone)."""
        for session in self.request("GET", "/api/sessions"):
            self.request("DELETE", f"/api/sessions/{session['id']}", timeout=30)
        for kernel in self.request("GET", "/api/kernels"):
            self.request("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)

    def running_kernels(self) -> list:
        return self.request("GET", "/api/kernels")

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.shut_down_kernels()
                self.request("POST", "/api/shutdown")  # also ends any kernel still running
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGTERM)
                try:
                    self.process.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait()
        self._log.close()
