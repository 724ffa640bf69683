"""The pytest plugin: options and settings, pooled device workers, a record per test.

``hooks`` is the module the ``pytest11`` entry point loads; ``fixtures`` holds what a
test asks for (``worker``, ``devices``); ``options`` turns the command line into settings.
"""
