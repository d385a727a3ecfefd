"""Where the installed package keeps its programs: the layout of an installed
prefix (bin/profinject, bin/profinject-analyze, lib/profinject/) under _bin/,
so that the launcher finds its library and the analyzer from its own place,
as it does in any prefix."""
import os

PREFIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin")


def launcher_path():
    """The launcher program, `profinject` run, analyze, ctl and attach."""
    return os.path.join(PREFIX, "bin", "profinject")


def analyzer_path():
    """profinject-analyze, which reads trace folders into reports."""
    return os.path.join(PREFIX, "bin", "profinject-analyze")


def library_path():
    """libprofinject.so, the library the launcher preloads into the job."""
    return os.path.join(PREFIX, "lib", "profinject", "libprofinject.so")
