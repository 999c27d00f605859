"""An issue's thread pasted as Markdown, where a "same here" post is another bug and a reply says so ("@jkoval that
one is a different bug"): one incident per problem, each later post with the problem it speaks of, each card with
its own fix (``poimen.incidents.problems._turned``; the shape of bench/incidents21's larder issue)."""

from __future__ import annotations

from pathlib import Path

from poimen.incidents import build_card, episodes, incidents
from poimen.inputs.chunking import records
from poimen.inputs.readers.speakers import speaker

ISSUE = """\
# photon 4.0 does not start: "Permission denied: '/config/cache'"

**kestrel/photon** · Issue #412 · **Closed** · opened 2025-05-02 by Ana Ruiz @aruiz

## Description

After pulling `photon:4.0.0` the server exits at start. 3.9.2 with the same compose file works.

```
photon-1  | PermissionError: [Errno 13] Permission denied: '/config/cache'
photon-1 exited with code 1
```

## Activity

**Ben Ode** @bode · 2025-05-02 18:10

Same here on a Synology, the indexer dies the same way:

```
photon-indexer-1  | PermissionError: [Errno 13] Permission denied: '/config/cache/thumbs'
```

**Mira Lund** @mlund · Maintainer · 2025-05-03 08:30

4.0 runs as uid 1000 instead of root, and volumes made by 3.x belong to root. Workaround: `sudo chown -R 1000:1000 /srv/photon/config`, then start it again.

**Jan Koval** @jkoval · 2025-05-03 11:02

Same here I think, 4.0.0 on k3s. It starts, but every upload fails after the chown:

```
photon-worker-7f9c6d5b48-x2kqp worker redis.exceptions.ConnectionError: Error 111 connecting to redis:6379. Connection refused.
```

**Mira Lund** @mlund · Maintainer · 2025-05-03 12:40

@jkoval that one is a different bug, thanks for raising it. The 4.0 chart renamed the queue service to valkey, so the old redis host name resolves to nothing. Set `PHOTON_REDIS_URL=redis://valkey:6379/0` in the worker's environment.

**Ola Berg** @oberg · 2025-05-04 19:55

Same on TrueNAS with k3s, every upload fails here too, trace ends with

```
photon-1  | PermissionError: [Errno 13] Permission denied: '/config/cache'
```

Should I wait for 4.0.1?

**Jan Koval** @jkoval · 2025-05-04 20:30

Setting the URL on the worker now, will report back.

**Mira Lund** @mlund · Maintainer · 2025-05-05 09:12

@oberg either works. 4.0.1 is out and does it for you at start: set `PHOTON_UID` and `PHOTON_GID` to the owner you want.

**Jan Koval** @jkoval · 2025-05-05 15:20

With the new URL every upload goes through now. Thanks!
"""


def _cards(tmp_path):
    f = tmp_path / "photon-412.md"
    f.write_text(ISSUE, encoding="utf-8")
    return [build_card(i) for i in incidents({f.name: [r for r in records(f) if r.text.strip()]})]


def test_a_reply_that_calls_a_post_another_bug_splits_the_thread(tmp_path):
    cards = _cards(tmp_path)
    owner = next(c for c in cards if any("sudo chown -R 1000:1000" in line.text for line in c.actions))
    queue = next(c for c in cards if any("PHOTON_REDIS_URL" in line.text for line in c.actions))
    assert owner is not queue
    assert any("Permission denied" in line.text for line in owner.symptoms)
    assert any("Connection refused" in line.text for line in queue.symptoms)
    assert not any("Connection refused" in line.text or "PHOTON_REDIS_URL" in line.text for line in owner.lines)
    assert not any("sudo chown" in line.text or "Permission denied" in line.text for line in queue.lines)


def test_later_posts_go_with_the_problem_they_paste_answer_or_report_back_on(tmp_path):
    """Ola pastes the first bug's error again (though on k3s, with uploads failing, as Jan), the reply to Ola is about
    it too (after Jan's post on the second; its words tell neither), and Jan reports back on his own."""
    cards = _cards(tmp_path)
    owner = next(c for c in cards if any("sudo chown -R 1000:1000" in line.text for line in c.actions))
    assert any("PHOTON_UID" in line.text for line in owner.actions)
    texts = [line.text for c in cards if c is not owner for line in c.lines]
    assert not any("PHOTON_UID" in t or "/config/cache'" in t for t in texts)
    assert any("/config/cache'" in line.text for line in owner.lines)
    f = tmp_path / "photon-412.md"
    found = incidents({f.name: [r for r in records(f) if r.text.strip()]})
    queue = next(i for i in found if any("PHOTON_REDIS_URL" in line.text for line in i.lines))
    assert any(line.text.startswith("With the new URL") for line in queue.lines)


def test_a_gitlab_post_header_pasted_as_markdown_names_who_spoke_and_when():
    assert speaker("**Mira Lund** @mlund · Maintainer · 2025-05-03 12:40") == ("2025-05-03 12:40", "Mira Lund")
    assert speaker("**Jan Koval** @jkoval · 2025-05-03 11:02") == ("2025-05-03 11:02", "Jan Koval")
    assert speaker("Jo Kim @jkim · 3 days ago") == ("3 days ago", "Jo Kim")


def test_an_issues_description_and_its_activity_are_one_thread_whose_headers_say_nothing(tmp_path):
    """"## Activity" is a part of the issue, as a write-up's "Resolution" is: the report and the first problem's
    posts are one incident. A post's header, a paragraph alone, claims nothing (no cause "**Mira Lund** @mlund · …")."""
    f = tmp_path / "photon-412.md"
    f.write_text(ISSUE, encoding="utf-8")
    recs = [r for r in records(f) if r.text.strip()]
    (issue,) = episodes(recs, f.name)  # (one section, then split into its problems)
    assert {r.headings[1] for r in issue.records if len(r.headings) > 1} == {"Description", "Activity"}
    found = incidents({f.name: recs})
    owner = next(i for i in found if any("sudo chown" in line.text for line in i.lines))
    assert any(line.text.startswith("After pulling `photon:4.0.0`") for line in owner.lines)
    heads = [line for i in found for line in i.lines if speaker(line.text)]
    assert len(heads) == 8 and all(line.is_frame for line in heads)
    assert not any(speaker(line.text) for i in found for line in build_card(i).lines)



def test_a_github_page_copied_under_its_log_keeps_a_reopened_problem_apart():
    """GitHub's page files its comments under no ticket header, and each comment's own words come after a header
    alone ("priya-nand commented on Feb 14" / "Member Author"): the reopening comment still turns the thread, and the
    pool story and the Jackson story, which the page's own text and the vendor's warnings would bridge, stay two
    incidents with their own fixes (bench/incidents23's payouts page)."""
    f = Path(__file__).parents[2] / "bench/incidents23/java/payouts-api-quarkus-2025-02_github-1184.txt"
    cards = [build_card(inc) for inc in incidents({f.name: list(records(f))})]
    fixes = [" ".join(line.text for line in card.actions) for card in cards]
    assert any("request-timeout=3s" in fx and "64_000_000" not in fx for fx in fixes)
    assert any("64_000_000" in fx and "request-timeout" not in fx for fx in fixes)
