# The browser tests need Chromium and Playwright: `make test-browser` installs them and runs
# `pytest tests/browser`; `pytest tests` (make test) leaves them out.
collect_ignore = ["browser"]
