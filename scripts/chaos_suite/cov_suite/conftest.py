"""The suite of the coverage cells (scripts/chaos_coverage.py), collected only when they run
it (CHAOS_COVERAGE=1): the chaos scenarios, which run all of scripts/chaos_suite, never see it."""

import os

collect_ignore_glob = [] if os.environ.get("CHAOS_COVERAGE") == "1" else ["*"]
