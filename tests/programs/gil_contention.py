"""Two Python threads spinning on pure-Python work for about a second:
they hand the GIL back and forth every switch interval (5 ms).

Each thread prints its kernel thread id and how long it slept while
spinning, by the kernel's own accounting (wall time less time on a CPU
less time ready but waiting for one). Spinning threads sleep only to wait
for the GIL, so that is the truth for the GIL waits a trace should hold,
however busy the machine is. A wait also lasts until the woken thread
gets a CPU back, so the time off a CPU bounds it from above."""
import threading
import time


def schedstat():
    """(ns on a CPU, ns ready to run but waiting for a CPU) of this thread"""
    with open("/proc/thread-self/schedstat") as f:
        on_cpu, run_delay, _ = f.read().split()
    return int(on_cpu), int(run_delay)


def spin(deadline, results, i):
    wall0 = time.monotonic_ns()
    cpu0, delay0 = schedstat()
    n = 0
    while time.monotonic() < deadline:
        n += 1
    cpu1, delay1 = schedstat()
    wall1 = time.monotonic_ns()
    off_cpu = (wall1 - wall0) - (cpu1 - cpu0)
    results[i] = (threading.get_native_id(), off_cpu - (delay1 - delay0), off_cpu)


deadline = time.monotonic() + 1.0
results = [None, None]
threads = [threading.Thread(target=spin, args=(deadline, results, i)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for tid, slept_ns, off_cpu_ns in results:
    print(f"thread {tid} slept {slept_ns} off-cpu {off_cpu_ns}")
print("done")
