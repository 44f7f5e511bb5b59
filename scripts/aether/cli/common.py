"""What every subcommand shares: the `@command` decorator and argument types.

A command's function returns its result; `@command` prints it as the envelope (or its
`text`, for display commands) — so command bodies stay a few lines that call the library.
"""

from __future__ import annotations

import functools
import sys

import click

from aether.cli.guide import EXAMPLES
from aether.core import output
from aether.core.exceptions import input_error

HELP_NAMES = ("-h", "--help")
LITERAL = "\ue000"  # marks a `--help`/`-h` given as a value while click parses


def unmark(value):
    if isinstance(value, str):
        return value[len(LITERAL) :] if value.startswith(LITERAL) else value
    if isinstance(value, (tuple, list)):
        return type(value)(unmark(v) for v in value)
    return value


class FreeTextCommand(click.Command):
    """Free text is text: `--help`/`-h` asks for help only as the first argument or when no
    value is given at all; anywhere else it is a value, stored as given."""

    def parse_args(self, ctx, args):
        if args and args[0] not in HELP_NAMES and not all(a.startswith("-") for a in args):
            args = [LITERAL + a if a in HELP_NAMES else a for a in args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        ctx.params = {key: unmark(value) for key, value in ctx.params.items()}
        return super().invoke(ctx)


def example_epilog(name: str) -> str | None:
    """The `Example:` block at the end of a command's --help (examples live in cli.guide)."""
    example = EXAMPLES.get(name)
    return None if example is None else "\b\nExample:\n  " + example.replace("\n", "\n  ")


def command(name: str, *, display: bool = False, text: bool = False, **attrs):
    """Declare a subcommand whose function returns the result to print.

    display: prints result["text"] by default, the envelope with --json.
    text:    prints the envelope by default, only result["text"] with --text.
    """

    def deco(f):
        @functools.wraps(f)
        def run(*args, **kwargs):
            as_json = kwargs.pop("as_json", False)
            text_only = kwargs.pop("text_only", False)
            result = f(*args, **kwargs)
            output.success(result, display=display, as_json=as_json, text_only=text_only)

        if display:
            run = click.option("--json", "as_json", is_flag=True, help="Print the JSON envelope instead of text.")(run)
        if text:
            run = click.option("--text", "text_only", is_flag=True, help="Print only the rendered text.")(run)
        attrs.setdefault("no_args_is_help", False)
        attrs.setdefault("cls", FreeTextCommand)
        attrs.setdefault("epilog", example_epilog(name))
        return click.command(name, **attrs)(run)

    return deco


def _check_utf8(value: str, what: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise input_error("invalid_utf8", f"{what} is not valid UTF-8") from None
    return value


class TextType(click.ParamType):
    """A string argument that must be valid UTF-8 (argv bytes that are not become an error)."""

    name = "text"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        return _check_utf8(value, f"argument {param.human_readable_name if param else ''}".strip())


class ContentType(TextType):
    """Free text: the value itself, or `-` to read it from stdin (any size, exact bytes)."""

    name = "text|-"

    def convert(self, value, param, ctx):
        if value == "-":
            return read_stdin(param.human_readable_name if param else "content")
        return super().convert(value, param, ctx)


class FileOrStdinType(click.ParamType):
    """A path to read, or `-` for stdin; returns the text."""

    name = "file|-"

    def convert(self, value, param, ctx):
        if value == "-":
            return read_stdin(param.human_readable_name if param else "input")
        try:
            with open(value, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise input_error("file_unreadable", f"cannot read {value}: {exc.strerror}") from None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise input_error("invalid_utf8", f"{value} is not valid UTF-8") from None


def read_stdin(what: str = "stdin") -> str:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # tests may swap sys.stdin for a text stream
        return sys.stdin.read()
    raw = stream.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise input_error("invalid_utf8", f"{what} (stdin) is not valid UTF-8") from None


TEXT = TextType()
CONTENT = ContentType()
FILE_OR_STDIN = FileOrStdinType()


class FiniteFloat(click.ParamType):
    """A float that is a real number (no nan/inf), optionally bounded below."""

    name = "number"

    def __init__(self, minimum: float | None = None):
        self.minimum = minimum

    def convert(self, value, param, ctx):
        import math

        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.minimum is not None and number < self.minimum:
            self.fail(f"{value!r} is below the minimum {self.minimum:g}", param, ctx)
        return number


NUMBER = FiniteFloat()
