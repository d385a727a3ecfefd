"""A training-like loop that dies the way the first argument says, printing
its own account first: "pid P", each step as "step N T" (T: its
CLOCK_MONOTONIC time in ns) and, for a worker that dies, "worker_died P T".

  healthy        runs 20 steps and ends well (after a helper that exits 1)
  sigkill        SIGKILL to itself after 20 steps and 0.5 s in spin()
  exit3          os._exit(3) after 20 steps and 2000 lines of stderr
  raise          an uncaught exception after 20 steps
  segv           a read of address 0 after 20 steps and 0.5 s in spin()
  term           after 20 steps, spins until another process sends it SIGTERM
  hang           after 20 steps, blocks in a futex wait made as a bare system call (no
                 hook sees it: a deadlock) until SIGTERM; says "waiting C", C its main
                 thread's CPU time in ns by its own clock
  reaped         a child it forks SIGKILLs itself; the parent reaps it (os.waitpid,
                 printing "child P S" with the status), runs 20 steps, ends well
  unreaped       the same, but the parent never reaps it
  worker_killed  a DataLoader worker SIGKILLs itself when asked for sample 20;
                 PyTorch then raises in the main process
  worker_oom     a DataLoader worker keeps 40 MiB of every sample it makes
                 (run it in a memory cgroup: the OOM killer takes it)
  loop_term      a DataLoader loop of matrix products, printing each step, until
                 another process sends it SIGTERM
"""
import ctypes
import os
import signal
import subprocess
import sys
import time


def say(*words):
    # one write: the workers and the main process share the pipe, and a worker may be
    # killed in the middle of a buffered line
    os.write(1, (" ".join(str(w) for w in words) + "\n").encode())


def spin(seconds):
    """Pure Python work on one line, for the profiler's samples to find it there."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # last seen
        pass


def steps(n):
    x = 0
    for i in range(1, n + 1):
        x += sum(j * j for j in range(20000))
        time.sleep(0.01)
        say("step", i, time.monotonic_ns())
    return x


def loop_until_stopped():
    """A step is said as finished as it asks for the next batch, where the profiler's steps
    end; SIGTERM is held back from the word until the next batch came, so that a stop lands
    inside a step (cut: not said, not counted), never between its word and its end. It is
    held back in every thread: blocked before torch's and the DataLoader's threads start (they inherit
    the mask), let through in the main thread only while it computes. Blocked in the main
    thread alone, it reached a queue's feeder thread in the middle of a batch's receipt."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # before any thread of torch's
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    weight = torch.randn(256, 256)
    loader = DataLoader(TensorDataset(torch.randn(1_000_000, 256)), batch_size=32, num_workers=1)
    batches = iter(loader)
    (batch,) = next(batches)
    for n in range(1, 1_000_000):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        for _ in range(20):
            batch = torch.tanh(batch @ weight)
        # never a step under the step finder's 2 ms between two receipts: a 1.4 ms step whose
        # index post went unrecorded merged two receipts into one (70 steps found of 71 said);
        # that finder's limit is not what this job tests
        time.sleep(0.005)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        say("step", n, time.monotonic_ns())
        (batch,) = next(batches)


def worker_killed(keep_mib=0):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Samples(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            info = torch.utils.data.get_worker_info()
            if info.id == 0 and keep_mib:
                kept.append(bytearray(keep_mib << 20))  # zero pages, written: resident
                kept[-1][::4096] = b"x" * (len(kept[-1]) // 4096)
                say("worker_kept", os.getpid(), len(kept) * keep_mib)
            elif info.id == 0 and i >= 20:
                say("worker_died", os.getpid(), time.monotonic_ns())
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(0.02)
            return torch.full((4,), float(i))

    kept = []
    loader = DataLoader(Samples(), batch_size=2, num_workers=2)
    for n, batch in enumerate(loader, 1):
        batch.sum().item()
        say("step", n, time.monotonic_ns())


mode = sys.argv[1]
say("pid", os.getpid())
if mode == "loop_term":
    loop_until_stopped()
if mode in ("worker_killed", "worker_oom"):
    worker_killed(40 if mode == "worker_oom" else 0)
    sys.exit(0)
if mode == "healthy":
    subprocess.run(["false"])  # a helper's failure is no death of the job
if mode in ("reaped", "unreaped"):
    child = os.fork()
    if child == 0:
        spin(0.3)
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "reaped":
        _, status = os.waitpid(child, 0)
        say("child", child, status)
    else:
        time.sleep(0.5)  # long enough for it to die; a zombie from then on
        say("child", child, "unreaped")
steps(20)
if mode in ("sigkill", "segv"):
    spin(0.5)
if mode == "sigkill":
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "exit3":
    for i in range(2000):  # more than the 4 KiB kept: the ring wraps
        os.write(2, f"warning {i}: step skipped\n".encode())
    os._exit(3)
elif mode == "raise":
    raise RuntimeError("the loss went NaN: \x1b[31mnan\x1b[0m")  # in colour, as logs are
elif mode == "segv":
    ctypes.string_at(0)  # the fault
elif mode == "hang":
    say("waiting", time.thread_time_ns())
    libc = ctypes.CDLL(None, use_errno=True)
    word = ctypes.c_int(0)
    while True:  # FUTEX_WAIT (0) for a wake that never comes
        libc.syscall(202, ctypes.byref(word), 0, 0, None)
elif mode == "term":
    say("waiting")
    while True:
        spin(0.1)  # until terminated
