"""Fixtures for the browser tests: one JupyterLab server and one headless Chromium per run, a fresh
page per test. Each is shut down in a `finally`, also when a test fails; a page's kernels are shut
down as soon as its test ends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lab_server import LabServer
from playwright.sync_api import sync_playwright

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts" / "browser"  # git-ignored; screenshots to look at
# Debian's package (make test-browser installs it); browser downloads are not an option here.
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
VIEWPORT = {"width": 1280, "height": 1000}


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory, artifacts):
    server = LabServer(REPO_ROOT, tmp_path_factory.mktemp("jupyterlab"),
                       artifacts / "jupyterlab.log")
    try:
        server.wait_until_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: `make test-browser` installs Debian's chromium")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def lab_page(browser, lab_server):
    context = browser.new_context(viewport=VIEWPORT)
    try:
        yield context.new_page()
    finally:
        context.close()
        lab_server.shut_down_kernels()  # closing the page leaves its kernel running otherwise
        assert not lab_server.running_kernels(), "a kernel survived its test"
