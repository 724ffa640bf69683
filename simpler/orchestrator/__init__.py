"""A run: its context and identity, signals, the l2/resource/retry/report phases.

``run`` sequences the phases; ``l2``, ``resource``, ``retry`` and ``report_phase`` are
one phase each; ``collection`` and ``sharding`` decide what runs before anything
starts; ``pytest_args`` builds and reads every pytest command line a phase starts.
"""
