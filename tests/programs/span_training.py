"""Training loops with no DataLoader, timed by their own clock. Prints one JSON line.

  accumulate  AdamW, 3 backward calls (micro-batches) per optimizer step
  manual_sgd  no optimizer: parameters updated by hand after each backward
  evaluate    SGD with a teacher's no_grad forward inside every step, and every 10 steps
              a no_grad evaluation loop of 100 forwards, timed by its own clock (not a
              step: inside the step that follows, listed in "holding")
  batches     no optimizer, no backward: a no_grad model over a DataLoader's batches (2
              workers, 2 epochs), then two DataLoaders zipped, then a loop that takes one
              batch more than it uses and leaves
  compile     torch.compile'd model whose batch size changes: dynamo's own counters,
              graph breaks and compiled frames, and its metrics' reasons for compiling
              again

"ends" are the perf_counter readings as each step's last call ends (the optimizer step,
read by its own post-hook; the backward with manual SGD, right after it returned);
"preempted", for each, whether the thread was made to wait for a CPU (an involuntary
context switch) since the one before. With batches, "epochs": for each loop, the
readings right before each next() call (the last one's ended the epoch, or took the
batch not used) and, in "next_preempted", whether the thread waited for a CPU inside
each of those calls; "waits" each batch's next() by the job's clock (None where zipped:
the job's clock then holds zip's own calls). With accumulate, "backward_ends" the
readings right after each step's backward calls returned, one list a step: a
micro-batch lasts from the step's start (the one before's end) or the micro-batch
before's to its own."""
import gc
import json
import os
import resource
import sys
import time

import torch


def switches():
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw


class Clock:
    """the job's own step ends, and whether the thread waited for a CPU in each step"""

    def __init__(self):
        self.ends, self.preempted, self.switches = [], [], switches()

    def end(self):
        self.ends.append(time.perf_counter())
        now = switches()
        self.preempted.append(now != self.switches)
        self.switches = now


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 10))


def accumulate(steps=20, micro=3):
    net = model()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    clock = Clock()
    # read as the step ends, by the optimizer's own post-hook: after its return the
    # profiler of PyTorch's own closes its range, and a pause of the machine there would
    # fall between the two clocks' ends of one step
    optimizer.register_step_post_hook(lambda *_: clock.end())
    backward_ends = []
    for _ in range(steps):
        backward_ends.append([])
        for _ in range(micro):
            loss = torch.nn.functional.cross_entropy(net(x), y) / micro
            loss.backward()
            backward_ends[-1].append(time.perf_counter())
        optimizer.step()
        optimizer.zero_grad()
    return {"ends": clock.ends, "preempted": clock.preempted, "optimizer_steps": steps,
            "backward_calls": steps * micro, "micro_batches": micro,
            "backward_ends": backward_ends}


def manual_sgd(steps=25):
    net = model()
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    clock = Clock()
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        clock.end()
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.01 * p.grad
                p.grad = None
    return {"ends": clock.ends, "preempted": clock.preempted, "backward_calls": steps}


class Teacher(torch.nn.Sequential):
    """a model of its own class: an evaluation loop calls one model"""


def evaluate(steps=30, every=10, forwards=100):
    net, teacher = model(), Teacher(*model())
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    clock = Clock()
    optimizer.register_step_post_hook(lambda *_: clock.end())
    loops, holding = [], []
    for step in range(steps):
        with torch.no_grad():  # a teacher's forward in the step: no evaluation loop
            target = teacher(x).argmax(1)
        loss = torch.nn.functional.cross_entropy(net(x), target) + \
            0.0 * torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % every == every - 1:
            with torch.no_grad():
                start = time.perf_counter()
                for _ in range(forwards):
                    net(x)
                loops.append(time.perf_counter() - start)
            if step + 1 < steps:
                holding.append(step + 1)  # the step after this one's optimizer step
    return {"optimizer_steps": steps, "evaluation_s": loops, "forwards": forwards,
            "ends": clock.ends, "preempted": clock.preempted, "holding": holding}


def batches(epochs=2, size=320):
    from torch.utils.data import DataLoader, TensorDataset
    net = model()
    data = TensorDataset(torch.randn(size, 256))
    loader = DataLoader(data, batch_size=16, num_workers=2)
    labels = DataLoader(TensorDataset(torch.arange(size)), batch_size=16)
    out = {"epochs": [], "next_preempted": [], "waits": []}

    def loop(iterator, used=None, zipped=False):
        befores, preempted = [], []
        while True:
            was = switches()
            before = time.perf_counter()
            befores.append(before)
            try:
                batch = next(iterator)
            except StopIteration:
                batch = None
            after = time.perf_counter()
            preempted.append(switches() != was)
            if batch is None or (used is not None and len(befores) > used):
                break  # the epoch ended, or one batch more was taken and left unused
            out["waits"].append(None if zipped else after - before)
            net(batch[0])
            time.sleep(0.002)
            # a batch from a worker lives in shared memory: let it go here, not as the
            # next one replaces it (its unmapping would fall between that call's
            # return and the job's reading after it)
            del batch
        out["epochs"].append(befores)
        out["next_preempted"].append(preempted)

    with torch.no_grad():
        for _ in range(epochs):
            loop(iter(loader))
        # zipped: each step takes a batch from each (the inputs, then their labels)
        loop(((x, y) for (x,), (y,) in zip(loader, labels)), zipped=True)
        loop(iter(loader), used=7)
    return out


def compiled():
    import torch._dynamo.utils as dynamo_utils
    net = model()
    fast = torch.compile(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    for batch in [8, 8, 16, 16, 32, 8]:
        fast(torch.randn(batch, 256)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    counters = dynamo_utils.counters
    # why dynamo compiled again, in its own metrics' words
    reasons = [m.recompile_reason for m in dynamo_utils.get_compilation_metrics()
               if getattr(m, "recompile_reason", None)]
    return {"graph_breaks": sum(counters["graph_break"].values()),
            "frames_total": counters["frames"]["total"],
            "unique_graphs": counters["stats"]["unique_graphs"], "optimizer_steps": 6,
            "recompile_reasons": reasons}


if __name__ == "__main__":
    torch.set_num_threads(1)
    # a collection between a step's last call and the clock read after it would put its
    # time between the two clocks' step ends (a collection is a span of its own)
    gc.disable()
    out = {"accumulate": accumulate, "manual_sgd": manual_sgd, "compile": compiled,
           "evaluate": evaluate, "batches": batches}[sys.argv[1]]()
    out["pid"] = os.getpid()
    print(json.dumps(out))
