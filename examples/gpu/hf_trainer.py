#!/usr/bin/env python3
"""A Hugging Face Trainer job built from a config (no download): a small
BERT classifier on synthetic token sequences, trained for --steps steps
with the Trainer's defaults (DataLoader workers, pinned memory).

    python3 examples/gpu/hf_trainer.py --steps 50 --truths truths.json
"""
import argparse
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truths as job_truths  # noqa: E402

VOCAB, SEQ_LEN, CLASSES = 1000, 64, 4


class TokenDataset(torch.utils.data.Dataset):
    """Sequences whose first token decides the label: something to learn."""

    def __init__(self, samples, seed=0):
        generator = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1, VOCAB, (samples, SEQ_LEN), generator=generator)
        self.labels = self.ids[:, 0] % CLASSES

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(SEQ_LEN, dtype=torch.long),
                "labels": self.labels[i]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    job_truths.add_arguments(parser)
    args = parser.parse_args()
    try:
        import transformers
    except ImportError:
        print("hf_trainer: transformers is not installed", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=4,
                                     num_attention_heads=4, intermediate_size=1024,
                                     max_position_embeddings=SEQ_LEN, num_labels=CLASSES)
    model = transformers.BertForSequenceClassification(config)
    options = dict(output_dir=tempfile.mkdtemp(), max_steps=args.steps,
                   per_device_train_batch_size=args.batch_size, report_to="none",
                   save_strategy="no", logging_strategy="no", disable_tqdm=True,
                   dataloader_num_workers=args.workers)
    if args.device == "cpu":
        options["use_cpu"] = True
    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(**options),
                                   train_dataset=TokenDataset(args.steps * args.batch_size))
    truths = {}
    with job_truths.profiled(args, truths):
        trainer.train()
    truths["steps"] = trainer.state.global_step
    job_truths.memory(args, truths)
    job_truths.write(args, truths)
    print(f"trained {trainer.state.global_step} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
