"""Model serving as users write it, timed by its own clock. Prints one JSON line.

  pipeline  a text-classification pipeline (a tiny BERT made from its config, a
            word-level tokenizer written here: nothing downloaded) answering 40
            requests one at a time; each request's latency by perf_counter around it
  generate  a tiny GPT-2 answering 12 generate() requests of 6 to 17 new tokens
            (exactly: no end-of-sequence token); a streamer's put() gives the moment
            of each new token: the first is the time to first token; the model's own
            forward hooks time its forward passes
  threads   the pipeline's requests served by a pool of 2 threads, by thread
  garbage   60 requests, each a handler of the job's own (marked: PROFINJECT_SPANS
            serving:handle) around the pipeline, with Python's collector on, in a
            process that keeps many objects (a loaded index) and a cache that grows
            inside each request and between them: full collections walk them all.
            Each collection timed by the job's own gc.callbacks, and whether it fell
            inside a handler (by its own look at the stack) or between two of them

"preempted" says, per request, whether the serving thread was made to wait for a
CPU meanwhile (an involuntary context switch): the clocks may then differ by that."""
import gc
import json
import os
import resource
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import torch
import transformers

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + ["w%d" % i for i in range(200)]


def switches():
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw


def classifier():
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(WORDS))
    tokenizer = transformers.BertTokenizerFast(os.path.join(folder, "vocab.txt"))
    config = transformers.BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, num_labels=2)
    model = transformers.BertForSequenceClassification(config).eval()
    return transformers.pipeline("text-classification", model=model, tokenizer=tokenizer,
                                 device="cpu")


def text(i):
    return " ".join("w%d" % ((i * 7 + j) % 200) for j in range(8 + i % 24))


def timed(call, *args):
    """(seconds, preempted, tid) of call(*args)"""
    before = switches()
    start = time.perf_counter()
    call(*args)
    took = time.perf_counter() - start
    return took, switches() != before, threading.get_native_id()


def pipeline_requests(count=40):
    serve = classifier()
    results = [timed(serve, text(i)) for i in range(count)]
    return {"requests": count, "latency_s": [r[0] for r in results],
            "preempted": [r[1] for r in results]}


class Stamps(transformers.generation.streamers.BaseStreamer):
    """the moments generate() hands out tokens: the prompt first, then each new token"""

    def __init__(self):
        self.moments = []

    def put(self, value):
        self.moments.append(time.perf_counter())

    def end(self):
        pass


def generate_requests(count=12):
    config = transformers.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2,
                                     n_head=2, eos_token_id=None, bos_token_id=None)
    model = transformers.GPT2LMHeadModel(config).eval()
    out = {"requests": count, "tokens": 0, "latency_s": [], "first_token_s": [],
           "preempted": [], "forward_s": 0.0}
    # the model's forward passes by its own hooks: generate()'s time outside them is the host's
    # work between tokens
    entered = []
    model.register_forward_pre_hook(lambda *_: entered.append(time.perf_counter()))

    def forward_done(*_):
        out["forward_s"] += time.perf_counter() - entered.pop()
    model.register_forward_hook(forward_done)
    for i in range(count):
        new = 6 + i
        stamps = Stamps()
        before = switches()
        start = time.perf_counter()
        model.generate(torch.tensor([[1, 2, 3, 4 + i % 5]]), max_new_tokens=new,
                       min_new_tokens=new, do_sample=False, pad_token_id=0, streamer=stamps)
        out["latency_s"].append(time.perf_counter() - start)
        out["preempted"].append(switches() != before)
        out["first_token_s"].append(stamps.moments[1] - start)  # [0] is the prompt
        out["tokens"] += new
    return out


def threaded_requests(count=40):
    serve = classifier()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda i: timed(serve, text(i)), range(count)))
    by_thread = {}
    for _, _, tid in results:
        by_thread[str(tid)] = by_thread.get(str(tid), 0) + 1
    return {"requests": count, "by_thread": by_thread}


class Collections:
    """Python's collections as the job's own gc.callbacks time them, from start() on: read
    by a callback before every other at the start and one after every other at the end, so
    that the job's clock holds every other callback's; whether the thread was made to wait
    for a CPU meanwhile (an involuntary context switch)"""

    def __init__(self):
        self.taken = []  # (seconds, inside a handle() call, start, request, preempted)
        self.started = self.switches = None

    def first(self, phase, info):
        if phase == "start":
            self.switches = switches()
            self.started = time.perf_counter()

    def last(self, phase, info):
        if phase != "stop":
            return
        took = time.perf_counter() - self.started
        frame, inside = sys._getframe(1), False
        while frame is not None and not inside:
            inside = frame.f_code is handle.__code__ or \
                frame.f_code is getattr(handle, "__wrapped__", handle).__code__
            frame = frame.f_back
        self.taken.append((took, inside, self.started, REQUEST[0], switches() != self.switches))

    def start(self):
        # off while they are put in place: a collection half seen would count on one side only
        gc.disable()
        gc.callbacks.insert(0, self.first)
        gc.callbacks.append(self.last)
        self.from_unix_ns = time.time_ns()
        gc.enable()

    def stop(self):
        gc.disable()
        gc.callbacks.remove(self.first)
        gc.callbacks.remove(self.last)
        self.to_unix_ns = time.time_ns()


CACHE = []
REQUEST = [None]  # the request being served, by its number


def handle(serve, i):
    """a request as a server answers it: the pipeline, then what it keeps of the answer"""
    answer = serve(text(i))
    CACHE.append([[i, j] for j in range(10000)])
    return answer


def garbage_requests(count=60):
    serve = classifier()
    index = {"w%d" % i: [i, str(i)] for i in range(50000)}  # what a load keeps
    collections = Collections()
    collections.start()
    spans = []
    for i in range(count):
        REQUEST[0] = i
        start = time.perf_counter()
        handle(serve, i)
        spans.append((start, time.perf_counter()))
        CACHE.append([[i, j] for j in range(10000)])  # the server's own bookkeeping
    collections.stop()
    first, last = spans[0][0], spans[-1][1]
    taken = collections.taken
    return {"requests": count, "latency_s": [b - a for a, b in spans], "index": len(index),
            "collections_s": [c[0] for c in taken],
            "collections_preempted": [c[4] for c in taken],
            "inside_s": sum(c[0] for c in taken if c[1]),
            "between_s": sum(c[0] for c in taken if not c[1] and first <= c[2] <= last),
            "inside_by_request_s": [sum(c[0] for c in taken if c[1] and c[3] == i)
                                    for i in range(count)],
            "from_unix_ns": collections.from_unix_ns, "to_unix_ns": collections.to_unix_ns}


if __name__ == "__main__":
    torch.set_num_threads(1)
    mode = sys.argv[1]
    if mode != "garbage":
        # a collection between the job's clock and the request's first call would be in one
        # clock and not the other (collections are spans of their own)
        gc.disable()
    out = {"pipeline": pipeline_requests, "generate": generate_requests,
           "threads": threaded_requests, "garbage": garbage_requests}[mode]()
    out["pid"] = os.getpid()
    print(json.dumps(out))
