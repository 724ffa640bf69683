"""The capacity report: how many device slots a suite needs, per size of runner.

A module per stage, from the registrations read to the pools simulated, run by ``report``
(docs/architecture.md, "The packages"). Nothing here imports cppyy, numpy or
``simpler.runner``: the report never touches a device.
"""
