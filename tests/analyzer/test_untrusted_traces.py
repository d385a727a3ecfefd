#!/usr/bin/env python3
"""The analyzer against traces and paths it cannot trust: names that are
terminal escapes, FIFOs where traces are looked for, outputs aimed at the
inputs, stdout that cannot be written, and damaged frames. What it writes
keeps the traces' permissions.

Run by ctest with the build's paths in the environment."""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
PROGRAMS = os.environ["PI_PROGRAMS"]
# A folder name that drives a terminal if printed raw: retitle, clear the screen,
# a C1 CSI (U+009B) in its UTF-8 form and as a lone byte, and a bell.
HOSTILE = "data-\x1b]0;pwned\x07-\x1b[2J-\u009b31m-\udc9b-end"
MISSING = 3


def record(command, trace_dir, **settings):
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=trace_dir, **settings)
    subprocess.run(command, env=environment, check=True, stdout=subprocess.DEVNULL)


def trace_files(trace_dir):
    return sorted(os.path.join(trace_dir, n) for n in os.listdir(trace_dir)
                  if n.endswith(".pitrace.zst"))


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def assert_terminal_safe(test, data, what):
    """No byte a terminal obeys: C0 but newline and tab, DEL, C1 (in UTF-8 or alone)."""
    bad = [b for b in data if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f]
    test.assertEqual(bad, [], f"{what}: control bytes {bad[:5]} reached the terminal")
    text = data.decode("utf-8")  # raises on a lone byte
    c1 = [c for c in text if 0x80 <= ord(c) <= 0x9f]
    test.assertEqual(c1, [], f"{what}: C1 controls reached the terminal")


class UntrustedTraces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp()
        cls.traces = os.path.join(cls.work, "traces")
        cls.data = os.path.join(cls.work, HOSTILE)
        os.makedirs(cls.data)
        record([os.path.join(PROGRAMS, "prog_missing_files"), cls.data, str(MISSING)],
               cls.traces)
        cls.trace = trace_files(cls.traces)[0]

    def test_names_reach_the_terminal_escaped(self):
        raw = os.fsencode(HOSTILE)
        runs = {"report": [ANALYZE, self.traces],
                "dump": [ANALYZE, "dump", self.trace],
                "info": [ANALYZE, "info", self.trace]}
        for what, command in runs.items():
            out = subprocess.run(command, capture_output=True, check=True).stdout
            self.assertNotIn(raw, out, what)
            assert_terminal_safe(self, out, what)
        dump = subprocess.run(runs["dump"], capture_output=True, check=True).stdout
        # the name is there, its controls shown as their bytes
        self.assertIn(b"data-\\x1b]0;pwned\\x07-\\x1b[2J-\\xc2\\x9b31m-\\x9b-end/missing-0",
                      dump)

    def test_compare_shows_names_escaped(self):
        # compare reads reports as well as traces: a name in one is as untrusted
        work = tempfile.mkdtemp()
        base = os.path.join(work, "base.json")
        subprocess.run([ANALYZE, self.traces, "--quiet", "--json", base], check=True,
                       capture_output=True)
        with open(base, encoding="utf-8", errors="replace") as f:  # strict: the test below
            report = json.load(f)
        for row in report["latency"]:
            row["name"] = HOSTILE.replace("\udc9b", "") + row["name"]
        with open(base, "w") as f:
            json.dump(report, f)
        run = subprocess.run([ANALYZE, "compare", base, base, "--min-count", "0"],
                             capture_output=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(b"\\x1b]0;pwned", run.stdout, "the names are there, shown")
        assert_terminal_safe(self, run.stdout, "compare")
        with open("/dev/full", "w") as full:
            run = subprocess.run([ANALYZE, "compare", base, base], stdout=full,
                                 stderr=subprocess.PIPE, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("cannot write to stdout", run.stderr)

    def test_the_json_is_strict_json_with_the_names_escaped(self):
        out = os.path.join(tempfile.mkdtemp(), "r.json")
        subprocess.run([ANALYZE, self.traces, "--quiet", "--json", out], check=True,
                       capture_output=True)
        with open(out, "rb") as f:
            data = f.read()
        self.assertNotIn(b"\x1b", data)
        report = json.loads(data.decode("utf-8"))  # a lone byte would not decode
        paths = [row["path"] for row in report["files"]]
        # the name round-trips, but for the byte that is not UTF-8
        self.assertIn(os.path.join(self.data, "missing-0").replace("\udc9b", "\ufffd"), paths)

    def test_outputs_keep_the_traces_mode(self):
        mode = stat.S_IMODE(os.stat(self.trace).st_mode)
        self.assertEqual(mode, 0o600, "the recorder's mode, the truth here")
        out = tempfile.mkdtemp()
        files = {"--json": "r.json", "--html": "r.html", "--chrome-trace": "t.json"}
        for name in files.values():  # an older report, readable by all, is replaced
            with open(os.path.join(out, name), "w") as f:
                f.write("old")
            os.chmod(os.path.join(out, name), 0o644)
        args = [a for flag, name in files.items() for a in (flag, os.path.join(out, name))]
        export = os.path.join(out, "tables")
        old = os.umask(0o022)
        try:
            subprocess.run([ANALYZE, self.traces, "--quiet", *args, "--export", export],
                           check=True, capture_output=True)
        finally:
            os.umask(old)
        written = [os.path.join(out, n) for n in files.values()]
        written += [os.path.join(export, n) for n in os.listdir(export)]
        self.assertGreater(len(written), 4)
        for path in written:
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600, path)
        self.assertEqual(stat.S_IMODE(os.stat(export).st_mode), 0o700)

    def test_fifos_are_skipped_not_waited_on(self):
        traces = tempfile.mkdtemp()
        shutil.copy(self.trace, traces)
        fifo = os.path.join(traces, "z.pitrace.zst")
        os.mkfifo(fifo)
        run = subprocess.run([ANALYZE, traces, "--quiet"], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f"{fifo}: skipped: not a regular file (a FIFO)", run.stderr)
        for command in ([ANALYZE, fifo], [ANALYZE, "dump", fifo], [ANALYZE, "info", fifo]):
            run = subprocess.run(command, capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 2, command)
            self.assertIn("not a regular file (a FIFO)", run.stderr)

    def test_an_output_that_is_an_input_is_refused(self):
        traces = tempfile.mkdtemp()
        trace = os.path.join(traces, "a.pitrace.zst")
        shutil.copy(self.trace, trace)
        os.chmod(trace, 0o600)
        os.link(trace, os.path.join(traces, "hardlink.json"))
        os.symlink(trace, os.path.join(traces, "symlink.html"))
        before = (digest(trace), os.stat(trace).st_mode)
        for flag, target in (("--html", trace), ("--json", os.path.join(traces, "hardlink.json")),
                             ("--chrome-trace", os.path.join(traces, "symlink.html")),
                             ("--html", os.path.join(traces, "symlink.html"))):
            run = subprocess.run([ANALYZE, traces, flag, target], capture_output=True, text=True)
            self.assertEqual(run.returncode, 1, (flag, target, run.stderr))
            self.assertIn(f"{flag} {target} is the input trace", run.stderr)
            self.assertEqual((digest(trace), os.stat(trace).st_mode), before, (flag, target))
        run = subprocess.run([ANALYZE, trace, "--export", traces], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, "tables beside the traces overwrite none of them")

    def test_failed_output_and_wrong_input_say_why(self):
        for command in ("dump", "info"):
            with open("/dev/full", "w") as full:
                run = subprocess.run([ANALYZE, command, self.trace], stdout=full,
                                     stderr=subprocess.PIPE, text=True)
            self.assertNotEqual(run.returncode, 0, command)
            self.assertIn("profinject-analyze: cannot write to stdout: No space left on device",
                          run.stderr)
        directory = tempfile.mkdtemp()
        run = subprocess.run([ANALYZE, self.trace, "--quiet", "--html", directory + "/"],
                             capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("Is a directory", run.stderr)
        self.assertEqual(os.listdir(directory), [], "nothing left in the directory")
        for command in ([ANALYZE, "/proc/version"], [ANALYZE, "dump", "/proc/version"]):
            run = subprocess.run(command, capture_output=True, text=True)
            self.assertEqual(run.returncode, 2)
            self.assertIn("not a profinject trace file", run.stderr)


class DamagedFrames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp()
        traces = os.path.join(cls.work, "traces")
        # a frame every millisecond or so: a file of many frames
        record([os.path.join(PROGRAMS, "prog_sleeps")], traces, PROFINJECT_FLUSH_MS="5")
        cls.trace = trace_files(traces)[0]
        with open(cls.trace, "rb") as f:
            cls.data = f.read()
        cls.report = cls.analyse(cls.trace)

    @staticmethod
    def analyse(path):
        out = path + ".json"
        run = subprocess.run([ANALYZE, path, "--quiet", "--json", out], capture_output=True,
                             text=True)
        report = None
        if os.path.exists(out):
            with open(out) as f:
                report = json.load(f)
            os.unlink(out)
        return run.returncode, run.stderr, report

    def test_the_recorder_checksums_its_frames(self):
        run = subprocess.run(["zstd", "-lv", self.trace], capture_output=True, text=True)
        self.assertIn("Check: XXH64", run.stdout + run.stderr)
        frames = int(next(line.split(":")[1] for line in run.stdout.splitlines()
                          if "Frames" in line))
        self.assertGreater(frames, 20, "a file of many frames")

    def test_a_flipped_bit_is_reported_or_changes_nothing(self):
        path = os.path.join(self.work, "flipped.pitrace.zst")
        shutil.copy(self.trace, path)  # the report names the file: the same name unflipped
        rc, err, base = self.analyse(path)
        self.assertEqual(rc, 0, err)
        counts = {"reported": 0, "identical": 0, "kept": 0}
        flips = 60
        for i in range(flips):
            bit = (i * 8 * len(self.data)) // flips + i % 8
            data = bytearray(self.data)
            data[bit // 8] ^= 1 << (bit % 8)
            with open(path, "wb") as f:
                f.write(data)
            damaged = subprocess.run(["zstd", "-t", "-q", path], capture_output=True).returncode
            rc, err, report = self.analyse(path)
            said = rc != 0 or "warning" in err
            if report is not None:
                said = said or bool(report["inputs"].get("damaged_files")) or any(
                    p["truncated"] for p in report["processes"])
            if said:
                counts["reported"] += 1
                counts["kept"] += report is not None
            else:
                self.assertEqual(report, base, f"bit {bit}: different data, not reported")
                counts["identical"] += 1
                self.assertEqual(damaged, 0, f"bit {bit}: zstd finds damage the analyzer missed")
        # most flips land in record frames: those files are still read, around the damage
        self.assertGreater(counts["kept"], flips * 3 // 4, counts)

    def test_a_damaged_frame_costs_that_frame_and_is_counted(self):
        base = self.report[2]
        # the frames as zstd sees them: each magic that starts a stretch zstd -t accepts
        magic = b"\x28\xb5\x2f\xfd"
        starts = [i for i in range(len(self.data)) if self.data.startswith(magic, i)]
        starts.append(len(self.data))
        middle = starts[len(starts) // 2]
        end = starts[len(starts) // 2 + 1]
        piece = os.path.join(self.work, "piece.zst")
        with open(piece, "wb") as f:
            f.write(self.data[middle:end])
        self.assertEqual(subprocess.run(["zstd", "-t", "-q", piece]).returncode, 0,
                         "one whole frame")
        data = bytearray(self.data)
        data[middle + (end - middle) // 2] ^= 0xff
        path = os.path.join(self.work, "damaged.pitrace.zst")
        with open(path, "wb") as f:
            f.write(data)
        self.assertNotEqual(subprocess.run(["zstd", "-t", "-q", path],
                                           capture_output=True).returncode, 0)
        rc, err, report = self.analyse(path)
        self.assertEqual(rc, 0, err)
        self.assertIn(f"warning: damaged data skipped: {end - middle} bytes in 1 places "
                      f"(the first at byte {middle})", err)
        process = report["processes"][0]
        self.assertEqual(process["damaged_bytes"], end - middle)
        self.assertEqual(report["inputs"]["damaged_files"], 1)
        # the frames after it were read: the end of the process, in its last frame
        self.assertEqual(process["end"], base["processes"][0]["end"])
        self.assertLess(process["records"], base["processes"][0]["records"])
        text = subprocess.run([ANALYZE, path], capture_output=True, text=True).stdout
        self.assertIn(f"warning: {end - middle} bytes of damaged trace data", text)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
