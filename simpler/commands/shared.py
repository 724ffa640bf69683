"""What the parsers of ``simpler run`` and ``simpler report`` share: the help of their summary
options, and their coverage options read back into a typed ``CovRequest``."""

from __future__ import annotations

import argparse

from simpler.contract.settings import QUARANTINE_ENV
from simpler.coverage.options import CovRequest

__all__ = ["NOTHING_RAN_HELP", "QUARANTINE_HELP", "cov_request"]

NOTHING_RAN_HELP = "exit 1 when no test ran (every test skipped, or none selected)"
QUARANTINE_HELP = f"test quarantine (default: ${QUARANTINE_ENV} or ./simpler-quarantine.toml)"


def cov_request(namespace: argparse.Namespace) -> CovRequest:
    """The coverage options add_cov_arguments added; ``simpler report`` has no --cov."""
    sources = getattr(namespace, "cov", None)
    return CovRequest(
        cov=None if sources is None else tuple(sources),
        cov_report=tuple(namespace.cov_report or ()),
        cov_fail_under=namespace.cov_fail_under,
        cov_context=getattr(namespace, "cov_context", None),
        cov_config=getattr(namespace, "cov_config", None),
        cov_branch=getattr(namespace, "cov_branch", False),
        no_cov=getattr(namespace, "no_cov", False),
    )
