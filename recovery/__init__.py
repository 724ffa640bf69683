"""recovery: a pooled device worker's life, from healthy through poisoned to rebuilt or skipped.

PYTEST_DONT_REWRITE (as the ``simpler`` package says why).
"""

from recovery.lifecycle import PooledWorker, WorkerKey
from recovery.policy import poisons_worker
from recovery.table import STATES, TRANSITIONS

__all__ = ["STATES", "TRANSITIONS", "PooledWorker", "WorkerKey", "poisons_worker"]
