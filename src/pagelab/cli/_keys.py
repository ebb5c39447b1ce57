"""``pagelab keys``: API keys (one account each) and their credits."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pagelab._exceptions import InvalidInputError, NotFoundError
from pagelab.store import (
    KEY_PREFIX_LENGTH,
    LINK_SECRET_FILE,
    Account,
    Store,
    create_account,
    list_accounts,
    next_refill,
    revoke_account,
    rotate_link_secret,
    top_up_account,
    transaction,
)

from ._database import add_database_option, database_url

__all__ = ["DEFAULT_LIGHTHOUSE_CREDITS", "DEFAULT_TTFB_CREDITS", "register"]

#: Monthly plan of a new key unless told otherwise.
DEFAULT_LIGHTHOUSE_CREDITS = 1000
DEFAULT_TTFB_CREDITS = 1000


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def register(subparsers: Any) -> None:
    keys = subparsers.add_parser(
        "keys", help="create, list and revoke API keys of `pagelab serve`; top up credits",
        description="Each key is an account with its own tests and credit pools. Keys are "
        "stored as hashes: a key is printed once, when it is created.",
    )
    keys.set_defaults(handler=lambda args: (keys.print_help(), 2)[1])
    data_dir = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    data_dir.add_argument("--data-dir", type=Path, metavar="DIR",
                          help="store directory (default $PAGELAB_DATA_DIR or the user data dir)")
    add_database_option(data_dir)
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION")

    create = actions.add_parser("create", parents=[data_dir], help="create a key (printed once)")
    create.add_argument("--lighthouse-credits", type=_non_negative,
                        default=DEFAULT_LIGHTHOUSE_CREDITS, metavar="N",
                        help="lighthouse credits per month (default "
                        f"{DEFAULT_LIGHTHOUSE_CREDITS})")
    create.add_argument("--ttfb-credits", type=_non_negative, default=DEFAULT_TTFB_CREDITS,
                        metavar="N",
                        help=f"ttfb credits per month (default {DEFAULT_TTFB_CREDITS})")
    create.set_defaults(handler=_create)

    listing = actions.add_parser("list", parents=[data_dir], help="list keys (prefix, credits)")
    listing.set_defaults(handler=_list)

    revoke = actions.add_parser("revoke", parents=[data_dir], help="revoke a key")
    revoke.add_argument("prefix", help=f"the key's first {KEY_PREFIX_LENGTH} characters")
    revoke.set_defaults(handler=_revoke)

    credits = actions.add_parser("credits", parents=[data_dir],
                                 help="top up a key's paid credits (they never expire)")
    credits.add_argument("prefix", help=f"the key's first {KEY_PREFIX_LENGTH} characters")
    credits.add_argument("--lighthouse", type=_non_negative, default=0, metavar="N",
                         help="lighthouse credits to add")
    credits.add_argument("--ttfb", type=_non_negative, default=0, metavar="N",
                         help="ttfb credits to add")
    credits.set_defaults(handler=_credits)

    rotate = actions.add_parser(
        "rotate-link-secret", parents=[data_dir],
        help="new secret for signing report_url links (restart the server after it)",
    )
    rotate.add_argument("--drop-previous", action="store_true",
                        help="invalidate every link handed out so far (after a leak)")
    rotate.set_defaults(handler=_rotate_link_secret)


def _store(args: argparse.Namespace) -> Store:
    return Store(args.data_dir, database=database_url(args))


def _describe(account: Account) -> str:
    """One line: prefix, each pool as ``left/plan + paid``, creation, revocation."""
    lighthouse = (
        f"{account.lighthouse_credits}/{account.lighthouse_plan} "
        f"+ {account.lighthouse_paid_credits} paid"
    )
    ttfb = f"{account.ttfb_credits}/{account.ttfb_plan} + {account.ttfb_paid_credits} paid"
    revoked = (
        f"  revoked {account.revoked_at:%Y-%m-%d %H:%M} UTC" if account.revoked_at else ""
    )
    return (
        f"{account.key_prefix}  lighthouse {lighthouse}  ttfb {ttfb}  "
        f"created {account.created_at:%Y-%m-%d %H:%M} UTC{revoked}"
    )


def _create(args: argparse.Namespace) -> int:
    with _store(args).connection() as conn, transaction(conn, immediate=True):
        account, key = create_account(
            conn, lighthouse_credits=args.lighthouse_credits, ttfb_credits=args.ttfb_credits
        )
    print(key)
    print(
        f"pagelab: created key {account.key_prefix}… (shown once: store it now); "
        f"{account.lighthouse_plan} lighthouse and {account.ttfb_plan} ttfb credits a month, "
        f"next refill {next_refill():%Y-%m-%d}",
        file=sys.stderr,
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    with _store(args).connection() as conn:
        accounts = list_accounts(conn)
    if not accounts:
        print("no keys: create one with `pagelab keys create`")
    for account in accounts:
        print(_describe(account))
    return 0


def _check_prefix(prefix: str) -> str:
    if len(prefix) < KEY_PREFIX_LENGTH:
        raise InvalidInputError(
            f"prefix: give the key's first {KEY_PREFIX_LENGTH} characters "
            "(as `pagelab keys list` shows them)"
        )
    return prefix[:KEY_PREFIX_LENGTH]


def _revoke(args: argparse.Namespace) -> int:
    prefix = _check_prefix(args.prefix)
    with _store(args).connection() as conn, transaction(conn, immediate=True):
        account = revoke_account(conn, prefix)
    if account is None:
        raise NotFoundError(f"no key starts with {prefix!r}")
    print(_describe(account))
    return 0


def _credits(args: argparse.Namespace) -> int:
    prefix = _check_prefix(args.prefix)
    if not args.lighthouse and not args.ttfb:
        raise InvalidInputError("give --lighthouse N and/or --ttfb N (credits to add)")
    with _store(args).connection() as conn, transaction(conn, immediate=True):
        account = top_up_account(conn, prefix, lighthouse=args.lighthouse, ttfb=args.ttfb)
    if account is None:
        raise NotFoundError(f"no key starts with {prefix!r}")
    print(_describe(account))
    return 0


def _rotate_link_secret(args: argparse.Namespace) -> int:
    store = _store(args)
    if store.is_postgres:
        with store.connection() as conn, transaction(conn, immediate=True):
            rotate_link_secret(store.data_dir, keep_previous=not args.drop_previous,
                               conn=conn)
        kept = "dropped" if args.drop_previous else "still verify until the next rotation"
        print(f"new report-link secret in the database; links signed before {kept}. "
              "Restart every `pagelab serve` of this database to use it.")
        return 0
    rotate_link_secret(store.data_dir, keep_previous=not args.drop_previous)
    kept = "dropped" if args.drop_previous else "still verify until the next rotation"
    print(f"new report-link secret in {store.data_dir / LINK_SECRET_FILE}; "
          f"links signed before {kept}. Restart `pagelab serve` to use it.")
    return 0
