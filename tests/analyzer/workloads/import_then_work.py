"""Imports a module whose top-level code computes for @import_s seconds, then
computes for @work_s seconds in its own function work(), reading a data file
of its own meanwhile. Prints as JSON how long each part took by
time.monotonic_ns, and the data file's path.

Usage: import_then_work.py IMPORT_S WORK_S"""
import json
import os
import sys
import tempfile
import time

import_s, work_s = float(sys.argv[1]), float(sys.argv[2])
modules = tempfile.mkdtemp()
with open(os.path.join(modules, "slow_module.py"), "w") as f:
    f.write("import time\n"
            f"end = time.perf_counter() + {import_s}\n"
            "while time.perf_counter() < end:\n"
            "    pass\n")
sys.path.insert(0, modules)
data = os.path.join(modules, "rows.bin")
with open(data, "wb") as f:
    f.write(os.urandom(1 << 20))


def work(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        with open(data, "rb") as f:
            f.read(4096)


start = time.monotonic_ns()
import slow_module  # noqa: E402,F401
imported = time.monotonic_ns()
work(work_s)
worked = time.monotonic_ns()
print(json.dumps({"import_ns": imported - start, "work_ns": worked - imported, "data": data}))
