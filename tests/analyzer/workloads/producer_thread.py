"""A main thread that takes ITEMS items from a queue.Queue, each put there by
one producer thread after PERIOD seconds of either sleeping (time.sleep) or
computing (a loop of pure Python, which holds the GIL).

    producer_thread.py sleep|compute ITEMS PERIOD

Prints, as JSON, the producer's own figures: its native thread id, and the
seconds it spent in time.sleep (perf_counter around each call) and on a CPU
(time.thread_time); and the main thread's: its seconds in the queue's get and
on a CPU."""
import json
import queue
import sys
import threading
import time

mode, items, period = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
handed = queue.Queue()
figures = {}


def produce():
    slept, cpu_start = 0.0, time.thread_time()
    for item in range(items):
        if mode == "sleep":
            before = time.perf_counter()
            time.sleep(period)
            slept += time.perf_counter() - before
        else:
            end = time.perf_counter() + period
            while time.perf_counter() < end:
                pass
        handed.put(item)
    figures.update(tid=threading.get_native_id(), sleep_s=slept,
                   cpu_s=time.thread_time() - cpu_start)


producer = threading.Thread(target=produce, name="producer")
producer.start()
waited = 0.0
for _ in range(items):
    before = time.perf_counter()
    handed.get()
    waited += time.perf_counter() - before
producer.join()
figures.update(main_wait_s=waited, main_cpu_s=time.thread_time())
print(json.dumps(figures))
