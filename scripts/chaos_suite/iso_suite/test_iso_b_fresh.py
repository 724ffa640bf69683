"""Contamination, part two: a test that needs a process nothing initialised."""

import iso_state as state


def test_initialises_it_again():
    assert not state.initialised, "the process group is initialised twice"
