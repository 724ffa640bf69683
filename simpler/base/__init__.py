"""Generic helpers any room of simpler may use, importing nothing of simpler's: files written
whole or not at all, TOML text, pytest node ids, and what Python 3.11 has that 3.10 lacks."""
