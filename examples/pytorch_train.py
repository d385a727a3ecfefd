#!/usr/bin/env python3
"""A small but real training job to profile: a TransformerEncoder trained
on a file-backed dataset through a DataLoader with worker processes.

The dataset is one file per sample under --data-dir, written on the first
run. Each sample is read from its file every epoch, so the input pipeline
does real file I/O. --delay-ms adds a per-sample loading delay to make
the job input-bound.

    .venv/bin/python examples/pytorch_train.py --workers 2 --epochs 2

On a GPU: --device cuda [--pin-memory] [--max-steps N] [--truths F] (the
job's own figures for tools/gpu-check, examples/gpu/truths.py).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu"))
import truths as job_truths  # noqa: E402  (examples/gpu/truths.py)

SEQ_LEN = 32
D_MODEL = 64
CLASSES = 4


def sample_path(data_dir, index):
    return os.path.join(data_dir, f"sample_{index:06d}.bin")


def write_dataset(data_dir, samples, seed=1234):
    """One file per sample: SEQ_LEN x D_MODEL float32 features, then an int64 label."""
    os.makedirs(data_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(samples):
        path = sample_path(data_dir, i)
        if os.path.exists(path):
            continue
        label = int(rng.integers(CLASSES))
        features = rng.normal(size=(SEQ_LEN, D_MODEL)).astype(np.float32)
        features[:, label] += 1.0  # learnable signal
        with open(path + ".tmp", "wb") as f:
            f.write(features.tobytes())
            f.write(np.int64(label).tobytes())
        os.replace(path + ".tmp", path)


class FileDataset(Dataset):
    def __init__(self, data_dir, samples, delay_s):
        self.data_dir = data_dir
        self.samples = samples
        self.delay_s = delay_s

    def __len__(self):
        return self.samples

    def __getitem__(self, index):
        with open(sample_path(self.data_dir, index), "rb") as f:
            raw = f.read()
        if self.delay_s:
            time.sleep(self.delay_s)  # stands in for decoding/augmentation
        features = np.frombuffer(raw, dtype=np.float32, count=SEQ_LEN * D_MODEL)
        label = np.frombuffer(raw, dtype=np.int64, offset=SEQ_LEN * D_MODEL * 4)[0]
        return torch.from_numpy(features.reshape(SEQ_LEN, D_MODEL).copy()), int(label)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=D_MODEL, nhead=4, dim_feedforward=128,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "data"))
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--delay-ms", type=float, default=0.0,
                        help="artificial per-sample loading delay")
    parser.add_argument("--summary", help="write what the script did as JSON to this file")
    parser.add_argument("--pin-memory", action="store_true", help="DataLoader pin_memory=True")
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many steps")
    parser.add_argument("--persistent-workers", action="store_true",
                        help="DataLoader persistent_workers=True (workers live across epochs)")
    parser.add_argument("--prefetch-factor", type=int, default=None,
                        help="DataLoader prefetch_factor (batches each worker loads ahead)")
    job_truths.add_arguments(parser)
    parser.set_defaults(device="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    truths = {}

    torch.manual_seed(0)
    write_dataset(args.data_dir, args.samples)
    dataset = FileDataset(args.data_dir, args.samples, args.delay_ms / 1000.0)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, pin_memory=args.pin_memory,
                        persistent_workers=args.persistent_workers and args.workers > 0,
                        prefetch_factor=args.prefetch_factor if args.workers else None)
    model = Classifier().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    start = time.monotonic()
    steps = 0
    waits = []
    with job_truths.profiled(args, truths):
        steps = train(args, loader, model, optimizer, loss_fn, device, waits)
    if waits:
        waits[-1][1] = time.monotonic() - waits[-1][1]
    elapsed = time.monotonic() - start
    print(f"trained {steps} steps in {elapsed:.2f} s ({steps / elapsed:.1f} steps/s)", flush=True)
    truths["steps"] = steps
    job_truths.memory(args, truths)
    job_truths.write(args, truths)

    if args.summary:
        files = [sample_path(args.data_dir, i) for i in range(args.samples)]
        with open(args.summary, "w") as f:
            json.dump({
                "pid": os.getpid(),
                "samples": args.samples,
                "epochs": args.epochs,
                "workers": args.workers,
                "steps": steps,
                "data_dir": os.path.abspath(args.data_dir),
                "file_bytes": sum(os.path.getsize(p) for p in files),
                "seconds": elapsed,
                # per step: waiting for its batch, and the whole step (the loop's own clock)
                "wait_s": [w for w, _, _ in waits],
                "step_s": [t for _, t, _ in waits],
                # of each wait, what the loop's thread computed itself (receiving the batch)
                "wait_cpu_s": [c for _, _, c in waits],
            }, f)


def train(args, loader, model, optimizer, loss_fn, device, waits=None):
    """The loop; its own clock in @waits: per step, (seconds waiting for the batch, the step's
    seconds from asking for its batch to asking for the next, the thread's CPU seconds while
    waiting)."""
    steps = 0
    for epoch in range(args.epochs):
        total, correct, loss_sum = 0, 0, 0.0
        batches = iter(loader)
        while True:
            asked, computed = time.monotonic(), time.thread_time()
            try:
                features, labels = next(batches)
            except StopIteration:
                break
            if waits is not None:
                if waits:
                    waits[-1][1] = asked - waits[-1][1]
                waits.append([time.monotonic() - asked, asked, time.thread_time() - computed])
            if args.max_steps and steps == args.max_steps:
                break
            features = features.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            optimizer.zero_grad()
            logits = model(features)
            loss = loss_fn(logits, labels)
            loss.backward()
            optimizer.step()
            steps += 1
            loss_sum += loss.item() * len(labels)
            correct += (logits.argmax(dim=1) == labels).sum().item()
            total += len(labels)
        if total:
            print(f"epoch {epoch + 1}: loss {loss_sum / total:.4f}  accuracy {correct / total:.3f}",
                  flush=True)
    return steps


if __name__ == "__main__":
    main()
