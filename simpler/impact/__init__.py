"""The impact map: which code each test ran, and which tests a change can break."""
