"""``pagelab field``: the Chrome UX Report (real Chrome users' p75) of a page or its origin."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    field = subparsers.add_parser(
        "field", help="show the Chrome UX Report (field data) of a page or its origin",
        description="The p75 of real Chrome users' page loads over 28 days (the Chrome UX "
        "Report API). The key is read from PAGELAB_CRUX_API_KEY (never from the command "
        "line: every local user can read it); a day's answers are reused.")
    field.add_argument("url", help="absolute http(s) URL of the page")
    field.add_argument("--origin", action="store_true",
                       help="the report of the URL's origin (all its pages) instead")
    field.add_argument("--form-factor", choices=("phone", "desktop", "tablet"), default=None,
                       help="one form factor (default: all together)")
    field.add_argument("--history", action="store_true",
                       help="the weekly history (about six months) instead of the last 28 days")
    field.add_argument("--refresh", action="store_true",
                       help="ask the API again even if today's answer is kept")
    field.set_defaults(handler=_field)


def _field(args: argparse.Namespace) -> int:
    from pagelab import field

    where: dict[str, Any] = (
        {"origin": args.url} if args.origin else {"url": args.url})
    if args.history:
        frame = field.history(**where, form_factor=args.form_factor, refresh=args.refresh)
        print(field.history_text(frame))
    else:
        frame = field.record(**where, form_factor=args.form_factor, refresh=args.refresh)
        print(field.field_text(frame))
    return 0
