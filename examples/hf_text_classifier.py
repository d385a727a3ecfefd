#!/usr/bin/env python3
"""A Hugging Face text classifier trained from scratch on the CPU, nothing
downloaded: a word-level tokenizer built from a synthetic corpus, the corpus
tokenized, a small BERT (random weights, from a config) trained with the
Trainer and its DataLoader workers, evaluated every --eval-steps steps, then
a text-classification pipeline on a few sentences. Prints what it did and how
long each part took by its own clock (--summary FILE: the same as JSON): the
optimizer steps (Trainer.state.global_step), the global step after which
each evaluation ran, tokenization, training, the forward passes
(module hooks, training's and the pipeline's), the backward passes (from
each training forward's end to its optimizer step), the optimizer steps
(optimizer hooks) and the pipeline.

    .venv/bin/python examples/hf_text_classifier.py --summary job.json
"""
import argparse
import json
import os
import random
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers, trainers  # noqa: E402

WORDS = [f"w{i}" for i in range(20000)]
POSITIVE, NEGATIVE = ["good", "great", "fine"], ["bad", "poor", "awful"]


def corpus(samples, seed=0):
    """Sentences of random words; the label says which mood word they hold."""
    rng = random.Random(seed)
    texts, labels = [], []
    for _ in range(samples):
        label = rng.randrange(2)
        words = rng.choices(WORDS, k=rng.randrange(12, 40))
        words.insert(rng.randrange(len(words)), rng.choice(POSITIVE if label else NEGATIVE))
        texts.append(" ".join(words))
        labels.append(label)
    return texts, labels


def build_tokenizer(texts):
    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=special))
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=64)


class Encoded(torch.utils.data.Dataset):
    def __init__(self, encoded, labels):
        self.encoded, self.labels = encoded, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        item = {key: values[i] for key, values in self.encoded.items()}
        item["labels"] = self.labels[i]
        return item


class Stopwatch:
    """Time spent between pairs of hook calls, added up."""

    def __init__(self):
        self.seconds, self.calls, self.started, self.last_stop = 0.0, 0, None, None

    def start(self, *unused):
        self.started = time.perf_counter()

    def stop(self, *unused):
        self.last_stop = time.perf_counter()
        if self.started is not None:
            self.seconds += self.last_stop - self.started
            self.calls += 1
            self.started = None


class Evaluations(transformers.TrainerCallback):
    """The global step after which each evaluation ran."""

    def __init__(self):
        self.at_steps = []

    def on_evaluate(self, args, state, control, **kwargs):
        self.at_steps.append(state.global_step)


class OptimizerClock(transformers.TrainerCallback):
    """Hooks the Trainer's optimizer once it exists: the optimizer steps, and
    from the end of each training forward pass to the optimizer step (the
    backward pass and gradient clipping)."""

    def __init__(self, optimizer, backward, forward):
        self.optimizer, self.backward, self.forward = optimizer, backward, forward

    def on_train_begin(self, args, state, control, optimizer=None, **kwargs):
        inner = getattr(optimizer, "optimizer", optimizer)  # Accelerate wraps it
        inner.register_step_pre_hook(self.before_step)
        inner.register_step_post_hook(lambda *a: self.optimizer.stop())

    def before_step(self, *unused):
        self.backward.started = self.forward.last_stop
        self.backward.stop()
        self.optimizer.start()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=12000, help="sentences to tokenize")
    parser.add_argument("--train-samples", type=int, default=768)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--eval-samples", type=int, default=128)
    parser.add_argument("--eval-steps", type=int, default=16, help="0: no evaluation")
    parser.add_argument("--summary", help="write the job's own figures as JSON to this file")
    args = parser.parse_args()
    torch.manual_seed(0)
    figures = {"pid": os.getpid()}

    texts, labels = corpus(args.samples)
    tokenizer = build_tokenizer(texts)
    start = time.perf_counter()
    encoded = tokenizer(texts, truncation=True, padding="max_length", max_length=48)
    figures["tokenize_s"] = time.perf_counter() - start

    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=192,
                                     num_hidden_layers=3, num_attention_heads=4,
                                     intermediate_size=768, max_position_embeddings=64,
                                     num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    forward = Stopwatch()
    model.register_forward_pre_hook(forward.start)
    model.register_forward_hook(forward.stop)
    optimizer, backward = Stopwatch(), Stopwatch()
    train_set = Encoded({k: v[:args.train_samples] for k, v in encoded.items()},
                        labels[:args.train_samples])
    held_out = slice(args.train_samples, args.train_samples + args.eval_samples)
    eval_set = Encoded({k: v[held_out] for k, v in encoded.items()}, labels[held_out])
    evaluations = Evaluations()
    options = transformers.TrainingArguments(
        output_dir=tempfile.mkdtemp(), use_cpu=True, num_train_epochs=1,
        per_device_train_batch_size=args.batch_size, dataloader_num_workers=args.workers,
        report_to="none", save_strategy="no", logging_strategy="no", disable_tqdm=True,
        learning_rate=1e-3, eval_strategy="steps" if args.eval_steps else "no",
        eval_steps=args.eval_steps or None, per_device_eval_batch_size=args.batch_size)
    trainer = transformers.Trainer(model=model, args=options, train_dataset=train_set,
                                   eval_dataset=eval_set if args.eval_steps else None,
                                   callbacks=[OptimizerClock(optimizer, backward, forward),
                                              evaluations])
    start = time.perf_counter()
    result = trainer.train()
    figures["train_s"] = time.perf_counter() - start
    figures["train_runtime_s"] = result.metrics["train_runtime"]
    figures["steps"] = trainer.state.global_step
    figures["evaluated_at_steps"] = evaluations.at_steps
    figures["eval_batches"] = -(-len(eval_set) // args.batch_size)
    figures["optimizer_s"], figures["optimizer_calls"] = optimizer.seconds, optimizer.calls
    figures["backward_s"] = backward.seconds

    classify = transformers.pipeline("text-classification", model=model, tokenizer=tokenizer,
                                     device=-1)
    start = time.perf_counter()
    predictions = classify(texts[:256], batch_size=32)
    figures["pipeline_s"] = time.perf_counter() - start
    figures["predictions"] = len(predictions)
    # every forward pass of the model: training's and the pipeline's
    figures["forward_s"], figures["forward_calls"] = forward.seconds, forward.calls

    print(json.dumps(figures, indent=1))
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(figures, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
