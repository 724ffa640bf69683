"""What the coverage cells measure (``--cov=measured``): small, and the same on every run."""
