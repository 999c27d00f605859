"""JSON exports whose fields sit deeper than one level, or whose threads are links between records: Microsoft
Graph's Teams messages (an HTML body, "from.user.displayName" or a bot's "from.application.displayName", an
Adaptive Card), a Matrix room (threads by ``m.relates_to``), a Trello board (actions naming their card by
"data.card.id", newest first), an Asana task list (stories with fields of their own). Discord's one-answer
replies stay the channel's flow."""

from __future__ import annotations

import json

from poimen.inputs.readers import read_records


def _write(tmp_path, name, value):
    f = tmp_path / name
    f.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return f


def _said(recs):
    return [(r.kind, r.author, r.thread, r.text) for r in recs]


CARD = {"type": "AdaptiveCard", "body": [
    {"type": "TextBlock", "text": "Fired: Sev1 Metric alert sqldb-prod workers_percent"},
    {"type": "FactSet", "facts": [{"title": "Resource", "value": "sqldb-prod"}, {"title": "Metric value", "value": "100"}]}]}


def _graph(id_, who, body, when, bot=False, replies=(), attachments=()):
    user = None if bot else {"id": f"u-{who}", "displayName": who}
    app = {"id": f"a-{who}", "displayName": who, "applicationIdentityType": "bot"} if bot else None
    return {"id": id_, "replyToId": None, "messageType": "message", "createdDateTime": when,
            "webUrl": f"https://teams.microsoft.com/l/message/19%3Aabc%40thread.tacv2/{id_}?tenantId=5b1e9c3a-7d42",
            "from": {"application": app, "device": None, "user": user},
            "body": {"contentType": "html", "content": body}, "attachments": list(attachments),
            "replies": list(replies)}


def test_teams_messages_from_graph_read_their_body_author_and_card(tmp_path):
    reply = _graph("2", "Nadia Petrova", "<p>Capped it: <code>WEBSITE_MAX_DYNAMIC_APPLICATION_SCALE_OUT=8</code>"
                   "</p><p>errors stopped &amp; backlog drains</p>", "2025-09-10T09:20:18Z")
    alert = _graph("1", "Azure Monitor", "<attachment id=\"c1\"></attachment>", "2025-09-10T08:14:31Z", bot=True,
                   replies=[reply], attachments=[{"id": "c1", "contentType": "application/vnd.microsoft.card.adaptive",
                                                  "content": json.dumps(CARD)}])
    note = _graph("3", "Hassan Qureshi", "<systemEventMessage/>", "2025-09-10T07:00:00Z")
    f = _write(tmp_path, "teams-messages.json", {"@odata.context": "https://graph.microsoft.com/...", "value": [alert, note]})
    said = _said(read_records(f))
    assert said[0][1] == "Azure Monitor" and "Fired: Sev1 Metric alert sqldb-prod workers_percent\nResource: sqldb-prod" \
        in said[0][3]
    assert said[1][:2] == ("comment", "Nadia Petrova")
    assert said[1][3].endswith("Capped it: WEBSITE_MAX_DYNAMIC_APPLICATION_SCALE_OUT=8\nerrors stopped & backlog drains")
    assert len(said) == 2  # a system event says nothing


def _matrix(event, sender, body, ts, root=None):
    content = {"msgtype": "m.text", "body": body}
    if root:
        content["m.relates_to"] = {"rel_type": "m.thread", "event_id": root, "is_falling_back": True,
                                   "m.in_reply_to": {"event_id": root}}
    return {"type": "m.room.message", "room_id": "!r:ex.chat", "sender": sender, "content": content,
            "origin_server_ts": ts, "event_id": event}


def test_a_matrix_rooms_threads_gather_under_their_first_message(tmp_path):
    msgs = [_matrix("$a", "@kwame:ex.chat", "payments-api 500s on every write", 1751954667000),
            _matrix("$b", "@sanne:ex.chat", "looking", 1751954767000, root="$a"),
            _matrix("$c", "@ops:ex.chat", "Build #7731 succeeded", 1751954800000),
            _matrix("$d", "@sanne:ex.chat", "ROLLBACK PREPARED went through", 1751955767000, root="$a"),
            {"type": "m.reaction", "sender": "@k:ex.chat", "event_id": "$e", "origin_server_ts": 1751955800000,
             "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$a", "key": "+1"}}}]
    f = _write(tmp_path, "matrix-export.json", {"room_name": "ops", "messages": msgs})
    said = _said(read_records(f))
    assert [(a, t) for _, a, t, _ in said] == [("@kwame:ex.chat", "$a"), ("@sanne:ex.chat", "$a"),
                                              ("@ops:ex.chat", ""), ("@sanne:ex.chat", "$a")]  # no reaction
    assert said[0][3].startswith("[2025-07-08T06:04:27Z] @kwame:ex.chat: payments-api")


def test_discord_replies_one_to_a_message_are_no_threads(tmp_path):
    msgs = [{"id": str(n), "timestamp": f"2025-03-04T09:0{n}:00+00:00", "author": {"name": f"p{n}"},
             "content": f"message number {n} in the channel", **({"reference": {"messageId": str(n - 1)}} if n % 2 else {})}
            for n in range(6)]
    f = _write(tmp_path, "discord.json", {"guild": {"name": "g"}, "messages": msgs})
    assert all(r.thread == "" for r in read_records(f))


def test_a_trello_boards_actions_join_their_cards_in_time_order(tmp_path):
    card = {"id": "c1", "name": "SEV2 checkout: add-to-cart 500s", "desc": "Adds-to-cart failing since 07:10",
            "idList": "l1", "dateLastActivity": "2025-06-05T14:31:09Z"}

    def action(n, kind, when, text=None):
        data = {"card": {"id": "c1", "name": card["name"]}, "board": {"id": "b1", "name": "Ops"}}
        if text:
            data["text"] = text
        return {"id": f"a{n}", "type": kind, "date": when, "data": data,
                "memberCreator": {"id": "m1", "fullName": "Maya Okafor", "username": "maya"}}

    actions = [action(3, "commentCard", "2025-06-03T08:06:12Z", "Done at 08:04: swapped in cart_events with a bigint id"),
               action(2, "updateCard", "2025-06-03T07:40:00Z"),
               action(1, "commentCard", "2025-06-03T07:20:13Z", "On it. Every add-to-cart fails with nextval errors")]
    f = _write(tmp_path, "board.json", {"id": "b1", "name": "Ops", "actions": actions, "cards": [card],
                                        "lists": [{"id": "l1", "name": "Incidents"}]})
    said = _said(read_records(f))
    assert said[0][0] == "ticket" and said[0][3] == "SEV2 checkout: add-to-cart 500s\nAdds-to-cart failing since 07:10"
    assert [(k, a) for k, a, _, _ in said[1:]] == [("comment", "Maya Okafor")] * 2  # the card moved says nothing
    assert "On it." in said[1][3] and "Done at 08:04" in said[2][3]  # oldest first


def test_an_asana_tasks_stories_are_read_with_their_own_fields(tmp_path):
    story = {"gid": "s1", "created_at": "2025-05-24T06:52:40Z", "created_by": {"gid": "u1", "name": "Priya Raman"},
             "resource_type": "story", "type": "comment", "text": "Declared invoices.render as quorum in the worker"}
    task = {"gid": "t1", "name": "invoice-worker CrashLoopBackOff after RabbitMQ upgrade",
            "notes": "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'invoices.render'",
            "created_at": "2025-05-24T06:20:15Z", "created_by": {"gid": "u2", "resource_type": "user"},
            "assignee": {"gid": "u1", "name": "Priya Raman"}, "stories": [story]}
    f = _write(tmp_path, "asana.json", {"data": [task]})
    said = _said(read_records(f))
    assert said[0][0] == "ticket" and said[0][3].split("\n", 1)[0].endswith("invoice-worker CrashLoopBackOff after "
                                                                             "RabbitMQ upgrade")
    assert said[1][:2] == ("comment", "Priya Raman") and said[1][3].endswith("Declared invoices.render as quorum in "
                                                                              "the worker")


def test_a_graphql_answer_reads_its_issues_their_comments_and_what_the_timeline_closed_them_with(tmp_path):
    """GitHub's GraphQL API wraps the issues in "data.repository.issues.nodes" and each issue's comments in a
    connection ("comments": {"totalCount": 1, "nodes": […]}); the pull request that closed it says the fix in its
    body, on the issue's timeline, and a label added says nothing (bench/incidents32)."""
    issue = {"number": 598, "title": "tern plan panics after upgrading to 0.21.0", "createdAt": "2025-02-19T07:33:40Z",
             "author": {"login": "okafor-t"}, "body": "panic: runtime error: invalid memory address or nil pointer dereference",
             "comments": {"totalCount": 1, "nodes": [
                 {"author": {"login": "marit-l"}, "createdAt": "2025-02-19T10:50:03Z",
                  "body": "Workaround until the fix is released: add `proxy: {}` to tern.yaml."}]},
             "timelineItems": {"totalCount": 2, "nodes": [
                 {"__typename": "LabeledEvent", "createdAt": "2025-02-19T08:00:00Z", "actor": {"login": "marit-l"},
                  "label": {"name": "bug"}},
                 {"__typename": "ClosedEvent", "createdAt": "2025-02-20T17:05:14Z", "actor": {"login": "marit-l"},
                  "closer": {"__typename": "PullRequest", "number": 603, "title": "config: don't dereference a missing proxy block",
                             "body": "`HTTPClient()` now returns the default transport when `c.Proxy` is nil."}}]}}
    other = dict(issue, number=599, title="docs: broken link", body="The README link 404s on the docs site.",
                 comments={"totalCount": 0, "nodes": []}, timelineItems={"totalCount": 0, "nodes": []})
    f = _write(tmp_path, "issues-graphql.json",
               {"data": {"repository": {"nameWithOwner": "larchwood/tern", "issues": {
                   "totalCount": 2, "pageInfo": {"hasNextPage": False}, "nodes": [issue, other]}}}})
    said = _said(read_records(f))
    assert [(k, a, t) for k, a, t, _ in said] == [("ticket", "okafor-t", "598"), ("comment", "marit-l", "598"),
                                                 ("comment", "marit-l", "598"), ("ticket", "okafor-t", "599")]
    assert said[0][3].split("\n")[0].endswith("tern plan panics after upgrading to 0.21.0")
    assert said[2][3].endswith("config: don't dereference a missing proxy block\n`HTTPClient()` now returns the default "
                               "transport when `c.Proxy` is nil.")


def test_a_jira_rest_answer_reads_each_issues_comments_under_its_fields(tmp_path):
    """Jira's REST search keeps an issue's own fields under "fields", and its comments one level deeper, in
    "fields.comment.comments" with "total" beside them (bench/incidents39): the comments, where the fix is, are read
    under their issue, at their lines, by their author and time."""
    def issue(key, summary, comments):
        return {"id": "48307", "key": key, "fields": {
            "summary": summary, "created": "2025-06-02T08:55:41.290+0200",
            "reporter": {"name": "imarchetti", "displayName": "Ines Marchetti"},
            "description": "Since 08:40 customers land on a *502 Bad Gateway* page straight after signing in.",
            "labels": ["customer-impact"], "components": [{"id": "11804", "name": "auth-gateway"}],
            "comment": {"startAt": 0, "maxResults": 2, "total": len(comments), "comments": [
                {"author": {"name": n, "displayName": n.title()}, "created": t, "body": b} for n, t, b in comments]}}}
    f = _write(tmp_path, "jira-search.json", {"startAt": 0, "total": 2, "issues": [
        issue("PLAT-1938", "502 after SSO login for large customers", [
            ("tszymanski", "2025-06-02T10:05:39.871+0200", "Found it: the callback sets the whole group list in the cookie."),
            ("kwrona", "2025-06-03T14:31:56.718+0200", "Fixed: proxy-buffer-size raised to 16k on the auth ingress.")]),
        issue("PLAT-1944", "Lane report fails with out of shared memory", [])]})
    recs = list(read_records(f))
    assert [(r.kind, r.thread) for r in recs] == [("ticket", "PLAT-1938"), ("comment", "PLAT-1938"),
                                                 ("comment", "PLAT-1938"), ("ticket", "PLAT-1944")]
    assert recs[0].text.split("\n")[0].endswith("502 after SSO login for large customers")  # "fields.summary"
    fix = recs[2]
    assert fix.text.endswith("proxy-buffer-size raised to 16k on the auth ingress.") and fix.time.startswith("2025-06-03")
    lines = f.read_text(encoding="utf-8").splitlines()
    assert "proxy-buffer-size" in lines[fix.line_start - 1] or any(
        "proxy-buffer-size" in x for x in lines[fix.line_start - 1:fix.line_end])


def test_an_issue_with_no_id_field_is_one_thread_with_its_comments(tmp_path):
    """YouTrack's /api/issues answer names its issues by fields the records' shape gives no thread key for
    (bench/incidents39): each issue is in its comments' thread, "line N", not the flow every other issue is in."""
    def issue(summary, said):
        return {"$type": "Issue", "idReadable": None, "summary": summary, "created": 1753159651000,
                "reporter": {"$type": "User", "fullName": "Hanna Voss"},
                "description": f"{summary}: nothing processed since the cut-over this morning, pods are Running.",
                "comments": [{"$type": "IssueComment", "created": 1753160793000, "author": {"fullName": "Olle L"},
                              "text": said}]}
    f = _write(tmp_path, "youtrack.json", [issue("billing-enricher stuck", "Applied the group ACL on kafka-b."),
                                           issue("ClickHouse inserts rejected", "Set INGEST_LOW_LATENCY=false.")])
    recs = list(read_records(f))
    assert [r.kind for r in recs] == ["ticket", "comment", "ticket", "comment"]
    assert recs[0].thread == recs[1].thread != recs[2].thread == recs[3].thread


def test_an_array_of_api_answers_reads_the_records_they_hold(tmp_path):
    """Bugzilla's REST answers saved together, ``jq -s . bugs.json comments.json`` (bench/incidents39): the bugs in
    the first, their comments in the second, filed per bug ({"bugs": {"20452": {"comments": […]}}}) and naming it by
    "bug_id". Each bug is read with its own comments in its thread, by their "creation_time", not as two records of
    raw JSON."""
    def bug(id_, summary):
        return {"id": id_, "summary": summary, "creation_time": "2025-04-22T05:47:33Z", "status": "RESOLVED",
                "cc": ["noc@example.org"], "flags": [], "creator_detail": {"id": 12, "real_name": "Radek Holub"}}

    def comment(bug_id, n, when, text):
        return {"id": 1000 + n, "bug_id": bug_id, "count": n, "creator": "r.holub@example.org",
                "creation_time": when, "is_private": False, "text": text}
    answers = [{"bugs": [bug(20417, "klogship 3.4.0 fails to start on EL8"),
                         bug(20452, "Standby rebuild of pg-cust-07b fails at end of base backup")], "faults": []},
               {"bugs": {"20417": {"comments": [comment(20417, 0, "2025-04-14T06:52:10Z", "The agent does not start.")]},
                         "20452": {"comments": [
                             comment(20452, 0, "2025-04-22T05:47:33Z", "pg_basebackup dies at the very end of the copy."),
                             comment(20452, 1, "2025-04-22T11:31:08Z", "Third run streamed the WAL: up and streaming.")]}},
                "comments": {}}]
    recs = list(read_records(_write(tmp_path, "bugzilla-rest.json", answers)))
    said = [(r.kind, r.thread, r.time, r.text.split("] ", 1)[-1]) for r in recs]
    assert said[1:3] == [("comment", said[0][1], "2025-04-14T06:52:10Z", "The agent does not start."),
                         ("record", said[2][1], "2025-04-22T05:47:33Z",
                          "Standby rebuild of pg-cust-07b fails at end of base backup")]
    assert said[0][3] == "klogship 3.4.0 fails to start on EL8" and said[0][1] != said[2][1]
    assert [s[1] for s in said[3:]] == [said[2][1]] * 2 and said[-1][3] == "Third run streamed the WAL: up and streaming."
    # pages of one list saved together are one list; a record that holds its entries is still that record
    pages = [{"messages": [{"ts": "1.0", "user": "ana", "text": "the pods are crash looping again"}], "has_more": True},
             {"messages": [{"ts": "2.0", "user": "bo", "text": "rolled back to 4.2, they are up"}], "has_more": False}]
    assert [r.text for r in read_records(_write(tmp_path, "pages.json", pages))] == [
        "[1.0] ana: the pods are crash looping again", "[2.0] bo: rolled back to 4.2, they are up"]
    held = [{"incident": {"id": "Q1", "title": "ClickHouse inserts rejected", "created_at": "2025-05-13T02:17:44Z"},
             "notes": [{"content": "Raised parts_to_throw_insert to 600 on the events tables.",
                        "created_at": "2025-05-13T03:02:00Z", "user": {"summary": "Ines"}}]}]
    recs = list(read_records(_write(tmp_path, "pd.json", held)))
    assert "ClickHouse inserts rejected" in recs[0].text and recs[1].kind == "comment"
