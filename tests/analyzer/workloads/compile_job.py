"""A torch.compile'd training loop whose input shape changes, so it compiles again,
between loading a checkpoint and saving one.

Steps of a small MLP compiled with torch.compile (inductor, on the CPU): batches of 16
rows for --steps steps, then 24, then 40 (dynamo recompiles on the first change and
marks the dimension dynamic, so the second change may or may not compile again). Each
step also sleeps 0.1 s, so compilations stand apart in time. Before the loop it loads a
checkpoint of --checkpoint-mb (torch.load, saved first), after it saves one (torch.save). Prints one
JSON line, the job's own account: per step its wall time (perf_counter) and whether
dynamo compiled in it (its counters before and after), the unique graphs dynamo made,
and the wall time of the load and of the two saves."""
import argparse
import json
import os
import tempfile
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--checkpoint-mb", type=int, default=0)
    args = parser.parse_args()
    checkpoint = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
    start = time.perf_counter()
    torch.save({"weights": torch.zeros(args.checkpoint_mb << 18)}, checkpoint)  # float32
    save_s = time.perf_counter() - start
    torch.manual_seed(0)
    torch.set_num_threads(1)
    from torch._dynamo.utils import counters

    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    start = time.perf_counter()
    torch.load(checkpoint)
    load_s = time.perf_counter() - start
    compiled = torch.compile(model)
    steps = []
    for rows in (16, 24, 40):
        for _ in range(args.steps):
            x, y = torch.randn(rows, 64), torch.randn(rows, 1)
            graphs = counters["stats"]["unique_graphs"]
            captured = sum(counters["frames"].values())
            start = time.perf_counter()
            loss = torch.nn.functional.mse_loss(compiled(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            took = time.perf_counter() - start
            compiled_now = (counters["stats"]["unique_graphs"] != graphs or
                            sum(counters["frames"].values()) != captured)
            steps.append({"rows": rows, "s": took, "compiled": compiled_now})
            time.sleep(0.1)
    start = time.perf_counter()
    torch.save({"weights": torch.ones(args.checkpoint_mb << 18)}, checkpoint)
    save_s += time.perf_counter() - start
    print(json.dumps({"steps": steps, "unique_graphs": counters["stats"]["unique_graphs"],
                      "load_s": load_s, "save_s": save_s}))


if __name__ == "__main__":
    main()
