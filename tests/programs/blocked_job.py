"""A job whose threads block for good, until it is stopped: its main thread in
a lock it never gets (in blocked_in_lock), a thread asleep in its own function
and one reading a pipe nobody writes. Once all three are on their way it
prints "blocked PID SLEEPER_TID READER_TID" (native thread ids), then blocks
itself. Runs on Python 3.8 on, without PyTorch."""
import os
import threading
import time


def sleeper():
    time.sleep(3600)  # the sleeper blocks here


def reader(fd):
    os.read(fd, 1)  # the reader blocks here


def blocked_in_lock(lock):
    lock.acquire()  # the main thread blocks here


def main():
    readable, _ = os.pipe()
    threads = [threading.Thread(target=sleeper, daemon=True),
               threading.Thread(target=reader, args=(readable,), daemon=True)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # both in their calls
    print("blocked", os.getpid(), *(thread.native_id for thread in threads), flush=True)
    lock = threading.Lock()
    lock.acquire()
    blocked_in_lock(lock)


main()
