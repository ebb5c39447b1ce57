"""``/v1/account/credits``: the caller's credit pools."""

from __future__ import annotations

from fastapi import APIRouter

from pagelab.models import Credits
from pagelab.store import account_credits

from .._deps import AccountDep, ConnectionDep, ServicesDep
from .._errors import error_responses

__all__ = ["router"]

router = APIRouter(prefix="/v1/account", tags=["account"])


@router.get(
    "/credits",
    response_model=Credits,
    summary="Retrieve the account's credits",
    description=(
        "`available_credits` is reset to the key's plan amount on `credits_refill_date` "
        "(the first day of each month, 00:00 UTC); `available_paid_credits` (top-ups) never "
        "expire. Charges take plan credits first."
    ),
    responses=error_responses(401, 429),
)
def get_credits(services: ServicesDep, conn: ConnectionDep, account: AccountDep) -> Credits:
    # Immediate: a refill that falls due is written under the same locks as charges.
    with services.pool.write(conn):
        return account_credits(conn, account.id)
