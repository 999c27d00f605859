"""A chat channel copied from the browser under the log it is about (Rocket.Chat's shape in bench/incidents34): the
day between rules dates the messages under it that show a clock alone, "Name  @handle  03:41" and "bot  BOT  03:30"
are speakers, and the log lines a message pastes in a fence go where the message went, back to the burst it speaks of,
not into an incident of their own."""

from __future__ import annotations

from poimen.incidents import build_card, incidents
from poimen.inputs.chunking import records
from poimen.inputs.readers.speakers import speaker
from poimen.inputs.readers.zones import banner_day, on_day

STREAM = """\
[2024-04-16 01:23:47,552] [ERROR] [com.pellworm.ingest.hbase.ReadingsWriter] [io-4] - batch 2291 to meter_readings failed after 16 attempts: RegionTooBusyException: Over memstore limit=512.0 M, server=hb-rs-07
[2024-04-16 01:23:47,561] [WARN] [akka.stream.scaladsl.RestartWithBackoffSource] [dispatcher-17] - Restarting stream due to failure
[2024-04-23 06:47:02,117] [ERROR] [com.pellworm.ingest.hbase.EventsWriter] [io-2] - batch 88130 to meter_events failed after 16 attempts: RegionTooBusyException: Over memstore limit=512.0 M, server=hb-rs-03

-------------------------------- Tuesday, April 16, 2024 --------------------------------
alertmanager  BOT  03:30
[FIRING:1] MeterIngestKafkaLag (meter-ingest, severity=page)

Wiebke Hansen  @wiebke.h  04:36
not GC. this is the interesting part of the rs-07 log:
```
2024-04-16 01:31:02,118 INFO  [MemStoreFlusher.1] regionserver.MemStoreFlusher: Waited 90012ms on a compaction to clean up 'too many store files'
2024-04-16 01:31:09,402 WARN  [RpcServer.default.FPBQ.Fifo.handler=41] regionserver.HRegion: Region is too busy due to exceeding memstore size limit
```
store files per region on rs-07 are at 18-24, blockingStoreFiles is 16, so flushes wait for compactions

Wiebke Hansen  @wiebke.h  14:37
done: hbase_rs_nvme role applied to rs-07..09 (hbase.hstore.compaction.throughput.higher.bound 200 MB/s), no restart
"""


def test_a_chat_copied_from_the_browser_speaks_on_the_day_above_it():
    assert speaker("Wiebke Hansen  @wiebke.h  04:36") == ("04:36", "Wiebke Hansen")
    assert speaker("alertmanager  BOT  03:30") == ("03:30", "alertmanager")
    assert banner_day("-------- Tuesday, April 16, 2024 --------") == "2024-04-16"
    assert banner_day("--- parcel-eta-6b9f7c5d8-4tqzn, 2025-09-22 ---") == "2025-09-22"
    assert banner_day("--- restarted at 16:31 ---") == ""
    assert on_day("2:41 PM", "2024-04-16") == "2024-04-16 14:41" and on_day("2:41 PM", "") == "2:41 PM"


def test_pasted_lines_go_where_the_message_that_pastes_them_went(tmp_path):
    f = tmp_path / "meter-ingest_rocketchat.log"
    f.write_text(STREAM, encoding="utf-8")
    recs = list(records(f))
    assert [r.time for r in recs if r.kind == "comment"] == ["2024-04-16 03:30", "2024-04-16 04:36",
                                                           "2024-04-16 04:36", "2024-04-16 14:37"]
    cards = [build_card(i) for i in incidents({f.name: recs})]
    fixed = next(c for c in cards if any("hbase_rs_nvme role applied" in x.text for x in c.actions))
    pasted = [c for c in cards if any("Waited 90012ms" in x.text or "Region is too busy" in x.text for x in c.lines)]
    assert pasted in ([], [fixed]) and not any("hb-rs-03" in x.text for x in fixed.lines)
    assert len(cards) == 2  # the 16 April stretch with its messages and the pasted lines, and the 23 April one
