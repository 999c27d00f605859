"""Two incidents worked at once in one channel, outside threads: each message goes with the conversation it
continues, so each incident's card holds its own cause and fix."""

from __future__ import annotations

from incident_fixtures import rec

from poimen.incidents import build_card, episodes, incidents
from poimen.incidents.converse import conversations
from poimen.incidents.flow import GAP_SECONDS, cut

T = "2025-03-04T10:{:02d}:00Z"


def _msg(minute: int, author: str, text: str, line: int, **fields):
    return rec(f"[{T.format(minute)}] {author}: {text}", line, "message", time=T.format(minute), author=author,
               **fields)


# A search outage and a broker disk alarm, worked by two pairs of people in one channel. Most messages name no
# service: what they continue is said by their words ("shards", "spool") and by who is talking.
CHANNEL = (
    _msg(0, "kim", "morning. who has the pager today?", 1),
    _msg(1, "ravi", "search-api is returning 503 for every query: `SearchPhaseExecutionException: all shards failed`", 2),
    _msg(3, "kim", "looking at the cluster, 14 unassigned shards on es-data-4", 3),
    _msg(5, "alertbot", "[FIRING] BrokerDiskFull mq-east-2: disk free 2% on the spool volume", 4,
         attrs=(("bot_id", "B01"),)),
    _msg(6, "noor", "I'll take the broker, kim keep going", 5),
    _msg(7, "kim", "the shards sit on the node whose heap is at 97%, fielddata on the title field", 6),
    _msg(8, "sam", "spool is 40 GB of dead letters from the export job, nobody drains them", 7),
    _msg(9, "ravi", "ok", 8),
    _msg(11, "kim", "cleared the fielddata cache and set indices.fielddata.cache.size=20% on the cluster, "
         "shards are assigning again", 9),
    _msg(12, "noor", "purged the dead letters and set a max-length of 100000 on the spool queue", 10),
    _msg(14, "ravi", "search is answering again, 0 errors for five minutes", 11),
    _msg(15, "sam", "disk free back at 61% on mq-east-2", 12),
)


def _lines(found, text: str):
    return next(inc for inc in found if any(text in r.text for ep in inc.episodes for r in ep.records))


def test_two_incidents_worked_at_once_are_two_conversations():
    talks = conversations(CHANNEL)
    lines = [[r.line_start for r in talk] for talk in talks]
    assert lines == [[1, 2, 3, 6, 8, 9, 11], [4, 5, 7, 10, 12]]


def test_each_interleaved_incident_gets_its_own_fix():
    found = incidents({"channel.json": CHANNEL})
    search = build_card(_lines(found, "all shards failed"))
    broker = build_card(_lines(found, "BrokerDiskFull"))
    assert search is not broker
    search_fixes = " ".join(line.text for line in search.lines if line.role == "action")
    broker_fixes = " ".join(line.text for line in broker.lines if line.role == "action")
    assert "fielddata.cache.size" in search_fixes and "max-length" not in search_fixes
    assert "max-length" in broker_fixes and "fielddata" not in broker_fixes


def test_the_first_failure_goes_on_with_the_complaint_that_named_nothing():
    """A customer's complaint names no service; the error that follows, naming one, is the same story."""
    flow = (_msg(0, "tom", "support is seeing failed checkouts from EU customers", 1),
            _msg(1, "ana", "orders-api logs: `FATAL: too many connections for role orders`", 2),
            _msg(4, "ana", "raised max_connections to 400 on pg-orders and restarted the pool", 3))
    assert [[r.line_start for r in talk] for talk in conversations(flow)] == [[1, 2, 3]]


def test_a_flow_that_is_not_a_channel_is_not_told_apart():
    logs = (rec("2025-03-04 10:00:00 ERROR search-api all shards failed", 1, "log"),
            rec("2025-03-04 10:01:00 ERROR mq-east-2 disk full", 2, "log"))
    assert conversations(logs) == [list(logs)]


def test_one_conversation_is_cut_as_before():
    """A channel with one conversation keeps the flow's own cuts (here: a message naming another service)."""
    flow = tuple(r for r in CHANNEL if r.line_start in (1, 2, 3, 6, 9, 11))
    assert len(conversations(flow)) == 1
    assert [list(ep.records) for ep in episodes(flow)] == cut(list(flow), GAP_SECONDS)


def test_an_alert_a_bot_posted_joins_the_work_that_quotes_its_error():
    """The bot's alert is a thread of status updates; the work is in the channel and quotes the alert's error."""
    alert = rec("[FIRING] OrdersErrorRate orders-api\nsampled error: FATAL: remaining connection slots are reserved "
                "for non-replication superuser connections", 1, "message", time=T.format(0), author="alertbot",
                thread="t1", attrs=(("bot_id", "B01"),))
    status = rec("status page updated to investigating", 3, "reply", time=T.format(2), author="tom", thread="t1")
    work = (_msg(3, "ana", "wall to wall `FATAL: remaining connection slots are reserved for non-replication "
                 "superuser connections` against pg-main", 4),
            _msg(9, "ana", "pointed the recon job at pgbouncer-main:6432 with 4 workers, connections at 140/500", 5))
    found = incidents({"channel.json": (alert, status, *work)})
    assert len(found) == 1
    assert {ep.key for ep in found[0].episodes} == {"thread:t1", "flow:0"}


def test_a_message_that_says_it_is_about_something_else_is_its_own_conversation():
    flow = (*CHANNEL[:3], _msg(4, "lee", "unrelated: the nightly terraform plan shows drift on the dns zone", 20),
            CHANNEL[5], _msg(40, "lee", "the dns drift was last week's TTL change, applied", 21))
    talks = [[r.line_start for r in talk] for talk in conversations(flow)]
    assert [20] in talks and any(1 in t and 6 in t for t in talks)


def test_a_ticket_named_in_passing_in_the_channel_joins_no_two_stories():
    """Chatter that names the morning's ticket, posted as the afternoon's incident begins, sits in the afternoon's
    stretch: the two stories, each with its own fix, stay two."""
    t = "2026-11-12T{}:00Z"
    flow = (
        rec("priya: Opening INC-2231: uploads fail with 413 on uploads-api", 1, "message", time=t.format("09:14"),
            author="priya"),
        rec("priya: raised proxy-body-size to 0 on the uploads-api ingress, uploads work again", 2, "message",
            time=t.format("09:43"), author="priya"),
        rec("priya: postmortem draft for INC-2231 is up in the postmortems folder", 3, "message",
            time=t.format("13:10"), author="priya"),
        rec("omar: payments-api 5xx: connect ECONNREFUSED to pg-main-rw", 4, "message", time=t.format("13:31"),
            author="omar"),
        rec("omar: set server_login_retry = 3 on pgbouncer and reloaded, payments-api errors gone", 5, "message",
            time=t.format("13:36"), author="omar"),
    )
    found = incidents({"channel.json": flow})
    assert len(found) == 2
    assert not any({1, 5} <= {r.line_start for ep in inc.episodes for r in ep.records} for inc in found)


# Two friends catching up (LoCoMo's shape): excitement, company and a painting's colours, no failure. Each of these
# lines was a "symptom" by a cue's word ("can't", "hang", "red"), and the chat made incident cards.
CATCH_UP = (
    _msg(0, "Melanie", "Hey Caroline, hope all's good! Hanging with my fam after we went camping was great.", 1),
    _msg(2, "Caroline", "Yay! Next month I'm having an art show with my paintings - can't wait!", 2),
    _msg(3, "Melanie", "Wow, that sounds awesome! Can't wait to see your art. Those lessons are great, can't agree more!", 3),
    _msg(5, "Caroline", "Thanks! I made this painting to show my path. The red and blue are for the binary.", 4),
    _msg(7, "Melanie", "Bye, Caroline! Can't wait to hear about it. Have fun and stay safe!", 5),
)


def test_a_chat_with_no_failure_makes_no_incident():
    assert incidents({"chat.jsonl": list(CATCH_UP)}) == []


def test_a_build_gone_red_a_hang_and_a_cannot_are_still_failures():
    from poimen.incidents import score

    for text in ("CI is red across the board since the merge", "checkout requests hang for 30 s, then 504",
                 "the workers cannot reach redis-main:6379"):
        assert score(text).symptom >= 1.0, text
    assert score("the memory was a red herring").symptom == 0.0
