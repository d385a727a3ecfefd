"""Calls the marked functions of span_targets from the main thread and two threads,
timing each call by its own clock (perf_counter around it). Prints one JSON line: for
each function, its calls' durations in seconds in call order, by native thread id; no
PyTorch, so any Python 3.8 to 3.13 runs it. Each timed call's thread CPU time too
(thread_time around it), and whether the thread was preempted during it (its involuntary
context switches: another process took its CPU, and the two clocks may be apart by that
wait). tiny() is called untimed, 3,000 times; grow() 8 times, each keeping 2 to 9 MiB
more, with the process's resident memory read from /proc/self/statm around each call."""
import gc
import json
import os
import resource
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import span_targets  # noqa: E402
from span_targets import handle  # noqa: E402  (bound by name: marked all the same)

timed = {}
cpu = {}  # the thread's CPU time of each call, by thread_time()
preempted = {}  # whether the thread was made to wait for a CPU during each call


def switches():
    """the calling thread's involuntary context switches so far"""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw


def timing(name, call, *args):
    start_switches = switches()
    start, start_cpu = time.perf_counter(), time.thread_time()
    try:
        return call(*args)
    finally:
        took, took_cpu = time.perf_counter() - start, time.thread_time() - start_cpu
        tid = str(threading.get_native_id())
        timed.setdefault(name, {}).setdefault(tid, []).append(took)
        cpu.setdefault(name, {}).setdefault(tid, []).append(took_cpu)
        preempted.setdefault(name, {}).setdefault(tid, []).append(switches() != start_switches)


def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE")


def serve_some(server, times):
    for _ in range(times):
        timing("Server.serve", server.serve, 20000)


def main():
    # a collection set off by the call's arguments would fall between the two clocks
    gc.disable()
    for i in range(30):
        timing("handle", handle, 0.001 + 0.0002 * (i % 5))
    for _ in range(5):
        timing("outer", span_targets.outer, 3)
    try:
        timing("boom", span_targets.boom)
    except ValueError:
        pass
    for _ in range(3000):
        span_targets.tiny()
    grown = []
    for i in range(8):
        before = resident()
        span_targets.grow(2 + i)
        grown.append(resident() - before)
    server = span_targets.Server()
    threads = [threading.Thread(target=serve_some, args=(server, 6)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"pid": os.getpid(), "main_tid": threading.get_native_id(),
                      "timed": timed, "cpu": cpu, "preempted": preempted, "tiny_calls": 3000,
                      "grown": grown, "kept": [(2 + i) << 20 for i in range(8)]}))


if __name__ == "__main__":
    main()
