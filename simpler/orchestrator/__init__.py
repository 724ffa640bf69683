"""A run: its context and identity, signals, the l2/resource/retry/report phases.

``run`` sequences the phases; ``l2``, ``resource``, ``retry`` and ``report_phase`` are
one phase each; ``collection`` lists the suite before anything starts (simpler/split
splits it into shards and planned jobs); ``pytest_args`` builds and reads every pytest
command line a phase starts.
"""
