"""Writes the notebooks (``NN_name.ipynb``) from their sources in ``src/``.

Each source is a Python file in the "percent" format that editors and jupytext read: a line
``# %%`` starts a code cell, ``# %% [markdown]`` a markdown cell whose lines are comments
(``# `` is removed).  The notebooks are written without outputs, with cell ids derived from
each cell's text, so that regenerating after an edit changes only the cells edited.

    /usr/bin/python3 notebooks/make_notebooks.py           # (re)write every notebook
    /usr/bin/python3 notebooks/make_notebooks.py --check   # exit 1 if one is out of date

tests/test_notebooks.py runs the check, so a source and its notebook cannot drift apart;
a notebook edited in Jupyter needs its edit carried back into its source.
"""
import hashlib
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
CELL = "# %%"
MARKDOWN = "# %% [markdown]"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _cells(text, path):
    """[(kind, source)] of one percent-format file."""
    cells = []
    kind, lines = None, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(CELL):
            if kind is not None:
                cells.append((kind, lines))
            marker = line.strip()
            if marker not in (CELL, MARKDOWN):
                raise ValueError(f"{path}:{number}: unknown cell marker {marker!r}")
            kind, lines = ("markdown" if marker == MARKDOWN else "code"), []
        elif kind is None:
            if line.strip():
                raise ValueError(f"{path}:{number}: text before the first '# %%' marker")
        elif kind == "markdown":
            if line.strip() and not line.startswith("#"):
                raise ValueError(f"{path}:{number}: a markdown cell's lines are comments")
            lines.append(line[2:] if line.startswith("# ") else line[1:])
        else:
            lines.append(line)
    if kind is not None:
        cells.append((kind, lines))
    out = []
    for kind, body in cells:
        source = "\n".join(body).strip("\n")
        if not source:
            raise ValueError(f"{path}: an empty {kind} cell")
        out.append((kind, source))
    return out


def notebook(path):
    """The notebook of one source file, without outputs."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    seen = set()
    for kind, source in _cells(path.read_text(encoding="utf-8"), path):
        digest = hashlib.sha1(f"{kind}\n{source}".encode()).hexdigest()
        cell_id, n = digest[:8], 1
        while cell_id in seen:  # two identical cells
            cell_id, n = f"{digest[:8]}-{n}", n + 1
        seen.add(cell_id)
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        nb.cells.append(make(source=source, id=cell_id))
    nbformat.validate(nb)
    return nb


def target(source):
    return HERE / (source.stem + ".ipynb")


def rendered(source):
    """The exact text of the notebook file written for `source`."""
    return nbformat.writes(notebook(source)) + "\n"


def sources():
    return sorted(SOURCES.glob("[0-9][0-9]_*.py"))


def stale():
    """Names of notebooks that differ from what their sources give (or are missing), and
    of notebooks without a source."""
    bad = [target(s).name for s in sources()
           if not target(s).exists() or target(s).read_text(encoding="utf-8") != rendered(s)]
    made = {target(s).name for s in sources()}
    bad += [p.name + " (no source)" for p in sorted(HERE.glob("*.ipynb")) if p.name not in made]
    return bad


def main(argv):
    if argv[1:] == ["--check"]:
        bad = stale()
        for name in bad:
            print(f"out of date: notebooks/{name}")
        return 1 if bad else 0
    if argv[1:]:
        print(__doc__)
        return 2
    for s in sources():
        text = rendered(s)
        t = target(s)
        if not t.exists() or t.read_text(encoding="utf-8") != text:
            t.write_text(text, encoding="utf-8")
            print(f"wrote notebooks/{t.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
