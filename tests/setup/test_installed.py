"""What an installed gamerig says about itself: ``--version`` from pyproject.toml, docs a wheel
user has (``supervisor docs``, and every docs/NAME.md a help text or error names is one of its
pages), and the refusal to run beside another package that installs ``supervisor``.
``.ci/wheel-smoke`` checks the same from a built wheel, with the real Supervisor from PyPI."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from supervisor import installed
from supervisor.cli import build_parser, main
from supervisor.commands import docs
from tests.docs.test_no_machine_paths import _parsers
from tests.harness import REPO

DOC_REF = re.compile(r"docs/([a-z0-9_-]+)\.md(?:#([\w-]+))?")


def supervisor(*args, env=None, cwd=REPO):
    return subprocess.run(
        [sys.executable, "-m", "supervisor", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env
    )


def test_version_is_pyprojects():
    with open(Path(REPO) / "pyproject.toml", "rb") as fh:
        want = tomllib.load(fh)["project"]["version"]
    r = supervisor("--version")
    assert r.returncode == 0 and r.stdout == f"gamerig {want}\n", r
    assert installed.version() == want


def test_help_points_to_docs_a_wheel_user_has():
    r = supervisor("--help")
    assert r.returncode == 0 and "in the repository" not in r.stdout
    assert "supervisor docs" in r.stdout and "--version" in r.stdout and "init" in r.stdout


def _string_literals(path: Path) -> list[str]:
    """The file's string constants that are not docstrings (help texts, errors, messages)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    ]


def test_every_doc_a_help_text_or_message_names_is_a_page_of_supervisor_docs():
    pages = docs.pages()
    texts = {f"help of {p.prog}": p.format_help() for p in _parsers(build_parser())}
    for package in ("supervisor", "actors", "protocol"):
        for path in sorted((Path(REPO) / package).rglob("*.py")):
            for text in _string_literals(path):
                texts.setdefault(f"{path.relative_to(REPO)}", "")
                texts[f"{path.relative_to(REPO)}"] += "\n" + text
    named = 0
    for where, text in texts.items():
        for m in DOC_REF.finditer(text):
            named += 1
            assert m.group(1).lower() in pages, f"{where} names docs/{m.group(1)}.md, which supervisor docs lacks"
            if m.group(2):
                body = pages[m.group(1).lower()].read_text(encoding="utf-8")
                assert docs.section_of(body, m.group(2)) is not None, f"{where}: no section {m.group(0)}"
    assert named > 10


def test_every_page_the_starting_files_name_is_a_page_of_supervisor_docs():
    pages = docs.pages()
    named = 0
    for rel in installed.STARTER:
        text = (Path(REPO) / rel).read_text(encoding="utf-8")
        assert "docs/" not in text and ".venv/" not in text, f"{rel} points into a clone"
        for m in re.finditer(r"supervisor docs ([a-z0-9_-]+)(?:#([\w-]+))?", text):
            named += 1
            assert m.group(1) in pages, f"{rel}: {m.group(0)}"
            if m.group(2):
                assert docs.section_of(pages[m.group(1)].read_text(encoding="utf-8"), m.group(2)), (
                    f"{rel}: {m.group(0)}"
                )
    assert named >= 10


def test_supervisor_docs_lists_prints_a_page_and_a_section_and_refuses_unknown_ones(capsys):
    def run(*args):
        code = main(["docs", *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = run()
    assert code == 0
    for name in ("quickstart", "profiles", "platforms", "changelog", "readme"):
        assert f"\n  {name} " in out, name
    code, out, _ = run("docs/platforms.md")  # as a help text names it
    assert code == 0 and out == (Path(REPO) / "docs" / "platforms.md").read_text(encoding="utf-8")
    code, out, _ = run("models#trying-it-without-a-model-the-stand-in-server")
    assert code == 0 and out.startswith("### Trying it without a model") and "\n## " not in out
    code, out, err = run("nope")
    assert code == 2 and "no page 'nope'" in err and "quickstart" in err and out == ""
    code, _, err = run("quickstart#nope")
    assert code == 2 and "quickstart has no section 'nope'" in err
    code, out, _ = run("platforms", "--path")
    assert code == 0 and out.strip().endswith("platforms.md") and Path(out.strip()).is_file()


def test_supervisor_standin_serves_and_runs_this_same_gamerig_without_it_on_path():
    env = {"PATH": "/usr/bin:/bin"}  # no supervisor on PATH: the checkout's venv is not activated
    fetch = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + '/models').status)"
    r = supervisor("standin", "--port", "0", "--run", sys.executable, "-c", fetch, "{url}", env=env)
    assert r.returncode == 0 and r.stdout == "200\n", r
    r = supervisor("standin", "--port", "0", "--run", "supervisor", "--version", env=env)
    assert r.returncode == 0 and r.stdout.startswith("gamerig "), r
    assert "stand-in model server: http://127.0.0.1:" in r.stderr


def test_beside_supervisord_every_command_refuses_naming_it(tmp_path):
    """Supervisor (supervisord) is on PyPI as 'supervisor' and installs the import name
    'supervisor': its metadata in the environment is enough to refuse (the real package, with
    its files in ours, is installed by .ci/wheel-smoke)."""
    info = tmp_path / "supervisor-4.2.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: supervisor\nVersion: 4.2.5\n")
    (info / "top_level.txt").write_text("supervisor\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{REPO}"}
    for args in (["--version"], ["start", "run/profiles/demo.yaml"], ["--help"]):
        r = supervisor(*args, env=env)
        assert r.returncode == 2, (args, r)
        assert (
            "'supervisor'" in r.stderr
            and "Supervisor (supervisord, the process control system), version 4.2.5" in r.stderr
        ), r.stderr
        assert "pipx install" in r.stderr and r.stdout == ""
    r = supervisor("--version", env={"PATH": "/usr/bin:/bin", "PYTHONPATH": REPO})
    assert r.returncode == 0, r.stderr
