"""Model serving as users write it, timed by its own clock. Prints one JSON line.

  pipeline  a text-classification pipeline (a tiny BERT made from its config, a
            word-level tokenizer written here: nothing downloaded) answering 40
            requests one at a time; each request's latency by perf_counter around it
  generate  a tiny GPT-2 answering 12 generate() requests of 6 to 17 new tokens
            (exactly: no end-of-sequence token); a streamer's put() gives the moment
            of each new token: the first is the time to first token
  threads   the pipeline's requests served by a pool of 2 threads, by thread

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
           "preempted": []}
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


if __name__ == "__main__":
    torch.set_num_threads(1)
    # a collection between the job's clock and the request's first call would be in one
    # clock and not the other (collections are spans of their own)
    gc.disable()
    mode = sys.argv[1]
    out = {"pipeline": pipeline_requests, "generate": generate_requests,
           "threads": threaded_requests}[mode]()
    out["pid"] = os.getpid()
    print(json.dumps(out))
