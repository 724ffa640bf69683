"""Turn ``nox -l --json`` into the CI job matrix: one entry per session, sharded where asked.

    nox -l --json -t ci | python scripts/ci_matrix.py --shards st_a5=2,st_a2a3=2

prints ``matrix={"include": [{"session": "tests", "shard": ""}, ...]}``, the line a
GitHub Actions step appends to ``$GITHUB_OUTPUT``.
"""

from __future__ import annotations

import argparse
import json
import sys


def _shard_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in filter(None, text.split(",")):
        name, _, count = item.partition("=")
        if not count.isdigit() or int(count) < 1:
            raise SystemExit(f"ci_matrix: bad --shards item {item!r}: expected SESSION=N")
        counts[name] = int(count)
    return counts


def matrix(sessions: list[dict[str, object]], shards: dict[str, int]) -> dict[str, object]:
    include = []
    for entry in sessions:
        name = str(entry["session"])
        count = shards.get(name, 1)
        for index in range(1, count + 1):
            include.append({"session": name, "shard": f"{index}/{count}" if count > 1 else ""})
    return {"include": include}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", default="", help="SESSION=N,... sessions to split N ways")
    args = parser.parse_args()
    try:
        sessions = json.load(sys.stdin)
    except ValueError as error:
        print(f"ci_matrix: stdin is not nox -l --json output: {error}", file=sys.stderr)
        return 2
    if not sessions:
        print("ci_matrix: nox listed no sessions: the matrix would be empty", file=sys.stderr)
        return 2
    print("matrix=" + json.dumps(matrix(sessions, _shard_counts(args.shards))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
