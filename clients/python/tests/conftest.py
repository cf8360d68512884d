"""What every run of these tests says: which copy of the client ran, and the glue's size."""
import os
import sys

try:
    import sagaboard
except ImportError:  # not installed: the checkout's copy (pip install clients/python to test the installed one)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
    import sagaboard

import trip_agent


def pytest_report_header(config):
    return f"sagaboard client: {sagaboard.__file__}"


def pytest_terminal_summary(terminalreporter):
    code, total = trip_agent.glue_lines()
    terminalreporter.write_line(f"sagaboard glue: {code} lines for four tools ({total} with blank lines), client {sagaboard.__file__}")
