"""One function per way a process of a run ends: whose lines are in the combined data says
whose data was saved. Each is called by exactly one test of the suite."""


def before_crash() -> int:
    steps = [1, 2, 3]
    return sum(steps)


def after_crash() -> int:
    steps = [4, 5]
    return sum(steps)


def in_other_file() -> int:
    steps = [6]
    return sum(steps)


def in_trigger() -> int:
    steps = [7, 8]
    return sum(steps)


def only_victims() -> int:
    steps = [9, 10]
    return sum(steps)


def in_child() -> int:
    steps = [11]
    return sum(steps)


def before_kill() -> int:
    steps = [12, 13]
    return sum(steps)


def before_hang() -> int:
    steps = [14]
    return sum(steps)
