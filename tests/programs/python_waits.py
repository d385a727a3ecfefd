"""Waits in Python's own locking, each about 100-200 ms long:
a queue.Queue get with a timeout (a threading lock: sem_clockwait) and a
multiprocessing.Lock held by another process (sem_timedwait)."""
import multiprocessing
import queue
import threading
import time

items = queue.Queue()
got = []
consumer = threading.Thread(target=lambda: got.append(items.get(timeout=5)))
consumer.start()
time.sleep(0.1)
items.put("item")
consumer.join()


def hold(lock, held):
    with lock:
        held.set()
        time.sleep(0.2)


context = multiprocessing.get_context("fork")
lock, held = context.Lock(), context.Event()
holder = context.Process(target=hold, args=(lock, held))
holder.start()
held.wait(5)
assert lock.acquire(timeout=5)
lock.release()
holder.join()
print("done", got)
