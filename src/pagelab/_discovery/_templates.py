"""Templates: which pages are the same kind of page, and the sample of each that is measured.

The rule (docs/scan.md, "Templates"), deterministic and independent of the URLs' order: the
paths form a tree of segments, read from the root down. At each node:

- the root's children (a site's sections) become ``*`` only when they look like an id
  (digits, a date, a hex hash, a UUID);
- below one real parent path, children become ``*`` all together when there are
  :data:`MIN_SIBLINGS` or more distinct ones (slugs vary among siblings), else only those
  that look like an id; a child that has :data:`MIN_SIBLINGS` or more children of its own
  is a section (``/store/product`` beside ``/store/about``), not counted among them:
  sections become ``*`` together only when there are :data:`MIN_SIBLINGS` or more and
  their children repeat from one to another (``/category/<name>/<page>``);
- below a node that merged several real paths (``/product/*``), a child that appears under
  one of them only is that page's own slug and becomes ``*``; one that repeats under
  several (``reviews`` under every product) is a fixed name and stays.

Pages whose segments became ``*`` are merged and the rule goes on one level down. A page's
template is its path with those segments written ``*``, without query or trailing slash:
``/product/red-shoe`` and ``/product/blue-hat`` (with a third product) are ``/product/*``,
``/blog/2024/05/hello`` is ``/blog/*/*/*``.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from pagelab._exceptions import InvalidInputError
from pagelab.models import DEFAULT_PER_TEMPLATE

from ._scope import glob_pattern

__all__ = [
    "MIN_SIBLINGS",
    "TemplateRule",
    "group_templates",
    "sample_templates",
]

#: A node with at least this many distinct children has variable children.
MIN_SIBLINGS = 3
#: A user's rule: a function of the URL (None: the default rule decides), or path globs,
#: each its own template (first match wins; a page no glob matches: the default rule).
TemplateRule = Callable[[str], str | None] | Sequence[str]

_ID = re.compile(
    r"\d+([-_.]\d+)*"                                   # 42, 2024-05-01, 1.2.3
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # a UUID
    r"|(?=[0-9a-z]*\d)[0-9a-f]{8,}",                    # a hex hash with a digit
    re.IGNORECASE,
)
_WILD = "*"


def _looks_like_id(segment: str) -> bool:
    return _ID.fullmatch(segment) is not None


def _segments(url: str) -> tuple[str, ...]:
    path = urlsplit(url).path.strip("/")
    return tuple(path.split("/")) if path else ()


def _default_templates(urls: Iterable[str]) -> dict[str, str]:
    """url -> template by the module's rule."""
    out: dict[str, str] = {}
    stack: list[tuple[tuple[str, ...], list[tuple[str, tuple[str, ...]]]]] = [
        ((), [(url, _segments(url)) for url in urls])]
    while stack:
        prefix, items = stack.pop()
        depth = len(prefix)
        children: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
        for url, segments in items:
            if len(segments) == depth:
                out[url] = "/" + "/".join(prefix)
            else:
                children[segments[depth]].append((url, segments))
        parents: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        for value, group in children.items():
            parents[value].update(segments[:depth] for _, segments in group)
        merged_node = len(set().union(*parents.values())) > 1 if parents else False
        # A child with MIN_SIBLINGS or more children of its own is a section.
        below = {value: {seg[depth + 1] for _, seg in group if len(seg) > depth + 1}
                 for value, group in children.items()}
        pages = {value for value, kids in below.items() if len(kids) < MIN_SIBLINGS}
        sections = [value for value in children if value not in pages]
        siblings = depth > 0 and not merged_node
        pages_vary = siblings and len(pages) >= MIN_SIBLINGS
        # Sections are one template when they are many and their children repeat from one
        # to another (``/category/<name>/<page>``), not when each has its own
        # (``/store/category/...`` beside ``/store/product/...``).
        repeated = Counter(kid for value in sections for kid in below[value])
        sections_vary = (siblings and len(sections) >= MIN_SIBLINGS
                         and any(count > 1 for count in repeated.values()))
        merged: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
        for value in sorted(children):
            varies = ((pages_vary if value in pages else sections_vary)
                      or _looks_like_id(value)
                      or (merged_node and len(parents[value]) == 1))
            merged[_WILD if varies else value].extend(children[value])
        stack.extend(((*prefix, key), group) for key, group in merged.items())
    return out


def group_templates(urls: Sequence[str], rule: TemplateRule | None = None) -> dict[str, str]:
    """Each URL's template (url -> template, in the order of ``urls``): ``rule``'s when it
    names one, else the default rule's (over the URLs the user's rule left)."""
    chosen: dict[str, str] = {}
    if rule is not None:
        name = _user_rule(rule)
        for url in urls:
            template = name(url)
            if template is not None:
                if not isinstance(template, str) or not template:
                    raise InvalidInputError(
                        f"template: the function returned {template!r} for {url}; expected "
                        "a template name (a non-empty string) or None")
                chosen[url] = template
    rest = _default_templates(url for url in urls if url not in chosen)
    return {url: chosen[url] if url in chosen else rest[url] for url in urls}


def _user_rule(rule: TemplateRule) -> Callable[[str], str | None]:
    if callable(rule):
        return rule
    globs = [rule] if isinstance(rule, str) else rule
    if not isinstance(globs, Sequence) or not all(isinstance(g, str) for g in globs):
        raise InvalidInputError(
            f"template: expected a function or path globs (strings), got {rule!r}")
    patterns = [(glob, glob_pattern(glob)) for glob in globs]

    def by_glob(url: str) -> str | None:
        path = urlsplit(url).path
        return next((glob for glob, pattern in patterns if pattern.fullmatch(path)), None)

    return by_glob


def sample_templates(templates: Mapping[str, str], per_template: int = DEFAULT_PER_TEMPLATE,
                     seed: int = 0) -> dict[str, list[str]]:
    """template -> the URLs to measure, at most ``per_template`` each, templates in order of
    first appearance. The sample is spread over the template: its URLs sorted, cut into
    ``per_template`` equal stretches, one URL drawn from each by a generator seeded with
    ``seed`` and the template's name, so the same site and seed give the same sample."""
    if isinstance(per_template, bool) or not isinstance(per_template, int) or per_template < 1:
        raise InvalidInputError(
            f"per_template: expected a positive integer, got {per_template!r}")
    members: dict[str, list[str]] = defaultdict(list)
    for url, template in templates.items():
        members[template].append(url)
    out: dict[str, list[str]] = {}
    for template, urls in members.items():
        ordered = sorted(urls)
        if len(ordered) <= per_template:
            out[template] = ordered
            continue
        draw = random.Random(f"{seed}:{template}")
        bounds = [len(ordered) * i // per_template for i in range(per_template + 1)]
        out[template] = [ordered[draw.randrange(lo, hi)] for lo, hi in itertools.pairwise(bounds)]
    return out


