"""How every check_... function answers: one line that starts with the verdict, then says why.

    Correct: ...        the answer is right                   (the check returns True)
    Not yet: ...        the answer is wrong, and where to look (returns False)
    Not done yet: ...   the exercise still holds None          (returns False)
"""

import contextlib
import io


def correct(why: str) -> bool:
    print(f"Correct: {why}")
    return True


def not_yet(why: str) -> bool:
    print(f"Not yet: {why}")
    return False


def not_done(what: str = "replace None with your answer, then run this cell again.") -> bool:
    print(f"Not done yet: {what}")
    return False


def unanswered(answer) -> bool:
    """True, after saying so, while the learner's answer is still None."""
    if answer is None:
        not_done()
        return True
    return False


def passes(check, *answer, **lesson) -> bool:
    """Run a check without its printout and return its verdict (the solutions' tests use it)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return check(*answer, **lesson) is True
