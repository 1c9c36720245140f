"""The one place stale answers are dropped: a panel's `Latest` per kind of request."""

from __future__ import annotations

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.worker import Reply


def _asker():
    replies: list[Reply] = []
    heard: list[tuple] = []
    latest = Latest(lambda request, reply: replies.append(reply) or len(replies),
                    finished=lambda result: heard.append(("finished", result)),
                    failed=lambda message: heard.append(("failed", message)),
                    cancelled=lambda: heard.append(("cancelled",)),
                    progress=lambda fraction, stage, preview: heard.append(("progress", fraction, stage)))
    return latest, replies, heard


def test_only_the_newest_requests_answers_reach_the_callbacks():
    latest, replies, heard = _asker()
    assert latest.ask(rq.Search(pattern="a")) == 1 and latest.waiting
    assert latest.ask(rq.Search(pattern="b")) == 2
    replies[0].progress(1, 0.5, "older", None)
    replies[0].finished(1, "a's hits")
    replies[1].progress(2, 0.25, "newer", None)
    assert heard == [("progress", 0.25, "newer")] and latest.waiting
    replies[1].finished(2, "b's hits")
    assert heard[-1] == ("finished", "b's hits") and not latest.waiting and latest.id == 2
    replies[1].failed(2, "twice")  # a request ends once: nothing after its end is heard
    assert len(heard) == 2


def test_failed_cancelled_and_forgotten_requests():
    latest, replies, heard = _asker()
    latest.ask(rq.Search(pattern="a"))
    replies[0].failed(1, "a bad regex")
    latest.ask(rq.Search(pattern="b"))
    replies[1].cancelled(2)
    latest.ask(rq.Search(pattern="c"))
    latest.forget()  # a new model: what was asked of the old one is not heard of
    replies[2].finished(3, "c's hits")
    assert heard == [("failed", "a bad regex"), ("cancelled",)] and not latest.waiting and latest.id == 0


def test_the_request_replaced_while_the_next_is_submitted_is_not_heard():
    """The worker says a queued request on the same channel was cancelled inside `submit`,
    before the new id is known: that is the older one's end, not the newer one's."""
    heard: list[str] = []
    replies: list[Reply] = []

    def submit(request, reply):
        if replies:
            replies[-1].cancelled(len(replies))
        replies.append(reply)
        return len(replies)

    latest = Latest(submit, finished=heard.append, cancelled=lambda: heard.append("cancelled"))
    latest.ask(rq.Search(pattern="a"))
    latest.ask(rq.Search(pattern="b"))
    assert heard == [] and latest.id == 2
