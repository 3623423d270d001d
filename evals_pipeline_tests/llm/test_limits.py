"""The per-endpoint call limit: shared by clients of one (provider, base_url), held under threads."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from evals_pipeline.llm import CallLimit, LlmRequest, call_limit, make_client, model_server_url
from evals_pipeline_tests.llm.conftest import StartScripted, target


def unique_url() -> str:
    return f"https://{uuid.uuid4().hex}.example/v1"


def test_slots_never_exceed_the_limit_under_threads() -> None:
    limit = CallLimit(2)
    start = threading.Barrier(6)

    def work() -> None:
        start.wait()
        with limit.slot():
            assert limit.in_flight <= 2
            time.sleep(0.03)

    with ThreadPoolExecutor(6) as pool:
        for future in [pool.submit(work) for _ in range(6)]:
            future.result()
    assert limit.peak == 2  # reached, never passed
    assert limit.in_flight == 0


def test_a_slot_is_released_when_the_call_raises() -> None:
    limit = CallLimit(1)
    with pytest.raises(RuntimeError), limit.slot():
        raise RuntimeError("the call failed")
    assert limit.in_flight == 0
    with limit.slot():  # would block forever if the slot had leaked
        pass


def test_the_registry_shares_one_limit_per_endpoint_and_the_strictest_wins() -> None:
    url = unique_url()
    first = call_limit("openai", url, 5)
    assert call_limit("openai", url + "/", 3) is first  # a trailing slash is the same endpoint
    assert first.limit == 3
    call_limit("openai", url, 8)
    assert first.limit == 3  # never loosened
    assert call_limit("anthropic", url, 5) is not first
    assert call_limit("openai", unique_url(), 5) is not first
    with pytest.raises(ValueError, match="at least 1"):
        CallLimit(0)


def test_clients_of_one_endpoint_share_the_limit(scripted: StartScripted) -> None:
    server = scripted([{"text": "ok"}])
    a, b = target("chat", name="a", max_concurrency=2), target("chat", name="b")
    url = model_server_url(a, server.server)
    client_a = make_client(a, base_url=url, api_key="k")
    client_b = make_client(b, base_url=url, api_key="k")
    assert client_a.limit is client_b.limit
    assert client_a.limit.limit <= 2


def test_the_server_never_sees_two_calls_in_flight(scripted: StartScripted) -> None:
    server = scripted([{"text": "ok"}])
    spec = target("anthropic", name="serial", max_concurrency=1)
    clients = [
        make_client(spec, base_url=model_server_url(spec, server.server), api_key="k")
        for _ in range(2)
    ]
    start = threading.Barrier(4)

    def work(n: int) -> None:
        start.wait()
        for call in range(3):
            reply = clients[n % 2].complete(LlmRequest.ask(f"thread {n} call {call}"))
            assert reply.text == "ok"

    with ThreadPoolExecutor(4) as pool:
        for future in [pool.submit(work, n) for n in range(4)]:
            future.result()
    # The server logs a request on arrival and its reply before sending it: with one call in
    # flight at a time the two strictly alternate.
    ordered = [e["event"] for e in server.log() if e["event"] in ("request", "reply")]
    assert ordered == ["request", "reply"] * 12
    assert clients[0].limit.peak == 1
