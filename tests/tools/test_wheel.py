#!/usr/bin/env python3
"""The Python wheel (tools/wheel) as a user gets it: built, installed with pip
into a fresh venv of a Python that is not the project's (the system's, as
the build found it: PROFINJECT_USER_PYTHON), and used there through its
`profinject` command with no build tree, compiler or PROFINJECT_LIB:
(a) its tag is true: every program and library in it needs no GLIBC_ symbol
    version above 2.28 (objdump -T) and no library outside it but glibc's
    (readelf -d), and `auditwheel show` agrees; pip refuses it for a glibc
    2.27 platform at install time;
(b) the example PyTorch job (the project's Python) and a job without
    PyTorch (the venv's), profiled through `profinject run` and `python -m
    profinject run`, analysed through `profinject analyze`: the report finds
    the steps the job counted and the files it read, as often as it read
    them;
(c) profinject.load_report() checks the schema and its version, and the
    tables (pandas, from the project's Python) hold the same figures;
(d) the same in a Debian 12 and a Debian 11 root file system (chroot): pip
    installs it there and the job without PyTorch is profiled and analysed.
Needs root (the wheel is built in a chroot; the roots are entered with
chroot): without it each test fails and says so."""
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

SOURCE = os.environ["PI_SOURCE"]
BUILD = os.environ["PI_BUILD"]
DEBIAN12_ROOT = os.environ["PI_CONTAINER_ROOT"]
DEBIAN11_ROOT = next((root for root in (os.path.join(BUILD, "wheel-root"),
                                        os.path.join(SOURCE, "build", "wheel-root"))
                      if os.path.exists(os.path.join(root, ".profinject-root"))), None)
# a Python that is not the project's: the system's (CMake's PROFINJECT_USER_PYTHON)
USER_PYTHON = os.environ.get("PI_USER_PYTHON", "")
EXAMPLE = os.path.join(SOURCE, "examples", "pytorch_train.py")
ARCH = platform.machine()
OLDEST_GLIBC = (2, 28)

# the job without PyTorch: reads each of its files @rounds times, says what it read
READER = """import json, os, sys
folder, rounds = sys.argv[1], int(sys.argv[2])
read = {}
for _ in range(rounds):
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            read[path] = read.get(path, 0) + len(f.read())
print(json.dumps(read))
"""

wheel = None
setup_seconds = {}


def why_not():
    if os.geteuid() != 0:
        return "building the wheel (chroot, mounts) needs root"
    if not USER_PYTHON or not os.access(USER_PYTHON, os.X_OK):
        return (f"no system Python ({USER_PYTHON or 'PROFINJECT_USER_PYTHON not found'}) to "
                f"make the user's venv from: apt-get install python3 python3-venv")
    return None


def setUpModule():
    global wheel
    if why_not():
        return
    out = tempfile.mkdtemp(prefix="pi-wheel-")
    done = subprocess.run([os.path.join(SOURCE, "tools", "wheel"), out], capture_output=True,
                          text=True, timeout=420,
                          env=dict(os.environ, BUILD_DIR=BUILD, PROFINJECT_PYTHON=sys.executable))
    if done.returncode != 0:
        raise AssertionError(f"tools/wheel failed: {done.stderr}")
    [wheel] = glob.glob(os.path.join(out, "*.whl"))


def clean_env(**extra):
    """An environment with nothing of the build: no PROFINJECT_*, LD_PRELOAD
    or the project's venv on PATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PROFINJECT_") and k not in ("LD_PRELOAD", "PYTHONPATH",
                                                            "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    env.update(extra)
    return env


def make_venv(folder):
    """A venv of the system's Python with the wheel installed by pip; its
    bin/ folder. Records the time it took."""
    start = time.monotonic()
    subprocess.run([USER_PYTHON, "-m", "venv", folder], check=True, env=clean_env())
    done = subprocess.run([os.path.join(folder, "bin", "pip"), "install", "-q", "--no-index",
                           "--disable-pip-version-check", wheel], capture_output=True, text=True,
                          env=clean_env())
    if done.returncode != 0:
        raise AssertionError(f"pip install {wheel}: {done.stderr}")
    setup_seconds["venv and pip install"] = time.monotonic() - start
    return os.path.join(folder, "bin")


def write_reader_files(folder, count=5):
    """@count files of different sizes in @folder; the reader's script."""
    data = os.path.join(folder, "data")
    os.makedirs(data)
    for i in range(count):
        with open(os.path.join(data, f"part{i}.bin"), "wb") as f:
            f.write(os.urandom(1000 * (i + 1)))
    script = os.path.join(folder, "reader.py")
    with open(script, "w") as f:
        f.write(READER)
    return data, script


def files_by_path(report):
    return {entry["path"]: entry for entry in report["files"]}


def glibc_version(text):
    return tuple(int(part) for part in text.split("."))


class Tag(unittest.TestCase):
    """The wheel's tag says the glibc it needs, and pip holds older systems
    to it."""

    def setUp(self):
        reason = why_not()
        if reason:
            self.fail(reason)

    def test_name_says_manylinux_2_28(self):
        self.assertRegex(os.path.basename(wheel),
                         rf"^profinject-[0-9.]+-py3-none-manylinux_2_28_{ARCH}\.whl$")

    def test_every_file_needs_at_most_glibc_2_28_and_nothing_outside(self):
        folder = tempfile.mkdtemp(prefix="pi-wheel-files-")
        with zipfile.ZipFile(wheel) as z:
            z.extractall(folder)
        elves = []
        for top, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(top, name)
                with open(path, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        elves.append(path)
        names = {os.path.basename(path) for path in elves}
        for expected in ("profinject", "profinject-analyze", "libprofinject.so"):
            self.assertIn(expected, names)
        glibc = ("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
                 "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1")
        for path in elves:
            symbols = subprocess.run(["objdump", "-T", path], capture_output=True, text=True,
                                     check=True).stdout
            versions = {glibc_version(v) for v in re.findall(r"GLIBC_([0-9.]+)", symbols)}
            self.assertTrue(versions, path)
            self.assertLessEqual(max(versions), OLDEST_GLIBC,
                                 f"{os.path.relpath(path, folder)} needs GLIBC_"
                                 f"{'.'.join(map(str, max(versions)))}")
            dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                                     check=True).stdout
            for needed in re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dynamic):
                self.assertTrue(needed in glibc or needed in names,
                                f"{os.path.relpath(path, folder)} needs {needed}, which is "
                                "neither glibc's nor in the wheel")

    def test_auditwheel_agrees(self):
        done = subprocess.run([sys.executable, "-m", "auditwheel", "show", wheel],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        text = " ".join(done.stdout.split())
        found = re.search(r"consistent with the following platform tag: "
                          rf'"manylinux_(\d+)_(\d+)_{ARCH}"', text)
        self.assertIsNotNone(found, done.stdout)
        self.assertLessEqual((int(found.group(1)), int(found.group(2))), OLDEST_GLIBC, text)

    def test_pip_refuses_it_for_an_older_glibc(self):
        venv = tempfile.mkdtemp(prefix="pi-wheel-pip-")
        subprocess.run([USER_PYTHON, "-m", "venv", venv], check=True, env=clean_env())
        pip = os.path.join(venv, "bin", "pip")

        def install(plat):
            return subprocess.run([pip, "install", "--no-index", "--disable-pip-version-check",
                                   "--only-binary=:all:", "--platform", f"{plat}_{ARCH}",
                                   "--target", tempfile.mkdtemp(dir=venv), wheel],
                                  capture_output=True, text=True, env=clean_env())

        older = install("manylinux_2_27")
        self.assertNotEqual(older.returncode, 0, older.stdout)
        self.assertIn("is not a supported wheel on this platform", older.stderr)
        self.assertEqual(install("manylinux_2_28").returncode, 0)


class InstalledCommand(unittest.TestCase):
    """The command pip installs, in a fresh venv of another Python, profiles
    a PyTorch job and one without PyTorch and reads their reports."""

    @classmethod
    def setUpClass(cls):
        cls.reason = why_not()
        if cls.reason:
            return
        cls.work = tempfile.mkdtemp(prefix="pi-wheel-use-")
        cls.bin = make_venv(os.path.join(cls.work, "env"))
        cls.env = clean_env(PATH=cls.bin + ":/usr/bin:/bin")

    def setUp(self):
        if self.reason:
            self.fail(self.reason)

    def analyze(self, traces, command):
        out = os.path.join(traces + "-report.json")
        done = subprocess.run(command + ["analyze", traces, "--quiet", "--json", out],
                              capture_output=True, text=True, env=self.env, cwd=self.work)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(out) as f:
            return out, json.load(f)

    def test_pytorch_job_steps_and_files(self):
        traces = os.path.join(self.work, "torch-traces")
        data = os.path.join(self.work, "torch-data")
        summary = os.path.join(self.work, "job.json")
        start = time.monotonic()
        job = subprocess.run(["profinject", "run", "-o", traces, "--", sys.executable, EXAMPLE,
                              "--data-dir", data, "--samples", "128", "--batch-size", "16",
                              "--epochs", "2", "--workers", "2", "--summary", summary],
                             capture_output=True, text=True, env=dict(self.env,
                                                                      OMP_NUM_THREADS="1"),
                             cwd=self.work, timeout=240)
        self.assertEqual(job.returncode, 0, job.stderr)
        # the hint names the command the user typed
        self.assertIn(f"profinject: analyse them with: profinject analyze {traces}",
                      job.stdout + job.stderr)
        _, report = self.analyze(traces, ["profinject"])
        setup_seconds["first job and report"] = time.monotonic() - start
        with open(summary) as f:
            truth = json.load(f)
        self.assertIn(f"trained {truth['steps']} steps", job.stdout)
        [main] = [p for p in report["processes"] if p["pid"] == truth["pid"]]
        self.assertEqual(main["steps"]["count"], truth["steps"])
        # each sample's file, opened once an epoch by the workers
        files = files_by_path(report)
        samples = sorted(glob.glob(os.path.join(truth["data_dir"], "sample_*.bin")))
        self.assertEqual(len(samples), truth["samples"])
        for path in samples:
            self.assertIn(path, files)
            self.assertEqual(files[path]["opens"], truth["epochs"], path)

    def reader_job(self, name, times):
        """The reader script run @times over its files by `python -m profinject run` of the
        venv: the job, its traces, the venv's python."""
        data, script = write_reader_files(os.path.join(self.work, name))
        traces = os.path.join(self.work, name + "-traces")
        python = os.path.join(self.bin, "python")
        job = subprocess.run([python, "-m", "profinject", "run", "-o", traces, "--", python,
                              script, data, str(times)], capture_output=True, text=True,
                             env=self.env, cwd=self.work, timeout=120)
        self.assertEqual(job.returncode, 0, job.stderr)
        return job, traces, python

    def test_job_without_pytorch_through_python_m(self):
        job, traces, python = self.reader_job("plain", 7)
        self.assertIn(f"analyse them with: {python} -m profinject analyze {traces}",
                      job.stdout + job.stderr)
        read = json.loads(job.stdout.splitlines()[0])
        out, report = self.analyze(traces, [python, "-m", "profinject"])
        files = files_by_path(report)
        for path, size in read.items():
            self.assertEqual(files[path]["opens"], 7, path)
            self.assertEqual(files[path]["bytes"], size, path)
            self.assertEqual(size, 7 * os.path.getsize(path))
        # load_report and analyze in the venv, which has no pandas
        for call, argument in (("load_report", out), ("analyze", traces)):
            loaded = subprocess.run([python, "-c", "import json, sys, profinject\n"
                                     f"r = profinject.{call}(sys.argv[1])\n"
                                     "print(json.dumps({f['path']: f['opens'] for f in "
                                     "r['files']}))", argument],
                                    capture_output=True, text=True, env=self.env)
            self.assertEqual(loaded.returncode, 0, loaded.stderr)
            self.assertEqual(json.loads(loaded.stdout),
                             {path: entry["opens"] for path, entry in files.items()}, call)

    def test_parquet_tables_are_written_with_the_users_python(self):
        """--export's Parquet writer ships in the wheel; `profinject analyze` writes it with
        the Python the package is installed in, and says so when that one has no pyarrow."""
        _, traces, python = self.reader_job("parquet", 2)

        def export(env):
            out = tempfile.mkdtemp(dir=self.work)
            done = subprocess.run([python, "-m", "profinject", "analyze", traces, "--quiet",
                                   "--export", out, "--export-format", "parquet"],
                                  capture_output=True, text=True, env=env, cwd=self.work)
            return done, out

        # the venv's own Python has no pyarrow: it is named, and the CSV tables stay
        done, out = export(self.env)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn(f"with {python}: no pyarrow", done.stderr)
        tables = sorted(name[:-4] for name in os.listdir(out) if name.endswith(".csv"))
        self.assertIn("steps", tables)
        # one that has it, named by PROFINJECT_PYTHON: a Parquet table for each CSV one
        done, out = export(dict(self.env, PROFINJECT_PYTHON=sys.executable))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(sorted(name[:-8] for name in os.listdir(out)
                                if name.endswith(".parquet")), tables)
        self.assertEqual([name for name in os.listdir(out) if name.endswith(".csv")], [])

    def test_load_report_refuses_other_versions_and_other_files(self):
        python = os.path.join(self.bin, "python")
        folder = tempfile.mkdtemp(dir=self.work)
        cases = {"version 3": {"schema": "profinject-report", "version": 3},
                 "another schema": {"schema": "something-else", "version": 2},
                 "not JSON": None}
        said = {}
        for name, content in cases.items():
            path = os.path.join(folder, name.replace(" ", "-") + ".json")
            with open(path, "w") as f:
                f.write("{not json" if content is None else json.dumps(content))
            done = subprocess.run([python, "-c", "import sys, profinject\n"
                                   "try:\n    profinject.load_report(sys.argv[1])\n"
                                   "except profinject.ReportError as e:\n"
                                   "    print(e); sys.exit(3)", path],
                                  capture_output=True, text=True, env=self.env)
            self.assertEqual(done.returncode, 3, f"{name}: {done.stdout} {done.stderr}")
            self.assertTrue(done.stdout.startswith("profinject: "), done.stdout)
            said[name] = done.stdout
        self.assertIn("version 3", said["version 3"])
        self.assertIn("'something-else'", said["another schema"])

    def test_tables_as_dataframes(self):
        """With pandas (the project's Python has it), the tables hold the
        report's figures: steps the job counted, the files' opens."""
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("no pandas in the project's Python")
        data, script = write_reader_files(os.path.join(self.work, "tables"))
        traces = os.path.join(self.work, "tables-traces")
        summary = os.path.join(self.work, "tables-job.json")
        job = subprocess.run(["profinject", "run", "-o", traces, "--", sys.executable, EXAMPLE,
                              "--data-dir", data + "-torch", "--samples", "64", "--batch-size",
                              "8", "--epochs", "1", "--workers", "1", "--summary", summary],
                             capture_output=True, text=True,
                             env=dict(self.env, OMP_NUM_THREADS="1"), cwd=self.work,
                             timeout=240)
        self.assertEqual(job.returncode, 0, job.stderr)
        out, report = self.analyze(traces, ["profinject"])
        with open(summary) as f:
            truth = json.load(f)
        site = glob.glob(os.path.join(self.work, "env", "lib", "python3*", "site-packages"))[0]
        done = subprocess.run([sys.executable, "-c", """import json, sys, profinject
report = profinject.load_report(sys.argv[1])
steps, latency, kernels = (profinject.steps(report), profinject.latency(report),
                           profinject.kernels(report))
opens = latency[(latency["group"] == "io") & (latency["name"] == "open")
                & (latency["class"] == "file")]
print(json.dumps({"steps": dict(zip(steps["pid"].tolist(), steps["steps"].tolist())),
                  "opens": int(opens["count"].sum()), "kernels": len(kernels),
                  "type": type(steps).__name__}))""", out], capture_output=True, text=True,
                              env=dict(self.env, PYTHONPATH=site))
        self.assertEqual(done.returncode, 0, done.stderr)
        tables = json.loads(done.stdout)
        self.assertEqual(tables["type"], "DataFrame")
        self.assertEqual(tables["steps"].get(str(truth["pid"])), truth["steps"], tables)
        samples = set(glob.glob(os.path.join(truth["data_dir"], "sample_*.bin")))
        opened = sum(entry["opens"] for entry in report["files"] if entry["path"] in samples)
        self.assertEqual(opened, truth["samples"])
        self.assertGreaterEqual(tables["opens"], opened)
        self.assertEqual(tables["kernels"], 0)  # a CPU job launches nothing on a GPU


class Roots(unittest.TestCase):
    """pip installs the wheel in other systems' root file systems, where its
    command profiles and analyses a job: Debian 12 (glibc 2.36) and Debian 11
    (glibc 2.31)."""

    def setUp(self):
        reason = why_not()
        if reason:
            self.fail(reason)

    def run_in(self, root, expected_glibc):
        if not root or not os.path.exists(os.path.join(root, ".profinject-root")):
            self.fail(f"no root file system at {root}: run tools/setup --containers")
        pip_wheels = glob.glob(os.path.join(DEBIAN11_ROOT or "", "opt", "wheels", "pip-*.whl"))
        if not pip_wheels:
            self.fail("no pip wheel in build/wheel-root/opt/wheels: run tools/setup --wheel")
        tmp = tempfile.mkdtemp(prefix="pi-wheel-root-")
        os.chmod(tmp, 0o1777)
        shutil.copy(wheel, tmp)
        shutil.copy(pip_wheels[0], os.path.join(tmp, "pip.whl"))
        write_reader_files(tmp)
        name = os.path.basename(wheel)
        inside = f"""set -e
getconf GNU_LIBC_VERSION
python3 -m venv --without-pip /tmp/env
/tmp/env/bin/python /tmp/pip.whl/pip install -q --no-index --disable-pip-version-check \
  /tmp/{name}
cd /tmp
/tmp/env/bin/profinject run -o /tmp/traces -- /tmp/env/bin/python /tmp/reader.py /tmp/data 3 \
  >/tmp/read.json
/tmp/env/bin/profinject analyze /tmp/traces --quiet --json /tmp/report.json
/tmp/env/bin/python -c 'import profinject
print(len(profinject.load_report("/tmp/report.json")["files"]))'
"""
        with open(os.path.join(tmp, "inside.sh"), "w") as f:
            f.write(inside)
        script = (f"mount -t proc proc {root}/proc && mount --bind {tmp} {root}/tmp && "
                  f"exec chroot {root} env -i PATH=/usr/bin:/bin HOME=/tmp sh /tmp/inside.sh")
        done = subprocess.run(["unshare", "--mount", "--pid", "--fork", "sh", "-c", script],
                              capture_output=True, text=True, timeout=180)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertEqual(done.stdout.split()[:2], ["glibc", expected_glibc], done.stdout)
        with open(os.path.join(tmp, "read.json")) as f:
            read = json.load(f)
        with open(os.path.join(tmp, "report.json")) as f:
            report = json.load(f)
        files = files_by_path(report)
        self.assertEqual(int(done.stdout.split()[-1]), len(report["files"]))
        for path, size in read.items():
            self.assertEqual(files[path]["opens"], 3, path)
            self.assertEqual(files[path]["bytes"], size, path)

    def test_debian_12(self):
        self.run_in(DEBIAN12_ROOT, "2.36")

    def test_debian_11(self):
        self.run_in(DEBIAN11_ROOT, "2.31")


def tearDownModule():
    if setup_seconds:
        print("wheel: " + ", ".join(f"{k} {v:.1f} s" for k, v in setup_seconds.items()),
              file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
