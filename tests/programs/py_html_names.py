"""Names that are markup, through the ways a name reaches the HTML report:
a file the job opens, a thread it names, a range it records through the
profiler's control API. Each would change the page, or run a script, if
the report inserted it as it is."""
import ctypes
import os
import sys
import threading

PAYLOAD = "<img src=x onerror=\"document.body.setAttribute('data-pwned', 1)\">"
SCRIPT = "<script>document.body.setAttribute('data-pwned', 2)</script>"

work = sys.argv[1]
path = os.path.join(work, PAYLOAD + ".bin")
for _ in range(3):
    with open(path, "wb") as f:
        f.write(b"x" * 4096)
    with open(path, "rb") as f:
        f.read()

libc = ctypes.CDLL(None)


def named_thread():
    libc.prctl(15, b"<b>pwned</b>", 0, 0, 0)  # PR_SET_NAME
    for _ in range(50):
        with open(path, "rb") as f:
            f.read()


thread = threading.Thread(target=named_thread)
thread.start()
thread.join()
libc.profinject_now.restype = ctypes.c_uint64
start = libc.profinject_now()
for _ in range(30):
    libc.profinject_range(SCRIPT.encode(), ctypes.c_uint64(start), ctypes.c_uint64(0))
print("ok")
