"""A training loop fed through a relay thread, as a DataLoader with
pin_memory=True is: a worker process writes each batch to a pipe (a
4-byte length, then the message), a relay thread polls the pipe, reads the
batch and hands it to the main thread through a queue.Queue. The worker
makes a batch every PERIOD_MS, the main thread computes COMPUTE_MS on each:
the loop waits for data most of the time. With EPOCHS, each epoch has a
worker and a relay thread of its own, as a DataLoader without persistent
workers has.

Usage: relay_loop.py STEPS PERIOD_MS COMPUTE_MS [EPOCHS]"""
import os
import queue
import select
import struct
import sys
import threading
import time

steps, period_ms, compute_ms = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 1


def worker(write_end):
    for i in range(steps):
        time.sleep(period_ms / 1000)
        message = bytes(64 * 1024)
        os.write(write_end, struct.pack("<I", len(message)))
        os.write(write_end, message)
    os._exit(0)


def relay(read_end, batches):
    for _ in range(steps):
        select.select([read_end], [], [])
        (size,) = struct.unpack("<I", os.read(read_end, 4))
        data = b""
        while len(data) < size:
            data += os.read(read_end, size - len(data))
        batches.put(data)


# each epoch its own worker and relay thread, as a DataLoader without persistent workers
for epoch in range(epochs):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        worker(write_end)
    os.close(write_end)
    batches = queue.Queue()
    thread = threading.Thread(target=relay, args=(read_end, batches), name="pin_memory")
    thread.start()
    for step in range(steps):
        batches.get()
        end = time.perf_counter() + compute_ms / 1000
        while time.perf_counter() < end:
            pass
    thread.join()
    os.close(read_end)
    os.waitpid(pid, 0)
