"""What a log line looks like: a line that begins with an id, a timestamp or a level is a log line, whatever its
first token (loghub's HPC lines begin with a numeric id, BGL's with "-"). The log reader and the relevance
scorer's unit splitter read lines by the same rule, so it lives here, below both."""

from __future__ import annotations

import re

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
# (a date with dots has two-digit parts, "12.03.2025": "2025.3.3 deployed on 14/03" begins with a version; a US date
# has a time after it, "[3/11/25, 9:14:02:113 UTC]" as WebSphere and Open Liberty write it)
TIMESTAMP = (rf"(?:\[?\d{{8}}[-T_ ]?\d{{2}}:?\d{{2}}:?\d{{2}}|\[?(?:\d{{2,4}}[-/]\d{{1,2}}[-/]\d{{1,4}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}},?(?= \d)|\d{{2,4}}\.\d{{2}}\.\d{{2,4}})(?:[T _-]+\d{{1,2}}[:.]\d{{2}}(?:[:.]\d{{2}})?(?:[.,]\d+)?)?"
             rf"|\[?(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? )?{_MONTH} +\d{{1,2}},? (?:\d{{4}} )?\d{{1,2}}:\d{{2}}(?::\d{{2}})?"
             rf"|\[?\d{{1,2}}-{_MONTH}-\d{{4}}[ T:]\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?:[.,]\d+)?"  # Tomcat's "20-May-2024 12:31:02.771"
             rf"|\[?\d{{1,2}}:\d{{2}}:\d{{2}}(?:[.,]\d+)?)")
LEVELS = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|SEVERE|FATAL|CRITICAL|CRIT|ALERT|EMERG|PANIC)"
# Timestamp, level or a numeric id (5+ digits: an epoch, a sequence number), after at most one leading token. The
# leading token is a mark, an id or a file name ("-", "R34", "nova-api.log.1"), never a word of prose: "On
# 2024-04-02 at 13:42 UTC every edge proxy …" is a sentence, not a log line.
# ... or a JSON log event that opens with its time, as ECS and Logstash encoders write one a line
# ('{"@timestamp":"2025-05-12T05:58:41.203Z","log.level":"ERROR",…'; bench/incidents27)
_JSON_TIME = re.compile(rf'^\{{\s*"@?(?:timestamp|time|ts)"\s*:\s*"({TIMESTAMP}[^"]*)"')
# ... or a library's own line about itself, its name and level run together: "log4j:WARN No such property …"
# ... or any of these after the pod and the container stern names each line by ("fx-edge-gateway-6c9d7b5f4-2xkqp gateway
# {"@timestamp":…}", "order-events-writer-7d5f8c9b6-xq2lm writer 2025-04-03T02:11:47.390Z ERROR …"; bench/incidents36)
STERN = r"[a-z0-9][a-z0-9.-]*-(?:[a-z0-9]{5}|\d{1,3}) [a-z0-9][a-z0-9-]{0,62} "
# ... or the source a tool that merges several logs names each line by: `kubectl logs --prefix`'s "[pod/api-7c9f-t4mzx/
# api] ", `docker compose logs`' "scanhub-1         | ", pm2's "2|storefront-api  | ", foreman's "web.1  | "
# (bench/incidents40); the lines of a trace keep the prefix too, so the log reader joins them by it (``MUX``)
MUX = r"(?:\[pod/[\w.-]+/[\w.-]+\] |(?:\d+\|)?[A-Za-z][\w.-]*\s*\| )"  # (a name: not a table's "2025-07-14 | ")
# ... or Ruby's Logger, its level's letter first: "I, [2025-05-14T10:22:30.004112 #12]  INFO -- : …"
_RUBY = r"[DIWEFA], \[\d{4}-\d{2}-\d{2}T"
# ... or GlassFish's and Payara's Uniform Log Formatter: "[#|2024-10-08T09:16:10.404+0000|SEVERE|Payara Micro 6…|logger|
# _ThreadID=97;…|message|#]" (bench/incidents47)
_ULF = r"\[#\|"
# ... or WebLogic's server log: "####<May 13, 2025 7:39:21,904 AM UTC> <Error> <WebLogicServer> <wlpa-01> …", its
# level the second field, in title case (bench/incidents36)
_WLS = re.compile(r"^####<(?P<time>[^<>]{8,40})> <(?P<level>[A-Z][a-z]+)>")
_WLS_LEVELS = {"Trace": "TRACE", "Debug": "DEBUG", "Info": "INFO", "Notice": "NOTICE", "Warning": "WARN",
               "Error": "ERROR", "Critical": "CRITICAL", "Alert": "ALERT", "Emergency": "EMERG"}
LOG_START = re.compile(rf"^{_RUBY}|^(?:{_ULF}|####<){TIMESTAMP}|^(?:(?![A-Za-z]+[,:;]?\s)\S+\s+)??(?:{TIMESTAMP}|\[?{LEVELS}\b|\d{{5,}}\s)|{_JSON_TIME.pattern}"
                       rf"|^[a-z][\w.-]{{1,20}}:{LEVELS}\s|^(?:{STERN}|{MUX}\s*)(?:{TIMESTAMP}|{LEVELS}\b|{_JSON_TIME.pattern[1:]})")
_MUX = re.compile(MUX)
_LEVEL = re.compile(rf"(?<![\w.-]){LEVELS}(?![\w-])")
_STERN = re.compile(STERN)
def source_prefix(line: str) -> re.Match | None:
    """The source a merged log names ``line`` by (``MUX``), or None."""
    return _MUX.match(line)


def is_log_line(line: str) -> bool:
    return bool(LOG_START.match(line))


def level_of(line: str) -> str:
    """The first level word among a log line's first tokens (its level field), '' when none."""
    if (wls := _WLS.match(line)) and wls.group("level") in _WLS_LEVELS:
        return _WLS_LEVELS[wls.group("level")]
    m = _LEVEL.search(line[:200])
    return ("WARN" if m.group(0) == "WARNING" else m.group(0)) if m else ""


def time_of(line: str) -> str:
    line = line[m.end():].lstrip() if (m := _STERN.match(line) or _MUX.match(line)) and LOG_START.match(line) else line
    if m := _JSON_TIME.match(line) or _WLS.match(line):
        return m.group(1)
    line = line[3:] if line.startswith("[#|") else line
    m = re.match(rf"^(?:\S+\s+)??({TIMESTAMP})", line)
    return m.group(1).lstrip("[") if m else ""


# What a log line says after its header: a JSON line's or logfmt's message field, WebLogic's last field, ULF's text
# field, klog's text after "file.go:149]", Karaf's last column, else the text after the level in its first 100
# characters, without the thread, logger and request fields that follow it (Tomcat's "[http-nio-8080-exec-7]
# org.apache.catalina.core.StandardWrapperValve.invoke ", Jenkins' "hudson.security.csrf.CrumbFilter#doFilter: ", JUL's
# "com.fenwright.settle.ExportJob runBatch - ", logback's "req=9f3c6b20 "). A dotted word is a logger only with a
# capital in it, so a host after JUL's method stays ("sftp.orsaye.example offered host key …").
_FENCE = re.compile(r"^`+\s*")
_JSON_MSG = re.compile(r'"(?:msg|message)"\s*:\s*"((?:[^"\\]|\\.)+)')
_LOGFMT_MSG = re.compile(r'(?:^|\s)msg=(?:"((?:[^"\\]|\\.)+)|(\S+))')
_LOGFMT_KEY = re.compile(r"(?:^|\s)(?:level|lvl|ts|time|t)=\S")
_KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w./-]+:\d+\]\s*")
_HEAD_LEVEL = re.compile(rf"(?<![\w.=\"-]){LEVELS}(?![\w=\"-])(?::\d+|/[\w-]+)?\]?")
_AFTER_LEVEL = re.compile(r"^(?:\[\[\s*|\[[^\]]*\]\s*|\]\s*|\([^)]*\)\s*|[\w./-]+\.\w+:\d+\]?\s*|"
                          r"(?:[\w$]+\.)*[\w$]+#\w+:\s+|"  # Jenkins' Class#method
                          r"(?:[a-z][\w$]*\.){2,}(?=[\w$.]*[A-Z])[\w$.\[\]/]*\s+(?:[a-z]\w*\s+-\s+)?|"  # JUL's
                          r"(?:[a-z][\w$]*\.)+[\w$.\[\]/]*\s+[:-]\s+|-+\s*:?\s*|[:|>]\s*|\d+\s+---\s+|"
                          r"[a-z]\w{0,15}=[^\s\"'\[]+\s+)+")  # a logger's context fields, put first
# Karaf's and Pax Logging's columns: "2025-05-13T09:37:02,447 | ERROR | thread | logger | bundle | message"
_COLUMNS = re.compile(rf"^{TIMESTAMP}\S*\s*\|\s*{LEVELS}\s*\|")


def message_of(line: str) -> str:
    """The message of a log ``line`` (see above); ``line`` itself when it is no log line or its header is all."""
    text = _FENCE.sub("", line)
    if text.startswith("{") and (m := _JSON_MSG.search(text)):
        return m.group(1)
    if (m := _LOGFMT_MSG.search(text)) and _LOGFMT_KEY.search(text[:m.start() + 1]):
        return m.group(1) or m.group(2)
    if (m := _WLS.match(text)) and "> <" in text:
        return text.rsplit("> <", 1)[1].removesuffix(">").strip() or line
    if text.startswith("[#|") and text.count("|") >= 6:  # GlassFish/Payara's ULF: time|level|product|logger|ids|text
        return text.split("|", 6)[6].removesuffix("|#]").strip() or line
    if m := _KLOG.match(text):
        return text[m.end():] or line
    if _COLUMNS.match(text) and text.count("|") >= 5:
        return text.split("|", 5)[5].strip() or line
    if not is_log_line(text) and not is_log_line(text.split("] ", 1)[-1]):
        return line
    level = _HEAD_LEVEL.search(text[:100])
    if level is None:
        return line
    rest = _AFTER_LEVEL.sub("", text[level.end():].lstrip(" \t:"))
    return rest if len(re.findall(r"[A-Za-z]", rest)) >= 3 else line
