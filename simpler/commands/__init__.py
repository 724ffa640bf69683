"""One module per command of ``simpler``: its parser, its options read into a typed class,
and its entry, which takes that class and never argparse's Namespace. The typed class lives
beside the code that reads it (a run's in simpler/orchestrator/options.py, the capacity
report's in simpler/capacity/options.py); the command's module builds it.
"""
