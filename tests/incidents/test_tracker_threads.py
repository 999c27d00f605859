"""Two tickets of a tracker copied under the log of three failures (the shape of bench/incidents22's Jira Cloud
page): a comment that turns its ticket to another problem goes with the burst the log printed of it, and the two
stories of one ticket stay two incidents, though the second names the ticket ("Closing DOC-812 for both"). And a Bugzilla page: its bugs file their comments, its boxed log banners date the clocks under them."""

from __future__ import annotations

from poimen import incidents as inc
from poimen.incidents.card import build_card
from poimen.incidents.cues import OTHER_PROBLEM
from poimen.inputs.chunking import records

LOG = """\
2025-05-06 11:02:13.410 ERROR 1 --- [exec-7] c.k.render.web.RenderController : render failed for job rj-5520917
Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30001ms.
2025-05-06 11:02:14.019 ERROR 1 --- [exec-5] c.k.render.web.RenderController : render failed for job rj-5520921
2025-05-08 03:17:44.902 ERROR 1 --- [render-worker-2] c.k.render.PdfService : job rj-5561230 aborted while stamping page 7 of 42
java.lang.OutOfMemoryError: Java heap space
\tat com.kestrawood.render.pdf.LogoStamper.stamp(LogoStamper.java:61)
2025-05-08 03:19:02.447 ERROR 1 --- [render-worker-1] c.k.render.PdfService : job rj-5561230 aborted while stamping page 9 of 42
2025-05-09 14:40:07.902 ERROR 1 --- [archive-pool-2] c.k.render.archive.ArchiveUploader : upload of rj-5583310.pdf failed
javax.net.ssl.SSLHandshakeException: PKIX path building failed: unable to find valid certification path to requested target

DOC-812
Render API returns 500s, jobs hang in "finishing"

Katja Ferreira
6 May 2025 at 11:15
Looking. The 500s are all "Unable to acquire JDBC Connection", pool is 10/10 active.

Katja Ferreira
6 May 2025 at 15:48
MR !2231 is merged, and signing.client.read-timeout=4s is set so a slow signer fails the job.

Rune Halvorsen
8 May 2025 at 07:40
Different problem but same service so putting it here: overnight the quote batch died, OutOfMemoryError in stamping.

Katja Ferreira
8 May 2025 at 13:14
Fix in 2.15.0: logos are downscaled once when uploaded, render.logo.max-edge-px=1200 in application-prod.yml.

Katja Ferreira
8 May 2025 at 18:02
2.15.0 is out in prod, heap stays under 350 MB. Closing DOC-812 for both.

DOC-830
Archive upload to object store fails: PKIX path building failed

Oskar Dalen
9 May 2025 at 14:52
Every put to render-archive fails with PKIX path building failed since 14:40.

Oskar Dalen
9 May 2025 at 15:58
The image bakes its own truststore; switched it to the cluster bundle with truststore.baked=false and redeployed.
"""


def test_each_story_of_two_tickets_goes_with_its_own_burst(tmp_path):
    f = tmp_path / "docrender.txt"
    f.write_text(LOG, encoding="utf-8")
    cards = [build_card(i) for i in inc.incidents({f.name: [r for r in records(f) if r.text.strip()]})]

    def card_of(fix: str):
        return next(c for c in cards if any(fix in line.text for line in c.actions))

    pool, logo, pkix = card_of("read-timeout=4s"), card_of("max-edge-px=1200"), card_of("truststore.baked=false")
    assert len({id(pool), id(logo), id(pkix)}) == 3  # the turned story is no part of the first one
    assert any("Connection is not available" in line.text or "render failed" in line.text for line in pool.symptoms)
    assert any("OutOfMemoryError" in line.text or "aborted while stamping" in line.text for line in logo.symptoms)
    assert any("PKIX" in line.text for line in pkix.symptoms)
    for card, others in ((pool, ("OutOfMemoryError", "PKIX")), (logo, ("PKIX", "HikariPool")),
                         (pkix, ("OutOfMemoryError", "HikariPool"))):
        assert not any(o in line.text for line in card.lines for o in others)


BUGZILLA = """\
========================================================================================
 server.log  claims-app-02.example.lan
 Tuesday 2025-03-18, times are local
========================================================================================
08:41:03,288 ERROR [org.jboss.msc.service.fail] (ServerService Thread Pool -- 140) MSC000001: Failed to start service: java.lang.OutOfMemoryError: Metaspace
08:41:03,540 ERROR [io.undertow.request] (default task-17) UT005023: Exception handling request to /claims-rules/score
08:41:09,660 WARN  [org.apache.activemq.artemis.core.server] (Thread-2) AMQ222210: Free storage space is at 9.6GB

Bug 20417 - claims-rules redeploy fails with OutOfMemoryError: Metaspace

Comment 1 Dorota Kwiatek 2025-03-18 09:04:51 UTC
Restarted WildFly on claims-app-02, rules are back.

Comment 2 Henrik Aalto 2025-03-20 12:11:09 UTC
Reopening, but for something else: the 7.4.0 deploy failed on claims-app-03 with WFLYCTL0412.

Bug 20452 - Scanned claim attachments over ~10 MB fail to upload

Comment 1 Tapio Rinne 2025-03-21 08:50:12 UTC
Server side: UT000020 on every upload over 10485760 bytes.
"""


def test_a_bugzilla_page_files_its_bugs_and_a_box_dates_its_log(tmp_path):
    f = tmp_path / "claims.txt"
    f.write_text(BUGZILLA, encoding="utf-8")
    recs = list(records(f))
    assert [r.time for r in recs if r.kind == "log" and r.level == "ERROR"] == ["2025-03-18 08:41:03,288",
                                                                                "2025-03-18 08:41:03,540"]
    assert [dict(r.attrs).get("ticket") for r in recs if r.kind == "comment"] == ["#20417", "#20417", "#20452"]
    reopened = next(r for r in recs if "Reopening" in r.text)
    assert OTHER_PROBLEM.search(reopened.text) and not OTHER_PROBLEM.search("we ruled out something else first")
