"""bench_spans.py calls|tiny N

What exact spans cost (preload/callsite/python_spans.h). Prints "name value" lines:
  calls  marked_ns and unmarked_ns: ns per call of two identical one-line functions of
         this module, imported as bench_spans, one of them named in PROFINJECT_SPANS by
         tools/bench; best of 9 rounds of N calls each, the two interleaved
  tiny   loop_ns: ns per iteration of a loop of tiny PyTorch operations (an add_ on
         1,024 floats, an SGD step every 10 of them); best of 9 rounds of N
  module call_ns: ns per call of a tiny model (a Linear of 8 by 8 on one row), each an
         outermost module call (a span, and autograd's mode read once), alternately
         under autograd and torch.no_grad; best of 9 rounds of N
tools/bench runs it with and without the library and the built-in spans, in pairs.
"""
import sys
import time


def marked():
    return 1


def unmarked():
    return 1


def best(call, n):
    start = time.perf_counter_ns()
    for _ in range(n):
        call()
    return (time.perf_counter_ns() - start) / n


def calls(n):
    import bench_spans  # this file again, as a module: where the span marks it

    if not getattr(bench_spans.marked, "__profinject_span__", False) and "--marked" in sys.argv:
        sys.exit("bench_spans: marked() was not marked: spans are off")
    first, second = [], []
    for _ in range(9):
        first.append(best(bench_spans.marked, n))
        second.append(best(bench_spans.unmarked, n))
    print("marked_ns %.1f" % min(first))
    print("unmarked_ns %.1f" % min(second))


def tiny(n):
    import torch

    torch.set_num_threads(1)
    weight = torch.nn.Parameter(torch.zeros(1024))
    weight.grad = torch.ones(1024)
    optimizer = torch.optim.SGD([weight], lr=0.001)
    x = torch.zeros(1024)

    def loop():
        for i in range(n):
            x.add_(1.0)
            if i % 10 == 9:
                optimizer.step()

    rounds = []
    for _ in range(9):
        start = time.perf_counter_ns()
        loop()
        rounds.append((time.perf_counter_ns() - start) / n)
    print("loop_ns %.1f" % min(rounds))


def module(n):
    import torch

    torch.set_num_threads(1)
    net = torch.nn.Linear(8, 8)
    x = torch.zeros(1, 8)

    def loop():
        for i in range(n // 2):
            net(x)
            with torch.no_grad():
                net(x)

    rounds = []
    for _ in range(9):
        start = time.perf_counter_ns()
        loop()
        rounds.append((time.perf_counter_ns() - start) / (n // 2 * 2))
    print("call_ns %.1f" % min(rounds))


if __name__ == "__main__":
    {"calls": calls, "tiny": tiny, "module": module}[sys.argv[1]](int(sys.argv[2]))
