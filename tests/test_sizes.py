"""The size budgets of tools/check_sizes.py: no source file over 800 lines, no function over
80, but for the allow-list tools/size_allowlist.txt, which may only shrink."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import check_sizes  # noqa: E402


def test_no_file_or_function_grows_past_its_budget_or_allowance():
    problems = check_sizes.check()
    assert not problems, "\n".join(problems)


def test_c_functions_are_measured_from_signature_to_closing_brace():
    lines = ["static int one(void) { return 1; }",
             "",
             "static bool two(int a,",
             "                int b) {",
             "    if (a) {",
             "        return b;",
             "    }",
             "    return a;",
             "}",
             "int declared(int);",
             "PW_FN float three(float x) {",
             "    return x;",
             "}"]
    assert check_sizes.c_functions(lines) == [("two", 7), ("three", 3)]


def test_python_functions_are_measured_from_def_to_last_line():
    text = "def f(x):\n    y = x\n    return y\n\n\nclass C:\n    def g(self):\n        pass\n"
    assert sorted(check_sizes.py_functions(text)) == [("f", 3), ("g", 2)]


def test_a_stale_allowance_is_a_problem(tmp_path, monkeypatch):
    allow = tmp_path / "allow.txt"
    allow.write_text("no/such/file.c 900\n")
    monkeypatch.setattr(check_sizes, "ALLOWLIST", allow)
    problems = check_sizes.check()
    assert any("no/such/file.c" in p and "remove it" in p for p in problems)


def test_report_runs():
    out = subprocess.run([sys.executable, str(REPO / "tools" / "check_sizes.py"), "--report"],
                         capture_output=True, text=True, check=True).stdout
    assert "hipdnn" in out or out == ""
