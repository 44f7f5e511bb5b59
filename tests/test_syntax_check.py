"""syntax-check: the helper's own syntax check (LIGHTWEIGHT's watcher) — per language, per file,
from the spawn tree, and what it never does (import or run the code, fail on unknown files)."""

import json
import shutil

import pytest

from helpers.colony import plan_waves, start_build, worker


def write(project, rel, text):
    path = project.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return rel


CASES = [
    ("ok.py", "def f(x):\n    return x + 1\n", "passed", "python"),
    ("bad.py", "def f(:\n    pass\n", "failed", "python"),
    ("indent.py", "def f():\nreturn 1\n", "failed", "python"),
    ("ok.json", '{"a": [1, 2]}', "passed", "json"),
    ("bad.json", '{"a": [1, 2}', "failed", "json"),
    ("ok.toml", 'name = "x"\n[tool]\nv = 1\n', "passed", "toml"),
    ("bad.toml", "name = \n", "failed", "toml"),
    ("ok.yaml", "a: [1, 2]\nb: x\n", "passed", "yaml"),
    ("bad.yml", "a: [1, 2\n", "failed", "yaml"),
    ("ok.sh", "if true; then echo hi; fi\n", "passed", "shell"),
    ("bad.sh", "if then fi\n", "failed", "shell"),
    ("notes.md", "# anything goes", "not_checked", None),
]


@pytest.mark.parametrize("name,text,status,language", CASES, ids=[c[0] for c in CASES])
def test_each_language(project, name, text, status, language):
    write(project, name, text)
    out = project.run("syntax-check", name).json
    entry = out["files"][0]
    assert (entry["status"], entry["language"]) == (status, language), entry
    assert out["passed"] is (status != "failed")
    if status == "failed":
        assert entry["error"] and out["failed"] == 1


def test_javascript_through_node(project, monkeypatch):
    write(project, "ok.js", "const x = 1;\nmodule.exports = x;\n")
    write(project, "bad.js", "let x = ;\n")
    if shutil.which("node"):
        out = project.run("syntax-check", "ok.js", "bad.js").json
        assert [f["status"] for f in out["files"]] == ["passed", "failed"]
        assert out["files"][1]["line"] == 1
    monkeypatch.setenv("PATH", "/nonexistent")  # without node, JavaScript is reported, not failed
    out = project.run("syntax-check", "bad.js").json
    assert out["files"][0]["status"] == "not_checked" and "node is not installed" in out["files"][0]["error"]


def test_python_is_compiled_never_run(project):
    marker = project.root / "ran.txt"
    write(project, "boom.py", f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(3)\n")
    out = project.run("syntax-check", "boom.py").json
    assert out["files"][0]["status"] == "passed" and not marker.exists()


def test_line_numbers_and_text(project):
    write(project, "src/a.py", "x = 1\ny = (\n")
    write(project, "src/b.py", "z = 2\n")
    out = project.run("syntax-check", "src/a.py", "./src/b.py", "src/a.py").json
    assert [f["path"] for f in out["files"]] == ["src/a.py", "src/b.py"]  # normalised, each once
    assert out["files"][0]["line"] == 2
    text = project.run("syntax-check", "src/a.py", "src/b.py", "--text").stdout
    assert text.splitlines()[0] == "Syntax check: 1 of 2 checked file(s) failed"
    assert "✗ src/a.py:2" in text and "✓ src/b.py" in text


def test_missing_outside_and_unreadable_are_reported_not_failed(project, tmp_path):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def (:\n")
    (project.root / "link.py").symlink_to(outside)
    out = project.run("syntax-check", "gone.py", "../elsewhere.py", "link.py").json
    assert [f["status"] for f in out["files"]] == ["missing", "outside_project", "outside_project"]
    assert out["passed"] is True and out["checked"] == 0 and out["summary"] == "no file to check"


def test_odd_file_contents(project):
    (project.root / "nul.py").write_bytes(b"x = 1\x00\n")
    (project.root / "latin.json").write_bytes(b'{"a": "\xe9"}')
    write(project, "deep.py", "x = " + "(" * 400 + ")" * 400 + "\n")
    out = project.run("syntax-check", "nul.py", "latin.json", "deep.py").json
    statuses = [f["status"] for f in out["files"]]
    assert statuses[0] == "failed" and statuses[1] == "failed"
    assert statuses[2] in ("passed", "failed", "not_checked")  # never a crash


def test_usage_errors(project):
    assert project.run("syntax-check").error["code"] == "usage_error"
    many = [f"f{i}.py" for i in range(501)]
    assert project.run("syntax-check", *many).error["code"] == "too_many_items"
    assert project.run("syntax-check", "--build").error["code"] == "no_spawn_tree"


def test_build_files_come_from_the_spawn_tree(project):
    start_build(project, mode="LIGHTWEIGHT")
    plan_waves(project, [worker("a", ["1.1"], writes=["a.py"]), worker("b", ["1.2"], writes=["b.py"])])
    write(project, "a.py", "def a(:\n")
    write(project, "b.py", "b = 1\n")
    write(project, "untouched.py", "def nope(:\n")  # not claimed by any worker: not checked
    for node, path in (("w1", "a.py"), ("w2", "b.py")):
        project.run("spawn-start", node).json
        project.run("spawn-finish", node, "-", input=json.dumps({"status": "completed", "files_created": [path]})).json
    out = project.run("syntax-check", "--build").json
    assert sorted(f["path"] for f in out["files"]) == ["a.py", "b.py"]
    assert out["passed"] is False and out["failed"] == 1
