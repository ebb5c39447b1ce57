"""The docs' pages as a reader follows them: their fenced blocks in order, the addresses the
examples use, and what a ``console`` block shows. Shared by the snippet tests (Sybil, on this
checkout: ``test_docs_snippets.py``) and the quickstart test (a fresh virtualenv built from
the wheel: ``test_wheel.py``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Where the documented commands point: the demo site (``pagelab demo serve --port 8080``)
#: and the API (``pagelab serve --port 8000``). Tests put their own servers there instead.
DEMO_ADDRESS = "http://127.0.0.1:8080"
API_ADDRESS = "http://127.0.0.1:8000"

#: The quickstarts: tests/test_wheel.py runs each word for word (every block, skipped or
#: not) in a fresh virtualenv made from the wheel; their engine blocks run there only.
QUICKSTARTS = ["docs/quickstart.md", "docs/quickstart-ci.md", "docs/quickstart-server.md"]

#: A fence at the start of a line (blocks indented in lists hold commands, not outputs).
FENCE = re.compile(r"```(\S*)")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, its text, the line of its opening fence."""

    language: str
    source: str
    line: int


def fenced_blocks(text: str) -> list[Block]:
    """The page's fenced blocks that start at the beginning of a line, in order."""
    blocks: list[Block] = []
    opening: tuple[str, int] | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence is None:
            if opening is not None:
                body.append(line)
            continue
        if opening is None:
            opening, body = (fence.group(1), number), []
        else:
            blocks.append(Block(opening[0], "\n".join(body) + "\n", opening[1]))
            opening = None
    return blocks


def console_session(block: str) -> list[tuple[str, str]]:
    """A ``console`` block's ``$`` commands, each with the output shown below it."""
    session: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        elif session:
            session[-1][1].append(line)
    return [(command, "\n".join(output) + "\n") for command, output in session]
