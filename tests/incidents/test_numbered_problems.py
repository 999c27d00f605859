"""A report that numbers its problems under the log of both, and a thread that answers each: one incident per
problem, each card with its own burst and its own fix (``poimen.incidents.problems``; the shape of bench/incidents16's
relay thread)."""

from __future__ import annotations

from poimen.incidents import build_card, incidents
from poimen.inputs.chunking import records

LOG = """\
2025-05-06 11:02:13,410 ERROR [exec-7] c.k.render.PdfService - render failed for invoice INV-88123
java.lang.OutOfMemoryError: Java heap space
\tat c.k.render.FontCache.load(FontCache.java:88)
2025-05-06 11:02:20,002 ERROR [exec-9] c.k.render.PdfService - render failed for invoice INV-88131
java.lang.OutOfMemoryError: Java heap space
\tat c.k.render.FontCache.load(FontCache.java:88)
2025-05-06 14:40:31,771 WARN  [mailer-2] c.k.mail.Outbox - delivery deferred for invoice INV-88140
javax.mail.AuthenticationFailedException: 535 5.7.8 Username and Password not accepted
\tat c.k.mail.SmtpTransport.login(SmtpTransport.java:51)

===== pasted from the tracker =====

**lindqvist-a** commented on May 6, 2025
Hi! Since moving the invoicing service to the new cluster we see two problems, logs above.

1. Rendering dies with `java.lang.OutOfMemoryError: Java heap space` in FontCache after a few hours of batch runs.
2. Mails with the invoice stay deferred: `AuthenticationFailedException: 535 5.7.8 Username and Password not accepted` from the relay.

**okafor-b** commented on May 6, 2025
(1) is the font cache: every render loads the whole typeface family again and never evicts it.

(2) looks like the relay, not us.

**okafor-b** commented on May 6, 2025
About the 535: the new cluster talks to smtp-relay-02, which only accepts app passwords since the March change.

**lindqvist-a** commented on May 7, 2025
Good call. Created an app password and set MAIL_SMTP_PASSWORD from the vault secret; queued invoices went out.

**okafor-b** commented on May 8, 2025
#2210 is merged: FontCache is now bounded (fontcache.max-entries=64) and typefaces are loaded once per family.
"""

ONE_FAILURE = """\
2025-05-06 11:02:13,410 ERROR [exec-7] c.k.checkout.Api - POST /orders failed: 502 from payments
2025-05-06 11:02:20,002 ERROR [exec-9] c.k.checkout.Api - POST /orders failed: 502 from payments

===== pasted from the tracker =====

**lindqvist-a** commented on May 6, 2025
Since the payments upgrade this morning:

1. Checkout answers 502 on about a third of orders.
2. The order queue backs up and fails to drain.

**okafor-b** commented on May 6, 2025
Rolled payments back to 4.2.1 at 11:40; 502s stopped and the queue drained.
"""


def _found(tmp_path, text: str):
    path = tmp_path / "invoicing.log"
    path.write_text(text, encoding="utf-8")
    return incidents({"invoicing.log": [r for r in records(path) if r.text.strip()]})


def _cards(tmp_path, text: str):
    return [build_card(found) for found in _found(tmp_path, text)]


def test_each_numbered_problem_is_an_incident_with_its_own_burst_and_fix(tmp_path):
    cards = _cards(tmp_path, LOG)
    heap = [c for c in cards if any("Java heap space" in line.text and line.role == "symptom" for line in c.lines)]
    mail = [c for c in cards if any("535 5.7.8" in line.text and line.role == "symptom" for line in c.lines)]
    assert len(heap) == 1 and len(mail) == 1 and heap[0] is not mail[0]
    said = {name: "\n".join(line.text for line in card.lines) for name, card in (("heap", heap[0]), ("mail", mail[0]))}
    assert "fontcache.max-entries=64" in said["heap"] and "MAIL_SMTP_PASSWORD" not in said["heap"]
    assert "MAIL_SMTP_PASSWORD" in said["mail"] and "fontcache.max-entries" not in said["mail"]
    # each burst the log printed goes with the problem its item reports, the log lines included
    assert "java.lang.OutOfMemoryError: Java heap space" in {line.text for line in heap[0].lines}
    assert "javax.mail.AuthenticationFailedException: 535 5.7.8 Username and Password not accepted" in \
        {line.text for line in mail[0].lines}


def test_a_numbered_list_of_one_failure_s_symptoms_stays_one_incident(tmp_path):
    (found,) = [f for f in _found(tmp_path, ONE_FAILURE) if any("Rolled payments back" in x.text for x in f.lines)]
    assert any("Checkout answers 502" in line.text for line in found.lines)
    assert any("order queue backs up" in line.text for line in found.lines)


def test_a_json_issue_whose_items_paste_their_errors_is_answered_by_labelled_numbers(tmp_path):
    """A GitHub issue export: the report's first item says what broke in words of no failure cue and pastes the
    error under it; the maintainer answers "**2 (sync):**" first and "**1 (import):**" the next day, each with a
    change the reporter then confirms (bench/incidents19's shape)."""
    import json

    body = ("Two issues after upgrading from 3.1 to 3.2:\r\n\r\n"
            "1. Importing a folder that already holds part of the album now stops at the first duplicate.\r\n\r\n"
            "```\r\nError: DuplicateAssetError: asset 7f3a already exists in album 'trips-2023'\r\n```\r\n\r\n"
            "2. The hourly sync from cron fails straight away; by hand it works.\r\n\r\n"
            "```\r\nOSError: [Errno 6] No such device or address: '/dev/tty'\r\n```\r\n")
    comments = [
        ("maint", "2024-06-03T09:00:00Z", "**2 (sync):** a regression from the new spinner in #301: it opens /dev/tty "
                                          "unconditionally.\r\nUntil 3.2.1, adding `--spinner=off` to the cron line skips "
                                          "that code path."),
        ("reporter", "2024-06-03T20:00:00Z", "3.2.1 fixes the cron sync, last night's run went through and the log looks "
                                             "normal again."),
        ("maint", "2024-06-04T09:00:00Z", "**1 (import):** the stop is on purpose since 3.2.\r\nUse "
                                          "`--on-duplicate=keep` to get the old behaviour back, or "
                                          "`--on-duplicate=replace` if the import should win."),
        ("reporter", "2024-06-04T11:00:00Z", "Import with keep went through: 912 assets checked. Closing, thanks!"),
    ]
    issue = {"number": 77, "title": "3.2: import stops on duplicates, cron sync crashes", "state": "closed",
             "user": {"login": "reporter"}, "created_at": "2024-06-02T18:00:00Z", "body": body,
             "comments": [{"user": {"login": who}, "created_at": when, "body": text} for who, when, text in comments]}
    path = tmp_path / "albums-issues.json"
    path.write_text(json.dumps([issue], indent=2), encoding="utf-8")
    found = incidents({path.name: [r for r in records(path) if r.text.strip()]})
    cards = [build_card(f) for f in found]
    said = ["\n".join(f"{line.role}: {line.text}" for line in card.lines) for card in cards]
    (imported,) = [s for s in said if "DuplicateAssetError" in s]
    (synced,) = [s for s in said if "No such device or address" in s]
    assert "action: Use `--on-duplicate=keep`" in imported and "--spinner" not in imported
    assert "action: Until 3.2.1, adding `--spinner=off`" in synced and "--on-duplicate" not in synced


ORDINALS = """\
2025-05-06 06:00:01,655 ERROR [upload-1] c.k.transfer.Job - transfer failed endpoint=harrow: JSchAlgoNegoFailException: Algorithm negotiation fail
2025-05-06 07:41:12,951 ERROR [exec-3] c.k.http.BankClient - POST /v2/batches/B-7731/confirm failed: NoHttpResponseException: failed to respond

===== pasted from the tracker =====

**dvornik-m** commented on May 6, 2025
Hi! Since the upgrade two things went wrong:

1. The 06:00 upload to Harrow fails with `JSchAlgoNegoFailException: Algorithm negotiation fail` on every attempt.
2. Also, separately: a confirm call to the Harrow API died with `NoHttpResponseException: failed to respond` and was not retried.

**jhaverkamp** commented on May 6, 2025
Let me start with the first one, it is ours. The new fork we ship no longer offers SHA-1 signatures.

Set `legacy-sha1-host-key: true` on that endpoint until the bank rotates its key.

**jhaverkamp** commented on May 7, 2025
Now the second one. The bank's new edge closes a pooled connection after 60 s of quiet.

For right now, set `validate-after-inactivity: 1s` in the http pool settings.
"""


def test_a_thread_that_names_each_problem_by_its_place_keeps_each_fix_with_its_own(tmp_path):
    """"Let me start with the first one" right after the list, whose last item was the second: the place named, not
    the item read last, says which problem the answer is about."""
    cards = _cards(tmp_path, ORDINALS)
    said = ["\n".join(line.text for line in card.lines) for card in cards]
    (upload,) = [s for s in said if "1. The 06:00 upload" in s]
    (confirm,) = [s for s in said if "2. Also, separately" in s]
    assert "legacy-sha1-host-key" in upload and "validate-after-inactivity" not in upload
    assert "validate-after-inactivity" in confirm and "legacy-sha1-host-key" not in confirm


THIRD = """\
2025-05-06 06:00:01,655 ERROR [upload-1] c.k.transfer.Job - transfer failed endpoint=harrow: could not open SFTP session to sftp.harrow.example:22
Caused by: com.jcraft.jsch.JSchAlgoNegoFailException: Algorithm negotiation fail
2025-05-06 07:41:12,951 ERROR [exec-3] c.k.http.BankClient - POST /v2/batches/B-7731/confirm failed
Caused by: org.apache.hc.core5.http.NoHttpResponseException: api.harrow.example:443 failed to respond

===== pasted from the tracker =====

**dvornik-m** commented on May 6, 2025
Hi! Since the upgrade two things went wrong:

1. The 06:00 upload to Harrow fails with `JSchAlgoNegoFailException: Algorithm negotiation fail` on every attempt.
2. Also, separately: a confirm call to the Harrow API died with `NoHttpResponseException: failed to respond` and was not retried.

**jhaverkamp** commented on May 6, 2025
Let me start with the second one. A NoHttpResponseException on a pooled connection means the server closed it while it sat idle.

Is the failing call always the first one after a few minutes of quiet?

**dvornik-m** commented on May 6, 2025
Yes, every failing call comes after 3 to 9 minutes of nothing.

I also rolled the whole deployment back to 2.13.4 this morning (`image.tag: 2.13.4` in our Helm values). The Harrow file went out at 10:30 on 2.13.4 after a manual retry from the console, so (1) is gone. The second one is still there on 2.13.4 though, see the 11:52 line in the log above, so it is not something that 2.14.0 introduced.

**jhaverkamp** commented on May 7, 2025
Now (1). The fork we ship no longer offers SHA-1 host key signatures.

That explains the quiet: we re-validate a pooled idle connection only after 10 minutes. For right now, set `validate-after-inactivity: 1s` on your side.

**pkaratas** commented on May 8, 2025
Not sure this belongs here, but 2.14.0 broke us too:

```
Caused by: java.lang.NoClassDefFoundError: io/micrometer/observation/ObservationRegistry
\tat com.kestrel.sluice.http.HttpClientFactory.<init>(HttpClientFactory.java:61)
```

**aoife-mccrann** commented on May 8, 2025
@pkaratas that is a separate problem. Workaround for today: pin `<micrometer.version>1.10.13</micrometer.version>` in your pom.

**jhaverkamp** commented on May 9, 2025
2.14.1 is out. For the Harrow SFTP problem set `legacy-sha1-host-key: true` on that endpoint.

sluice logs a WARN at startup for every endpoint that has it switched on, on purpose.

**dvornik-m** commented on May 10, 2025
Upgraded to 2.14.1 with `legacy-sha1-host-key: true` on harrow only; the 06:00 upload went out on the first attempt.

About the timeout: not a single NoHttpResponse since we set `validate-after-inactivity: 1s`.
"""


def test_a_third_problem_posted_into_the_thread_and_answers_that_name_their_problem_in_passing(tmp_path):
    """A third user pastes a failure of their own into a thread of two numbered problems: a third incident. A
    comment that names one problem after saying what was done ("I also rolled back … so (1) is gone") gives that
    line to it; "the first one after a few minutes" names no problem; a problem's own burst ("could not open SFTP
    session") tells "the Harrow SFTP problem"; "a NoHttpResponse" is how people say `NoHttpResponseException`
    (bench/incidents18's sluice thread)."""
    said = ["\n".join(line.text for line in found.lines) for found in _found(tmp_path, THIRD)]
    (upload,) = [s for s in said if "1. The 06:00 upload" in s]
    (confirm,) = [s for s in said if "2. Also, separately" in s]
    (third,) = [s for s in said if "NoClassDefFoundError" in s]
    assert "`image.tag: 2.13.4`" in upload and "For the Harrow SFTP problem set `legacy-sha1-host-key" in upload
    assert "Upgraded to 2.14.1 with `legacy-sha1-host-key" in upload and "so (1) is gone" in upload
    assert "first one after a few minutes" in confirm and "About the timeout" in confirm
    assert "The second one is still there" in confirm
    assert "<micrometer.version>1.10.13" in third
    for mine, others in ((upload, ("validate-after-inactivity", "micrometer.version")),
                         (confirm, ("legacy-sha1-host-key", "micrometer.version")),
                         (third, ("legacy-sha1-host-key", "validate-after-inactivity"))):
        assert not any(other in mine for other in others)
