"""The `profinject` command (and `python -m profinject`): the launcher
program inside this package, with the same arguments, in this process's
place."""
import os
import shlex
import shutil
import sys

from ._native import launcher_path


def command_words(argv0):
    """How the user can type this command again, for the hints the launcher
    prints ("analyse them with: ..."): the bare name where PATH finds this
    same script, the interpreter with -m profinject for the module, else the
    script's path."""
    if os.path.basename(argv0) == "__main__.py":
        return [sys.executable, "-m", "profinject"]
    name = os.path.basename(argv0)
    found = shutil.which(name)
    if found and os.path.realpath(found) == os.path.realpath(argv0):
        return [name]
    return [os.path.abspath(argv0)]


def main():
    launcher = launcher_path()
    if not os.access(launcher, os.X_OK):
        sys.stderr.write(f"profinject: {launcher} is missing or not executable: reinstall "
                         "the package (pip install --force-reinstall profinject)\n")
        return 127
    # the launcher reads it for its hints and takes it out of the environment
    os.environ["PROFINJECT_COMMAND"] = " ".join(map(shlex.quote, command_words(sys.argv[0])))
    if sys.argv[1:2] == ["analyze"]:  # --export's Parquet: written with this Python's pyarrow
        os.environ.setdefault("PROFINJECT_PYTHON", sys.executable)
    try:
        os.execv(launcher, [launcher] + sys.argv[1:])
    except OSError as error:
        sys.stderr.write(f"profinject: cannot run {launcher}: {error.strerror}\n")
        return 126


if __name__ == "__main__":
    sys.exit(main())
