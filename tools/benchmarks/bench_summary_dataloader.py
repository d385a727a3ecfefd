#!/usr/bin/env python3
"""bench_summary_dataloader.py - what summary mode writes for a CPU DataLoader
job, against full mode: examples/pytorch_train.py with 2 workers and
PyTorch's default non-persistent workers (two new ones each epoch), 512
files read an epoch. Run by tools/bench:

    bench_summary_dataloader.py LIBRARY ANALYZER EXAMPLE DATA_DIR SCRATCH

Each mode runs the job for 2 and for 8 epochs, RUNS times (default 3, the
modes and lengths taken in turn), and the bytes of every trace file of the
tree are summed; a further epoch's bytes are the difference of the medians
over the 6 epochs between. The verdict (its kind, cause and line) and the
steps found are compared between the modes on the 8-epoch runs. Prints
"name value unit" lines.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

RUNS = int(os.environ.get("BENCH_SUMMARY_RUNS", "3"))
SHORT, LONG = 2, 8


def run(library, analyzer, example, data, scratch, mode, epochs):
    """Bytes of the tree's traces, and the verdict and steps the report gives."""
    traces = tempfile.mkdtemp(dir=scratch)
    truth_file = os.path.join(scratch, "job.json")
    env = dict(os.environ, LD_PRELOAD=library, PROFINJECT_OUTPUT=traces, PROFINJECT_MODE=mode,
               OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, example, "--data-dir", data, "--epochs", str(epochs),
                    "--summary", truth_file], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    size = sum(os.path.getsize(os.path.join(traces, f)) for f in os.listdir(traces))
    report_file = os.path.join(scratch, "report.json")
    subprocess.run([analyzer, traces, "--quiet", "--json", report_file], check=True,
                   capture_output=True)
    with open(report_file) as f:
        report = json.load(f)
    with open(truth_file) as f:
        truth = json.load(f)
    shutil.rmtree(traces)
    [main] = [p for p in report["processes"] if p["pid"] == truth["pid"]]
    verdict = report["verdict"][0] if report["verdict"] else {}
    said = (verdict.get("kind"), verdict.get("cause"), verdict.get("line"))
    return size, said, main["steps"]["count"] == truth["steps"]


def main():
    library, analyzer, example, data, scratch = sys.argv[1:6]
    # the dataset written beforehand, untraced: the jobs only read it
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                    "import pytorch_train; pytorch_train.write_dataset(sys.argv[2], 512)",
                    os.path.dirname(example), data], check=True)
    sizes = {(m, e): [] for m in ("summary", "full") for e in (SHORT, LONG)}
    said = {"summary": set(), "full": set()}
    steps_right = True
    for _ in range(RUNS):
        for mode in ("summary", "full"):
            for epochs in (SHORT, LONG):
                size, verdict, right = run(library, analyzer, example, data, scratch, mode,
                                           epochs)
                sizes[(mode, epochs)].append(size)
                steps_right &= right
                if epochs == LONG:
                    said[mode].add(verdict)
    median = {k: statistics.median(v) for k, v in sizes.items()}
    per_epoch = {m: (median[(m, LONG)] - median[(m, SHORT)]) / (LONG - SHORT)
                 for m in ("summary", "full")}
    print(f"dataloader_summary_epoch_bytes {per_epoch['summary'] / 1e3:.1f} KB "
          f"(goal <= 15; a further epoch: 2 new workers, 512 files)")
    print(f"dataloader_full_epoch_bytes {per_epoch['full'] / 1e3:.1f} KB (goal <= 60)")
    ratio = median[("summary", LONG)] / median[("full", LONG)]
    print(f"dataloader_summary_job_bytes {median[('summary', LONG)] / 1e3:.0f} KB "
          f"(full: {median[('full', LONG)] / 1e3:.0f} KB; {ratio:.2f} of full, goal <= 0.10; "
          f"{LONG} epochs)")
    same = len(said["summary"] | said["full"]) == 1 and steps_right
    shown = "; ".join(f"{m}: {sorted(map(str, v))}" for m, v in said.items())
    print(f"dataloader_summary_verdict_as_full {int(same)} (goal 1: kind, cause and line in "
          f"every run, steps as the job counted them; {shown})")


if __name__ == "__main__":
    main()
