"""The mod's types (hooks/types.ts) and the helper's shapes (colony/mod.py SHAPES; the guard that
stays up, hooks/guard_serve.py SHAPES) say the same: each interface's fields are the Python field
list of its name, in order; and the answers a build
run through `aether mod …` gives carry every field the types say is always there, and none that
they do not declare (an action carries its driver's fields besides)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from aether.colony import mod as mod_loop

from helpers.colony import ok, write
from helpers.drive import ASSIGNMENT, result

TYPES = Path(__file__).resolve().parents[1] / "hooks" / "types.ts"
sys.path.insert(0, str(TYPES.parent))
import guard_serve  # noqa: E402

INTERFACE = re.compile(r"^export interface (\w+) \{\n(.*?)^\}", re.M | re.S)
FIELD = re.compile(r"^  (\w+)(\??): ", re.M)
ACTIONS = {"spawn": "SpawnAction", "wait": "WaitAction", "done": "EndAction", "ask": "EndAction", "stop": "EndAction"}


def interfaces() -> dict:
    """{interface: [(field, optional)]} as hooks/types.ts declares them (one field per line)."""
    text = TYPES.read_text("utf-8")
    found = {name: FIELD.findall(body) for name, body in INTERFACE.findall(text)}
    assert found, "hooks/types.ts declares no interface"
    return {name: [(field, mark == "?") for field, mark in fields] for name, fields in found.items()}


def test_every_interface_lists_the_fields_of_its_python_shape():
    declared = interfaces()
    shapes = {**mod_loop.SHAPES, **guard_serve.SHAPES}
    assert sorted(declared) == sorted(shapes)
    for name, fields in declared.items():
        assert [f for f, _ in fields] == list(shapes[name]), name


def test_the_guard_that_stays_up_answers_as_the_types_say(guard_server):
    check("GuardAnswer", guard_serve.ask(guard_server, {"tool_name": "Read", "tool_input": {}})[1])
    status, answer = guard_serve.ask(guard_server, {"tool_name": "Bash", "tool_input": {"command": "aether status"}})
    check("GuardAnswer", answer)
    check("GuardDecision", answer["decision"])


def check(name: str, answer: dict, exact: bool = True) -> None:
    """`answer` carries every field `name` always has, and (`exact`) no field it does not declare."""
    fields = dict(interfaces()[name])
    missing = [f for f, optional in fields.items() if not optional and f not in answer]
    assert not missing, (name, missing, sorted(answer))
    if exact:
        assert set(answer) <= set(fields), (name, sorted(set(answer) - set(fields)))


def test_a_build_run_by_the_mod_answers_as_the_types_say(mod_colony):
    p = mod_colony
    seen = set()

    def served(command, args=""):
        out = ok(p, "mod", "serve", input={"command": command, "args": args})
        kind = {"text": "ServedText", "model": "ServedModel", "loop": "ServedLoop"}[out["serve"]]
        check(kind, out)
        seen.add(kind)
        return action(out["action"]) if kind == "ServedLoop" else out

    def action(out):
        check(ACTIONS[out["action"]], out, exact=False)  # its driver's own fields besides
        seen.add(ACTIONS[out["action"]])
        if "interrupt" in out:
            check("Interrupt", out["interrupt"])
        for s in out.get("spawns") or []:
            check("Spawn", s)
        return out

    def launched(spawns):
        out = ok(p, "mod", "launched", input={"spawns": [{"ref": s["ref"], "agent_id": f"agent-{s['id']}"} for s in spawns]})
        check("Launched", out)
        return out

    def answered(s, text):
        out = ok(p, "mod", "answer", input={"ref": s["ref"], "agent_id": f"agent-{s['id']}", "text": text, "reason": "answer"})
        check("Answered", out)

    def waited(refs, seconds=0):
        return action(ok(p, "mod", "wait", input={"refs": refs, "seconds": seconds}))

    served("ant:status")
    served("ant:init", "a goal")
    lead = served("ant:build", "1")
    launched(lead["spawns"])
    answered(lead["spawns"][0], json.dumps(ASSIGNMENT))
    assert waited([lead["spawns"][0]["ref"]])["action"] == "ask"

    wave = served("ant:build", "1 --approve")
    refs = [s["ref"] for s in wave["spawns"]]
    launched(wave["spawns"])
    assert waited(refs)["action"] == "wait"  # the ants run: `mod wait`'s own wait
    assert served("ant:build", "1")["action"] == "wait"  # the command again meanwhile: the driver's wait
    for s in wave["spawns"]:
        write(p, f"src/{s['id']}.py")
        answered(s, result(files_created=[f"src/{s['id']}.py"]))
    assert waited(refs)["action"] in ("spawn", "done", "ask", "stop")
    assert seen >= {"ServedText", "ServedModel", "ServedLoop", "SpawnAction", "WaitAction", "EndAction"}


STRINGS = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`")  # '…', "…", `…`
COMMENTS = re.compile(r"(?<![:\\])//[^\n]*|/\*.*?\*/", re.S)  # not a URL's `://`


def test_the_mod_and_its_tests_name_no_any():
    """Claude Code's declarations type the engine's side and hooks/types.ts the helper's: the mod's
    files keep those types (JSON.parse's answer is read through `unknown` or a named record)."""
    for ts in sorted(TYPES.parent.glob("*.ts")):
        code = COMMENTS.sub("", STRINGS.sub("''", ts.read_text("utf-8")))
        assert not re.search(r"\bany\b", code), f"{ts.name} types something as any"


def test_the_any_check_sees_every_form():
    for form in ("x: any", "as any", "Array<any>", "Record<string, any>", "() => any", "[any, x]", "(any)", "& any", "satisfies any"):
        code = COMMENTS.sub("", STRINGS.sub("''", f"const a = 'any words' // any\nlet v = f() {form}\n"))
        assert re.search(r"\bany\b", code), form
    assert not re.search(r"\bany\b", COMMENTS.sub("", STRINGS.sub("''", "const t = `any ${x}` /* any */ // any\n")))
