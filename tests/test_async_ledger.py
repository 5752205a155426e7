"""``AsyncLedger``: the service awaited from asyncio, on both backends, without blocking the loop."""

from __future__ import annotations

import asyncio

from factledger import AsyncLedger, Incoming, LedgerService


def test_async_calls_give_the_sync_answers_and_leave_the_loop_free(service: LedgerService) -> None:
    async def scenario() -> None:
        ledger = AsyncLedger(service)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        beat = asyncio.create_task(ticker())
        results = await asyncio.gather(
            *(ledger.ingest("u1", f"我在杭州工作，我养了{n}只猫", message_id=f"m{n}") for n in range(1, 5))
        )
        beat.cancel()
        assert [r.status for r in results] == ["recorded"] * 4
        assert ticks > 0  # the loop ran while the writes were in threads
        assert await ledger.knows("u1") and not await ledger.knows("nobody")
        profile = await ledger.profile("u1")
        assert profile.to_dict() == service.profile("u1").to_dict()
        context = await ledger.memory_context("u1", "工作")
        assert "杭州" in context.text
        hits = await ledger.recall("u1", "在哪里工作")
        fact = next(h.record for h in hits if "杭州" in h.record.content)
        assert (await ledger.why("u1", fact.id)).id == fact.id
        assert (await ledger.history("u1", limit=2)).total >= 4
        many = await ledger.ingest_many([Incoming("u2", "我住在成都"), Incoming("u2", "我养了一只狗")])
        assert [getattr(r, "status", r) for r in many] == ["recorded", "recorded"]
        assert "用户住在成都" in [f.text for f in (await ledger.profile("u2")).facts]

    asyncio.run(scenario())
