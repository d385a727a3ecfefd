"""A job with its own signal handling, for the profiler to leave alone.

Each mode sets up its handling, starts a helper program through Python's
subprocess (a vfork child that resets every handler before its exec), says
"ready PID" and waits for a line on standard input; the test signals it in
between, then sends the line. What the job then says is its own account:

  handler   a Python SIGTERM handler: "handled 15" (the signals its handler ran for)
  ignored   SIGTERM set to SIG_IGN: "survived"
  sigint    Python's own SIGINT handling: KeyboardInterrupt, as at a terminal
  worker    a forked child installs its own SIGTERM handler and says "ready PID" for
            itself; the parent waits for it and says "worker status S"
  before    like handler, for a process the profiler attaches to later: the handler
            exists before the profiler's own; it waits for two lines and says
            "handled ..." after each
"""
import os
import signal
import subprocess
import sys


def say(*words):
    os.write(1, (" ".join(str(w) for w in words) + "\n").encode())


def wait_for_line():
    sys.stdin.readline()


mode = sys.argv[1]
got = []
if mode in ("handler", "before"):
    signal.signal(signal.SIGTERM, lambda sig, frame: got.append(sig))
elif mode == "ignored":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.run(["true"], check=True)  # a vfork child resets every handler to SIG_DFL

if mode == "worker":
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, lambda sig, frame: got.append(sig))
        subprocess.run(["true"], check=True)
        say("ready", os.getpid())
        wait_for_line()
        say("worker handled", *got)
        os._exit(0 if got else 1)
    _, status = os.waitpid(child, 0)
    say("worker status", status)
    sys.exit(0)

say("ready", os.getpid())
if mode == "before":
    wait_for_line()
    say("handled", *got)
wait_for_line()
if mode in ("handler", "before"):
    say("handled", *got)
elif mode == "ignored":
    say("survived")
