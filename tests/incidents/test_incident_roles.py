"""Roles: each role from its cues; a ruled-out suspect and a rollback that changed nothing are never cause or fix."""

from __future__ import annotations

from dataclasses import replace

import pytest
from incident_fixtures import (PAGERDUTY, PAGERDUTY_CAUSE, PAGERDUTY_FIX, PAGERDUTY_HERRINGS, SHELL, SHELL_CAUSE,
                               SHELL_FIX, SHELL_RESTART, SLACK, SLACK_CAUSE, SLACK_FIX, SLACK_HERRINGS,
                               SLACK_ROLLBACK, rec)

from poimen.incidents import assign, incidents, score
from poimen.incidents.episodes import record_lines
from poimen.incidents.roles import line_scores, pick


@pytest.mark.parametrize("text, role", [
    ("ERROR upstream connect error or disconnect/reset before headers", "symptom"),
    ("users are reporting timeouts on login", "symptom"),
    ("it turned out the cert had expired on the internal CA", "cause"),
    ("the cache was evicting hot keys because maxmemory was too low", "cause"),
    ("bumped maxmemory to 4gb and restarted redis", "action"),
    ("helm rollback billing 14", "action"),
    ("ALTER SYSTEM SET max_wal_size = '4GB';", "action"),
    ("confirmed, error rate back to baseline levels and no more pages", "verification"),
    ("grabbing coffee, back in 5", "none"),
    ("Nordfin fixed: imported the new root and intermediate into the truststore", "action"),
    ("Turned it on with STREAMING_PARSER=true in the deployment env.", "action"),
    ("Recreated the consumer group with max.poll.records=50.", "action"),
    ("Vacuumed the events table and reassigned the partitions to the new brokers.", "action"),
    ("CHG0031877 implemented: claims-docs 4.2.1 on cl-app-03 and cl-app-04.", "action"),
    ("RuleEvaluator now compiles each rule set once and caches the Script class.", "action"),
    ("Cause found. The refactor calls shell.parse(ruleText) on every document instead of reusing the class.", "cause"),
    ("Went with option 3. Our Helm values now render this into the ConfigMap:", "action"),
    ("12:35  rollback to 5.13.4 discussed; rejected because 5.14.0 also carries the schema change", "none"),
    ("Restoring into a directory now aborts at the first folder that exists.", "symptom"),
    # what a script or a job does is what the failure came from, however state-changing its command
    ("got it. 58.sql does CREATE INDEX CONCURRENTLY and we have play.evolutions.db.default.autocommit = false in "
     "prod.conf since 2021, so Play runs each evolution script inside a transaction", "cause"),
    ("the nightly job runs VACUUM FULL on events, so the table is locked for an hour", "cause"),
    # typed, or run by someone: a change
    ("I ran ALTER TABLE orders SET (autovacuum_vacuum_scale_factor = 0.01)", "action"),
    ("Maria ran VACUUM FULL events at 03:10 and the bloat went away", "action"),
    ("psql: CREATE INDEX CONCURRENTLY IF NOT EXISTS appointments_idx ON appointments (clinic_id);", "action"),
    ("The job now runs REFRESH MATERIALIZED VIEW CONCURRENTLY cart_totals_mv; the export went through.", "action"),
    ("Ran FLUSH SSL on db-loan-01 at 08:29 as root (MariaDB reloads the server key/cert/CA without a restart).",
     "action"),  # MySQL's and MariaDB's FLUSH reloads what the server serves (bench/incidents42)
    ("The renewal job runs FLUSH SSL after it copies the files", "none"),
    # help asked of someone else changes nothing; a limit raised does
    ("Raised with Northgate Assist (their ref NA-77310).", "none"),
    ("raised a ticket with the network team (NET-4410)", "none"),
    ("Raised the pool limit to 80 (PR #233)", "action"),
    # a check after the fix that finds nothing left of the failure
    ("for the record I see no locks left over from the failed attempt", "verification"),
    ("no space left on device", "symptom"),
    # a tracker's own note changes nothing; what a script does since the fix is the change
    ("*** Bug 20419 has been marked as a duplicate of this bug. ***", "none"),
    ("dba-tools commit 9e0c4a2: rebuild-standby.sh now passes -X stream -C -S rebuild_<host> by default.", "action"),
    # a build log pasted into a ticket: the steps the build ran are no fix, and their errors stay the failure
    ("[2021-09-08T00:21:11.596Z] #13 [ 8/14] RUN apt-get -q update && apt-get -q install -y python3", "none"),
    ("Step 8/14 : RUN pip install --no-cache-dir -r requirements.txt", "none"),
    ("[2021-09-08T00:21:26.290Z] #13 14.42 dpkg: error processing package libc6:amd64 (--configure):", "symptom"),
    ("ran apt-get install -y libcrypt1 in the image and the build went through", "action"),
])
def test_each_role_from_its_cues(text, role):
    assert pick(score(text)) == role


def test_a_log_line_at_warn_is_a_symptom_and_never_a_cause():
    s = score("2024-04-09 03:14:05 WARN pool exhausted because of slow queries", kind="log", level="WARN")
    assert pick(s) == "symptom" and s.cause == 0


def test_a_read_only_command_is_nothing_and_a_state_change_is_an_action():
    assert pick(score("$ kubectl get pods -n shop", kind="command")) == "none"
    assert pick(score("$ kubectl scale deploy/cart --replicas=6", kind="command")) == "action"


def test_a_package_install_and_a_unit_edit_are_state_changes():
    assert pick(score("ops@reports-1:~$ sudo apt-get install -y postgresql-client-16", kind="command")) == "action"
    assert pick(score("$ sudo systemctl edit extract.service --stdin <<'EOF'", kind="command")) == "action"
    assert pick(score("$ apt-cache policy postgresql-client-16", kind="command")) == "none"


def test_the_object_a_command_says_it_changed_is_an_action_and_one_left_unchanged_is_not():
    assert pick(score("networkpolicy.networking.k8s.io/allow-ledger-upstreams created", kind="output")) == "action"
    assert pick(score("deployment.apps/cart configured", kind="output")) == "action"
    assert pick(score("networkpolicy.networking.k8s.io/default-deny-egress unchanged", kind="output")) == "none"
    assert pick(score("Config file /etc/app/app.yaml created", kind="output")) == "none"


@pytest.mark.parametrize("command", [
    "cache-03:~ # echo 'vm.overcommit_memory = 1' > /etc/sysctl.d/60-redis.conf",
    "cache-03:~ # sysctl -p /etc/sysctl.d/60-redis.conf", "$ sudo sed -i 's/^pm.max_children.*/&/' www.conf",
    "$ systemctl revert nutcracker", "$ journalctl --vacuum-size=800M", "$ chown named:named /etc/bind/keys/K*",
    "$ rm /etc/systemd/journald.conf.d/99-debug.conf", "$ ceph balancer on", "$ rndc loadkeys int.example.net"])
def test_a_config_written_loaded_or_removed_is_a_state_change(command):
    assert pick(score(command, kind="command")) == "action"


@pytest.mark.parametrize("command", ["$ cat /etc/hosts", "$ grep -c x /etc/y > /tmp/count", "$ ceph osd df",
                                     "$ journalctl --disk-usage", "$ sysctl vm.overcommit_memory"])
def test_reading_a_config_changes_nothing(command):
    assert pick(score(command, kind="command")) == "none"


def test_a_label_claims_nothing_a_heading_is_no_fix_and_what_we_did_is_a_fix_section():
    heads = ("Q2 digest", "Incident 1: Search results empty after reindex")
    assert pick(score("Incident 1: Search results empty after reindex", headings=heads)) != "action"
    assert score("For the stampede:", headings=("PM", "REMEDIATION", "For the stampede")) == score("")
    assert score("-----------", headings=("PM", "Remediation")) == score("")
    assert pick(score("08:41 Priya moved the alias back by hand:", headings=("Q2", "Incident 1", "What we did"))) \
        == "action"
    assert pick(score("08:41 Priya moved the alias back by hand:", headings=("Q2", "Incident 1", "Timeline"))) \
        == "none"


def test_a_clock_is_no_value_and_a_title_word_is_no_section():
    line = "At 11:21, to get the primary to start faster, one of us deleted the oldest 900 files in pg_wal by hand."
    assert score(line).action == 0
    titled = ("Report", "Problem 2: replica could not catch up (complication during recovery)")
    assert score(line, headings=titled).action == 0
    assert score("Rebuilt the replica with pg_basebackup.", headings=("Report", "Recovery")).action > \
        score("Rebuilt the replica with pg_basebackup.", headings=("Report", "Notes")).action


def test_the_same_error_again_says_an_attempt_did_not_help():
    assert score("Rollback done at 13:41. Same handshake error at 13:58, so it isn't the release.").ineffective
    assert score("I restarted task 1 at 09:21, it died again within seconds on the same offset.").ineffective
    assert score("tried a `kubectl rollout restart` with the volume remounted: still EACCES").ineffective
    assert score("# provider restart + fresh pod: same 403").ineffective


def test_hedges_and_questions_are_weaker():
    assert score("maybe the pool is exhausted?").cause < score("the pool is exhausted").cause
    assert pick(score("we thought it was DNS because of the timing")) != "cause"
    assert pick(score("we thought it was DNS but it turned out the pool was exhausted")) == "cause"


def test_planned_work_is_not_an_action():
    assert pick(score("we should raise max_connections next week")) == "none"


def _roles(records):
    (incident,) = incidents({"s": records})
    return {r.line.text: r.role for r in assign(incident.lines)}


def test_slack_thread_roles_and_red_herrings():
    roles = _roles(SLACK[:8])
    assert roles[SLACK_CAUSE] == "cause" and roles[SLACK_FIX] == "action"
    assert roles[SLACK_ROLLBACK] not in ("cause", "action")
    assert all(roles[text] not in ("cause", "action") for text in SLACK_HERRINGS)


def test_pagerduty_timeline_roles_and_the_unrelated_warning():
    roles = _roles(PAGERDUTY)
    assert roles[PAGERDUTY_CAUSE] == "cause" and roles[PAGERDUTY_FIX] == "action"
    assert all(roles[text] not in ("cause", "action") for text in PAGERDUTY_HERRINGS)
    assert roles["Add an alert on connection count per database."] != "action"  # an action item is yet to do


def test_a_restart_that_did_not_help_is_not_the_fix():
    roles = _roles(SHELL)
    assert roles[SHELL_RESTART] == "none"
    assert roles[SHELL_FIX] == "action" and roles[SHELL_CAUSE] == "cause"


def test_an_attempt_that_fails_the_same_way_did_not_help():
    from poimen.incidents.roles import ineffective

    assert ineffective("09:51  Restarted catalog-sync. It resumes from the same batch and fails the same way.")
    assert not ineffective("09:51  Restarted catalog-sync. It resumes from the same batch and catches up.")


def test_what_a_resolution_says_is_now_done_is_the_fix_though_it_names_the_error():
    text = "Records that fail with a RecordTooLargeException are now written to the dead-letter topic and skipped."
    assert pick(score(text, headings=("Resolution",))) == "action"
    assert pick(score(text)) == "symptom"  # told anywhere else, it is what went wrong
    assert pick(score("The sanitiser now strips inline data: URIs.", headings=("Resolution",))) == "action"
    assert pick(score("Slow ops on osd.17 dropped to zero within 4 minutes.", headings=("Resolution",))) != "action"


def test_a_log_line_pasted_in_a_fence_is_a_symptom_whatever_verb_it_prints():
    line = "2024-11-06 14:32:08.611417+00:00 [warning] <0.512.0> memory resource limit alarm set on node 'rabbit@mq-2'."
    assert pick(score(line, kind="code")) == "symptom"
    assert pick(score("kubectl -n billing set image deploy/exporter exporter=exporter:6.2.1", kind="code")) != "symptom"


@pytest.mark.parametrize("text", ["CloudWatch alarm nat-prod-b-port-alloc is in ALARM",
                                  "Threshold Crossed: 1 out of the last 1 datapoints was greater than the threshold"])
def test_an_alarm_is_a_symptom_as_an_alert_is(text):
    assert pick(score(text)) == "symptom"
    assert pick(score("it was a false alarm, the probe itself was down")) != "symptom"


@pytest.mark.parametrize("text", ["- **15:34** — `billing-exporter` 6.2.1 built: the zero-amount path acks too.",
                                  "What fixed it was the `billing-exporter` 6.2.1 hot fix."])
def test_a_release_built_and_what_fixed_it_are_actions(text):
    assert pick(score(text)) == "action"


def test_ruling_a_suspect_out_does_not_unsee_the_error_printed_before():
    records = (rec("sasha: every failing task dies on connect:", 1, "message"),
               rec('psycopg2.OperationalError: FATAL:  remaining connection slots are reserved for superuser '
                   'connections', 2, "code"),
               rec("rhea: celery workers are at 31 connections total, so it's not the workers leaking", 3, "message"))
    lines = [line for r in records for line in record_lines(r)]
    roles = [r.role for r in assign(lines)]
    assert roles[1] == "symptom" and roles[2] == "none"


@pytest.mark.parametrize("text", [
    "08:55  Firewall rule amended to allow udp/123 from 10.52.8.0/24 to ntp-a and ntp-b",
    "#1453 restores `platforms: linux/amd64,linux/arm64` on the build-push step",
    "I re-ran the release job, so 0.19.0 was re-pushed with both architectures. Pull again and it will start."])
def test_an_amended_rule_a_fix_pr_in_the_present_and_a_rerun_are_actions(text):
    assert pick(score(text, kind="comment")) == "action"


def test_what_will_be_done_is_still_no_action_beside_what_was():
    assert pick(score("The fix will be shipped tomorrow.", kind="comment")) != "action"
    assert pick(score("We restarted it. We will raise the pool size next week.", kind="comment")) == "action"


def test_cleared_is_done_and_still_at_a_figure_did_not_help():
    from poimen.incidents.roles import ineffective

    assert pick(score("Cleared the 2.1M keys without a TTL from ratelimit-redis.", kind="reply")) == "action"
    assert ineffective("rollback is out but 5xx are still ~30%, memory is still pinned at 8gb")


def test_a_rebuild_under_way_is_no_fix_and_who_cannot_tell_gives_no_cause():
    assert pick(score("WMS-5520, index rebuild on holds, ten slow calls drain the pool", kind="comment")) != "action"
    assert pick(score("Rebuilt the index on holds.", kind="comment")) == "action"
    assert pick(score("Errors stopped at 11:09. WMS says their rebuild finished at 11:20, so we can't tell yet which "
                      "one helped.", kind="comment")) != "cause"


def test_a_rollback_said_to_change_nothing_is_no_fix_however_much_output_came_between():
    rollback = "ana@bastion-2:~/deploy/search$ helm -n search rollback search-indexer 41 --wait --timeout 5m"
    records = [rec(rollback, 1, "command")]
    records += [rec(f"search-indexer-5f8c7d9b6d-x{n}   0/1   ImagePullBackOff   0   2m", 2 + n, "output")
                for n in range(6)]
    records += [rec("ana@bastion-2:~/deploy/search$ # rollback changed nothing: 5.1.4 gets the same 401", 9, "note"),
                rec("ana@bastion-2:~/deploy/search$ kubectl -n search patch sa default -p pull-q4", 10,
                    "command")]
    lines = [line for r in records for line in record_lines(r)]
    roles = {line.text: r.role for line, r in zip(lines, assign(lines))}
    assert roles[rollback] == "none" and roles[records[-1].text] == "action"


def test_a_note_typed_at_a_prompt_is_read_without_the_prompt():
    assert pick(score("root@edge-lb-01:~# # lower the level only for that one location, not globally:",
                      kind="note")) == "action"


def test_an_alarm_set_or_cleared_is_the_alarms_state_not_a_change():
    alert = "*Alert:* memory resource limit alarm set on node rabbit@rabbit-eu-2."
    assert pick(score(alert, kind="message")) != "action"
    assert pick(score("memory alarm cleared on rabbit-eu-2, 1.1 GiB used", kind="message")) != "action"
    assert pick(score("set the alarm threshold to 80% on rabbit-eu-2", kind="message")) == "action"


def test_a_ruled_out_suspect_demotes_the_earlier_line_that_named_it():
    records = (rec("payments-api 503s since 14:00", 1, "message"),
               rec("the culprit is the new rate limiter config on payments-api", 2, "message"),
               rec("rate limiter config is a red herring, it was never deployed", 3, "message"))
    lines = [line for r in records for line in record_lines(r)]
    roles = [r.role for r in assign(lines)]
    assert roles == ["symptom", "none", "none"]


@pytest.mark.parametrize("text, role", [
    # a release that ships the change is the fix, even where the line also reports it holding
    ("enricher 2.9.1 is out: `max.poll.records=100` (was 500); group has been stable since 11:30", "action"),
    # a headline's passive names no doer: someone did it
    ("Follow-up merged (PR #671): purge-orphans now deletes in chunks of 5000 by primary key. Closing.", "action"),
    ("10:24  Feature flag orders.read_from_replica=false set in the flag service.", "action"),
    # ...also when the rollout that shipped it is said with it (bench/incidents18); a bot's rollout alone is none
    ("Helm change merged and rolled out at 09:17: `spring.kafka.consumer.max-poll-records: 40` in values-prod.yaml "
     "(deploy #5512).", "action"),
    (":rocket: notifications-svc v2.3.7 rolled out to prod-eu-1", "none"),
    ("1. 10:49 - Reverted the flag to the last good version", "action"),
    # ...where a stative "has X pinned" or a thing's own change is no fix
    ("our truststore.jks is baked into the image and only has the old intermediate pinned.", "none"),
    ("PR #1834 raised the batch size for every consumer", "none"),
    ("Nothing has changed on the DB since the RU on 30/03.", "none"),  # a change denied (bench/incidents18)
    # a tracker's journal of field changes (Redmine), and what did not stop the failure (bench/incidents20)
    ("Status changed from Assigned to Closed % Done changed from 80 to 100", "none"),
    ("#note-1  Updated by Dmitri Levchenko about 1 month ago", "none"),  # a journal's header
    # ... and YouTrack's and Jira's history lines (bench/incidents22)
    ("Piotr Zawadzki changed State  In Progress → Fixed  26 Mar 2025 13:20", "none"),
    ("Katja Ferreira changed the Status from In Progress to Done", "none"),
    # a rollback the same line says left the failure going (bench/incidents22)
    ("Rolled fo-app back to 5.8.3 from 5.9.0 in case the new listener is to blame. Still rebalancing after the "
     "rollback.", "none"),
    ("Restarted bgw-01 at 10:47 to check the flag is on the command line: it is, but the 400s continue.", "symptom"),
    # what a thing does now is done, not planned; what it takes now is no fix
    ("Follow-up in !1402: the helm step now uses `--timeout 8m` and `--atomic`", "action"),
    ("rendering one invoice PDF now takes about 1.2 s", "none"),
    # ... or says the clock time it went out (bench/incidents20)
    ("- catalog-indexer 3.7.4 (deployed 10:55): consumer runs with enable.auto.commit=false", "action"),
    # a setting a service now runs with is the change, though the line also says it is stable (bench/incidents29)
    ("2) archive: crm-archive-s3 now runs with s3.part.size = 5242880 (was 26214400). Archive tasks stable for 26 h.",
     "action"),
    # ... and what a service now runs as (bench/incidents35)
    ("CHG0032010: the ClaimsPortal pool now runs as the group Managed Service Account CALDER\\gmsa-claimsweb$.", "action"),
    # what a fix's pull request does, in the present (bench/incidents30)
    ("PR #912 puts the 1a and 1c subnets back into vpc_zone_identifier for asg-ingest-workers-prod", "action"),
    # headings and a tracker's lines about a post say nothing
    ("5. RESOLUTION", "none"),
    ("Jana Novák added a comment - 02/Apr/24 2:14 PM", "none"),
    # running the incident is no fix: the error the line reports is what it says
    ("Time (CET): 14:09; What happened: checkout reports `pika.exceptions.ConnectionBlockedTimeout`. Incident "
     "upgraded to P1, Marguerite takes IC.", "symptom"),
    # a condition on the future says nothing failed
    ("Released 2.5.0 with #1318: the server now sends websocket pings. Closing, please reopen if it persists.",
     "action"),
])
def test_release_headline_and_now_cues(text, role):
    assert pick(score(text)) == role


def test_a_command_a_comment_runs_and_confirms_in_one_breath_is_the_fix():
    """"Stopped it: kubectl … delete cronjob order-replay Group is stable since 11:19" (bench/incidents22)."""
    records = (rec("2025-03-26 09:41:47 ERROR consumer exception: CommitFailedException", 1, "log"),
               rec("Found it: the order-replay CronJob joins the production consumer group.", 2, "comment"),
               rec("Stopped it: kubectl -n tools delete cronjob order-replay Group is stable since 11:19, lag gone.",
                   3, "comment"))
    lines = [line for r in records for line in record_lines(r)]
    assert [r.role for r in assign(lines)][-1] == "action"


def test_a_line_that_names_two_parts_is_their_heading_and_claims_nothing():
    """A plain-text postmortem's "Mitigation and fix" over the fix it heads (bench/incidents20)."""
    assert pick(score("Mitigation and fix", "paragraph", "", ("5. Failure 2", "Mitigation and fix"))) == "none"
    assert pick(score("Root cause & trigger", "paragraph", "", ("Root cause & trigger",))) == "none"


def test_a_block_in_a_paragraph_of_its_own_that_an_example_introduces_is_the_fix():
    """A GitHub comment pasted as text: "…in your pom, for example" and, after a blank line, the XML block
    (bench/incidents18)."""
    lines = [line for r in (rec("Workaround for today: override the managed version in your pom, for example", 1,
                                "comment"),
                            rec("```xml\n<properties>\n<micrometer.version>1.10.13</micrometer.version>\n</properties>\n```",
                                3, "comment"))
             for line in record_lines(r)]
    roles = {r.line.text: r.role for r in assign(lines)}
    assert roles["<micrometer.version>1.10.13</micrometer.version>"] == "action"


def test_a_code_block_an_action_introduces_is_the_fix():
    fenced = rec("Workaround until a release: build it yourself with\n\n```\ncargo install relay --locked "
                 "--features native-roots\n```\n\nThat feature loads the OS trust store.", 1, "comment")
    indented = rec("08:10  Marked it out so data moves off it:\n\n           ceph osd out osd.17\n\n"
                   "Slow ops dropped to zero within 4 minutes.", 1, "paragraph")
    for record, code in ((fenced, "cargo install"), (indented, "ceph osd out")):
        roles = {r.line.text: r.role for r in assign(record_lines(record))}
        assert [role for text, role in roles.items() if code in text] == ["action"], roles


def test_a_table_rows_clock_places_a_change_before_the_failure():
    from poimen.incidents.times import clock_of

    assert clock_of("Time (CET): 13:40; What happened: refund-worker 5.2.0 deployed") == 13 * 3600 + 40 * 60
    assert clock_of("Root cause: the pool was too small") is None
    rows = (rec("Time (UTC): 09:50; What happened: api-gateway 8.14.0 deployed.", 1, "table_row"),
            rec("Time (UTC): 10:14; What happened: every gateway panics with ERROR flagsync decode failed", 2,
                "table_row"),
            rec("Time (UTC): 10:49; What happened: flag config reverted to version 411.", 3, "table_row"))
    roles = [r.role for r in assign([line for r in rows for line in record_lines(r)])]
    assert roles == ["none", "symptom", "action"]


def test_a_settings_key_is_no_failure_word():
    probe = "Liveness:   http-get http://:8080/healthz delay=20s timeout=2s period=10s #success=1 #failure=3"
    assert score(probe, kind="output").symptom < score("Reason:       OOMKilled", kind="output").symptom
    assert score("readiness probe timeout, 3 failures", kind="output").symptom >= 1.4


def test_an_aside_that_clears_something_else_does_not_rule_the_line_out():
    fix = "@ana-r: #499 bumps jinja2 to 3.1.4 in requirements/docs.txt (sphinx 7 is fine with it). docs green."
    assert not score(fix, kind="comment").ruled_out and pick(score(fix, kind="comment")) != "none"
    assert score("checked the db (it is fine)", kind="comment").ruled_out  # an aside that is the line's only claim
    assert score("the database is fine, not the cause", kind="comment").ruled_out


def test_an_error_quoted_as_printed_outranks_prose_that_names_a_failure():
    quoted = "- **16:48** `dmesg` on ip-10-1-7-23: `nf_conntrack: nf_conntrack: table full, dropping packet`"
    prose = "Services in prod-us saw intermittent name resolution failures for 2h 41m."
    assert score(quoted).symptom > score(prose).symptom >= 1.0


def test_a_suspect_dropped_without_its_name_is_no_fix():
    record = rec("The on-call first suspected the new synonym analyzer that shipped in the same reindex. We spent "
                 "25 minutes testing queries against it; it was fine, and it was not the problem.", 1, "paragraph")
    roles = [r.role for r in assign(record_lines(record))]
    assert roles[0] == "none", roles
    assert pick(score("The weekly catalogue reindex finished at 07:10.")) == "none"  # the word, not SQL's REINDEX
    assert pick(score("orders=# REINDEX TABLE order_items;", kind="command")) == "action"


def test_a_line_that_only_announces_a_cause_gives_none():
    assert pick(score("Found it.", kind="comment")) == "none"
    assert pick(score("Found it: pip resolved numpy 2.0 because only pandas was pinned.", kind="comment")) == "cause"
    assert pick(score("Reverted.", kind="comment")) == "action"  # a done verb alone still says what was done


def test_a_change_told_under_root_cause_is_the_cause_not_the_fix():
    heads = ("Postmortem: writes blocked", "Root causes")
    told = score("The balancer module was switched off during the April expansion and never switched back on, "
                 "so placement drifted.", headings=heads)
    assert pick(told) == "cause"
    both = ("Postmortem: writes blocked", "Root cause and fix")
    assert pick(score("We switched the balancer back on with ceph balancer on.", headings=both)) == "action"


def test_not_our_database_rules_the_database_out():
    assert score("Not our DB, its CPU is flat and it has 12 connections.").ruled_out


def test_a_part_headed_what_did_not_help_holds_no_fix_and_no_cause():
    tried = "We restarted tracker-ingest on all four hosts."
    assert pick(score(tried)) == "action"
    for part in ("Things that did not help", "Things we ruled out", "What didn't work"):
        assert pick(score(tried, headings=("INC-1203 ingest refusing connections", part))) == "none"
    # a document titled so is not a part of one
    assert pick(score(tried, headings=("Ingest review: the restart did not help",))) == "action"


def test_a_status_page_update_runs_the_incident_and_changes_nothing():
    assert pick(score("status page updated to investigating", kind="reply")) != "action"
    assert pick(score("posted to the status page: we are investigating elevated errors", kind="message")) != "action"
    assert pick(score("rolled back checkout-api to v41", kind="message")) == "action"


def test_a_failure_said_to_recede_verifies_and_reports_no_failure():
    for text in ("memory alarm cleared on mq-east-2, 1.1 GiB used", "errors dropping, search-api 5xx back under 1%",
                 "no LeaveGroup since 08:49, lag down to 96k and falling"):
        assert pick(score(text, kind="message")) == "verification", text
    assert pick(score("search-api 5xx errors spiking to 40%", kind="message")) == "symptom"
    assert pick(score("the alarm fired again on mq-east-2", kind="message")) == "symptom"


def test_an_instruction_in_a_later_sentence_of_an_answer_is_the_fix():
    """A maintainer's answer explains, then prescribes: the prescription with its setting makes the line a fix."""
    answer = ("[2024-10-07T14:22:19Z] maint: Pooled connections stay attached to the old primary, so every write "
              "fails with ReadOnlyError forever. Use the Sentinel scheme instead: `result_backend: "
              "sentinel://sentinel-0:26379/2` with `master_name: cache-main`.")
    assert pick(score(answer, kind="comment")) == "action"
    assert pick(score("The use of the Sentinel scheme is documented.", kind="comment")) != "action"


def test_a_note_that_calls_a_finding_expected_sets_it_aside():
    assert pick(score("# the 3 Insufficient cpu are the old node group being drained, expected", kind="note")) \
        not in ("action", "cause")
    assert pick(score("got HTTP 500, expected 200 from /healthz", kind="message")) == "symptom"


def test_a_change_told_in_parentheses_is_a_fix_when_it_says_where_not_when():
    fixed = "# the volumeClaimTemplate now names storageClassName gp3-wffc (changed in the chart, PR #77)"
    assert pick(score(fixed, kind="note")) == "action"
    assert pick(score("# the crashing pods are on the new arm node group (added yesterday by the cost team)",
                      kind="note")) != "action"


@pytest.mark.parametrize("text, role", [
    # the incident process, not the system: no failure, no fix
    ("reminder: retro for last week's search outage is thursday 14:00, doc is in the incidents folder", "none"),
    ("the search outage took the cluster down for an hour", "symptom"),
    # a decision against a change claims nothing
    ("We decided not to raise max.poll.interval.ms to 30 minutes, it would have hidden the problem.", "none"),
    ("Raising the breaker limit from 95% to 98% was proposed and rejected: it trades a breaker for an OOM.", "none"),
    ("We raised max.poll.interval.ms to 30 minutes.", "action"),
    # none of the failure over a while verifies
    ("uncordoned pool-c and moved inventory-sync back onto it. 0 handshake timeouts in 10 min", "verification"),
    ("inventory-sync: 37 failed runs in 30m", "symptom"),
    # a change made to last, and a subnet association
    ("made the redis fix stick: vm.overcommit_memory = 1 in /etc/sysctl.d/60-redis.conf via the ansible role",
     "action"),
    ("terraform PR infra-live#3308 is up: associated the pool-c subnets with rtb-0c4e19a7 and deletes the stray "
     "route table", "action"),
])
def test_process_talk_decisions_a_quiet_window_and_changes_made_to_last(text, role):
    assert pick(score(text)) == role


def test_what_terraform_printed_it_created_is_the_change_and_a_plan_is_not():
    assert pick(score("aws_eks_node_group.workers_v3_euw1a: Creation complete after 2m47s [id=prod:workers-v3]",
                      kind="output")) == "action"
    assert pick(score("aws_eks_node_group.workers_v3_euw1a: Still creating... [1m0s elapsed]", kind="output")) == "none"


def test_a_log_line_quoted_in_a_write_up_advises_and_fixes_nothing():
    line = ("2025-03-06 06:52:13.907 WARN  [kafka-coordinator-heartbeat-thread] o.a.k.c.c.i.ConsumerCoordinator : "
            "consumer poll timeout has expired. You can address this either by increasing max.poll.interval.ms or "
            "by reducing the maximum size of batches returned in poll() with max.poll.records.")
    s = score(line, kind="paragraph")
    assert pick(s) == "symptom" and s.action == 0
    # a timeline's entry with a date and no level is no log line: it still tells a change
    assert pick(score("2024-06-03 14:02 UTC  We deployed v2.3 of checkout with max.poll.records=50",
                      kind="paragraph")) == "action"


def test_an_info_line_names_a_failure_at_half_weight():
    info = score("2024-10-21 12:45:00.000  INFO [scheduling-1] c.f.LagReporter - consumer lag group=tp total=301225",
                 kind="log", level="INFO")
    warn = score("2024-10-21 12:45:00.000  WARN [scheduling-1] c.f.LagReporter - consumer lag group=tp total=301225",
                 kind="log", level="WARN")
    assert pick(info) == "none" and pick(warn) == "symptom"


def test_a_condition_after_the_words_is_no_failed_attempt():
    assert not score("no persistence there, but a replica sync forks too, so same problem if we ever add one").ineffective
    assert score("restarted it, same problem after ten minutes").ineffective


@pytest.mark.parametrize("text, role", [
    # an instruction offered in an answer is the fix; the reporter's thanks for it verifies
    ("You can turn it off without a new build: run skiff with GODEBUG=tlsmlkem=0 in its environment", "action"),
    ("GODEBUG=tlsmlkem=0 works, thank you. Any chance of a config flag?", "verification"),
    ("You can see it in the logs of every pod", "none"),
    ("Run 42 failed with the same error", "symptom"),
])
def test_an_offered_instruction_and_the_thanks_that_confirm_it(text, role):
    assert pick(score(text, kind="comment")) == role


def test_a_note_between_an_editor_and_the_reload_says_what_was_edited():
    def session(editor: str):
        records = (rec("root@lb-1:~# # paged: connect() failed (99: Cannot assign requested address)", 1, "note"),
                   rec(f"root@lb-1:~# {editor} /etc/nginx/conf.d/upstreams.conf", 2, "command"),
                   rec("root@lb-1:~# cat /etc/nginx/conf.d/upstreams.conf", 3, "command"),
                   rec("    keepalive 64;", 4, "output"),
                   rec("root@lb-1:~# # keepalive 64 back in app_pool, plus HTTP/1.1 in proxy-common", 5, "note"),
                   rec("root@lb-1:~# nginx -t && systemctl reload nginx", 6, "command"))
        return {r.line.record.line_start: r.role for r in assign([x for r in records for x in record_lines(r)])}
    assert session("vim")[5] == "action" and session("sudo vi")[5] == "action"
    assert session("less")[5] == "none"  # a file read, not edited: the note says nothing was changed


@pytest.mark.parametrize("text, role", [
    ("Uploads to MinIO fail with XAmzContentSHA256Mismatch after upgrading to 0.19.0", "symptom"),  # what set it off
    ("Fixed after upgrading the driver to 42.7.3", "action"),
    ("Uploads work again after upgrading to 0.19.2", "action"),
])
def test_after_upgrading_is_the_fix_unless_the_line_reports_the_failure(text, role):
    assert pick(score(text, kind="comment")) == role


@pytest.mark.parametrize("text, kind, role", [
    ("notes: not pinning to the graviton pool as a workaround, that pool is 2 nodes", "note", "none"),  # decided
    ("not widening ip_local_port_range or touching tw_reuse tonight, that only moves the wall.", "note", "none"),
    ("exports flowing again, 0 failed jobs since 02:40", "note", "verification"),
    # options laid out are no fix yet
    ("two choices: roll the ingress chart back to v3.7.2, or override the annotation on the uploads ingress only",
     "message", "none"),
    ("rolled the ingress chart back to v3.7.2", "message", "action"),
])
def test_an_operator_turning_a_change_down_and_work_flowing_again(text, kind, role):
    assert pick(score(text, kind=kind)) == role


def test_the_setting_under_a_comment_that_tells_the_change_is_the_change():
    def printed(comment: str):
        records = (rec("ops@jump-2:~$ vi values-prod.yaml", 1, "command"),
                   rec("ops@jump-2:~$ cat values-prod.yaml", 2, "command"),
                   rec("replicas: 120", 3, "output"),
                   rec(comment, 4, "note"),
                   rec('dnsConfig: {options: [{name: ndots, value: "2"}]}', 5, "output"),
                   rec("ops@jump-2:~$ helm -n fulfil upgrade tracking-poller brindle/tracking-poller -f values-prod.yaml",
                       6, "command"))
        return {r.line.record.line_start: r.role for r in assign([x for r in records for x in record_lines(r)])}
    told = printed("# carrier hostnames have 2-3 dots; with ndots 2 they resolve as absolute names first (PLAT-1744)")
    assert told[4] == "action" and told[5] == "action" and told[3] == "none"
    assert printed("# poller settings")[5] == "none"  # a comment that tells no change


def test_a_change_that_made_it_worse_is_no_fix():
    scale = "bumped renderer from 6 to 12 replicas so the backlog drains faster"
    records = [rec(scale, 1, "reply"),
               rec("that made it worse: duplicates went from ~40/15m to ~95/15m. scaling back to 6", 2, "reply"),
               rec("set VisibilityTimeout=900 on the render queue", 3, "reply")]
    lines = [line for r in records for line in record_lines(r)]
    roles = {line.text: r.role for line, r in zip(lines, assign(lines))}
    assert roles[scale] == "none" and roles[records[-1].text] == "action"
    assert pick(score("Makes it worse for 10 minutes: the tabs ask for chunks the sync just deleted.")) != "action"


def test_a_stopgap_that_only_delayed_it_is_no_fix():
    s = score("Raised -XX:MaxMetaspaceSize from 512m to 1g and restarted. That only delayed it: it hit the new limit.",
              kind="comment")
    assert s.ineffective and pick(s) != "action"


def test_options_laid_out_under_a_label_are_choices_and_the_one_taken_is_the_fix():
    body = ("Options:\n1. switch PgBouncer to `pool_mode = session`\n2. PgBouncer >= 1.21 with "
            "`max_prepared_statements` set\n3. set `prepare_threshold` to `null` in `quayside.yaml`")
    records = [rec("prepared statement \"_pg3_0\" already exists", 1, "comment"), rec(body, 2, "comment"),
               rec("Went with option 3. Our Helm values now render this into the ConfigMap:", 7, "comment")]
    lines = [line for r in records for line in record_lines(r)]
    roles = {line.text: r.role for line, r in zip(lines, assign(lines))}
    assert [roles[t] for t in body.splitlines()[1:]] == ["none"] * 3
    assert roles[records[-1].text] == "action"


def test_a_change_proposed_and_then_confirmed_to_work_is_the_fix():
    """A maintainer's "Use `--on-conflict=skip` …" and the reporter's "Restore with skip went through": the change
    was made, though nobody wrote that they made it; a log line quoted in the thread never becomes the fix."""
    records = [rec("Error: FileExistsError: [Errno 17] File exists: '/srv/restore/projects/clients/2023'", 1, "comment"),
               rec("> Dec  4 02:00:07 fs01 stashbox[2210]: restore target=/srv/restore/projects", 2, "comment"),
               rec("Use `--on-conflict=skip` to get the old behaviour back, or `--on-conflict=overwrite` if the "
                   "snapshot should win.", 3, "comment"),
               rec("Restore with skip went through: 18,204 files checked, 2,911 restored, the rest skipped as already "
                   "present. Closing, thanks!", 4, "comment")]
    lines = [line for r in records for line in record_lines(r)]
    before = [pick(line_scores(line)) for line in lines]
    roles = {line.text: r.role for line, r in zip(lines, assign(lines))}
    assert before[2] == "none" and roles[records[2].text] == "action"
    assert roles[records[1].text] != "action" and roles[records[3].text] == "verification"


def test_an_aside_rules_out_what_it_goes_on_to_say_not_the_failure_before_it():
    records = [rec("2. The nightly cron job fails straight away since the upgrade.", 1, "comment"),
               rec("FWIW we saw the cron crash as well. Unrelated, but 2.4.0 also prints a DeprecationWarning on every "
                   "run; it's harmless.", 2, "comment")]
    lines = [line for r in records for line in record_lines(r)]
    roles = {line.text: r.role for line, r in zip(lines, assign(lines))}
    assert roles[records[0].text] == "symptom"


def test_an_xml_element_a_change_introduces_is_the_fix_as_written():
    """"… pdoc.xml now reads:" over the element itself: configuration written as XML is the fix (bench/incidents18)."""
    records = [rec("java.sql.SQLRecoverableException: IO Error: Connection reset", 1, "comment"),
               rec("CHG0031877 implemented at 12:00 on both nodes, Resource jdbc/pdocDS in pdoc.xml now reads:", 2,
                   "comment"),
               rec('<Resource name="jdbc/pdocDS" auth="Container" testOnBorrow="true" validationQuery="SELECT 1 FROM '
                   'DUAL"/>', 3, "comment")]
    lines = [line for r in records for line in record_lines(r)]
    roles = {line.text: r.role for line, r in zip(lines, assign(lines))}
    assert roles[records[2].text] == "action"


def test_a_chat_post_of_a_change_before_anyone_posted_the_failure_is_no_fix():
    """A deploy bot's "Deployed warden 3.2.0" at 08:41 and the login alert at 09:06 (bench/incidents21): what was
    posted before the failure is what triggered it; the buffer raised after it is the fix."""
    records = (rec("[2025-03-04T08:41:02Z] Kestrel CI: Deployed warden 3.2.0 to prod", 1, "message",
                   time="2025-03-04T08:41:02Z", author="Kestrel CI"),
               rec("[2025-03-04T09:06:33Z] Alertmanager: login 502 errors above 2%, upstream sent too big header", 2,
                   "message", time="2025-03-04T09:06:33Z", author="Alertmanager"),
               rec("[2025-03-04T13:48:20Z] rook: fixed: raised proxy_buffer_size to 16k on the login location", 3,
                   "message", time="2025-03-04T13:48:20Z", author="rook"))
    roles = [r.role for r in assign([line for r in records for line in record_lines(r)])]
    assert roles == ["none", "symptom", "action"]


def test_a_block_a_read_opens_is_what_was_seen_and_a_change_not_made_is_no_action():
    """A finding over what a read printed ("It has the driver module installed, but …:" over `:read-children-names`
    and its result) shows evidence; the change under "Registered the driver … and re-ran the deploy script:" is the
    fix. "the RulesDS datasource cannot be added: … jboss.jdbc-driver.postgresql" reports a failure, whatever it
    names; a read is no change proposed, so the closing line confirms none (bench/incidents22)."""
    records = [rec("Reopening, but for something else: the 7.4.0 deploy script failed on app-03 at 14:02. The error "
                   "is not Metaspace, the RulesDS datasource cannot be added: \"WFLYCTL0412: Required services that "
                   "are not installed: jboss.jdbc-driver.postgresql\".", 1, "comment"),
               rec("app-03 is the node that was rebuilt by hand in January after the disk failure. It has the driver "
                   "module installed, but it is registered under a different name:", 3, "comment"),
               rec("    [standalone@app-03:9990 /] /subsystem=datasources:read-children-names(child-type=jdbc-driver)",
                   4, "comment"),
               rec('        "result" => ["h2", "pgsql"]', 5, "comment"),
               rec("Registered the driver on app-03 under the expected name and re-ran the deploy script:", 7,
                   "comment"),
               rec("    /subsystem=datasources/jdbc-driver=postgresql:add(driver-name=postgresql, "
                   "driver-module-name=org.postgresql.jdbc)", 8, "comment"),
               rec("Closing. Follow-up: a drift check job comparing the datasources subsystem across nodes.", 10,
                   "comment")]
    lines = [line for r in records for line in record_lines(r)]
    roles = [r.role for r in assign(lines)]
    assert roles[0] != "action" and roles[2] == roles[3] == "none"  # (nor a change the last line confirms)
    assert roles[4] == roles[5] == "action"


def test_a_suspect_named_before_a_colon_is_ruled_out():
    """"It's not haproxy: the frontend has no body size limit …" rules haproxy out; it is never the cause. "It's not
    working: …" reports a failure."""
    assert score("It's not haproxy: the frontend has no body size limit and the log shows the backend closing "
                 "the connection").ruled_out
    assert not score("It's not working: the pods restart every minute").ruled_out


def test_a_cause_label_that_opens_a_line_makes_it_a_cause_and_a_fix_label_after_it_keeps_the_fix():
    """"Found the cause: the image ships its own truststore …, built from the CA bundle …" and "Cause: Platform
    rebuilt the Tomcat base image …" tell what led to the failure (bench/incidents22)."""
    assert pick(score("Found the cause: the image ships its own truststore at /opt/app/certs/trust.p12, built from the "
                      "CA bundle at image build time, and JAVA_TOOL_OPTIONS points javax.net.ssl.trustStore at it.",
                      "comment")) == "cause"
    assert pick(score("Cause: Platform rebuilt the Tomcat base image on Saturday and the JDK went from 11.0.10 to "
                      "11.0.27.", "comment")) == "cause"
    assert pick(score("Cause: the disk was full.  Fix: rotated the logs and set max_size=2G, resolved.",
                      "comment")) == "action"


def test_a_notifications_history_lines_claim_nothing_and_a_list_of_changes_is_the_fix():
    """Redmine's e-mail: "Issue #7731 has been updated by …", "* Status changed from In Progress to Resolved" say
    nothing; "Two changes, both live since yesterday afternoon:" over "1. …" and "2. …:" (its setting under it) is
    the fix, item by item (bench/incidents23)."""
    assert pick(score("Issue #7731 has been updated by Piotr Sadowski.", "comment")) == "none"
    assert pick(score("* Status changed from In Progress to Resolved", "comment")) == "none"
    records = [rec("Caused by: io.lettuce.core.RedisCommandTimeoutException: Command timed out after 1 second(s)", 1,
                   "log", level="ERROR"),
               rec("Two changes, both live since yesterday afternoon:", 3, "comment", author="piotr"),
               rec("1. routeplan-rollover (rollover.py) drops the old index with UNLINK instead of DEL.", 5, "comment",
                   author="piotr"),
               rec("2. For anything else that deletes big keys, on route-redis (values.yaml):", 7, "comment",
                   author="piotr"),
               rec("    lazyfree-lazy-user-del yes", 8, "comment", author="piotr")]
    lines = [line for r in records for line in record_lines(r)]
    assert [r.role for r in assign(lines)][2:] == ["action", "action", "action"]


def test_githubs_timeline_events_claim_nothing():
    for text in ("tomasz-w added the regression label on Feb 14", "tomasz-w self-assigned this on Feb 11",
                 "tomasz-w closed this as completed in #1192 on Feb 14", "priya-nand reopened this on Feb 14"):
        assert pick(score(text, "comment")) == "none", text


def test_a_line_a_fix_label_opens_gives_the_blocks_under_it_and_its_and_the_fix():
    """"Fix going into 1.48.3: the controller streams the part to a temp file instead of holding it," over the code,
    then "and in application.yml:" over the setting (bench/incidents23's mailing list)."""
    records = [rec("io.netty.util.internal.OutOfDirectMemoryError: failed to allocate 4194304 byte(s)", 1, "log",
                   level="ERROR"),
               rec("Fix going into 1.48.3: the controller streams the part to a temp file instead of holding it,", 3,
                   "comment", author="piotr"),
               rec("    Publisher<HttpResponse<PodReceipt>> upload(@Part(\"photo\") StreamingFileUpload photo)", 5,
                   "comment", author="piotr"),
               rec("and in application.yml:", 7, "comment", author="piotr"),
               rec("    micronaut.server.multipart.disk: true", 9, "comment", author="piotr")]
    lines = [line for r in records for line in record_lines(r)]
    roles = [r.role for r in assign(lines)]
    assert roles[2] == roles[4] == "action"


def test_a_new_problem_on_the_same_box_turns_its_ticket_and_the_same_problem_again_does_not():
    from poimen.incidents.cues import OTHER_PROBLEM

    assert OTHER_PROBLEM.search("New problem on the same box, logging it here since it started with the catch-up")
    assert not OTHER_PROBLEM.search("Another failure with the same error this morning")


def test_an_attempt_that_did_not_help_takes_back_an_action_of_its_own_part_only():
    """A postmortem's lessons, "We spent 14 minutes rolling back, and it did not help", and its timeline's "15:30
    checkout-api rolled forward again, no effect" are about their own attempts: the fix its Resolution tells, for
    the same service, stays the fix (bench/incidents24)."""
    records = [rec("FATAL:  sorry, too many clients already", 1, "paragraph", headings=("Postmortem", "Impact")),
               rec("As a second guard, PR #8841 sets `DB_POOL_MAX_CONNS=8` for checkout-api.", 3, "paragraph",
                   headings=("Postmortem", "Resolution")),
               rec("- We spent 14 minutes rolling back checkout-api, and it did not help.", 5, "paragraph",
                   headings=("Postmortem", "What went wrong"))]
    lines = [line for r in records for line in record_lines(r)]
    assert [r.role for r in assign(lines)][1] == "action"
    records = [records[0], replace(records[1], headings=()), replace(records[2], headings=())]
    lines = [line for r in records for line in record_lines(r)]
    assert [r.role for r in assign(lines)][1] == "none"  # in a stream with no parts, the nearest action it names


def test_a_note_on_the_clock_a_part_of_changes_turned_down_and_things_picked_by_their_state():
    """bench/incidents33's review: "All times in CEST …; UTC given alongside because …" was its cause, "Lowering
    `min.insync.replicas` to 1" under "Decided against" an action, and "raised the replication factor of the 14
    topics that were still at 2" a failed attempt that took the disk swap before it off the card."""
    assert score("All times in CEST (UTC+2); UTC given alongside because the broker and app logs are in UTC.",
                 "paragraph") == score("")
    assert pick(score("TIME WAIT sockets piled up because the pool reconnects per request", "paragraph")) == "cause"
    head = ("INC-7031 — Shipment status updates rejected by Kafka", "Decided against")
    turned_down = "- **Lowering `min.insync.replicas` to 1** on the affected topics."
    assert pick(score(turned_down, "paragraph", headings=head)) != "action"
    assert pick(score(turned_down, "paragraph", headings=(head[0], "Resolution"))) == "action"
    raised = "we then raised the replication factor of the 14 topics that were still at 2 to three replicas"
    assert not score(raised, "paragraph").ineffective and score("restarted it, errors still at 30%").ineffective


@pytest.mark.parametrize("output", ["Error: unknown flag: --resue-values", "-bash: kubctl: command not found",
                                    "error: unknown command \"lgos\" for \"kubectl\"\n\nDid you mean this?\n\tlogs"])
def test_what_a_typo_prints_is_no_failure(output):
    """bench/incidents38's sessions retry their typos: "Error: unknown flag: --resue-values" under a helm upgrade
    is the operator's slip, not the system failing (it had cut the session into another incident)."""
    assert score(output, "output") == score("")
    assert pick(score("Error: UPGRADE FAILED: timed out waiting for the condition", "output")) == "symptom"


@pytest.mark.parametrize("command, changes", [
    ("tvesely@edge-r2# set protocols bgp neighbor 198.51.100.1 address-family ipv4-unicast maximum-prefix 5000", True),
    ("orders=*# ALTER SEQUENCE order_events_id_seq MINVALUE -2147483648 RESTART WITH -2147483648;", True),
    ("deepa@media-03:~$ sudo tune2fs -O large_dir /dev/nvme1n1p1", True),
    ("deepa@media-03:~$ sudo tune2fs -l /dev/nvme1n1p1", False),
    ("tvesely@lb-b:~$ sudo nft insert rule inet filter input ip protocol vrrp accept", True),
    ("tvesely@lb-b:~$ sudo nft list ruleset", False),
    ("tvesely@edge-r2:~$ show configuration commands | match 'neighbor 198.51.100.1'", False),
])
def test_commands_that_change_a_router_a_sequence_a_filesystem_or_a_firewall_are_actions(command, changes):
    """bench/incidents38's fixes were typed at a VyOS configuration prompt, psql and a shell: each changes state (the
    listing beside it does not)."""
    assert (pick(score(command, "command")) == "action") == changes


def test_a_routers_failure_mnemonic_is_a_symptom_and_a_state_notice_is_not():
    """FRR's "%MAXPFXEXCEED" and IOS's "%SYS-2-MALLOCFAIL" name a failure in their mnemonic; "%LINEPROTO-5-UPDOWN"
    tells a state change (bench/incidents38: the prefix-limit teardown had no symptom on its card)."""
    exceeded = ("Jun 02 06:12:04 edge-r2 bgpd[1187]: [R2WQ8-1DN5E] %MAXPFXEXCEED: No. of IPv4 Unicast prefix "
                "received from 198.51.100.1 reaches 1001, max 1000")
    assert pick(score(exceeded, "log")) == "symptom"
    assert pick(score("Jun 02 06:12:04 core-1 %SYS-2-MALLOCFAIL: Memory allocation of 65536 bytes", "log")) == \
        "symptom"
    assert pick(score("Jun 02 06:12:04 core-1 %LINEPROTO-5-UPDOWN: Line protocol on Gi0/1, changed state to up",
                      "log")) == "none"


def test_unchanged_said_of_an_outcome_is_an_attempt_that_failed_and_of_what_a_change_skips_is_not():
    """bench/incidents43: "bookings-sweeper 3.4.0 deployed: it now … skips unchanged items" is the fix, not an attempt
    that changed nothing (it had taken the incident's every action off its card)."""
    assert score("restarted the pool, p99 unchanged after the restart", "paragraph").ineffective
    assert score("latency unchanged.", "paragraph").ineffective
    fix = "bookings-sweeper 3.4.0 deployed: it now skips unchanged items, tonight's run should be ~20k writes"
    assert not score(fix, "paragraph").ineffective and pick(score(fix, "paragraph")) == "action"
