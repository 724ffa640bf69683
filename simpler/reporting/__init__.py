"""The report file and what is read from it: verdicts, the summary, JUnit, the timeline.

The lowest layer above ``simpler``'s own shared names: it imports no other subpackage.
"""
