# The browser tests need Chromium and Playwright: `make test-browser` installs them and runs
# `pytest tests/browser`; `pytest tests` (make test) leaves them out, and the website's
# tests (tests/site), which need the built site and their own venv: `make test-site`.
import pytest

collect_ignore = ["browser", "site"]


@pytest.fixture
def axes_measured(monkeypatch) -> list[str]:
    """From now on, the name ("x" or "y") of each axis whose extent matplotlib measures
    (`Axis.get_tightbbox`, what an automatically placed title costs at every draw)."""
    from matplotlib.axis import Axis

    measured = []
    original = Axis.get_tightbbox
    monkeypatch.setattr(Axis, "get_tightbbox",
                        lambda axis, *args, **kwargs: (measured.append(axis.axis_name),
                                                       original(axis, *args, **kwargs))[1])
    return measured
