"""Threads named in Python (threading.Thread(name=...)), which the kernel
never hears of; the main thread keeps running Python meanwhile, as a
training loop does. Prints {name: native thread id} as JSON."""
import json
import threading
import time

ids = {}


def work(seconds):
    ids[threading.current_thread().name] = threading.get_native_id()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        time.sleep(0.001)


threads = [threading.Thread(target=work, args=(0.6,), name="loader-thread"),
           threading.Thread(target=work, args=(0.4,), name="Thread-7 (_pin_memory_loop)")]
for t in threads:
    t.start()
while any(t.is_alive() for t in threads):
    sum(range(1000))
print(json.dumps(ids))
