"""Known time in known functions, for the Python time samples: a sleep (a
native call that releases the GIL), a loop of pure Python calling a
builtin, a loop of pure bytecode, a hash of a large buffer (one native call
holding the GIL), each timed by the program's own clock; prints
{function: seconds} as JSON. Standard library only: runs on every Python."""
import hashlib
import json
import time

SPAN = 0.25


def sleeper():
    time.sleep(SPAN)


def spinner():
    end = time.perf_counter() + SPAN
    while time.perf_counter() < end:
        pass


def counter():
    total = 0
    for i in range(1500000):
        total += i
    return total


def hasher():
    data = b"x" * (64 << 20)
    for _ in range(3):
        hashlib.sha256(data).digest()


def main():
    spent = {}
    for function in (sleeper, spinner, counter, hasher):
        start = time.perf_counter()
        function()
        spent[function.__name__] = time.perf_counter() - start
    print(json.dumps(spent))


main()
