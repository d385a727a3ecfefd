"""Two Python threads spinning on pure-Python work for about a second:
they hand the GIL back and forth every switch interval (5 ms)."""
import threading
import time


def spin(deadline):
    n = 0
    while time.monotonic() < deadline:
        n += 1
    return n


deadline = time.monotonic() + 1.0
threads = [threading.Thread(target=spin, args=(deadline,)) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("done")
