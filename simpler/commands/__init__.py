"""One module per command of ``simpler`` that the top-level parser parses: its parser, its
options read into a typed class, and its entry, which takes that class and never argparse's
Namespace. The typed class lives beside the code that reads it (a run's in
simpler/orchestrator/options.py); the command's module builds it. ``capacity``, ``history``
and ``plan`` parse their own command lines in their packages' ``command.py``.
"""
