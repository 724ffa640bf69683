"""Process plumbing: starting, watching and reaping child processes, the warm process children
fork from, device locks, and the executor that runs jobs under a placement policy of
simpler.scheduler."""
