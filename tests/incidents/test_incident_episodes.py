"""Episodes: threads, sections (with part-headings folded), time gaps and topic shifts in a flow."""

from __future__ import annotations

from incident_fixtures import PAGERDUTY, SHELL, SLACK, rec

from poimen.incidents.episodes import episodes, section_path
from poimen.incidents.times import seconds


def test_a_thread_is_one_episode_and_a_lone_message_is_flow():
    eps = episodes(SLACK, "slack")
    keys = [ep.key for ep in eps]
    assert keys == ["thread:1709388311.000200", "flow:0", "thread:1709402000.000100"]
    assert len(eps[0].records) == 8  # the fix, 1.5 hours after the alert, is in the alert's episode


def test_part_headings_fold_into_their_incident_section():
    assert section_path(("INC-4101: db", "Timeline")) == "INC-4101: db"
    assert section_path(("Postmortems", "2024-03 uploads", "Root cause")) == "Postmortems / 2024-03 uploads"
    assert [ep.key for ep in episodes(PAGERDUTY, "pd.md")] == ["section:INC-4101: payments-db connection exhaustion"]


def test_two_incident_sections_of_one_file_stay_apart():
    records = (rec("checkout-api 502s", 3, headings=("Postmortems", "INC-1 checkout", "Summary")),
               rec("Raised the limit", 5, headings=("Postmortems", "INC-1 checkout", "Resolution")),
               rec("search lag alert", 9, headings=("Postmortems", "INC-2 search", "Summary")))
    assert [len(ep.records) for ep in episodes(records)] == [2, 1]


def test_a_flow_splits_on_a_time_gap():
    logs = (rec("2024-04-09 03:14:02 ERROR export failed", 1, "log"),
            rec("2024-04-09 03:14:09 ERROR export failed again", 2, "log"),
            rec("2024-04-09 05:40:00 ERROR export failed", 3, "log"))
    assert [len(ep.records) for ep in episodes(logs)] == [2, 1]


def test_a_flow_splits_on_a_topic_shift_but_not_without_names():
    flow = (rec("checkout-api 502s on ip-10-0-1-2", 1, "message"),
            rec("looking", 2, "message"),
            rec("checkout-api back after restart", 3, "message"),
            rec("search-indexer lag on es-data-3", 4, "message"),
            rec("search-indexer consumer stuck", 5, "message"))
    assert [len(ep.records) for ep in episodes(flow)] == [3, 2]


def test_a_shell_session_without_times_is_cut_by_structure_only():
    assert len(episodes(SHELL, "shell")) == 1


def test_time_formats():
    assert seconds("1709388311.000200") == 1709388311.0002
    assert seconds("2024-03-02T14:05:11Z") == seconds("2024-03-02 15:05:11+01:00")
    assert seconds("2024-03-02 14:05:11,123") - seconds("2024-03-02 14:04:11") == 60
    assert seconds("[02/Mar/2024:14:05:11 +0000]") == seconds("2024-03-02T14:05:11Z")
    assert seconds("Mar  2 14:05:11") - seconds("Mar  2 14:00:11") == 300
    assert seconds("14:05") == 14 * 3600 + 5 * 60
    assert seconds("no time here") is None and seconds("2024-13-40 10:00") is None
