"""A training loop that only computes on the CPU: a small model's forward and
backward pass on a fixed batch, with PyTorch's intra-op pool of 2 threads
(torch.set_num_threads(2)), no DataLoader. With --loaded, two busy processes
(not traced) share the job's CPUs, so its threads often wait for one.

Prints as JSON, for the loop alone and for the process's whole life (from its
start in /proc/self/stat): the main thread's own CPU clock
(time.thread_time_ns), the whole process's CPU (os.times: the main thread and
the intra-op threads that computed for it) and the wall time
(time.monotonic_ns; CLOCK_BOOTTIME for the life), and for the life the main
thread's time ready to run and waiting for a CPU (the kernel's run delay, in
/proc/self/task/PID/schedstat), and its time blocked before the intra-op
threads started (neither on a CPU nor waiting for one: no pool computed
then).

With --torch-profile, the loop runs inside torch.profiler instead (not
traced) and prints its operators' self CPU time: {"self_cpu_us": {op: us}}.

Usage: compute_loop.py STEPS [--loaded] [--torch-profile]"""
import json
import os
import subprocess
import sys
import time

import torch

steps = int(sys.argv[1])
hogs = []
if "--loaded" in sys.argv:
    HOG = "while True:\n    pass\n"
    untraced = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    hogs = [subprocess.Popen([sys.executable, "-c", HOG], env=untraced) for _ in range(2)]

torch.set_num_threads(2)
torch.manual_seed(0)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(256, 256) for _ in range(4))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def train_step(model, optimizer, batch):
    optimizer.zero_grad()
    loss = model(batch).square().mean()
    loss.backward()
    optimizer.step()


def life_ns():
    """how long the process has run: CLOCK_BOOTTIME less its start time"""
    with open("/proc/self/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    boot = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    return boot - start_ticks * 10**9 // os.sysconf("SC_CLK_TCK")


def run_delay_ns():
    with open(f"/proc/self/task/{os.getpid()}/schedstat") as f:
        return int(f.read().split()[1])


def process_cpu_ns():
    t = os.times()
    return int((t.user + t.system) * 1e9)


if __name__ == "__main__":
    model = Model()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch = torch.randn(128, 256)
    # until the pool's threads start, time the main thread is neither on a CPU nor waiting
    # for one is blocked (imports reading files and faulting pages in): no pool computed
    blocked_before_pool = life_ns() - time.thread_time_ns() - run_delay_ns()
    if "--torch-profile" in sys.argv:
        train_step(model, optimizer, batch)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(steps):
                train_step(model, optimizer, batch)
        print(json.dumps({"self_cpu_us": {e.key: e.self_cpu_time_total
                                          for e in prof.key_averages()}}), flush=True)
        os._exit(0)
    try:
        train_step(model, optimizer, batch)  # the pool's threads start here
        wall0, main0, cpu0 = time.monotonic_ns(), time.thread_time_ns(), process_cpu_ns()
        for _ in range(steps):
            train_step(model, optimizer, batch)
        wall1, main1, cpu1 = time.monotonic_ns(), time.thread_time_ns(), process_cpu_ns()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(json.dumps({"steps": steps, "wall_ns": wall1 - wall0, "main_cpu_ns": main1 - main0,
                      "process_cpu_ns": cpu1 - cpu0, "life_ns": life_ns(),
                      "life_main_cpu_ns": time.thread_time_ns(),
                      "life_process_cpu_ns": process_cpu_ns(),
                      "life_run_delay_ns": run_delay_ns(),
                      "life_blocked_before_pool_ns": blocked_before_pool}), flush=True)
    os._exit(0)  # the figures end here: no interpreter teardown after them
