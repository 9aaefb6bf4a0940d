"""The code of README.md and of the how-to pages runs, and prints what the page says it prints.

Each page's ```python blocks run in order in one namespace, as a reader pasting them would run
them: in float64, with matplotlib's Agg backend, in a fresh temporary working directory (which
holds links to the repository's ``scripts/`` and ``examples/`` folders, so that a block written
"to run from the repository's root" finds them, while the files a block writes stay in the
temporary folder). The conventions, also described in docs/development.md ("Writing docs"):

- Only fences tagged ``python`` run (``bash``, ``toml`` and untagged fences do not).
- An untagged or ``text`` fence right after a python block (blank lines between them at most)
  is that block's expected standard output. Numbers are compared to a relative 2e-3 or one
  unit of the last printed digit, whichever is looser (integers to 2e-3 alone); the text
  between them after whitespace normalisation; a time (a number followed by ``s``, as in
  ``in 4.8 s``) is not compared. A line ``...`` stands for any lines (none included), for
  output that varies between machines.
- A trailing comment that starts with a number on a ``print(...)`` statement
  (``# 1.974, 0.186, 3.6e-08``) lists values that must appear, to the same tolerance and in
  that order, among the numbers that statement prints. Comments that start with a word
  (``# metres``) are prose.
- ``<!-- doc-test: skip REASON -->`` right before a fence keeps that block from running (a GPU,
  several processes, a file the page asks the reader to write). ``<!-- doc-test: needs-data -->``
  skips the rest of the page when the shared ground-motion records are not found;
  ``<!-- doc-test: needs-data emps -->`` when the named folder of the shared data is. A page that
  needs an optional extra (blackjax and ArviZ, numba) skips where it is not installed.
- A ``jf.FitWarning`` (a fit that did not converge or does not explain its data) fails the
  page: in a guide it is a bug (a block that shows one on purpose catches it).

README.md runs in the fast suite; the how-to pages, several with fits of half a minute, are
marked slow (``python -m pytest -m slow -k doc_blocks``). With ``DOC_BLOCKS_REGEN=1`` (and ``-s``)
a page's output blocks are printed as the code prints them now instead of being checked.
"""

import ast
import contextlib
import io
import linecache
import math
import os
import re
import sys
import textwrap
import warnings
from pathlib import Path

import jax
import pytest

jax.config.update("jax_enable_x64", True)

import jaxfriction as jf

ROOT = Path(__file__).resolve().parents[1]
HOWTO = sorted((ROOT / "docs" / "howto").glob("*.md"))
DATA_DIRS = (ROOT.parent / "shared" / "data" / "ground_motions", ROOT / "shared" / "data" / "ground_motions")

_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(skip|needs-data)\b(.*?)-->\s*$")
# a number not glued to a name before it (``sigma0``, ``RK4``, ``q[0]`` stay text)
_NUMBER = re.compile(r"(?<![\w.\[])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_TIME = re.compile(r"(?<![\w.])\d+(?:\.\d*)?\s*s\b")
RTOL = 2e-3
OPTIONAL = {"blackjax", "arviz", "numba"}   # extras a page may need: its test skips without them


class Block:
    def __init__(self, lang, code, line, marker=None, output=None):
        self.lang, self.code, self.line, self.marker, self.output = lang, code, line, marker, output


def blocks(path):
    """The fenced blocks of a markdown file, each python block with its marker and output block."""
    lines = path.read_text().splitlines()
    found, i, marker, prev_end = [], 0, None, -1
    while i < len(lines):
        m = _MARKER.match(lines[i])
        if m:
            marker = (m.group(1), m.group(2).strip())
            i += 1
            continue
        m = _FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                marker = None
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not re.match(rf"^{indent}```\s*$", lines[j]):
            j += 1
        code = textwrap.dedent("\n".join(lines[i + 1 : j]))
        block = Block(lang, code, i + 2, marker)
        marker = None
        prev = found[-1] if found else None
        between = lines[prev_end + 1 : i] if prev is not None else None
        if (lang in ("", "text") and prev is not None and prev.lang == "python" and prev.output is None
                and all(not s.strip() for s in between)):
            prev.output = code
        else:
            found.append(block)
        prev_end = j
        i = j + 1
    return found


def _numbers_and_text(text):
    text = _TIME.sub(" <time> ", text)
    numbers = [m.group(0) for m in _NUMBER.finditer(text)]
    words = " ".join(_NUMBER.sub(" <n> ", text).split())
    return numbers, words


def _tolerance(expected):
    """Relative RTOL, or one unit of the last printed digit, whichever is looser; integers
    (counts, status codes) only to RTOL, so 0 and 1 differ."""
    mantissa, _, exponent = expected.lower().partition("e")
    if "." not in mantissa and not exponent:
        return RTOL * abs(float(expected))
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return max(RTOL * abs(float(expected)), unit)


def _close(expected, got):
    return math.isclose(float(got), float(expected), rel_tol=0, abs_tol=_tolerance(expected) * (1 + 1e-9))


def _matches(expected, got):
    e_numbers, e_words = _numbers_and_text(expected)
    g_numbers, g_words = _numbers_and_text(got)
    return g_words == e_words and len(g_numbers) == len(e_numbers) and all(map(_close, e_numbers, g_numbers))


def _ellipsis_match(segments, lines):
    """Do ``lines`` match the expected segments, a ``...`` line between each two (any lines)?"""
    first, *middle, last = segments
    if len(first) + len(last) > len(lines) or not _matches("\n".join(first), "\n".join(lines[: len(first)])):
        return False
    pos, end = len(first), len(lines) - len(last)
    if not _matches("\n".join(last), "\n".join(lines[end:])):
        return False
    for seg in middle:   # each at its first place that matches
        pos = next((k + len(seg) for k in range(pos, end - len(seg) + 1)
                    if _matches("\n".join(seg), "\n".join(lines[k : k + len(seg)]))), None)
        if pos is None:
            return False
    return True


def check_output(expected, got, where):
    """``got`` is what ``expected`` says, numbers to tolerance; a line ``...`` stands for any lines."""
    lines = expected.splitlines()
    if "..." in (line.strip() for line in lines):
        segments, current = [], []
        for line in lines:
            if line.strip() == "...":
                segments.append(current)
                current = []
            else:
                current.append(line)
        segments.append(current)
        assert _ellipsis_match(segments, got.rstrip("\n").splitlines()), (
            f"{where}: printed output differs\n--- expected\n{expected}\n--- got\n{got}")
        return
    e_numbers, e_words = _numbers_and_text(expected)
    g_numbers, g_words = _numbers_and_text(got)
    assert g_words == e_words, f"{where}: printed text differs\n--- expected\n{expected}\n--- got\n{got}"
    assert len(g_numbers) == len(e_numbers), f"{where}: printed numbers differ\n--- expected\n{expected}\n--- got\n{got}"
    bad = [(e, g) for e, g in zip(e_numbers, g_numbers) if not _close(e, g)]
    assert not bad, f"{where}: numbers off (expected, got): {bad}\n--- expected\n{expected}\n--- got\n{got}"


_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_LEADING = re.compile(rf"^\s*({_NUM}(?:\s*,\s*{_NUM})*)(?=$|[\s,;(])")


def check_comment(comment, got, where):
    """The comment's leading numbers appear, in order and to tolerance, among the printed ones."""
    leading = _LEADING.match(comment)
    if not leading:
        return 0
    expected = re.findall(_NUM, leading.group(1))
    printed = _NUMBER.findall(got)
    k = 0
    for e in expected:
        while k < len(printed) and not _close(e, printed[k]):
            k += 1
        assert k < len(printed), f"{where}: comment says {comment.strip()!r}, the statement printed {got!r}"
        k += 1
    return len(expected)


def _print_comments(source, tree):
    """Map each top-level ``print(...)`` statement to the comment that ends its last line."""
    lines = source.splitlines()
    out = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and getattr(stmt.value.func, "id", None) == "print"):
            tail = lines[stmt.end_lineno - 1][stmt.end_col_offset :].strip()
            if tail.startswith("#"):
                out[id(stmt)] = tail[1:]
    return out


def _data_dir():
    if os.environ.get("JAXFRICTION_DATA") and Path(os.environ["JAXFRICTION_DATA"]).is_dir():
        return Path(os.environ["JAXFRICTION_DATA"])
    return next((d for d in DATA_DIRS if d.is_dir()), None)


def run_page(path, tmp_path, monkeypatch):
    """Run the python blocks of one page in order; return (blocks run, checks made)."""
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for folder in ("scripts", "examples"):
        (tmp_path / folder).symlink_to(ROOT / folder, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    data = _data_dir()
    if data is not None:
        monkeypatch.setenv("JAXFRICTION_DATA", str(data))
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    # tracebacks and inspect.getsource point into the page itself
    text = path.read_text()
    filename = str(path)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"__name__": "__main__"}
    ran = checks = 0
    for block in blocks(path):
        if block.lang != "python":
            continue
        if block.marker is not None and block.marker[0] == "skip":
            continue
        if block.marker is not None and block.marker[0] == "needs-data":
            folder = block.marker[1].strip()
            if folder and not any((d.parent / folder).is_dir() for d in DATA_DIRS):
                pytest.skip(f"{rel}:{block.line}: the shared data folder {folder!r} is not here")
            if not folder and data is None:
                pytest.skip(f"{rel}:{block.line}: the ground-motion records are not here (set JAXFRICTION_DATA)")
        tree = ast.parse(block.code, filename)
        ast.increment_lineno(tree, block.line - 1)
        comments = _print_comments("\n" * (block.line - 1) + block.code, tree)
        stdout = io.StringIO()
        for stmt in tree.body:
            captured = io.StringIO()
            try:
                with contextlib.redirect_stdout(captured), warnings.catch_warnings():
                    # a fit in a guide that does not converge or fit its data is a bug of the guide
                    warnings.simplefilter("error", jf.FitWarning)
                    exec(compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec"), namespace)  # noqa: S102
            except ModuleNotFoundError as err:   # an optional extra (bayes, bench) is not installed
                if (err.name or "").split(".")[0] not in OPTIONAL:
                    raise
                pytest.skip(f"{rel}:{stmt.lineno}: {err.name} is not installed")
            stdout.write(captured.getvalue())
            if id(stmt) in comments:
                checks += check_comment(comments[id(stmt)], captured.getvalue(), f"{rel}:{stmt.lineno}")
        if block.output is not None and os.environ.get("DOC_BLOCKS_REGEN"):
            # print what the block printed instead of checking it, to paste into the page
            sys.__stdout__.write(f"=== {rel}:{block.line} printed\n{stdout.getvalue()}=== end\n")
        elif block.output is not None:
            check_output(block.output, stdout.getvalue(), f"{rel}:{block.line}")
            checks += 1
        ran += 1
    return ran, checks


def test_readme_runs_top_to_bottom(tmp_path, monkeypatch):
    ran, checks = run_page(ROOT / "README.md", tmp_path, monkeypatch)
    assert ran >= 1 and checks >= 2


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in HOWTO + [ROOT / "docs" / "getting-started.md"] if "```python" in p.read_text()],
                         ids=lambda p: p.stem)
def test_howto_page_runs(path, tmp_path, monkeypatch):
    run_page(path, tmp_path, monkeypatch)


# ---- the checker itself ----------------------------------------------------------------------

def test_output_check_compares_numbers_to_tolerance_and_text_exactly():
    check_output("D 1.974 in 4.8 s\nstatus 0", "D   1.97449 in 12.1 s\nstatus 0\n", "x")
    with pytest.raises(AssertionError, match="numbers off"):
        check_output("D 1.974", "D 1.990", "x")
    with pytest.raises(AssertionError, match="text differs"):
        check_output("D 1.974: fits the data", "D 1.974: DOES NOT FIT the data", "x")
    with pytest.raises(AssertionError, match="text differs"):   # a number missing
        check_output("law.mu_s 0.6 0.0007", "law.mu_s 0.6", "x")
    assert _tolerance("3.6e-08") == pytest.approx(1e-9) and _tolerance("343") == pytest.approx(0.686)
    with pytest.raises(AssertionError, match="numbers off"):
        check_output("divergences: 0", "divergences: 1", "x")
    check_output("a 1\n...\nd 4", "a 1.0004\nb 2\nc 3\nd 4\n", "x")     # "..." stands for any lines
    check_output("a 1\n...\nc 3\n...", "a 1\nb 2\nc 3\nd 4\n", "x")
    check_output("a 1\n...\nb 2", "a 1\nb 2\n", "x")                       # or none
    with pytest.raises(AssertionError, match="output differs"):
        check_output("a 1\n...\nd 5", "a 1\nb 2\nd 4\n", "x")
    with pytest.raises(AssertionError, match="output differs"):
        check_output("a 1\n...\nc 3", "a 1\nc 3\nd 4\n", "x")


def test_comment_check_finds_the_numbers_in_order():
    assert check_comment(" 1.974, 0.186, 3.6e-08", "1.9744 0.18612 3.61e-08\n", "x") == 3
    assert check_comment(" 2.5e-10 (RK4, dx = 1e-4 m)", "2.47e-10\n", "x") == 1
    assert check_comment(" metres", "0.37 0.35\n", "x") == 0
    with pytest.raises(AssertionError, match="comment says"):
        check_comment(" 2.133", "2.2\n", "x")
    with pytest.raises(AssertionError, match="comment says"):
        check_comment(" 0.186, 1.974", "1.974 0.186\n", "x")


def test_blocks_pairs_outputs_and_markers(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("```python\nprint(1)\n```\n\n```\n1\n```\n\n<!-- doc-test: skip needs a GPU -->\n"
                    "```python\nx = 1\n```\ntext\n```\nnot output\n```\n")
    b = blocks(page)
    assert [(x.lang, x.output, x.marker) for x in b] == [
        ("python", "1", None), ("python", None, ("skip", "needs a GPU")), ("", None, None)]


def test_run_page_checks_output_skips_marked_blocks_and_pages_without_data(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 2\nprint(x * 1.5)   # 3.0\n```\n\n"
                    "<!-- doc-test: skip not here -->\n```python\nraise RuntimeError\n```\n\n"
                    "```python\nprint(x)\n```\n\n```\n2\n```\n")
    (tmp_path / "run").mkdir()
    assert run_page(page, tmp_path / "run", monkeypatch) == (2, 2)
    page.write_text("```python\nprint(3)\n```\n\n```\n4\n```\n")
    (tmp_path / "run2").mkdir()
    with pytest.raises(AssertionError, match="numbers off"):
        run_page(page, tmp_path / "run2", monkeypatch)
    page.write_text("```python\nx = 1\n```\n\n<!-- doc-test: needs-data -->\n```python\nraise RuntimeError\n```\n")
    monkeypatch.delenv("JAXFRICTION_DATA", raising=False)
    monkeypatch.setattr(sys.modules[__name__], "DATA_DIRS", (tmp_path / "nowhere",))
    (tmp_path / "run3").mkdir()
    with pytest.raises(pytest.skip.Exception, match="records are not here"):
        run_page(page, tmp_path / "run3", monkeypatch)
    # a named folder: the page skips when that folder of the shared data is missing
    page.write_text("```python\nx = 1\n```\n\n<!-- doc-test: needs-data emps -->\n```python\nraise RuntimeError\n```\n")
    (tmp_path / "run4").mkdir()
    with pytest.raises(pytest.skip.Exception, match="folder 'emps' is not here"):
        run_page(page, tmp_path / "run4", monkeypatch)
