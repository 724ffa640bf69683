"""Code coverage of a whole run: every process measured, combined once, nothing lost unsaid.

``options`` reads what the user asked for (``simpler run --cov``, or pytest-cov's spellings
after ``--``); ``process_env`` starts coverage.py in each process the run starts;
``in_process`` is what a measured pytest process does (its record, per-test saves and
contexts); ``combine`` merges the run's data files and names the processes whose data is
missing or partial; ``reports`` writes the reports and the summary's coverage line.
"""
