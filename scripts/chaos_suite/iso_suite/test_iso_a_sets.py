"""Contamination, part one: a test that leaves its process initialised."""

import iso_state as state


def test_initialises_the_process_group():
    state.initialised = True  # as init_process_group does, once per process
