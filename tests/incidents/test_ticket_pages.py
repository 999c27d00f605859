"""An issue tracker's page copied as text under the log it is about: its comments keep their days, and what a
comment pastes (log lines, a plan, a statement) stays the comment's."""

from __future__ import annotations

import re

from poimen.inputs.chunking import records

PAGE = """### orders-api -- log excerpts for shop/orders#311 and #318
2025-05-02 10:14:03,118 [http-nio-8080-exec-3] ERROR com.acme.orders.api.CartController - checkout failed requestId=c-4be1a9d7 cart=88123 step=pricing took=30011ms
2025-05-02 10:14:09,552 [http-nio-8080-exec-5] ERROR com.acme.orders.api.CartController - checkout failed requestId=c-71f0e2aa cart=90417 step=pricing took=30006ms
2025-05-02 10:14:15,004 [http-nio-8080-exec-8] ERROR com.acme.orders.api.CartController - checkout failed requestId=c-0c33b5e1 cart=11209 step=pricing took=30009ms
2025-05-27 01:59:58,201 [scheduling-1] INFO  com.acme.orders.ExportJob - export started
2025-05-27 02:00:31,920 [scheduling-1] ERROR com.acme.orders.ExportJob - export failed step=totals took=30006ms

==== https://gitlab.acme.internal/shop/orders/-/issues/318 (copied from the web UI on 2025-05-30) ====

Nightly export fails
Closed  Issue created 3 days ago by Jo Kim

Activity
Jo Kim @jkim · 3 days ago
Developer
From the db log, many of these:

    2025-05-27 02:00:01.114 UTC [4821] export@shop LOG:  process 4821 still waiting for ShareLock on relation 16702
    2025-05-27 02:00:01.114 UTC [4821] export@shop DETAIL:  Process holding the lock: 4790.

Relation 16702 is cart_totals_mv, and 4790 is the refresh job.

Jo Kim @jkim · 2 days ago
Developer
The job now runs REFRESH MATERIALIZED VIEW CONCURRENTLY cart_totals_mv; last night's export went through.

==== https://gitlab.acme.internal/shop/orders/-/issues/311 (copied from the web UI on 2025-06-30) ====

Checkouts hang for 30 s and then fail
Closed  Issue created 4 weeks ago by Ana Ruiz

About half of the checkouts time out since the release. Example requestId=c-4be1a9d7, log excerpt above.

Activity
Ana Ruiz @aruiz · 4 weeks ago
Author
Can someone look? Error rate is 40% on checkout.

Ben Ode @bode · 4 weeks ago
Developer
The plan of the price query on prod:

    Seq Scan on price_rule pr  (cost=0.00..99120.10 rows=4 width=96)
      Rows Removed by Filter: 2210334

Nothing uses an index there any more.

Ben Ode @bode · 4 weeks ago
Developer
Found it: migration V41 dropped ix_price_rule_cart and nothing recreated it. Building it by hand:

    CREATE INDEX CONCURRENTLY ix_price_rule_cart ON price_rule (cart_region, valid_from);
    ANALYZE price_rule;

Checkouts are back to 40 ms.

Ana Ruiz @aruiz closed 4 weeks ago
"""


def _records(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return [r for r in records(f) if r.text.strip()]


def test_a_trackers_relative_times_count_back_from_the_day_the_page_was_copied(tmp_path):
    recs = _records(tmp_path, "orders.log", PAGE)
    assert {r.time for r in recs if r.kind == "comment"} == {"2025-06-02", "2025-05-27", "2025-05-28"}
    redmine = ("Redmine -- https://redmine.acme.internal/issues/{n} (page text, copied 2025-04-01)\n\nBug #{n}\n"
               "Invoice run aborts\n\n#note-1  Updated by Ana Ruiz 20 days ago\nThe run dies at batch 17.\n\n"
               "#note-2  Updated by Ben Ode about 1 month ago\nStatus changed from New to Assigned\n\n")
    recs = _records(tmp_path, "billing.log", redmine.format(n=4471) + redmine.format(n=4502))
    # (the date stays with the page when its number comes again under the header, with no date)
    assert [r.time for r in recs if r.kind == "comment"] == ["2025-03-12", "2025-03-02"] * 2
    undated = _records(tmp_path, "other.log", re.sub(r" \(copied from the web UI on [\d-]+\)", "", PAGE))
    assert {r.time for r in undated if r.kind == "comment"} == {"4 weeks ago", "3 days ago", "2 days ago"}


def test_log_lines_a_comment_pastes_are_quoted_and_the_comment_goes_on(tmp_path):
    recs = _records(tmp_path, "orders.log", PAGE)
    quoted = [r for r in recs if ("quoted", "comment") in r.attrs]
    assert len(quoted) == 2 and all(r.kind == "log" and dict(r.attrs)["ticket"] == "#318" for r in quoted)
    after = next(r for r in recs if r.text.startswith("Relation 16702"))
    assert after.kind == "comment" and after.author == "Jo Kim" and dict(after.attrs)["ticket"] == "#318"
    last = next(r for r in recs if "REFRESH MATERIALIZED VIEW" in r.text)
    assert dict(last.attrs)["ticket"] == "#318" and last.time == "2025-05-28"  # still on its ticket's page
