"""`aether uninstall` on a throwaway home: what Aether keeps outside projects is listed, removed
only with --yes, and nothing else is touched (other files in ~/.aether, the project's .aether/)."""

from __future__ import annotations

import os
import subprocess

from conftest import LAUNCHER


def _run(home, cwd, *args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("AETHER_HOME", "AETHER_DATA_DIR", "CLAUDE_PLUGIN_DATA")}
    env.update(HOME=str(home), **(env_extra or {}))
    return subprocess.run([str(LAUNCHER), "uninstall", *args], cwd=cwd, env=env, capture_output=True, text=True)


def _throwaway(tmp_path):
    home = tmp_path / "home"
    glob = home / ".aether"
    (glob / ".backups").mkdir(parents=True)
    (glob / "learnings.json").write_text('{"version": 2, "learnings": []}')
    (glob / "learnings.json.lock").write_text("")
    (glob / ".backups" / "learnings.json.1").write_text("{}")
    (glob / "notes-of-mine.txt").write_text("not Aether's")
    venvs = home / ".claude" / "plugins" / "data" / "ant-aether" / "venvs"
    (venvs / "0.1.0-abc123" / "bin").mkdir(parents=True)
    (venvs / "0.1.0-abc123" / ".aether-ready").write_text("")
    (venvs / "someone-elses").mkdir()
    project = tmp_path / "proj"
    (project / ".aether" / "data").mkdir(parents=True)
    (project / ".aether" / "data" / "COLONY_STATE.json").write_text("{}")
    return home, glob, venvs, project


def test_lists_without_removing(tmp_path):
    home, glob, venvs, project = _throwaway(tmp_path)
    out = _run(home, project, "--json")
    assert out.returncode == 0, out.stderr
    import json

    result = json.loads(out.stdout)["result"]
    listed = {os.path.relpath(i["path"], home) for i in result["remove"]}
    assert listed == {
        ".aether/.backups",
        ".aether/learnings.json",
        ".aether/learnings.json.lock",
        ".claude/plugins/data/ant-aether/venvs/0.1.0-abc123",
    }
    assert [os.path.relpath(k["path"], home) for k in result["kept"]] == [".aether/notes-of-mine.txt"]
    assert result["done"] is False and (glob / "learnings.json").exists() and (venvs / "0.1.0-abc123").exists()
    assert "Would remove" in _run(home, project).stdout


def test_yes_removes_only_what_aether_made(tmp_path):
    home, glob, venvs, project = _throwaway(tmp_path)
    out = _run(home, project, "--yes")
    assert out.returncode == 0, out.stderr
    assert sorted(os.listdir(glob)) == ["notes-of-mine.txt"]
    assert sorted(os.listdir(venvs)) == ["someone-elses"]
    assert (project / ".aether" / "data" / "COLONY_STATE.json").exists()  # projects untouched


def test_project_state_only_when_asked(tmp_path):
    home, glob, venvs, project = _throwaway(tmp_path)
    (glob / "notes-of-mine.txt").unlink()
    (venvs / "someone-elses").rmdir()
    out = _run(home, project, "--yes", "--project")
    assert out.returncode == 0, out.stderr
    assert not (project / ".aether").exists() and not glob.exists()
    assert not (home / ".claude" / "plugins" / "data" / "ant-aether").exists()  # emptied folders go too
