"""The ``dscodec`` command: look at what a request body becomes.

dscodec render FILE|- [--protocol P]                 the prompt, special tokens marked
dscodec encode FILE|- [--protocol P] [--tokenizer T]  the prompt and its token ids
dscodec serve (--script FILE | --upstream vllm|sglang URL) [--tokenizer T] [--model-alias NAME=VERSION]...
              [--served-model-name NAME]... [--host H] [--port N] [--context-limit N] [--api-key KEY]...
                                                      the example server, scripted or in front of an engine
dscodec lint FILE|- --protocol P | --url URL --body FILE  check a stream or response against its protocol
dscodec record --url URL --body FILE -o OUT.jsonl         save a live server's answer as a transcript
dscodec replay DIR|FILE|-                                 replay transcripts through dscodec, pass/fail table
dscodec compare EXPECTED ACTUAL [--merge-deltas]          the differences between two saved answers
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from dscodec.errors import DscodecError
from dscodec.prompt import RenderedPrompt, render_request
from dscodec.prompt.tokenize import PromptEncoder
from dscodec.protocols import PROTOCOLS, convert

__all__ = ["main"]

_OPEN, _CLOSE = "\x1b[7m", "\x1b[0m"  # reverse video on a terminal
#: The environment variable ``dscodec serve`` reads its API key from when ``--api-key`` is not given.
_API_KEY_VARIABLE = "DSCODEC_API_KEY"


def _marked(prompt: RenderedPrompt, *, color: bool) -> str:
    opening, closing = (_OPEN, _CLOSE) if color else ("⟦", "⟧")
    out: list[str] = []
    pos = 0
    for start, end in prompt.special_spans:
        out.append(prompt.text[pos:start])
        out.append(opening + prompt.text[start:end] + closing)
        pos = end
    out.append(prompt.text[pos:])
    return "".join(out)


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


def _int_from(least: int, most: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``least`` (to ``most``)."""

    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < least or (most is not None and value > most):
            limits = f"from {least} to {most}" if most is not None else f"of {least} or more"
            raise argparse.ArgumentTypeError(f"expected a number {limits}, not {value}")
        return value

    return read


def _seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text}")
    return value


def _live_limits(command: argparse.ArgumentParser, what: str) -> None:
    """The bounds of reading a live server's answer (``dscodec.testing.live.send``)."""
    command.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        help=f"seconds {what}'s whole answer may take (default: 120)",
    )
    command.add_argument(
        "--max-bytes",
        type=_int_from(1),
        default=None,
        help=f"the most bytes {what}'s answer may hold (default: 256 MiB)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dscodec", description="DeepSeek V4 / V4.1 request and response codec"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("render", "print the prompt a request body renders to, special tokens marked"),
        ("encode", "print the prompt and its token ids"),
    ):
        command = commands.add_parser(name, help=text, description=text)
        command.add_argument("file", help="request body (JSON); - reads standard input")
        command.add_argument(
            "--protocol", choices=PROTOCOLS, default="chat_completions", help="wire protocol of the body"
        )
        command.add_argument("--json", action="store_true", help="print one JSON object instead of text")
        if name == "encode":
            command.add_argument(
                "--tokenizer",
                default=None,
                help="tokenizer.json, or a model folder holding one (default: the bundled DeepSeek V4 one)",
            )
    text = "serve the example HTTP server, scripted or in front of vLLM / SGLang (needs dscodec[server])"
    serve = commands.add_parser("serve", help=text, description=text)
    source = serve.add_mutually_exclusive_group(required=True)
    source.add_argument("--script", help="JSON file of named scripts (see docs/server.md)")
    source.add_argument(
        "--upstream",
        nargs=2,
        metavar=("ENGINE", "URL"),
        help="the engine to forward to: vllm or sglang, and its address (see docs/backends.md)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    serve.add_argument(
        "--port", type=_int_from(0, 65535), default=8000, help="port to listen on (default: 8000)"
    )
    serve.add_argument(
        "--tokenizer",
        default=None,
        help="tokenizer.json, or a model folder holding one (default: the bundled DeepSeek V4 one plus a made-up "
        "<｜System｜> id, for demos)",
    )
    serve.add_argument(
        "--context-limit", type=_int_from(1), default=None, help="context window in tokens (default: 131072)"
    )
    serve.add_argument(
        "--model-alias",
        action="append",
        default=[],
        metavar="NAME=VERSION",
        help="also accept model NAME for template VERSION (v4 or v4.1), e.g. deepseek-v4-pro=v4; repeatable",
    )
    serve.add_argument(
        "--served-model-name",
        action="append",
        default=None,
        metavar="NAME",
        help="serve exactly these names (default names or aliases) and list them in /v1/models; repeatable",
    )
    serve.add_argument(
        "--upstream-model", default=None, help="vLLM: the model name to send the engine (default: none)"
    )
    serve.add_argument(
        "--unsupported",
        choices=("ignore", "reject"),
        default="ignore",
        help="request fields dscodec cannot honour (penalties, logit_bias, top_k, audio, ...): read past them "
        "(default) or answer 400 naming the field",
    )
    serve.add_argument(
        "--api-key",
        action="append",
        default=None,
        metavar="KEY",
        help="require this key on every request but /health (Authorization: Bearer KEY or x-api-key: KEY); repeatable. "
        f"Without it, the key in ${_API_KEY_VARIABLE} if set (other users of the machine can read a key given "
        "on the command line)",
    )
    _add_testing_commands(commands)
    return parser


def _add_testing_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The conformance verbs of dscodec.testing (docs/testing.md); their code is imported only when run."""
    text = "check a saved SSE stream or JSON response (or a live server's answer) against its protocol"
    lint = commands.add_parser("lint", help=text, description=text)
    lint.add_argument(
        "file", nargs="?", help="SSE stream, JSON response or transcript; - reads standard input"
    )
    lint.add_argument("--protocol", choices=PROTOCOLS, default=None, help="the answer's protocol")
    lint.add_argument("--request", default=None, help="the request body (JSON), for rules that depend on it")
    lint.add_argument("--url", default=None, help="send --body to this live server and lint its answer")
    lint.add_argument("--body", default=None, help="the request body (JSON) to send with --url")
    lint.add_argument("--header", action="append", help="an HTTP header 'Name: value' for --url (repeatable)")
    lint.add_argument("--no-sdk", action="store_true", help="skip the strict check against the official SDKs")
    _live_limits(lint, "the --url server")
    text = "send a request body to a live server and save the exchange as a transcript"
    record = commands.add_parser("record", help=text, description=text)
    record.add_argument("--url", required=True, help="the endpoint (or base URL with --protocol)")
    record.add_argument("--body", required=True, help="the request body (JSON)")
    record.add_argument("-o", "--output", required=True, help="the transcript file to write (.jsonl)")
    record.add_argument(
        "--protocol", choices=PROTOCOLS, default=None, help="the protocol, if the URL is a base"
    )
    record.add_argument("--header", action="append", help="an HTTP header 'Name: value' (repeatable)")
    record.add_argument("--name", default="", help="the transcript's name (default: the file name)")
    _live_limits(record, "the server")
    text = "compare two saved answers (transcripts, SSE streams or JSON bodies) after normalising made-up ids"
    compare = commands.add_parser("compare", help=text, description=text)
    compare.add_argument("expected", help="the expected answer: a transcript, an SSE stream or a JSON body")
    compare.add_argument("actual", help="the answer to check, in any of the same forms")
    compare.add_argument(
        "--merge-deltas",
        action="store_true",
        help="merge consecutive deltas of one text or one call first, so deltas may part elsewhere",
    )
    compare.add_argument(
        "--ignore",
        action="append",
        metavar="RULE",
        help="leave out a key anywhere (usage) or a path pattern (frames[*].data.usage); repeatable",
    )
    compare.add_argument(
        "--sections",
        default=None,
        help="which of status,frames,response,accumulated to compare (default: all)",
    )
    compare.add_argument("--keep-ids", action="store_true", help="compare ids as written (no placeholders)")
    compare.add_argument(
        "--limit", type=_int_from(0), default=20, help="print at most this many differences (default: 20)"
    )
    text = "replay every transcript under a folder through dscodec and print a pass/fail table"
    replay = commands.add_parser("replay", help=text, description=text)
    replay.add_argument(
        "directory", help="a folder of transcripts (*.jsonl), or a transcript file; - reads standard input"
    )
    replay.add_argument(
        "--chunking", choices=("recorded", "whole", "chars"), default="recorded", help="how to cut the output"
    )
    replay.add_argument(
        "--url",
        help="check a live server instead of dscodec: send each transcript's request to this server (its base "
        "URL) and compare the answer with the recorded one (deltas merged, ids and times normalised)",
    )
    replay.add_argument(
        "--ignore",
        action="append",
        metavar="RULE",
        help="leave out a key anywhere (usage) or a path pattern (frames[*].data.usage); repeatable",
    )
    replay.add_argument(
        "--header", action="append", help="an HTTP header 'Name: value' for --url (repeatable)"
    )
    _live_limits(replay, "the --url server")


def _run_testing_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``dscodec lint`` / ``record`` / ``replay`` / ``compare``."""
    from dscodec.testing import _cli

    command = {
        "lint": _cli.lint_command,
        "record": _cli.record_command,
        "replay": _cli.replay_command,
        "compare": _cli.compare_command,
    }
    return command[args.command](args, out)


def _serve(args: argparse.Namespace) -> int:
    """Run ``dscodec serve``; the web stack is imported only here."""
    try:
        from dscodec.server.serve import parse_alias, serve
    except ImportError as exc:
        print(
            f"dscodec: serve needs the server extra (pip install 'dscodec[server]'): {exc}", file=sys.stderr
        )
        return 2
    upstream = None
    if args.upstream is not None:
        engine, url = args.upstream
        if engine not in ("vllm", "sglang"):
            print(f"dscodec: --upstream {engine!r}: expected vllm or sglang", file=sys.stderr)
            return 2
        upstream = (engine, url)
    try:
        aliases = dict(parse_alias(text) for text in args.model_alias)
        api_keys = args.api_key or (
            [os.environ[_API_KEY_VARIABLE]] if os.environ.get(_API_KEY_VARIABLE) else None
        )
        serve(
            args.script,
            upstream=upstream,
            host=args.host,
            port=args.port,
            tokenizer=args.tokenizer,
            context_limit=args.context_limit,
            aliases=aliases,
            served_models=args.served_model_name,
            upstream_model=args.upstream_model,
            unsupported=args.unsupported,
            api_keys=api_keys,
        )
    except (DscodecError, ValueError) as exc:  # ValueError: an engine address that is no http(s):// URL
        print(f"dscodec: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 rejected request, 2 usage or I/O error)."""
    if stdout is None:
        _escape_what_the_terminal_cannot_show()
    try:
        return _main(argv, stdout)
    except BrokenPipeError:
        # The reader went away (``dscodec encode body.json | head``): nothing more to say, and no traceback.
        # Standard output is pointed at /dev/null so that the interpreter's final flush stays quiet too.
        if stdout is None:
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError, AttributeError):
                pass
        return 0


def _escape_what_the_terminal_cannot_show() -> None:
    """Prompts hold characters such as ``｜`` and ``▁``: where standard output or error has an encoding without
    them (``PYTHONIOENCODING=ascii``, a Latin-1 terminal), they are written as ``\\uff5c`` escapes rather than
    failing the command with a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (OSError, ValueError):  # a closed or detached stream: leave it as it is
                pass


def _json_text(value: object, stream: TextIO) -> str:
    """``value`` as JSON for ``stream``: non-ASCII raw where its encoding holds every character, else escaped
    (``\\uff5c``), so that the output stays valid JSON on an ASCII or Latin-1 stream."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        "\U0001f600\uff5c".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def _main(argv: Sequence[str] | None, stdout: TextIO | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    out = stdout or sys.stdout
    if args.command in ("lint", "record", "replay", "compare"):
        return _run_testing_command(args, out)
    try:
        body = _read(args.file)
    except OSError as exc:
        print(f"dscodec: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        request = convert(args.protocol, body)
        prompt = render_request(request)
        ids = PromptEncoder(args.tokenizer).encode(request) if args.command == "encode" else None
    except DscodecError as exc:
        print(f"dscodec: {type(exc).__name__} (HTTP {exc.status_code}): {exc}", file=sys.stderr)
        print(_json_text(exc.body, sys.stderr), file=sys.stderr)
        return 1
    if args.json:
        result: dict[str, object] = {
            "model_version": request.model_version,
            "prompt": prompt.text,
            "special_spans": prompt.special_spans,
        }
        if ids is not None:
            result["ids"] = ids
        print(_json_text(result, out), file=out)
        return 0
    color = out.isatty()
    print(f"# {request.protocol} -> DeepSeek {request.model_version.upper()} ({request.model})", file=out)
    print(_marked(prompt, color=color), file=out)
    if ids is not None:
        print(f"# {len(ids)} token ids", file=out)
        print(json.dumps(ids), file=out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
