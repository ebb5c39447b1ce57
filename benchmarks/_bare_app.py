"""The bare FastAPI app ``benchmarks/api.py`` compares ``pagelab serve`` with.

Usage: ``python benchmarks/_bare_app.py DB_FILE PORT`` (one uvicorn process on 127.0.0.1).

It does the essential work of the two hot endpoints and nothing else, on a pagelab store
(same schema, same seeded rows): async endpoints on one SQLite connection in the event
loop; the key's SHA-256 looked up in ``accounts``; GET reads one test row; POST takes a
credit and inserts a row in one ``BEGIN IMMEDIATE`` transaction. No rate limit, no
validation models, no links: the floor the service's overhead is measured against.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import sys
import time
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

_KEY_PREFIX_LENGTH = 11
_RETENTION_MS = 30 * 86_400_000


def create_app(db_file: str) -> FastAPI:
    conn = sqlite3.connect(db_file, timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA synchronous=NORMAL")
    app = FastAPI()

    def account_id(request: Request) -> str | None:
        key = request.headers.get("x-api-key", "")
        row = conn.execute(
            "SELECT id, key_hash FROM accounts WHERE key_prefix = ? AND revoked_at IS NULL",
            (key[:_KEY_PREFIX_LENGTH],),
        ).fetchone()
        if row is None or hashlib.sha256(key.encode()).hexdigest() != row["key_hash"]:
            return None
        return str(row["id"])

    @app.get("/v1/lighthouse-tests/{test_id}")
    async def get_test(test_id: str, request: Request) -> Response:
        owner = account_id(request)
        if owner is None:
            return JSONResponse({"code": "unauthorized"}, status_code=401)
        row = conn.execute(
            "SELECT * FROM tests WHERE id = ? AND account_id = ? AND expires_at > ?",
            (test_id, owner, int(time.time() * 1000)),
        ).fetchone()
        if row is None:
            return JSONResponse({"code": "not_found"}, status_code=404)
        return JSONResponse(dict(row))

    @app.post("/v1/lighthouse-tests", status_code=201)
    async def create_test(request: Request) -> Response:
        owner = account_id(request)
        if owner is None:
            return JSONResponse({"code": "unauthorized"}, status_code=401)
        body: dict[str, Any] = json.loads(await request.body())
        now = int(time.time() * 1000)
        test_id = f"lt_{secrets.token_hex(12)}"
        conn.execute("BEGIN IMMEDIATE")
        try:
            taken = conn.execute(
                "UPDATE accounts SET lighthouse_credits = lighthouse_credits - 1 "
                "WHERE id = ? AND lighthouse_credits > 0",
                (owner,),
            ).rowcount
            if taken:
                conn.execute(
                    "INSERT INTO tests (id, account_id, url, device, location, config_json, "
                    "status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'idle', ?, ?)",
                    (test_id, owner, body["url"], body.get("device", "mobile"),
                     body.get("location", "us"), "{}", now, now + _RETENTION_MS),
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        if not taken:
            return JSONResponse({"code": "insufficient_credits"}, status_code=402)
        return JSONResponse({"id": test_id, "status": "idle", "created_at": now},
                            status_code=201)

    return app


if __name__ == "__main__":
    uvicorn.run(create_app(sys.argv[1]), host="127.0.0.1", port=int(sys.argv[2]),
                log_level="warning")
