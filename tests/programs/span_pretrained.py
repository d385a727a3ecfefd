"""A model and its tokenizer loaded with from_pretrained, as users load them, each call
timed by the job's own clock (perf_counter around it). Nothing is downloaded: a tiny BERT
made from its config and a word-level tokenizer written here are saved to a folder
first, and loaded from it (HF_HUB_OFFLINE=1).

  auto    AutoModelForSequenceClassification.from_pretrained and
          AutoTokenizer.from_pretrained, 3 times each: the Auto classes pick the
          classes saved, and call their from_pretrained inside (after reading the
          folder's config first, which the job's clock also holds)
  direct  the saved classes' own from_pretrained, 40 times each: the call the job times
          is the one the span records. The model's weights are loaded in the calling
          thread (HF_DEACTIVATE_ASYNC_LOAD=1): a pool of loading threads that outlives
          the call would share the GIL with it, and the job's clock would hold the
          waits for the GIL between the call's end and its own

Prints one JSON line: the classes saved ("model", "tokenizer"); for each call, in call
order, what it loaded ("model" or "tokenizer"), how ("auto" or "direct"), the class of
what it returned, its duration in seconds, and whether the thread was made to wait for a
CPU meanwhile (an involuntary context switch: the clocks may then differ by that)."""
import gc
import json
import os
import resource
import tempfile
import threading
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import transformers  # noqa: E402

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + ["w%d" % i for i in range(200)]
TIMES = {"auto": 3, "direct": 40}


def switches():
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw


def saved_model():
    """a folder holding a tiny BERT classifier and its tokenizer, and their classes"""
    folder = tempfile.mkdtemp(prefix="span-pretrained-")
    vocab = os.path.join(folder, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(WORDS))
    tokenizer = transformers.BertTokenizerFast(vocab)
    config = transformers.BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder, type(model), type(tokenizer)


def main():
    folder, model_class, tokenizer_class = saved_model()
    loaders = {
        ("model", "auto"): transformers.AutoModelForSequenceClassification.from_pretrained,
        ("tokenizer", "auto"): transformers.AutoTokenizer.from_pretrained,
        ("model", "direct"): model_class.from_pretrained,
        ("tokenizer", "direct"): tokenizer_class.from_pretrained,
    }
    # a collection set off by the call's arguments would fall between the two clocks
    gc.collect()
    gc.disable()
    calls = []
    for how in ("auto", "direct"):
        if how == "direct":
            os.environ["HF_DEACTIVATE_ASYNC_LOAD"] = "1"  # read at each call
            for thread in threading.enumerate():  # the auto loads' pools, ending
                if thread is not threading.current_thread() and not thread.daemon:
                    thread.join()
        for _ in range(TIMES[how]):
            for what in ("model", "tokenizer"):
                load = loaders[(what, how)]
                before = switches()
                start = time.perf_counter()
                loaded = load(folder)
                took = time.perf_counter() - start
                calls.append({"what": what, "how": how, "class": type(loaded).__name__,
                              "seconds": took, "preempted": switches() != before})
                # freed here, not as the next call's result replaces it inside its clock
                del loaded
    gc.enable()
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(), "calls": calls,
                      "saved": {"model": model_class.__name__,
                                "tokenizer": tokenizer_class.__name__}}))


if __name__ == "__main__":
    main()
