"""An HTML text's table headers, link targets and script elements, for tests of what pagelab
renders."""

from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["HtmlParts"]


class HtmlParts(HTMLParser):
    """Parse ``text``: ``headers`` (each ``<th>``'s text), ``rows`` (each ``<tr>``'s ``<td>``
    texts), ``links`` (each ``<a href>``) and ``scripts`` (how many ``<script>`` elements)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.headers: list[str] = []
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self.scripts = 0
        self._in_header = False
        self._in_cell = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "th":
            self._in_header = True
            self.headers.append("")
        elif tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._in_cell = True
            self.rows[-1].append("")
        elif tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "th":
            self._in_header = False
        elif tag == "td":
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_header:
            self.headers[-1] += data
        elif self._in_cell:
            self.rows[-1][-1] += data
