"""What a run and a report need of a split suite: the listing of a collected suite, its
balanced shards (``--shard I/N``), a plan file read back, the share one planned job runs
(``--plan F --job ID``) and the planned jobs a merged report is missing.

Below the orchestrator, which runs a share, and the fleet, which plans one: both use it,
and neither imports the other for it.
"""
