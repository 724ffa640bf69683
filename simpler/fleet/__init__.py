"""From one host to a fleet: a CI matrix planned by device size on measured durations."""
