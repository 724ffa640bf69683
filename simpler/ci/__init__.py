"""Output for CI systems: GitHub Actions groups, fences, annotations and the step summary."""
