"""A Hugging Face Trainer that trains a tiny BERT (made from its config, nothing
downloaded), evaluates it and saves it. Prints one JSON line, the job's own account: the
wall time (perf_counter) of trainer.train(), trainer.evaluate() and trainer.save_model(),
and the Trainer's global_step."""
import json
import tempfile
import time

import torch
import transformers


class Samples(torch.utils.data.Dataset):
    def __init__(self, count):
        g = torch.Generator().manual_seed(count)
        self.ids = torch.randint(5, 1000, (count, 32), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": int(self.ids[i, 0] % 2)}


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = transformers.BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=128, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    out = tempfile.mkdtemp()
    options = transformers.TrainingArguments(
        output_dir=out, per_device_train_batch_size=16, per_device_eval_batch_size=16,
        max_steps=40, report_to="none", save_strategy="no", logging_strategy="no",
        disable_tqdm=True, use_cpu=True, dataloader_num_workers=0)
    trainer = transformers.Trainer(model=model, args=options, train_dataset=Samples(640),
                                   eval_dataset=Samples(3000))
    took = {}
    start = time.perf_counter()
    trainer.train()
    took["train_s"] = time.perf_counter() - start
    start = time.perf_counter()
    trainer.evaluate()
    took["evaluate_s"] = time.perf_counter() - start
    start = time.perf_counter()
    trainer.save_model(out)
    took["save_s"] = time.perf_counter() - start
    took["global_step"] = trainer.state.global_step
    print(json.dumps(took))


if __name__ == "__main__":
    main()
