"""The functions the span tests mark (PROFINJECT_SPANS): each does a little work of
its own, so that its calls last long enough to compare with the caller's clock."""
import time


def handle(seconds):
    """a request: waits, then computes a little"""
    time.sleep(seconds)
    return sum(range(2000))


KEPT = []


def grow(mib):
    """keeps @mib MiB more, each page written (resident): a request that leaks"""
    kept = bytearray(mib << 20)
    for i in range(0, len(kept), 4096):
        kept[i] = 1
    KEPT.append(kept)
    time.sleep(0.005)


def tiny():
    """too short for the thread's CPU clock to be read every call"""
    return 1


def outer(times):
    """calls inner() @times times: spans inside spans"""
    return [inner(i) for i in range(times)]


def inner(i):
    time.sleep(0.0005)
    return i


def boom():
    """ends by an exception"""
    time.sleep(0.001)
    raise ValueError("the caller catches it")


class Server:
    def serve(self, count):
        total = 0
        for i in range(count):
            total += i * i
        return total
