"""How every check_... function answers: one line saying right or wrong, and why."""


def correct(why: str) -> bool:
    print(f"Correct. {why}")
    return True


def not_yet(why: str) -> bool:
    print(f"Not yet. {why}")
    return False
