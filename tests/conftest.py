# The browser tests need Chromium and Playwright: `make test-browser` installs them and runs
# `pytest tests/browser`; `pytest tests` (make test) leaves them out, and the website's
# tests (tests/site), which need the built site and their own venv: `make test-site`.
import pytest

collect_ignore = ["browser", "site"]


@pytest.fixture
def count_calls(monkeypatch):
    """`count_calls(owner, "method")`: from now on `owner.method` still runs, and each call adds
    an entry to the list returned: the method's name, or `record(*arguments)` if given."""
    def start(owner, name: str, record=None) -> list:
        calls = []
        original = getattr(owner, name)

        def counted(*args, **kwargs):
            calls.append(name if record is None else record(*args, **kwargs))
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
        return calls

    return start


@pytest.fixture
def axis_calls(count_calls):
    """`axis_calls("draw")`: from now on, the name ("x" or "y") of each axis whose `Axis.draw`
    runs, in order: an axis matplotlib draws in full, not replayed by the slider canvas.
    `axis_calls("get_tightbbox")`: each axis whose extent is measured, what an automatically
    placed title costs at every draw."""
    from matplotlib.axis import Axis

    return lambda name: count_calls(Axis, name, record=lambda axis, *args, **kwargs: axis.axis_name)
