"""Place device-needing jobs on a device pool: pure policies, a virtual clock, a real executor."""
