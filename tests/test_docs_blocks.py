"""Every code block in README.md and docs/*.md works as written.

Each fence says what its block is, and the block is treated accordingly:

  python       run on its own (no state from earlier blocks) by the interpreter running the
               tests, in an empty folder, with the hipdnn under test importable;
  c            compiled with -std=c11 -Wall -Wextra -Werror against the package's headers
               (hipdnn/include), linked with its libhipdnn_backend.so, and run; a block
               that defines no `main` (an engine plugin) is compiled with the same flags
               as a shared library (-shared -fPIC) instead, and not run;
  bash         run (bash -eu -o pipefail) in the document's working folder, after the blocks
               above it: `python3` and `python` are the interpreter running the tests,
               hipdnn is importable, and `/path/to/hipdnn` stands for this checkout;
  cmake        not run by itself: its first line names its file (`# CMakeLists.txt`) and it
               is written there for the bash blocks that follow;
  sh, console  shown, not run, and allowed to hold only `make ...`, `pip install ...` and
               `python3 -m venv ...` lines: they set up a machine (apt), build, install or
               run this suite itself, and `make pip-check` (run by `make test`) does the
               installs both ways;
  text         not code (diagrams, output).

A c block whose first line is a comment naming a file (`/* app.c */`) is also written to
that file in the document's working folder. A fence with no language, or another one,
fails the test: every block must say which it is.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

import hipdnn
import pytest

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.dirname(os.path.abspath(hipdnn.__file__))
DOCUMENTS = sorted([os.path.join(CHECKOUT, "README.md")]
                   + glob.glob(os.path.join(CHECKOUT, "docs", "*.md")))
RUN = {"python", "c", "bash"}
WRITTEN = {"cmake"}
SHOWN = {"sh", "console"}
NOT_CODE = {"text"}
SETUP_COMMAND = re.compile(r"(make|(\S*/)?pip3? install|(\S*/)?python3? -m (venv|pip install))"
                           r"(\s|$)")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
NAMED_FILE = re.compile(r"^\s*(?:/\*|#)\s*([\w.-]+\.(?:c|h|txt))\s*(?:\*/)?\s*$")


class Block:
    """One fenced block: where it is, its language and its text."""

    def __init__(self, path, line, lang, code):
        self.path, self.line, self.lang, self.code = path, line, lang, code

    @property
    def where(self):
        return f"{os.path.relpath(self.path, CHECKOUT)}:{self.line}"

    @property
    def file_name(self):
        """The file the block names on its first line, if any."""
        first = self.code.split("\n", 1)[0]
        m = NAMED_FILE.match(first)
        return m.group(1) if m else None


def parse(path):
    blocks, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(2), m.group(3).lower(), i + 1
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence)
                                      and lines[i].strip().strip(fence[0]) == ""):
            i += 1
        assert i < len(lines), f"{path}:{start}: unclosed fence"
        blocks.append(Block(path, start, lang, "\n".join(lines[start:i]) + "\n"))
        i += 1
    return blocks


ALL = [b for doc in DOCUMENTS for b in parse(doc)]


def _env(bin_dir=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "HIPDNN_PLUGIN_DIR")}
    env["PYTHONPATH"] = os.path.dirname(PACKAGE)
    if bin_dir:
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def _check(proc, block):
    assert proc.returncode == 0, (f"{block.where} ({block.lang}) failed, exit "
                                  f"{proc.returncode}:\n{proc.stdout}\n{proc.stderr}")


# ---- what the blocks are -------------------------------------------------------------

def test_documents_have_runnable_blocks():
    langs = [b.lang for b in ALL]
    assert langs.count("python") >= 3 and langs.count("c") >= 2 and langs.count("bash") >= 3


def test_every_block_says_what_it_is():
    known = RUN | WRITTEN | SHOWN | NOT_CODE
    unmarked = [f"{b.where} '{b.lang}'" for b in ALL if b.lang not in known]
    assert unmarked == [], f"fences need one of {sorted(known)}"


def test_shown_blocks_hold_only_setup_commands():
    """sh/console blocks are not run, so they may only hold what this suite cannot usefully
    run (make, pip install, venv); anything else belongs in a bash block."""
    bad = []
    for b in ALL:
        if b.lang not in SHOWN:
            continue
        for n, line in enumerate(b.code.splitlines()):
            text = line.split("#", 1)[0].strip()
            if text and not SETUP_COMMAND.match(text):
                bad.append(f"{b.path}:{b.line + n + 1}: {text}")
    assert bad == []


def test_written_blocks_name_their_file():
    assert [b.where for b in ALL if b.lang in WRITTEN and not b.file_name] == []


def test_the_parser_reads_languages_and_bodies(tmp_path):
    md = tmp_path / "x.md"
    md.write_text("text\n```python\nprint(1)\n```\n\n~~~~ c\n/* a.c */\nint x;\n~~~~\n```\n"
                  "plain\n```\n")
    blocks = parse(str(md))
    assert [(b.lang, b.code, b.line) for b in blocks] == [
        ("python", "print(1)\n", 2), ("c", "/* a.c */\nint x;\n", 6), ("", "plain\n", 10)]
    assert blocks[1].file_name == "a.c" and blocks[0].file_name is None


# ---- running them --------------------------------------------------------------------

@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "python"],
                         ids=lambda b: b.where)
def test_python_block_runs(block, tmp_path):
    script = tmp_path / "block.py"
    script.write_text(block.code)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)
    _check(proc, block)


def _compiler():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler (cc/gcc) on PATH: `make deps` installs gcc")
    return cc


HAS_MAIN = re.compile(r"\bint\s+main\s*\(")


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "c"], ids=lambda b: b.where)
def test_c_block_compiles_and_runs(block, tmp_path):
    src = tmp_path / (block.file_name or "block.c")
    src.write_text(block.code)
    lib = os.path.join(PACKAGE, "lib")
    flags = [_compiler(), "-std=c11", "-Wall", "-Wextra", "-Werror",
             f"-I{os.path.join(PACKAGE, 'include')}", str(src)]
    if not HAS_MAIN.search(block.code):  # a plugin: a shared library, loaded by a bash block
        compile_cmd = flags + ["-shared", "-fPIC", "-fvisibility=hidden", "-Wl,--no-undefined",
                               "-o", str(tmp_path / "libblock.so")]
        _check(subprocess.run(compile_cmd, capture_output=True, text=True, timeout=120), block)
        return
    compile_cmd = flags + ["-o", str(tmp_path / "app"), f"-L{lib}", "-lhipdnn_backend",
                           f"-Wl,-rpath,{lib}", "-lm"]
    _check(subprocess.run(compile_cmd, capture_output=True, text=True, timeout=120), block)
    proc = subprocess.run([str(tmp_path / "app")], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=120)
    _check(proc, block)


DOCS_WITH_BASH = sorted({b.path for b in ALL if b.lang == "bash"})


# toolchain: the blocks' time goes to cmake and the compilers, and their programs link the
# plain build, so the sanitizer run (which leaves the mark out) would check nothing more.
@pytest.mark.toolchain
@pytest.mark.parametrize("doc", DOCS_WITH_BASH, ids=lambda p: os.path.relpath(p, CHECKOUT))
def test_bash_blocks_run_in_order(doc, tmp_path):
    """The document's files (named cmake and c blocks) are written and its bash blocks run
    in order, in one folder, as a reader following it would."""
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("python3", "python"):
        os.symlink(sys.executable, bin_dir / name)
    ran = 0
    for block in parse(doc):
        if block.lang in WRITTEN or (block.lang == "c" and block.file_name):
            (work / block.file_name).write_text(block.code)
        elif block.lang == "bash":
            code = block.code.replace("/path/to/hipdnn", CHECKOUT)
            proc = subprocess.run(["bash", "-eu", "-o", "pipefail", "-c", code], cwd=work,
                                  env=_env(bin_dir), capture_output=True, text=True,
                                  timeout=300)
            _check(proc, block)
            ran += 1
    assert ran >= 1


# ---- the design of record -------------------------------------------------------------

SOURCES = ["csrc", "hipdnn", "plugins", "tests", "cmake", "benchmarks", "CMakeLists.txt",
           "Makefile", "setup.py", "pyproject.toml"]
SECTION_REF = re.compile(r'docs/architecture\.md,? \(?"([^"]+)"')
COMMENT_BREAK = re.compile(r"\s*\n\s*(?:\*(?!/)|#|//)?\s*")


def _source_files():
    for top in SOURCES:
        path = os.path.join(CHECKOUT, top)
        if os.path.isfile(path):
            yield path
        for root, _dirs, files in os.walk(path):
            for f in files:
                if f.endswith((".c", ".h", ".cpp", ".py", ".pyi", ".txt", ".in", ".cmake",
                               ".fbs", ".toml", ".md")):
                    yield os.path.join(root, f)


def test_comments_cite_sections_that_exist_in_architecture_md():
    headings = set(re.findall(r"^## (.+)$",
                              open(os.path.join(CHECKOUT, "docs", "architecture.md")).read(),
                              re.M))
    cited, missing = 0, []
    for path in _source_files():
        text = COMMENT_BREAK.sub(" ", open(path, encoding="utf-8", errors="replace").read())
        for section in SECTION_REF.findall(text):
            cited += 1
            if section not in headings:
                missing.append(f"{os.path.relpath(path, CHECKOUT)}: \"{section}\"")
        # The design document of the workspace is not part of the repository.
        if path != os.path.abspath(__file__):
            assert not re.search(r"\bDESIGN(\.md|\s+\d)", text), path
    assert cited >= 10
    assert missing == [], f"sections not in docs/architecture.md: {missing}"
