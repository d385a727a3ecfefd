"""The HTML reports in a real browser (headless Chromium): the page as it
was built (its DOM after the scripts ran), what its console said, a frame
of a flame graph clicked; and the figures the page shows, read back."""
import os
import re
import shutil
import subprocess
import tempfile


def chromium():
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise AssertionError("chromium is not installed (tools/setup installs it)")
    return found


def load(path, *flags):
    """(dom, console lines) of the page at @path once loaded and its scripts run."""
    run = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                          "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
                          *flags, "--dump-dom", "file://" + os.path.abspath(path)],
                         capture_output=True, text=True, timeout=120)
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    return run.stdout, console


UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20,
         "GiB": 1 << 30}


def quantity(text):
    """A figure as the page prints it ("1.5 ms", "200.0 MiB", "79%") in seconds, bytes or
    its own number."""
    number, unit = re.fullmatch(r"(-?[\d.]+) ?([a-zA-Z%]*)", text).groups()
    return float(number) * UNITS.get(unit, 1)


def flame_frames(dom, graph):
    """(share of the whole, name, figure) of each frame of flame graph @graph (its svg id)."""
    start = dom.index(f'id="{graph}"')
    end = dom.find("<h2>", start)
    return [(float(w), label, quantity(figure)) for w, label, figure in re.findall(
        r'<g class="frame" data-x="[\d.]+" data-w="([\d.]+)"><title>([^<]*?): ([\d.]+ \w+),',
        dom[start:end if end >= 0 else len(dom)])]


def dump_dom(path):
    return load(path)[0]


ZOOM = """<!DOCTYPE html><html><body><iframe id="f" src="%s"></iframe><script>
document.getElementById('f').onload = function () {
  var g = Array.from(this.contentDocument.querySelectorAll('#%s g.frame')).find(function (x) {
    return x.querySelector('title').textContent.indexOf(%s) === 0; });
  if (!g) { document.body.setAttribute('data-zoomed', 'none'); return; }
  g.querySelector('rect').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  var r = g.querySelector('rect');
  document.body.setAttribute('data-zoomed', r.getAttribute('x') + ',' + r.getAttribute('width'));
};
</script></body></html>"""


def click_frame(page, graph, label):
    """Click the frame of flame graph @graph (its svg id) whose name starts with
    @label: its rect's x and width after the zoom, in the graph's units."""
    folder = tempfile.mkdtemp()
    shutil.copy(page, os.path.join(folder, "report.html"))
    wrapper = os.path.join(folder, "click.html")
    with open(wrapper, "w") as f:
        f.write(ZOOM % ("report.html", graph, repr(label)))
    dom, _ = load(wrapper, "--allow-file-access-from-files")
    found = re.search(r'data-zoomed="([^"]*)"', dom)
    if not found or found.group(1) == "none":
        raise AssertionError(f"no frame {label!r} in {graph}")
    x, width = found.group(1).split(",")
    return float(x), float(width)
