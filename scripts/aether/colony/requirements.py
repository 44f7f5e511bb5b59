"""Research requirements read from text (docs/decisions/refinement-loops.md): an explicit markdown
list (bulleted, numbered, or headings — nested items and blank lines tolerated; a section whose
heading mentions "research" is used when there is one), or clauses of the goal or the
colonizer's findings that name a technology or a concern (`derive`). colony/research.py turns
them into scout tasks.
"""

from __future__ import annotations

import re

MAX_REQUIREMENT = 500  # characters of one requirement
MAX_DETAILS = 10  # nested items kept per requirement
MIN_CLAUSE_WORDS = 3  # a shorter comma-separated piece joins the clause before it
# Words that make a clause a research requirement (lower case; see `names_topic`).
TECHNOLOGIES = frozenset(
    [
        "python",
        "django",
        "flask",
        "fastapi",
        "pydantic",
        "sqlalchemy",
        "celery",
        "pytest",
        "javascript",
        "typescript",
        "node",
        "nodejs",
        "deno",
        "bun",
        "react",
        "vue",
        "angular",
        "svelte",
        "nextjs",
        "nuxt",
        "express",
        "nestjs",
        "jest",
        "vitest",
        "playwright",
        "cypress",
        "tailwind",
        "webpack",
        "vite",
        "postgres",
        "postgresql",
        "mysql",
        "mariadb",
        "sqlite",
        "mongodb",
        "redis",
        "elasticsearch",
        "opensearch",
        "dynamodb",
        "cassandra",
        "kafka",
        "rabbitmq",
        "nats",
        "graphql",
        "grpc",
        "rest",
        "openapi",
        "swagger",
        "websocket",
        "websockets",
        "docker",
        "kubernetes",
        "helm",
        "terraform",
        "ansible",
        "aws",
        "gcp",
        "azure",
        "lambda",
        "s3",
        "cloudflare",
        "vercel",
        "heroku",
        "nginx",
        "rust",
        "cargo",
        "tokio",
        "go",
        "golang",
        "java",
        "spring",
        "kotlin",
        "swift",
        "swiftui",
        "android",
        "ios",
        "flutter",
        "dart",
        "ruby",
        "rails",
        "php",
        "laravel",
        "symfony",
        "dotnet",
        "csharp",
        "elixir",
        "phoenix",
        "erlang",
        "haskell",
        "scala",
        "clojure",
        "c++",
        "cpp",
        "cmake",
        "bash",
        "shell",
        "powershell",
        "jwt",
        "oauth",
        "oauth2",
        "oidc",
        "saml",
        "stripe",
        "twilio",
        "sendgrid",
        "firebase",
        "supabase",
        "prisma",
        "drizzle",
        "htmx",
        "wasm",
        "webassembly",
        "llm",
        "openai",
    ]
)  # noqa: E501
CONCERNS = frozenset(
    [
        "authentication",
        "authorization",
        "auth",
        "login",
        "security",
        "encryption",
        "secrets",
        "performance",
        "latency",
        "scalability",
        "scaling",
        "caching",
        "cache",
        "concurrency",
        "async",
        "asynchronous",
        "parallelism",
        "testing",
        "tests",
        "tdd",
        "coverage",
        "deployment",
        "deploy",
        "ci",
        "cd",
        "pipeline",
        "logging",
        "monitoring",
        "observability",
        "tracing",
        "metrics",
        "migration",
        "migrations",
        "database",
        "schema",
        "api",
        "apis",
        "accessibility",
        "a11y",
        "i18n",
        "localization",
        "internationalization",
        "payments",
        "billing",
        "search",
        "indexing",
        "validation",
        "errors",
        "error-handling",
        "retries",
        "offline",
        "sync",
        "synchronization",
        "realtime",
        "real-time",
        "queue",
        "queues",
        "jobs",
        "scheduling",
        "backup",
        "backups",
        "privacy",
        "gdpr",
        "compliance",
        "state-management",
        "state",
        "pagination",
        "upload",
        "uploads",
        "storage",
        "streaming",
        "notifications",
        "email",
        "rate-limiting",
        "throttling",
        "versioning",
        "packaging",
        "distribution",
        "cli",
        "gui",
        "ui",
        "ux",
        "architecture",
    ]
)  # noqa: E501


# ---------------------------------------------------------------- reading requirements


def _heading(line: str):
    """(level, text) of a markdown heading (`## x`, closing #s dropped) or a bold line
    (`**x**`, `__x__:`), else None. (Plain string work, no backtracking pattern: a long line
    costs linear time.)"""
    rest = line.lstrip()
    if len(line) - len(rest) > 3:
        return None
    hashes = len(rest) - len(rest.lstrip("#"))
    if 1 <= hashes <= 6:
        after = rest[hashes:]
        if not after[:1].isspace():
            return None
        content = after.strip()
        if not content:
            return (hashes, "") if len(after) > 1 else None
        return hashes, (content.rstrip("#").rstrip() or content[:1]).strip()
    if rest.startswith(("**", "__")):
        body = rest[2:].rstrip()
        if body.endswith(":"):
            body = body[:-1].rstrip()
        if body.endswith(("**", "__")) and len(body) > 2:
            return 7, body[:-2].strip().rstrip(":")
    return None


def _item(line: str):
    """(indent, text) of a list item (`- x`, `* x`, `+ x`, `• x`, `1. x`, `1) x`; a `[ ]` or
    `[x]` checkbox dropped), else None. (Plain string work: linear in the line's length.)"""
    body = line.lstrip()
    if body[:1] in ("-", "*", "+", "•") and body[:1]:
        marker = 1
    else:
        digits = len(body) - len(body.lstrip("0123456789"))
        if not 1 <= digits <= 3 or body[digits : digits + 1] not in (".", ")") or not body[digits : digits + 1]:
            return None
        marker = digits + 1
    after = body[marker:]
    if not after[:1].isspace():
        return None
    text = after.strip()
    if text[:1] == "[" and text[1:2] in (" ", "x", "X") and text[2:3] == "]" and text[3:4].isspace():
        text = text[3:].strip() or text
    if not text:
        return None
    indent = len(line[: len(line) - len(body)].replace("\t", "    "))
    return indent, text


def _clean(text: str) -> str:
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return " ".join(text.split())


def _section(lines: list) -> list:
    """The lines of the section whose heading mentions research (all lines when none does)."""
    for i, line in enumerate(lines):
        found = _heading(line)
        if found and "research" in found[1].lower():
            level = found[0]
            body = []
            for rest in lines[i + 1 :]:
                nxt = _heading(rest)
                if nxt and (nxt[0] <= level or level == 7):
                    break
                body.append(rest)
            return body
    return lines


def parse_list(text: str) -> list:
    """Requirements of an explicit markdown list: [{requirement, details}]. Top-level items
    (the smallest indentation) are requirements, deeper items their details, other lines
    continue the item above; without any list item, each heading is a requirement and the
    text under it its details."""
    lines = _section(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    items = [(i, _item(line)) for i, line in enumerate(lines) if _item(line)]
    out: list = []
    if items:
        top = min(indent for _, (indent, _) in items)
        current: dict | None = None
        target: tuple[str, int | None] | None = None
        for line in lines:
            found = _item(line)
            if found:
                indent, body = found
                if indent <= top or current is None:
                    current = {"requirement": _clean(body), "details": []}
                    out.append(current)
                    target = ("requirement", None)
                else:
                    current["details"].append(_clean(body))
                    target = ("details", len(current["details"]) - 1)
            elif not line.strip() or _heading(line):
                target = None  # a blank line or a heading ends an item's continuation lines
            elif current is not None and target is not None:
                extra = _clean(line)
                if target[0] == "requirement":
                    current["requirement"] += " " + extra
                else:
                    current["details"][target[1]] += " " + extra
    else:
        current = None
        for line in lines:
            found = _heading(line)
            if found:
                current = {"requirement": _clean(found[1]), "details": []}
                out.append(current)
            elif current is not None and line.strip():
                current["details"].append(_clean(line))
    return _finish(out)


def _finish(found: list) -> list:
    out, seen = [], set()
    for item in found:
        text = item["requirement"].strip(" :-–—")
        key = text.lower()
        if not text or key in seen:
            continue
        seen.add(key)
        if len(text) > MAX_REQUIREMENT:
            text = text[: MAX_REQUIREMENT - 1] + "…"
        details = [d[:MAX_REQUIREMENT] for d in item["details"] if d][:MAX_DETAILS]
        out.append({"requirement": text, "details": details})
    return out


def names_topic(clause: str) -> list:
    """The technologies and concerns a clause names: words of TECHNOLOGIES or CONCERNS, and names
    that look like technologies — mixed case inside the word (FastAPI, PostgreSQL, GraphQL),
    letters with digits (OAuth2, S3), or a `.js` suffix."""

    found = []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9.+#-]*[A-Za-z0-9+#]|[A-Za-z]", clause):
        low = word.lower().strip(".")
        plain = low.replace(".", "")
        if (  # noqa: SIM102
            low in TECHNOLOGIES
            or plain in TECHNOLOGIES
            or low in CONCERNS
            or re.search(r"[a-z][A-Z]", word)
            or re.search(r"[A-Za-z]\d|\d[A-Za-z]", word)
            or low.endswith(".js")
        ):
            if word not in found:
                found.append(word)
    return found


def _clauses(text: str) -> list:
    """Sentences (and list lines) cut into clauses at commas and semicolons; a piece of fewer
    than MIN_CLAUSE_WORDS words joins the clause before it."""

    out = []
    for raw in text.replace("\r", "\n").split("\n"):
        line = raw.strip()
        found = _item(raw)
        if found:
            line = found[1]
        head = _heading(raw)
        if head:
            line = head[1]
        for sentence in re.split(r"(?<=[.!?])\s+|(?<=[.!?])$", line):
            pieces: list = []
            for piece in re.split(r"[;,]\s*", sentence):
                piece = _clean(piece).strip(" .!?:")
                if not piece:
                    continue
                if pieces and len(piece.split()) < MIN_CLAUSE_WORDS:
                    pieces[-1] += ", " + piece
                else:
                    pieces.append(piece)
            out += pieces
    return out


def derive(text: str) -> list:
    """Requirements derived from a goal or colonize findings: one per clause that names a
    technology or a concern (`names_topic`), in order, duplicates dropped."""
    found = [{"requirement": c, "details": [], "topics": names_topic(c)} for c in _clauses(text)]
    return _finish([f for f in found if f["topics"]])
