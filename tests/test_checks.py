"""helpers.checks.claim: strict under the course's tests, a note in a learner's run."""

import pytest

from helpers.checks import STRICT_VARIABLE, claim


def test_a_statement_that_holds_passes_silently(monkeypatch, capsys):
    for strict in ("1", ""):
        monkeypatch.setenv(STRICT_VARIABLE, strict)
        assert claim(0.3 < 0.5, "the loss stays below 0.5") is True
    assert capsys.readouterr().out == ""


def test_under_the_tests_a_missed_statement_fails(monkeypatch):
    monkeypatch.setenv(STRICT_VARIABLE, "1")
    with pytest.raises(AssertionError, match="the text states: the loss stays below 0.5"):
        claim(0.7 < 0.5, "the loss stays below 0.5")


@pytest.mark.parametrize("setting", [None, "", "0"])
def test_in_a_learners_run_a_missed_statement_is_a_note(monkeypatch, capsys, setting):
    if setting is None:
        monkeypatch.delenv(STRICT_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(STRICT_VARIABLE, setting)
    assert claim(0.7 < 0.5, "the loss stays below 0.5") is False
    note = capsys.readouterr().out
    assert note.startswith("Note: in this run, not as the text states: the loss stays below 0.5.")
    assert "CPU threads, GPU" in note and len(note) < 400
