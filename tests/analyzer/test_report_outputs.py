#!/usr/bin/env python3
"""What the report command writes, whoever reads its output: the requested
files are complete when stdout is a pipe closed early (`| head -1`), and
failed opens are named by their error (`open failed ENOENT`), in the text
and in the JSON.

Run by ctest with the build's paths in the environment."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import browser  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
PROGRAMS = os.environ["PI_PROGRAMS"]
SOURCE = os.environ["PI_SOURCE"]
MISSING = 25


def record(command, trace_dir):
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=trace_dir)
    subprocess.run(command, env=environment, check=True, stdout=subprocess.DEVNULL)


class ReportOutputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp()
        cls.traces = os.path.join(cls.work, "traces")
        # a data folder deep enough that its files' paths do not fit the report's columns
        data = os.path.join(cls.work, "a-data-folder-with-a-long-name", "and-another-level")
        os.makedirs(data)
        cls.data = data
        record([os.path.join(PROGRAMS, "prog_missing_files"), data, str(MISSING)], cls.traces)

    def test_no_file_is_written_through_a_planted_link(self):
        # the old temporary names were predictable (report.json.tmp): a link planted
        # there was followed and its target overwritten
        out = tempfile.mkdtemp()
        victim = os.path.join(out, "victim")
        with open(victim, "w") as f:
            f.write("untouched")
        paths = {"--json": "r.json", "--html": "r.html", "--chrome-trace": "t.json"}
        for name in paths.values():
            os.symlink(victim, os.path.join(out, name + ".tmp"))
        args = [a for flag, name in paths.items() for a in (flag, os.path.join(out, name))]
        subprocess.run([ANALYZE, self.traces, "--quiet", *args], check=True, capture_output=True)
        with open(victim) as f:
            self.assertEqual(f.read(), "untouched")
        for name in paths.values():
            self.assertTrue(os.path.isfile(os.path.join(out, name)) and
                            not os.path.islink(os.path.join(out, name)), name)
        leftovers = [n for n in os.listdir(out) if n.startswith(".")]
        self.assertEqual(leftovers, [], "no temporary file left behind")

    def test_a_full_string_table_is_said_on_the_first_screen(self):
        # 70,000 distinct paths, more than the recorder's 65,536 strings
        data, traces = tempfile.mkdtemp(), tempfile.mkdtemp()
        record([os.path.join(PROGRAMS, "prog_missing_files"), data, "70000"], traces)
        json_path = os.path.join(traces, "r.json")
        text = subprocess.run([ANALYZE, traces, "--json", json_path], check=True,
                              capture_output=True, text=True).stdout
        with open(json_path) as f:
            report = json.load(f)
        lost = report["inputs"]["strings_lost"]
        # every path beyond the table's room, give or take the table's own few dozen others
        self.assertGreater(lost, 70000 - 65536 - 200)
        self.assertLess(lost, 70000)
        self.assertEqual(report["inputs"]["lost"], 0, "records were not lost, only names")
        first_screen = "\n".join(text.splitlines()[:8])
        self.assertIn(f"warning: {lost} names, paths or call stacks were not kept", first_screen)

    def test_names_that_are_markup_stay_text_in_a_real_browser(self):
        work, traces = tempfile.mkdtemp(), tempfile.mkdtemp()
        program = os.path.join(SOURCE, "tests", "programs", "py_html_names.py")
        environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
        run = subprocess.run([sys.executable, program, work], env=environment,
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.stdout, "ok\n", run.stderr)
        page = os.path.join(work, "report.html")
        subprocess.run([ANALYZE, traces, "--quiet", "--html", page], check=True,
                       capture_output=True)
        with open(page) as f:
            html = f.read()
        for raw in ("<img src=x", "<script>document", "<b>pwned"):
            self.assertNotIn(raw, html)
        # the range and the thread are on the page, as text (files are not listed there)
        for shown in ("&lt;script&gt;document", "&lt;b&gt;pwned"):
            self.assertIn(shown, html, "the name is on the page, as text")
        dom, console = browser.load(page)
        self.assertEqual(console, [], "nothing on the browser's console")
        self.assertIn("</html>", dom)
        # had any of them run, the body would carry the attribute it sets
        self.assertNotRegex(dom, r"<body[^>]*data-pwned", "no injected script or handler ran")
        self.assertRegex(dom, r"<body>")
        self.assertNotIn("<b>pwned</b>", dom)

    def test_no_chrome_trace_when_nothing_was_read(self):
        out = tempfile.mkdtemp()
        chrome = os.path.join(out, "t.json")
        result = subprocess.run([ANALYZE, os.path.join(out, "missing.pitrace.zst"),
                                 "--chrome-trace", chrome], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(os.listdir(out), [], "neither the trace nor a temporary file")

    def test_long_paths_keep_their_file_name(self):
        text = subprocess.run([ANALYZE, self.traces], check=True, capture_output=True,
                              text=True).stdout
        rows = [r for r in text.split("BUSIEST FILES", 1)[1].split("\n\n")[0].splitlines()[2:]
                if r.strip()]
        path = os.path.join(self.data, "file")
        self.assertGreater(len(path), 48)
        [row] = [r for r in rows if r.split()[0].endswith("/and-another-level/file")]
        shown = row.split()[0]
        self.assertEqual(len(shown), 48)
        self.assertIn("...", shown)
        self.assertTrue(path.startswith(shown.split("...")[0]), "the start kept")

    def test_pipe_closed_early(self):
        """The reader of stdout is gone before the first line: the files are
        still written whole, and the exit status says all went well."""
        json_path = os.path.join(self.work, "closed.json")
        chrome = os.path.join(self.work, "closed.trace.json")
        html = os.path.join(self.work, "closed.html")
        read_end, write_end = os.pipe()
        os.close(read_end)
        result = subprocess.run([ANALYZE, self.traces, "--json", json_path, "--chrome-trace",
                                 chrome, "--html", html], stdout=write_end,
                                stderr=subprocess.PIPE, text=True)
        os.close(write_end)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(json_path) as f:
            self.assertIn("processes", json.load(f))
        with open(chrome) as f:
            json.load(f)
        with open(html) as f:
            self.assertTrue(f.read().rstrip().endswith("</html>"))

    def test_head_one(self):
        """The shell's `| head -1`, as users type it."""
        json_path = os.path.join(self.work, "head.json")
        result = subprocess.run(f"'{ANALYZE}' '{self.traces}' --json '{json_path}' | head -1",
                                shell=True, capture_output=True, text=True)
        self.assertEqual(len(result.stdout.splitlines()), 1)
        with open(json_path) as f:
            json.load(f)

    def test_failed_opens_named_by_error(self):
        json_path = os.path.join(self.work, "errors.json")
        text = subprocess.run([ANALYZE, self.traces, "--json", json_path], check=True,
                              capture_output=True, text=True).stdout
        with open(json_path) as f:
            report = json.load(f)
        rows = {(e["name"], e["class"]): e["count"] for e in report["latency"]
                if e["group"] == "io" and e["name"] in ("open", "fopen")}
        self.assertEqual(rows.get(("open", "failed ENOENT")), MISSING, rows)
        self.assertEqual(rows.get(("open", "failed ENOTDIR")), 2, rows)
        self.assertEqual(rows.get(("fopen", "failed ENOENT")), 3, rows)
        # the one open that succeeded (creat) is a file's, never "open unknown"
        self.assertEqual(rows.get(("open", "file")), 1, rows)
        self.assertNotIn(("open", "unknown"), rows)
        counts = {}
        for line in text.splitlines():
            words = line.split()
            if len(words) > 3 and words[1] == "failed":
                counts[" ".join(words[:3])] = int(words[3])
        self.assertEqual(counts.get("open failed ENOENT"), MISSING, text)
        self.assertEqual(counts.get("open failed ENOTDIR"), 2, text)
        self.assertEqual(counts.get("fopen failed ENOENT"), 3, text)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
