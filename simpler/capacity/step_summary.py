"""The capacity report in GitHub's step summary: where it goes, and the notice when cut."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from simpler.capacity.model import InputError
from simpler.ci import step_summary
from simpler.ci.step_summary import STEP_SUMMARY_LIMIT, StepSummaryUnwritable
from simpler.ci.step_summary import fit as fit_within

__all__ = [
    "CUT_NOTICE",
    "STEP_SUMMARY_LIMIT",
    "append_step_summary",
    "fit",
    "step_summary_path",
]

CUT_NOTICE = (
    "> **Note:** the capacity report was cut here to stay under GitHub's 1 MiB step summary "
    "limit; `simpler capacity --format json` gives all of it."
)
_ENV = "GITHUB_STEP_SUMMARY"


def step_summary_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The file GitHub Actions reads the step summary from; InputError outside Actions."""
    target = environ.get(_ENV)
    if not target:
        raise InputError(f"--step-summary: ${_ENV} is not set (it is set inside GitHub Actions)")
    return Path(target)


def append_step_summary(path: Path, markdown: str) -> bool:
    """Append ``markdown`` to the step summary file; True when it had to be cut."""
    try:
        return step_summary.append_step_summary(path, markdown, CUT_NOTICE)
    except StepSummaryUnwritable as error:
        raise InputError(f"--step-summary: {error}") from None


def fit(markdown: str, budget: int) -> str:
    """``markdown`` if it fits in ``budget`` bytes, else its first whole lines and the notice."""
    return fit_within(markdown, budget, CUT_NOTICE)
