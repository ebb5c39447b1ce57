"""The SSRF guard of the creation endpoints, which cannot freeze the server.

Checking a URL means resolving its host, and a name server may take its time (or an
attacker's may, on purpose). The look-ups therefore never run on the request thread pool
and never while a request holds a database connection: they run on a few threads of their
own, are bounded in time (``guard_dns_timeout``, then the URL is refused, nothing charged)
and in concurrency per key and per client address. A look-up that outlives its request
keeps its caller's slot until its thread is really free, so a key cannot pile abandoned
look-ups onto the shared threads either (docs/security.md, "Denial of service").
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from pagelab._exceptions import InvalidInputError
from pagelab.engine import (
    IPAddress,
    Resolver,
    TargetPolicy,
    TargetRefusedError,
    resolve,
    target_of,
)

from ._errors import ApiProblem

__all__ = ["TargetGuard"]



class _Slots:
    """Look-ups in flight per caller (a key or a client address), counted until their
    thread finishes; waiting for a slot is an ``await``, never a thread. Event loop only."""

    def __init__(self, per_caller: int) -> None:
        self.per_caller = per_caller
        self._busy: dict[str, int] = {}
        self._waiters: list[asyncio.Future[None]] = []

    async def take(self, callers: Sequence[str]) -> None:
        while any(self._busy.get(c, 0) >= self.per_caller for c in callers):
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        for caller in callers:
            self._busy[caller] = self._busy.get(caller, 0) + 1

    def give_back(self, callers: Sequence[str]) -> None:
        for caller in callers:
            left = self._busy.get(caller, 0) - 1
            if left > 0:
                self._busy[caller] = left
            else:
                self._busy.pop(caller, None)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


class TargetGuard:
    """Checks the URLs of a creation against the server's :class:`TargetPolicy`, resolving
    their hosts on its own small thread pool (see the module's docstring)."""

    def __init__(
        self,
        policy: TargetPolicy,
        *,
        resolver: Resolver = resolve,
        threads: int,
        timeout: float,
        per_caller: int,
    ) -> None:
        self.policy = policy
        self.timeout = timeout
        #: How host names are resolved (also by discovery's requests: the same answers).
        self.resolver = resolver
        self._executor = ThreadPoolExecutor(max_workers=threads,
                                            thread_name_prefix="pagelab-dns")
        self._per_caller = per_caller
        # Made in the event loop that first uses them (the server's).
        self._slots: _Slots | None = None

    async def check(
        self, urls: Sequence[str], *, field: str, key: str, address: str
    ) -> None:
        """``400 invalid_request`` naming the field unless every URL's host resolves, within
        the time bound, to addresses the policy allows. Nothing is charged or stored yet."""
        if not self.policy.restricts:
            return
        hosts: dict[tuple[str, int], str] = {}
        for index, url in enumerate(urls):
            name = f"{field}[{index}]" if len(urls) > 1 else field
            try:
                hosts.setdefault(target_of(url, field=name), name)
            except InvalidInputError as exc:
                raise ApiProblem(400, str(exc)) from exc
        if self._slots is None:
            self._slots = _Slots(self._per_caller)
        callers = (f"key:{key}", f"address:{address}")
        try:
            async with asyncio.timeout(self.timeout):
                found = await asyncio.gather(
                    *(self._lookup(self._slots, callers, host, port) for host, port in hosts)
                )
        except TimeoutError:
            slow = ", ".join(repr(host) for host, _ in list(hosts)[:3])
            raise ApiProblem(
                400, f"{field}: the host(s) {slow} did not resolve within "
                f"{self.timeout:g} s; nothing was charged"
            ) from None
        for ((host, port), name), addresses in zip(hosts.items(), found, strict=True):
            try:
                self.policy.check_addresses(host, port, addresses, field=name)
            except TargetRefusedError as exc:
                raise ApiProblem(400, str(exc)) from exc

    async def _lookup(
        self, slots: _Slots, callers: Sequence[str], host: str, port: int
    ) -> tuple[IPAddress, ...]:
        await slots.take(callers)
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self._executor, self.resolver, host, port)
        except BaseException:
            slots.give_back(callers)
            raise
        # When the thread is done, not when the request stops waiting for it.
        future.add_done_callback(lambda _: slots.give_back(callers))
        # A request that times out stops waiting; the look-up finishes on its thread.
        return await asyncio.shield(future)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
