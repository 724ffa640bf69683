"""Each ``<testsuite>`` of a JUnit file checked against the Surefire 3.0 test-report schema.

The schema (``surefire_test_report_3_0.xsd`` beside this file) is Surefire's own structure;
the only attributes allowed beyond it are the ones ``pytest --junitxml`` itself writes, so
that simpler's JUnit can be both pytest's and Surefire's.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema

SCHEMA = Path(__file__).with_name("surefire_test_report_3_0.xsd")
# (element, attribute) pairs pytest writes that Surefire 3.0 does not define.
PYTEST_EXTRAS = frozenset(
    {("testsuite", "timestamp"), ("testsuite", "hostname"), ("skipped", "type")}
)


@functools.cache
def _schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SCHEMA))


def surefire_violations(path: Path) -> list[str]:
    """What in each suite of the file breaks the schema; empty when every suite is valid."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    problems = []
    for suite in suites:
        for element in suite.iter():
            for element_tag, attribute in PYTEST_EXTRAS:
                if element.tag == element_tag:
                    element.attrib.pop(attribute, None)
        problems += [str(error.reason) for error in _schema().iter_errors(suite)]
    return problems
