"""Issue 34, point 2: a secret is scrubbed in every form a page or a browser writes it (a
GET form's URL, HTML character references, JSON escapes), by Python (messages) and by the
Node driver (LHR, flow result, HAR) with the one pattern. The real flow through a GET form
is tests/test_flow_runs_engine.py::test_a_secret_sent_by_a_get_form_is_scrubbed_everywhere.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from urllib.parse import quote, quote_plus

import pytest

from pagelab.engine import engine_install
from pagelab.engine._flows import failure_message
from pagelab.engine._scrub import SecretScrubber
from pagelab.models import Flow

SECRET = 'Tr0ub4dor &3 @x"<\u00e9\U0001f600/'


def spellings(secret: str) -> dict[str, str]:
    """The secret as pages and browsers write it."""
    return {
        "literal": secret,
        "form (WHATWG: + for a space)": quote_plus(secret, safe="*"),
        "form, lower-case hex": quote_plus(secret).replace("%C3%A9", "%c3%a9"),
        "encodeURIComponent (%20)": quote(secret, safe="!~*'()"),
        "a URL's path (/ kept)": quote(secret),
        "+ and %20 mixed": quote_plus(secret).replace("+", "%20", 1),
        "HTML (html.escape)": html.escape(secret),
        "HTML numeric references": secret.encode("ascii", "xmlcharrefreplace").decode(),
        "HTML hex and named references": "".join(
            {"&": "&AMP;", "<": "&#x3C;", '"': "&#X00022;"}.get(c, c) for c in secret),
        "JSON (ensure_ascii)": json.dumps(secret)[1:-1],
        "JSON (UTF-8)": json.dumps(secret, ensure_ascii=False)[1:-1],
        "JSON, every character escaped": "".join(f"\\u{ord(c):04X}" for c in "Tr0ub4dor")
                                         + json.dumps(secret[9:])[1:-1],
    }


@pytest.mark.parametrize(("name", "written"), list(spellings(SECRET).items()))
def test_every_spelling_of_a_secret_is_scrubbed(name: str, written: str) -> None:
    scrubber = SecretScrubber.of([SECRET])
    text = f"https://shop.test/done?pw={written}&next=1"
    assert scrubber.scrub(text) == "https://shop.test/done?pw=***&next=1", name


def test_what_is_not_the_secret_is_kept() -> None:
    scrubber = SecretScrubber.of(["Pa ss&1"])
    kept = ["pa+ss%261", "Pa ss&2", "Pa  ss&1", "Pa%2Bss%261", "Pass&1", "&#80;a"]
    for text in kept:
        assert scrubber.scrub(text) == text
    assert SecretScrubber.of([]).scrub("anything") == "anything"
    assert SecretScrubber.of(["", ""]).pattern == ""
    # A secret holding another is scrubbed whole.
    both = SecretScrubber.of(["abc123", "xxabc123yy"])
    assert both.scrub("xxabc123yy and abc123") == "*** and ***"


def test_a_flow_failure_message_is_scrubbed_in_every_spelling() -> None:
    flow = Flow("f").navigate("http://127.0.0.1:9/").type("#pw", SECRET, secret=True)
    failure = {"item_index": 2, "message": f"navigation to /done?pw={quote_plus(SECRET)} "
                                            f"failed; value {html.escape(SECRET)}"}
    message, _ = failure_message(failure, flow, SecretScrubber.of(flow.secrets))
    assert message == ("flow 'f', after step 1 (navigate 'http://127.0.0.1:9/'), action 1 "
                       "(type into '#pw'): navigation to /done?pw=*** failed; value ***")


def node_binary() -> str:
    install = engine_install()
    found = str(install.node) if install.is_complete else shutil.which("node")
    # `make test` runs `pagelab setup`, which installs the engine's Node: none is a set-up bug.
    assert found is not None, "no Node.js: run `pagelab setup` (it installs the engine's)"
    return found


def test_the_driver_reads_the_pattern_as_python_does() -> None:
    # The driver compiles the same text with new RegExp(pattern, "g"): the forms it scrubs
    # and the text it keeps must be Python's.
    scrubber = SecretScrubber.of([SECRET, "Pa ss&1"])
    texts = [f"?pw={w}&n=1" for w in spellings(SECRET).values()]
    texts += ["pa+ss%261 Pa+ss%261 Pa ss&2", "Pa\\u0020ss\\u00261"]
    script = ("const [pattern, texts] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "const re = new RegExp(pattern, 'g');"
              "process.stdout.write(JSON.stringify(texts.map((t) => t.replace(re, '***'))));")
    completed = subprocess.run(
        [node_binary(), "-e", script], input=json.dumps([scrubber.pattern, texts]),
        capture_output=True, text=True, check=True, timeout=60,
    )
    assert json.loads(completed.stdout) == [scrubber.scrub(t) for t in texts]
    assert json.loads(completed.stdout)[-2:] == ["pa+ss%261 *** Pa ss&2", "***"]
