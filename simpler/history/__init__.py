"""The history of many runs: an SQLite store of every run's verdicts, flake scores that tell a
device fault from a flaky test, the quarantine's suggestions and durations for the plan."""
