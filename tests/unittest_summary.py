"""The closing line of every Python test suite: "N passed, N failed, N skipped".

A skipped test is reported as skipped, never as passed; a test whose
subtests failed counts once as failed."""
import sys
import unittest


def main():
    result = unittest.main(exit=False, verbosity=2).result
    failed = {id(test) for test, _ in result.failures + result.errors}
    failed |= {id(test) for test in result.unexpectedSuccesses}
    skipped = len(result.skipped)
    passed = result.testsRun - len(failed) - skipped
    print(f"{passed} passed, {len(failed)} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)
