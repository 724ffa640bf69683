"""The capacity report: how many device slots a suite needs, per size of runner.

Stages, one module each, in the order the data flows:

- ``registry`` reads and validates exported registrations (JSON list or JSON Lines);
- ``collect`` reads this project's own scene tests and their ``device_count`` markers;
  ``collect_pytest`` collects through pytest a suite whose conftest sizes its tests with
  the ``pytest_simpler_device_count`` hook;
- ``sizing`` derives the device count from a suite name;
- ``aggregate`` adds registrations up per device count, backend, suite and schedule
  (per commit or nightly);
- ``render`` writes the result as markdown, ``render_json`` as JSON;
- ``step_summary`` appends markdown to GitHub's step summary within its size limit;
- ``pool_spec`` reads ``--pool``: one pool, or one per backend;
- ``pool`` simulates each pool with the scheduler's dry run;
- ``report`` runs them for what ``simpler capacity`` asked (``options``; the command line is
  read in simpler/commands/capacity.py).

Nothing here imports cppyy, numpy or ``simpler.runner``: the report never touches a device.
"""
