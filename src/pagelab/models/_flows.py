"""User flows: a scripted journey of navigation, timespan and snapshot steps, as data.

A flow is an ordered list of *items*: the three Lighthouse step kinds (``navigate``,
``timespan`` with the actions it measures, ``snapshot``) and unmeasured actions between
them (``click``, ``type``, ``press``, ``select``, ``scroll``, ``wait_for``, ``wait``). It is
built in Python with chained methods (each returns a new flow) or loaded from YAML / JSON
(:meth:`Flow.from_file`). Whatever cannot run is refused here, before a browser starts, with
an :class:`~pagelab.InvalidFlowError` naming the flow and the step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictStr, ValidationError

from pagelab._exceptions import InvalidFlowError

from ._files import DATA_FILE_SUFFIXES, read_data_file
from ._types import MAX_STRING_LENGTH, PageUrl
from ._validation import validation_message

__all__ = [
    "FLOW_ACTIONS",
    "Click",
    "Flow",
    "FlowAction",
    "FlowItem",
    "Navigate",
    "Press",
    "Scroll",
    "Select",
    "Snapshot",
    "Timespan",
    "Type",
    "Wait",
    "WaitFor",
]

#: A CSS selector, as puppeteer's ``page.$`` reads it. Strict: ``{click: 3}`` is refused,
#: not turned into ``"3"``.
Selector = Annotated[StrictStr, Field(min_length=1, max_length=MAX_STRING_LENGTH)]
StepName = Annotated[StrictStr, Field(min_length=1, max_length=200)]

#: How long ``wait_for`` waits by default, and the longest wait of any kind (a run's hard
#: timeout is 150 s).
DEFAULT_WAIT_FOR_MS = 10_000
MAX_WAIT_MS = 60_000


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The item's key in YAML / JSON (``click``, ``navigate``...).
    keyword: ClassVar[str]
    #: The field a one-value form (``{click: "#add"}``) fills; None: a mapping is required.
    positional: ClassVar[str | None]

    def describe(self) -> str:
        """Short text naming the item in messages (``click '#add'``)."""
        value = getattr(self, self.positional) if self.positional else ""
        return f"{self.keyword} {value!r}" if self.positional else self.keyword

    def to_data(self) -> dict[str, Any]:
        """The YAML / JSON form (secret text masked: this is what gets stored)."""
        fields = self.model_dump(exclude_defaults=True)
        if self.positional is not None and set(fields) == {self.positional}:
            return {self.keyword: fields[self.positional]}
        return {self.keyword: fields}


# -- actions ----------------------------------------------------------------------------


class Click(_Item):
    """Click the first element matching ``selector`` (it must exist)."""

    keyword: ClassVar[str] = "click"
    positional: ClassVar[str | None] = "selector"
    kind: Literal["click"] = Field(default="click", exclude=True)
    selector: Selector


class Type(_Item):
    """Type ``text`` into the element matching ``selector``. ``secret=True`` (a password):
    the text is scrubbed from every stored file and report."""

    keyword: ClassVar[str] = "type"
    positional: ClassVar[str | None] = None
    kind: Literal["type"] = Field(default="type", exclude=True)
    selector: Selector
    text: Annotated[StrictStr, Field(max_length=MAX_STRING_LENGTH)]
    secret: bool = False

    def to_data(self) -> dict[str, Any]:
        data = super().to_data()
        if self.secret:
            data["type"]["text"] = "***"
        return data

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        # pydantic builds repr(), str() (print, f-strings, logging) and rich's repr from
        # these: secret text never shows in any of them.
        for name, value in super().__repr_args__():
            yield name, "***" if name == "text" and self.secret else value

    def describe(self) -> str:
        return f"type into {self.selector!r}"


class Press(_Item):
    """Press a key (puppeteer's key names: ``Enter``, ``Tab``, ``ArrowDown``, ``a``...)."""

    keyword: ClassVar[str] = "press"
    positional: ClassVar[str | None] = "key"
    kind: Literal["press"] = Field(default="press", exclude=True)
    key: Annotated[StrictStr, Field(min_length=1, max_length=50)]


class Select(_Item):
    """Choose ``value`` in the ``<select>`` matching ``selector``."""

    keyword: ClassVar[str] = "select"
    positional: ClassVar[str | None] = None
    kind: Literal["select"] = Field(default="select", exclude=True)
    selector: Selector
    value: Annotated[StrictStr, Field(max_length=MAX_STRING_LENGTH)]

    def describe(self) -> str:
        return f"select {self.value!r} in {self.selector!r}"


class Scroll(_Item):
    """Scroll the element matching a selector into view, or the page down by pixels."""

    keyword: ClassVar[str] = "scroll"
    positional: ClassVar[str | None] = "to"
    kind: Literal["scroll"] = Field(default="scroll", exclude=True)
    to: Selector | Annotated[int, Field(strict=True, ge=-1_000_000, le=1_000_000)]


class WaitFor(_Item):
    """Wait until an element matching ``selector`` exists, at most ``timeout_ms``."""

    keyword: ClassVar[str] = "wait_for"
    positional: ClassVar[str | None] = "selector"
    kind: Literal["wait_for"] = Field(default="wait_for", exclude=True)
    selector: Selector
    timeout_ms: Annotated[int, Field(strict=True, gt=0, le=MAX_WAIT_MS)] = DEFAULT_WAIT_FOR_MS


class Wait(_Item):
    """Wait a fixed time (ms); prefer ``wait_for`` where something can be waited for."""

    keyword: ClassVar[str] = "wait"
    positional: ClassVar[str | None] = "ms"
    kind: Literal["wait"] = Field(default="wait", exclude=True)
    ms: Annotated[int, Field(strict=True, ge=0, le=MAX_WAIT_MS)]


FlowAction = Annotated[
    Click | Type | Press | Select | Scroll | WaitFor | Wait, Field(discriminator="kind")
]
#: Action keyword -> its model.
FLOW_ACTIONS: dict[str, type[_Item]] = {
    model.keyword: model for model in (Click, Type, Press, Select, Scroll, WaitFor, Wait)
}


# -- steps ------------------------------------------------------------------------------


class Navigate(_Item):
    """A navigation step: a cold load of ``url``, measured like a page test."""

    keyword: ClassVar[str] = "navigate"
    positional: ClassVar[str | None] = "url"
    kind: Literal["navigate"] = Field(default="navigate", exclude=True)
    url: PageUrl
    name: StepName | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"navigate": self.url}
        if self.name is not None:
            data["name"] = self.name
        return data


class Timespan(_Item):
    """A timespan step: the ``actions`` run while Lighthouse records (INP, TBT, CLS)."""

    keyword: ClassVar[str] = "timespan"
    positional: ClassVar[str | None] = "name"
    kind: Literal["timespan"] = Field(default="timespan", exclude=True)
    name: StepName
    actions: tuple[FlowAction, ...] = ()

    def to_data(self) -> dict[str, Any]:
        return {"timespan": self.name, "actions": [a.to_data() for a in self.actions]}


class Snapshot(_Item):
    """A snapshot step: the page's state as it is now (no metric; its audits)."""

    keyword: ClassVar[str] = "snapshot"
    positional: ClassVar[str | None] = "name"
    kind: Literal["snapshot"] = Field(default="snapshot", exclude=True)
    name: StepName


FlowItem = Annotated[
    Navigate | Timespan | Snapshot | Click | Type | Press | Select | Scroll | WaitFor | Wait,
    Field(discriminator="kind"),
]
_STEPS: dict[str, type[_Item]] = {model.keyword: model for model in (Navigate, Timespan, Snapshot)}
#: Keys a step's mapping may have besides its keyword.
_STEP_EXTRA_KEYS: dict[str, tuple[str, ...]] = {
    "navigate": ("name",), "timespan": ("actions",), "snapshot": (),
}


# -- reading the YAML / JSON form -------------------------------------------------------


def _kind_of(data: Mapping[str, Any], known: Mapping[str, type[_Item]], where: str) -> str:
    keywords = [key for key in data if key in known]
    if len(keywords) != 1:
        found = ", ".join(map(repr, data)) or "nothing"
        expected = ", ".join(known)
        raise InvalidFlowError(f"{where}: expected one of {expected}; found {found}")
    return keywords[0]


def _parse_action(data: Any, where: str) -> _Item:
    if isinstance(data, _Item):
        if data.keyword not in FLOW_ACTIONS:
            raise InvalidFlowError(f"{where}: {data.keyword} is a step, not an action")
        return data
    if not isinstance(data, Mapping) or len(data) != 1:
        raise InvalidFlowError(
            f"{where}: an action is a mapping with one key, e.g. {{click: '#add'}}"
        )
    keyword = _kind_of(data, FLOW_ACTIONS, where)
    return _build(FLOW_ACTIONS[keyword], data[keyword], f"{where} ({keyword})")


def _build(model: type[_Item], value: Any, where: str, **extra: Any) -> _Item:
    if isinstance(value, Mapping):
        fields = dict(value)
    elif model.positional is not None:
        fields = {model.positional: value}
    else:
        raise InvalidFlowError(f"{where}: takes a mapping of {', '.join(_params(model))}")
    unknown = [key for key in fields if key not in _params(model)]
    if unknown:
        raise InvalidFlowError(
            f"{where}: unknown key {unknown[0]!r} (takes {', '.join(_params(model))})"
        )
    try:
        return model.model_validate({**fields, **extra})
    except ValidationError as exc:
        raise InvalidFlowError(f"{where}: {validation_message(exc, limit=None)}") from exc


def _params(model: type[_Item]) -> list[str]:
    return [name for name in model.model_fields if name != "kind"]


def _position(before: Sequence[_Item], keyword: str | None) -> str:
    """Where an entry (its ``keyword``; None: not known yet) comes after the entries
    ``before``, numbered as the measured steps are (1-based; actions between steps are not
    steps): ``step 2``, or ``after step 1 (navigate '…'), action 2`` for the second action
    after step 1 (``before step 1`` ahead of the first step)."""
    steps = [index for index, item in enumerate(before) if item.keyword in _STEPS]
    if keyword in _STEPS:
        return f"step {len(steps) + 1}"
    anchor = f"after step {len(steps)} ({before[steps[-1]].describe()})" if steps \
        else "before step 1"
    since = len(before) - (steps[-1] + 1 if steps else 0)
    return f"{anchor}, {'entry' if keyword is None else 'action'} {since + 1}"


def _parse_item(data: Any, flow: str, before: Sequence[_Item]) -> _Item:
    """The entry ``data`` of flow ``flow``'s steps, coming after the entries ``before``."""
    if isinstance(data, _Item):
        return data
    where = f"flow {flow!r}, {_position(before, None)}"
    if not isinstance(data, Mapping):
        raise InvalidFlowError(f"{where}: a step is a mapping, e.g. {{navigate: URL}}")
    keyword = _kind_of(data, {**_STEPS, **FLOW_ACTIONS}, where)
    if keyword in FLOW_ACTIONS:
        return _parse_action(data, f"flow {flow!r}, {_position(before, keyword)}")
    where = f"flow {flow!r}, {_position(before, keyword)}"
    allowed = _STEP_EXTRA_KEYS[keyword]
    unknown = [key for key in data if key != keyword and key not in allowed]
    if unknown:
        takes = f" (a {keyword} step takes {', '.join(allowed)})" if allowed else ""
        raise InvalidFlowError(f"{where} ({keyword}): unknown key {unknown[0]!r}{takes}")
    extra: dict[str, Any] = {key: data[key] for key in allowed if key in data}
    where = f"{where} ({keyword} {data[keyword]!r})"
    if keyword == "timespan":
        actions = extra.pop("actions", None) or []
        if not isinstance(actions, Sequence) or isinstance(actions, str):
            raise InvalidFlowError(f"{where}: actions must be a list")
        extra["actions"] = tuple(
            _parse_action(action, f"{where}, action {index}")
            for index, action in enumerate(actions, 1)
        )
    value = data[keyword]
    if isinstance(value, Mapping):
        raise InvalidFlowError(f"{where}: write {keyword}: {_STEPS[keyword].positional}")
    return _build(_STEPS[keyword], value, where, **extra)


# -- the flow ---------------------------------------------------------------------------


class Flow(BaseModel):
    """A user flow: a name and ordered steps, built by chaining or loaded from a file::

        flow = (Flow("add to cart")
                .navigate(shop_url)
                .start_timespan("add").click("#add").wait_for("#cart-count").end_timespan()
                .snapshot("cart open"))

    Every builder method returns a new flow (a flow is immutable). A flow that cannot run
    raises :class:`~pagelab.InvalidFlowError` naming the step, when it is built or loaded,
    or (an unclosed timespan) when it is run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: StepName
    steps: tuple[FlowItem, ...] = ()
    # The timespan the builder is filling (start_timespan ... end_timespan): it is the last
    # step, and actions go into it.
    _open: bool = PrivateAttr(default=False)

    def __init__(self, name: str, steps: Sequence[Any] = (), **data: Any) -> None:
        if not isinstance(name, str) or not name.strip():
            raise InvalidFlowError("a flow needs a name (a non-empty string)")
        if isinstance(steps, str | bytes) or not isinstance(steps, Sequence):
            raise InvalidFlowError(f"flow {name!r}: steps must be a list")
        items: list[_Item] = []
        for step in steps:
            items.append(_parse_item(step, name, items))
        try:
            super().__init__(name=name, steps=tuple(items), **data)
        except ValidationError as exc:
            raise InvalidFlowError(
                f"flow {name!r}: {validation_message(exc, limit=None)}"
            ) from exc
        self._check_order()

    # -- loading -------------------------------------------------------------------

    @classmethod
    def from_data(cls, data: Any, *, source: str = "flow") -> Flow:
        """A flow from its YAML / JSON form: ``{name: ..., steps: [...]}``."""
        if not isinstance(data, Mapping):
            raise InvalidFlowError(f"{source}: a flow is a mapping with name and steps")
        unknown = [key for key in data if key not in ("name", "steps")]
        if unknown:
            raise InvalidFlowError(f"{source}: unknown key {unknown[0]!r} (takes name, steps)")
        if "name" not in data:
            raise InvalidFlowError(f"{source}: the flow has no name")
        return cls(data["name"], data.get("steps") or [])

    @classmethod
    def from_file(cls, path: str | Path) -> Flow:
        """Load a flow from ``.yaml`` / ``.yml`` or ``.json``."""
        path = Path(path)
        if path.suffix.lower() not in DATA_FILE_SUFFIXES:
            raise InvalidFlowError(f"{path}: a flow file ends in .yaml, .yml or .json")
        data = read_data_file(path, "flow file", InvalidFlowError)
        return cls.from_data(data, source=str(path))

    def to_data(self) -> dict[str, Any]:
        """The YAML / JSON form; text typed with ``secret=True`` is ``***``."""
        return {"name": self.name, "steps": [step.to_data() for step in self.steps]}

    # -- checks --------------------------------------------------------------------

    def where(self, item: int, action: int | None = None) -> str:
        """Where the ``item``-th entry of :attr:`steps` (1-based) is, for messages, in the
        numbering of the measured steps that the frame's ``step_index`` and ``pagelab
        flow``'s tables use: ``flow 'x', step 2 (timespan 'add'), action 1 (click '#add')``
        (``action``: the timespan's action, 1-based), or ``flow 'x', after step 1 (navigate
        '…'), action 2 (type into '#pass')`` for an action between steps."""
        entry = self.steps[item - 1]
        where = f"flow {self.name!r}, {_position(self.steps[:item - 1], entry.keyword)} " \
                f"({entry.describe()})"
        if action is not None and isinstance(entry, Timespan) \
                and 0 < action <= len(entry.actions):
            where += f", action {action} ({entry.actions[action - 1].describe()})"
        return where

    def _check_order(self) -> None:
        has_page = False
        for index, step in enumerate(self.steps, 1):
            if isinstance(step, Navigate):
                has_page = True
            elif not has_page:
                what = "an action outside a page" if step.keyword in FLOW_ACTIONS else (
                    f"a {step.keyword} step needs a page")
                raise InvalidFlowError(
                    f"{self.where(index)}: {what}; start the flow with navigate"
                )

    def check(self) -> Flow:
        """Raise :class:`~pagelab.InvalidFlowError` unless the flow can run; return it."""
        if not self.steps:
            raise InvalidFlowError(f"flow {self.name!r}: no steps; start with navigate")
        if self._open:
            raise InvalidFlowError(
                f"{self.where(len(self.steps))}: the timespan is not closed; "
                "call end_timespan()"
            )
        return self

    @property
    def secrets(self) -> list[str]:
        """Text typed with ``secret=True``, to scrub from everything stored."""
        return [a.text for a in self.actions() if isinstance(a, Type) and a.secret and a.text]

    def actions(self) -> Iterator[_Item]:
        """Every action, in the order they run (inside timespans too)."""
        for step in self.steps:
            if isinstance(step, Timespan):
                yield from step.actions
            elif step.keyword in FLOW_ACTIONS:
                yield step

    @property
    def step_names(self) -> list[str]:
        """The measured steps' names, in order (a navigation without a name: its URL)."""
        return [step_name(step) for step in self.steps if step.keyword in _STEPS]

    # -- building ------------------------------------------------------------------

    def _with(self, steps: tuple[Any, ...], *, open_timespan: bool) -> Flow:
        flow = Flow(self.name, steps)
        flow._open = open_timespan
        return flow

    def _refuse_if_open(self, doing: str) -> None:
        if self._open:
            raise InvalidFlowError(
                f"{self.where(len(self.steps))}: the timespan is not closed before "
                f"{doing}; call end_timespan() first"
            )

    def _step(self, step: Mapping[str, Any]) -> Flow:
        self._refuse_if_open(next(iter(step)))
        return self._with((*self.steps, step), open_timespan=False)

    def _action(self, action: Mapping[str, Any]) -> Flow:
        if not self._open:
            return self._with((*self.steps, action), open_timespan=False)
        timespan = self.steps[-1]
        assert isinstance(timespan, Timespan)
        where = f"{self.where(len(self.steps))}, action {len(timespan.actions) + 1}"
        updated = timespan.model_copy(
            update={"actions": (*timespan.actions, _parse_action(action, where))}
        )
        return self._with((*self.steps[:-1], updated), open_timespan=True)

    def navigate(self, url: str, name: str | None = None) -> Flow:
        """Add a navigation step (a cold load of ``url``)."""
        return self._step({"navigate": url, **({"name": name} if name is not None else {})})

    def start_timespan(self, name: str) -> Flow:
        """Start a timespan step: the actions until :meth:`end_timespan` are measured."""
        flow = self._step({"timespan": name, "actions": []})
        flow._open = True
        return flow

    def end_timespan(self) -> Flow:
        """Close the open timespan."""
        if not self._open:
            raise InvalidFlowError(f"flow {self.name!r}: end_timespan() without start_timespan()")
        return self._with(self.steps, open_timespan=False)

    def snapshot(self, name: str) -> Flow:
        """Add a snapshot step (the page as it is now)."""
        return self._step({"snapshot": name})

    def click(self, selector: str) -> Flow:
        return self._action({"click": {"selector": selector}})

    def type(self, selector: str, text: str, secret: bool = False) -> Flow:
        return self._action({"type": {"selector": selector, "text": text, "secret": secret}})

    def press(self, key: str) -> Flow:
        return self._action({"press": {"key": key}})

    def select(self, selector: str, value: str) -> Flow:
        return self._action({"select": {"selector": selector, "value": value}})

    def scroll(self, selector_or_pixels: str | int) -> Flow:
        return self._action({"scroll": {"to": selector_or_pixels}})

    def wait_for(self, selector: str, timeout_ms: int = DEFAULT_WAIT_FOR_MS) -> Flow:
        return self._action({"wait_for": {"selector": selector, "timeout_ms": timeout_ms}})

    def wait(self, ms: int) -> Flow:
        return self._action({"wait": {"ms": ms}})

    def __repr__(self) -> str:
        return f"Flow({self.name!r}, {len(self.steps)} items: {', '.join(self.step_names)})"


def step_name(step: _Item) -> str:
    """A measured step's name: its own, or a navigation's URL."""
    if isinstance(step, Navigate):
        return step.name or step.url
    name = getattr(step, "name", None)
    return str(name) if name is not None else step.keyword
