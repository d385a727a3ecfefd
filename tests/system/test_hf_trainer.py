#!/usr/bin/env python3
"""A real Hugging Face job, unmodified, under `profinject run`:
examples/hf_text_classifier.py tokenizes a synthetic corpus, trains a small
BERT with the Trainer and two DataLoader workers, then runs a
text-classification pipeline, and writes its own figures (Trainer's
global_step, its wall times by its own clock and hooks). The report must
be about the training process (not the launcher), count the Trainer's
steps, show the workers' I/O, and give time by Python function in which
tokenization, the forward and backward passes, the optimizer step and the
pipeline are separate entries agreeing with the job's own clock. Run by
ctest with the build's paths in the environment."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from profiled_job import run_and_report  # noqa: E402

LAUNCHER = os.environ["PI_LAUNCHER"]
SOURCE = os.environ["PI_SOURCE"]
JOB = os.path.join(SOURCE, "examples", "hf_text_classifier.py")


def within(ours, truth, relative, absolute=0.05):
    """ours (ns) agrees with truth (s) within relative share plus absolute seconds"""
    return abs(ours / 1e9 - truth) <= relative * truth + absolute


class HuggingFaceTrainer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        work = tempfile.mkdtemp(prefix="pi-hf-")
        summary = os.path.join(work, "job.json")
        cls.report, cls.text = run_and_report(
            LAUNCHER, work, [sys.executable, JOB, "--summary", summary],
            env=dict(os.environ, HF_HUB_OFFLINE="1"))
        with open(summary) as f:
            cls.job = json.load(f)
        [cls.main] = [p for p in cls.report["processes"] if p["pid"] == cls.job["pid"]]
        [cls.profile] = [p for p in cls.report["python_time"] if p["pid"] == cls.job["pid"]]

    def function(self, name, file_part):
        """the profile's entry for function @name in a file whose path holds @file_part"""
        found = [f for f in self.profile["functions"]
                 if f["function"] == name and file_part in f["file"]]
        self.assertEqual(len(found), 1, (name, file_part, [f["function"] for f in
                                                            self.profile["functions"][:40]]))
        return found[0]

    def test_the_verdict_is_about_the_training_process(self):
        self.assertEqual(self.report["verdict"][0]["pid"], self.job["pid"])
        # the Trainer's script, not the launcher that started it (whatever folders the paths
        # name: a clone in a folder called profinject, or the tests' temporary folder)
        program, script = self.main["command"].split()[:2]
        self.assertNotEqual(os.path.basename(program), "profinject")
        self.assertEqual(os.path.basename(script), "hf_text_classifier.py")

    def test_steps_are_the_trainers_global_step(self):
        # one step per optimizer step, exactly: the framework's own calls, not a guess
        steps = self.main["steps"]
        self.assertGreaterEqual(self.job["steps"], 40)
        self.assertEqual(steps["count"], self.job["steps"], steps)
        self.assertEqual(steps["found_from"], "optimizer step")

    def test_evaluations_inside_training_are_not_steady_steps(self):
        # the Trainer evaluated after the global steps its callback saw: each a no_grad loop
        # of the eval set's batches; those before the last step lie in the step after, which
        # is then left out of the steady figures
        steps, job = self.main["steps"], self.job
        inside = [g for g in job["evaluated_at_steps"] if g < job["steps"]]
        self.assertGreaterEqual(len(inside), 2, job)
        loops = steps["evaluation_loops"]["loops"]
        self.assertEqual([loop["forwards"] for loop in loops[:len(inside)]],
                         [job["eval_batches"]] * len(inside), loops)
        self.assertEqual(steps["evaluation_steps"], sum(g >= steps["warmup"] for g in inside))
        self.assertEqual(steps["steady"]["count"],
                         steps["count"] - steps["warmup"] - steps["evaluation_steps"])

    def test_the_workers_io_is_listed(self):
        # two workers for training, and two more for each evaluation's DataLoader
        workers = [p for p in self.report["processes"] if p["ppid"] == self.job["pid"]]
        self.assertEqual(len(workers), 2 * (1 + len(self.job["evaluated_at_steps"])))
        for worker in workers:
            io = sum(t["time_ns"]["other_io"] + t["time_ns"]["file_io"] for t in worker["threads"])
            self.assertGreater(io, 0, worker["pid"])
            main = [t for t in worker["threads"] if t["main"]]
            self.assertEqual([t["name"] for t in main], ["pt_data_worker"])
            # a fork child's file names its own threads only, not the parent's main thread
            self.assertNotIn(self.job["pid"], [t["tid"] for t in worker["threads"]])

    def test_time_by_python_function_agrees_with_the_jobs_clock(self):
        job = self.job
        train = self.function("Trainer.train", "transformers/trainer.py")
        self.assertTrue(within(train["inclusive_ns"], job["train_s"], 0.05), (train, job))
        # the model's forward: training's and the pipeline's (the job's hooks count both)
        forward = self.function("BertForSequenceClassification.forward", "modeling_bert.py")
        self.assertTrue(within(forward["inclusive_ns"], job["forward_s"], 0.15), (forward, job))
        # from each forward's end to its optimizer step: the backward pass (and clipping)
        backward = self.function("Accelerator.backward", "accelerate/accelerator.py")
        self.assertTrue(within(backward["inclusive_ns"], job["backward_s"], 0.2), (backward, job))
        # the optimizer's own step, inside the hooks torch runs around it
        [step] = [f for f in self.profile["functions"] if f["function"].endswith(".step") and
                  "torch/optim/" in f["file"] and not f["file"].endswith("optimizer.py")]
        self.assertTrue(within(step["inclusive_ns"], job["optimizer_s"], 0.25), (step, job))
        classify = self.function("Pipeline.__call__", "pipelines/base.py")
        self.assertTrue(within(classify["inclusive_ns"], job["pipeline_s"], 0.15), (classify, job))
        # the tokenizer: the job's own call, and the pipeline's preprocessing inside its time
        tokenize = self.function("PreTrainedTokenizerBase.__call__", "tokenization_utils_base.py")
        self.assertGreaterEqual(tokenize["inclusive_ns"] / 1e9, 0.85 * job["tokenize_s"] - 0.05)
        self.assertLessEqual(tokenize["inclusive_ns"] / 1e9,
                             job["tokenize_s"] + job["pipeline_s"] + 0.05)
        # separate entries: none of the parts holds another
        parts = [forward, backward, step, classify]
        self.assertLessEqual(sum(p["inclusive_ns"] for p in parts), self.profile["sampled_ns"])

    def test_the_text_report_shows_the_functions(self):
        text = self.text
        self.assertIn(f"PYTHON TIME (pid {self.job['pid']}", text)
        rows = text.split(f"PYTHON TIME (pid {self.job['pid']}", 1)[1].split("\n\n")[0]
        rows = rows.splitlines()[2:]
        # by self time: the job's functions, the import machinery one line apart
        self.assertFalse([r for r in rows if "<frozen importlib" in r], rows)
        self.assertEqual(len([r for r in rows if " imports: " in r]), 1, rows)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
