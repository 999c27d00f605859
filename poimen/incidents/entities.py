"""The entities a text names, typed and normalised, each with a specificity: what episodes link on.

Two episodes belong to one incident when they name the same specific things. So an entity keeps what stays the
same between the alert and the fix written hours later, and drops what differs between occurrences:

- ``service``: a deployment, service or pod name, hyphenated (``checkout-api``, ``deploy/checkout-api``); not a
  compound that opens with an English prefix (``per-component``, ``non-replication``) nor a UUID or digest. A
  Kubernetes pod's hash suffixes are stripped (``checkout-api-7d9f8b6c4-x2k9p`` and a DaemonSet's
  ``fluentd-x2k9p`` name their workload), and so is a StatefulSet ordinal (``kafka-2`` -> ``kafka``): the
  broker that failed is one replica of the service, and the next occurrence lands on another one.
- ``host``: an FQDN with a known top-level or cluster suffix, an IPv4 address, an EC2-style ``ip-10-0-1-2``.
- ``ticket``: ``INC-4101``, ``OPS-12``; GitHub's ``#1234``, ``PR 88``, ``PR #88``, ``pull/88`` and GitLab's
  ``!88`` all become ``#N`` (issues and pull requests share one number space).
- ``config``: a key that is set: ``snake_case`` (``client_max_body_size``), ``UPPER_SNAKE`` (``JAVA_OPTS``),
  dotted keys (``spark.executor.memory``, ``scheduler.lease_ttl``), a ``--flag`` and a kebab key given a value
  (``proxy-body-size: 0``).
- ``id``: the value given to an id's key (``requestId=q-9e41d7c2``, ``trace_id: 4bf92f35``), with a digit in it:
  one request, one trace. A ticket that quotes it ("Example requestId=q-9e41d7c2, log excerpt above") is about the
  log lines that printed it.
- ``class``: a class of the program's own named in three words or more (``PartnerTokenCache``): a thread dump
  prints it and a diagnosis names it; not an exception class (a signature) nor a short one (every trace prints it).
- ``version``: ``v2.3.0``, ``8.14.2``, ``image:1.4``, "upgrade to 8.15"; stored without the ``v``.
- nothing from a log line's thread ("[sync-worker-3]", "[pool-3-thread-7]"), nor from a login banner
  ("Welcome to Ubuntu …", "Last login: … from 10.8.0.14"): every ssh prints it; nor is a machine
  architecture (``x86_64``) a key.
- ``signature``: a failure signature key from ``poimen.signatures`` (``http:502``, ``java:...``, ``log:...``),
  and for an exception its class alone as well (``java:java.lang.OutOfMemoryError``).

Specificity (``weight``, 0..1) is what one shared entity is worth when linking (``link.py`` links at 1.0):
a ticket id or a shaped signature (an exception with its message or frames, a log template, an advisory) links
alone; a service (0.6), host (0.7) or config key (0.6) links together with one more thing, such as a service and
a failure family (``http:502``, an errno, a bare exception class: 0.4); a version (0.3) only adds. A word every
deployment has (``prod``, ``default``, ``localhost``, ``api``) weighs 0.1, so it never carries a link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from poimen import signatures
from poimen.inputs.readers.shell import PROMPT
from poimen.signatures.specificity import has_shape

KINDS = ("service", "host", "ticket", "id", "config", "class", "version", "signature")
WEIGHTS = {"ticket": 1.0, "id": 1.0, "host": 0.7, "service": 0.6, "config": 0.6, "class": 0.6, "version": 0.3}
SHAPED_SIGNATURE = 1.0
FAMILY_SIGNATURE = 0.4
GENERIC = 0.1
# Names every deployment has: they say where, not which.
_GENERIC_VALUES = frozenset("""
    prod production staging stage dev development test qa default main master local localhost 127.0.0.1 0.0.0.0
    ::1 api app web server service worker db database cache cluster node pod host primary replica
    kube-system kube-proxy coredns ingress-nginx default-scheduler kube-scheduler kube-controller-manager
    kube-apiserver horizontal-pod-autoscaler cluster-autoscaler kube-dns
    xterm-256color screen-256color tmux-256color xterm-color
""".split())  # (and a terminal's type, from a `script` capture's header)
# Hyphenated English that is no service name.
# (and systemd's results: "Failed with result 'exit-code'")
_HYPHENATED_WORDS = frozenset("""
    follow-up follow-ups read-only write-only built-in up-to-date out-of-date long-running short-lived
    self-hosted on-call on-prem re-run re-ran re-deploy re-deployed roll-back roll-out e-mail opt-in opt-out
    in-flight in-memory time-out log-in sign-in check-in set-up non-prod pre-prod non-zero end-to-end
    per-request per-user so-called well-known third-party open-source real-time run-time x-ray p-value
    ad-hoc one-off day-to-day back-end front-end rate-limit rate-limited rate-limiting high-cpu low-memory
    hot-fix post-mortem pre-existing cross-region multi-region short-term long-term near-term mid-term
    exit-code start-limit-hit core-dump oom-kill
    pending-upgrade pending-install pending-rollback oom-killed mid-upgrade
""".split())  # (and helm's release states, from bench/incidents9: "revision 42 is stuck in pending-upgrade")
_PROGRAM = re.compile(r"^(?:sudo\s+(?:-\S+\s+)*)?[\w.-]+")
# A hyphenated word that ends with a particle is English ("drop-in", "add-on", "clean-up", "warm-up").
_PARTICLES = frozenset("in on off up out over back down through away".split())
# A word that joins two others inside one is English too ("bytes-per-inode", "end-of-life", "out-of-band",
# "one-by-one"; bench/incidents13): a deployment's name joins what it serves and what it is.
_JOINERS = frozenset("per of by to and or the a vs".split())
# A hyphenated word that opens with an English prefix or modifier is a compound ("per-component", "non-replication",
# "top-level", "pre-warm"), not a deployment's name, which opens with what it serves ("checkout-api").
_PREFIXES = frozenset("""
    per non pre re un de co sub anti semi multi cross inter intra over under post mid self top low high all half
    well ill off on out up down in bi tri auto
""".split())
# A part that is a hash or an id's group (a UUID's "58b2", a digest's "0d7e1f2a"): hex digits, one of them a digit.
_HEX_PART = re.compile(r"^(?=[a-f0-9]*\d)[a-f0-9]{4,}$")
# A value given to an id's key names a request, not a service: "requestId=q-9e41d7c2", "trace_id: ab-12cd34"
# ... as one given to a thread's key names a thread: "_ThreadName=http-thread-pool::http-listener-1(4)" (Payara's log)
_ID_KEY = re.compile(r"(?:[Ii]d|ID|[Tt]hread(?:[Nn]ame)?)\s*[=:]\s*\Z")
_ID_VALUE = re.compile(r"(?<![\w.-])(?:[a-z][A-Za-z]*Id|[a-z][a-z0-9]*_id|[a-z][a-z0-9]*ID)\s*[=:]\s*[\"']?"
                       r"(?=[\w.:-]*\d)([A-Za-z0-9][\w.:-]{5,}[A-Za-z0-9])")
# A chat line as the readers render it: "[2024-05-14T13:32:00Z] maria.k: …" (a stamp, then a speaker). The speaker
# (a person, "deploy-bot") is who wrote, not what the line is about.
SPEAKER = re.compile(r"^\s*(?:\[[^\]]{4,40}\]\s*|\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\s+)[A-Za-z][\w .@-]{0,40}?:\s+(?=\S)")
# An environment or region first ("prod-eu", "staging-us-east"): where something runs, in every incident there.
_WHERE_FIRST = frozenset("prod production staging stage stg dev development test qa uat sandbox preprod".split())
_TLDS = ("com|net|org|io|dev|app|cloud|ai|co|uk|de|eu|fr|jp|internal|local|lan|corp|intra|svc|cluster|"
         "amazonaws|compute|example")
_FILE_EXTENSIONS = frozenset("""
    py java go js ts rb rs c h cc cpp cs php sh yaml yml json toml ini cfg conf xml md txt log csv sql html css
    jar war tar gz zip tgz lock properties env pem crt key so dll exe
""".split())

_IPV4 = re.compile(r"(?<![\w.])(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}(?![\w.]*\d)")
_EC2 = re.compile(r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}\b|\blocalhost\b")
_FQDN = re.compile(rf"\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:{_TLDS})\b(?![.\w-]*[a-z0-9_]\()(?!\.[A-Za-z_])", re.I)
# not inside a longer token: "FW-OPS-01" in "stmt_2024-05_FW-OPS-01.csv" is a file's name
_TICKET = re.compile(r"(?<![\w./-])([A-Z][A-Z0-9]{1,9})-(\d{1,6})(?![\w-]|\.\w)")
# Shapes of a ticket id that name something else: encodings, standards, ciphers, and an incident's severity or
# priority ("SEV-3", "P-1"), which every incident of a kind shares.
_NOT_TICKET = frozenset({"UTF", "SHA", "ISO", "RFC", "CVE", "GHSA", "HTTP", "TLS", "SSL", "MD", "AES", "X", "P",
                         "SEV", "SEVERITY", "PRIO", "PRIORITY", "PRI", "TIER", "STEP", "PHASE", "PART",
                         "TCP", "UDP", "IPV", "EC2", "S3"})
_GITHUB = re.compile(r"(?:\b(?:PR|MR|pr|mr)\s*#?\s*|\bpull/|(?<![\w&])[#!])(\d{2,6})\b")
# ... but a number a program counts its own things by is no ticket: Camel's "thread #41 - carrierPool", "worker #12",
# "line #88", "attempt #3" (every burst of a pool's log names a few of them; bench/incidents34)
_COUNTED = re.compile(r"\b(?:thread|worker|executor|core|cpu|slot|shard|partition|line|row|column|attempt|retry|try|"
                      r"step|frame|page|item|entry|round|no\.?)\s*$", re.I)
_SERVICE = re.compile(r"(?<![\w./@:-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-]|\.[a-z0-9])")
_RESOURCE = re.compile(r"\b(?:deploy(?:ment)?s?|svc|services?|sts|statefulsets?|ds|daemonsets?|pods?|"
                       r"jobs?|cronjobs?|app)(?:\.apps)?/([a-z0-9][a-z0-9-]*)", re.I)
# A pod's suffixes: the ReplicaSet's template hash (6-10 of Kubernetes' safe letters) and the pod's 5.
_SAFE = "bcdfghjklmnpqrstvwxz2456789"
# (After a template hash, the pod's own 5 are read loosely: people retyping a pod's name, as in a ticket, use any.)
_POD = re.compile(rf"^(.+?)(?:-[{_SAFE}]{{6,10}}-[a-z0-9]{{5}}|-[{_SAFE}]{{5}})$")
_POD_NAME = re.compile(rf"^.+?-[{_SAFE}]{{6,10}}-[a-z0-9]{{5}}$")  # a Deployment's pod: its ReplicaSet's hash, its own
# (a dump's "jcmd 1 Thread.print on claims-intake-7d9c5b6f4-xk2lp" and the comment "Thread dump from
# claims-intake-7d9c5b6f4-xk2lp is pasted under the queue export"; bench/incidents47)
_ORDINAL = re.compile(r"^([a-z][a-z0-9-]*[a-z])-\d{1,3}$")
_SNAKE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w(])")
_UPPER_SNAKE = re.compile(r"(?<![\w.-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w(])")
# A dotted key, not a code path: no class or call after it (``java.lang.OutOfMemoryError``, ``os.path.join(``).
_DOTTED = re.compile(r"(?<![\w./-])[a-z][a-zA-Z0-9_]*(?:\.[a-z][a-zA-Z0-9_-]*)+(?![\w(/]|\.[A-Za-z_])")
_PACKAGE_ROOTS = frozenset({"java", "javax", "jdk", "sun", "com", "org", "net", "io", "kotlin", "scala", "android"})
# A flag given a value (``--max-connections=200``, ``--retention 30d``); not one whose "value" is another flag or a
# key=value pair (``--reuse-values --set a.b=3``: the key set is ``a.b``, read as a dotted key).
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*)(?==|\s+(?!-)[^\s=]+(?:\s|$))")
# Flags that choose what a command shows or where it looks (``--tail=3``, ``--since 1h``), not what is set.
_VIEW_FLAGS = frozenset("""
    tail since until namespace output selector follow previous container lines context format sort-by field-selector
    no-pager all-namespaces max-depth timestamps kubeconfig region profile project zone
""".split())
_KEBAB_SET = re.compile(r"(?<![\w-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)\s*(?:=|:\s*[\"']?[\d-])")
_VERSION = re.compile(
    r"(?<![\w.])v(\d+(?:\.\d+)+(?:-[\w.]+)?)\b"
    r"|(?<![\w.:])(\d+\.\d+\.\d+(?:-[\w.]+)?)(?![\w.]*\d)"
    r"|(?<=[A-Za-z_-][@:])(\d+\.\d+(?:\.\d+)*)\b"  # image:1.4, not a clock's 12:58:00.012
    r"|\b(?:version|to|from|upgrade|upgraded|pinned|pin|bump|bumped|downgraded?)\s+(\d+\.\d+(?:\.\d+)*)\b",
    re.I)


@dataclass(frozen=True, order=True)
class Entity:
    """One thing a text names. ``(kind, value)`` is its identity; ``weight`` is its specificity."""

    kind: str
    value: str
    weight: float


def workload(name: str) -> str:
    """A pod or replica name reduced to its workload: hash suffixes, then a StatefulSet ordinal, stripped."""
    name = name.lower()
    pod = _POD.match(name)
    if pod and any(ch.isdigit() for ch in name[len(pod.group(1)):]):
        name = pod.group(1)
    ordinal = _ORDINAL.match(name)
    return ordinal.group(1) if ordinal else name


def _weight(kind: str, value: str) -> float:
    if value.lower() in _GENERIC_VALUES or (kind == "service" and value.split("-", 1)[0] in _WHERE_FIRST):
        return GENERIC
    return WEIGHTS[kind]


# The JVM's own classes: an exception of the platform thrown in the platform ("java.net.SocketTimeoutException:
# Read timed out", at "sun.nio.ch.NioSocketImpl.timedFinishRead") is what any service's client prints; two incidents
# of one log share it (bench/incidents9), so it names a family, like a bare class.
_PLATFORM = re.compile(r"^(?:java|javax|jdk|sun|com\.sun)\.")
_PLAIN_MESSAGE = re.compile(r"^[A-Za-z][a-z]*(?: [a-z]+)*$")


def _platform_family(key: str) -> bool:
    """Whether an exception key is the platform's own: its class and its frame in the JVM, or its class there and
    a message of plain words the JVM writes ("Read timed out", "Connection reset")."""
    body = key.split(":", 1)[1] if ":" in key else key
    cls, _, frame = body.partition("@")
    cls, _, message = cls.partition(": ")
    if not _PLATFORM.match(cls):
        return False
    return bool(_PLATFORM.match(frame)) if frame else bool(_PLAIN_MESSAGE.match(message))


def _signature_entities(text: str) -> list[Entity]:
    out = []
    for sig in signatures.extract_signatures(text):
        family = sig.kind in ("http", "exit", "signal", "errno", "k8s") or not has_shape(sig.key, sig.kind)
        if not (sig.kind == "exception" and _platform_family(sig.key)):  # else its class alone, below
            out.append(Entity("signature", sig.key, FAMILY_SIGNATURE if family else SHAPED_SIGNATURE))
        if sig.kind == "exception" and ":" in sig.key:
            # The class alone too: a ticket retells a trace's message in its own words, and the class is what
            # both keep (it links with one more thing, such as the service).
            tool, body = sig.key.split(":", 1)
            out.append(Entity("signature", f"{tool}:{re.split(r': |@', body, maxsplit=1)[0]}", FAMILY_SIGNATURE))
    return out


def _add(found: dict[tuple[str, str], Entity], kind: str, value: str, weight: float | None = None) -> None:
    value = value.strip().rstrip(".")
    if not value or (kind, value) in found:
        return
    found[(kind, value)] = Entity(kind, value, _weight(kind, value) if weight is None else weight)


# What a login prints on every host, the same for every ssh of a session: the banner, the last login's address
_BANNER = re.compile(r"^\s*(?:Welcome to |Last (?:failed )?login:|Linux \S+ \d+\.\d+\.\d+|System information as of"
                     r"|Connection to \S+ closed|\* (?:Documentation|Management|Support):)", re.M)
# A class of the program's own, named three words or more in one ("PartnerTokenCache", "ClaimNumberAllocator"): where a
# dump or a log prints it ("BLOCKED on com.orrinvale.claims.auth.PartnerTokenCache@3b1f0c2a") and where a person
# names it in the diagnosis ("PartnerTokenCache.currentToken() is synchronized"); bench/incidents47. Not an
# exception's (its signature says it), nor a shorter one ("StockClient": every trace of the service prints it)
# ... written bare, as a person names it, or as an object a dump or a health check prints ("(a
# com.x.PartnerTokenCache)", "com.x.PartnerTokenCache@3b1f0c2a"); not a frame's or a logger's path ("at com.x.Y.m(Y.java:41)",
# "[io.qua.ver.htt.run.QuarkusErrorHandler]"): every trace through the framework prints those (bench/incidents44)
_CLASS = re.compile(r"(?<![\w$.])((?:[A-Z][a-z0-9]+){3,6})(?![\w$]|\.java\b)"
                    r"|\(an? (?:[\w$]+\.)+((?:[A-Z][a-z0-9]+){3,6})\)"
                    r"|(?:[\w$]+\.)+((?:[A-Z][a-z0-9]+){3,6})@[0-9a-f]{4,}")
_THROWN = re.compile(r"(?:Exception|Error|Throwable|Failure|Fault)$"
                     # and Kubernetes' reasons, which every cluster prints ("CrashLoopBackOff", "NotTriggerScaleUp",
                     # "FailedCreatePodSandBox", "NodeHasDiskPressure"): the platform's words, no class of the program
                     r"|BackOff$|^(?:Failed|Successful|NotTrigger|Triggered|Scaling|NodeHas|NodeNot|Evicted|Killing)")
# "[sync-worker-3]", "[http-nio-8080-exec-7]", Kafka's "[kafka-producer-network-thread | ledger-events]": a thread;
# and the Kafka client's own prefix, "[Producer clientId=ledger-events]": which client of the process logged it
_THREAD = re.compile(r"\[[A-Za-z][\w.-]*-\d+\]|\[[A-Za-z][\w.-]*-thread(?:-\d+)?(?:\s*\|\s*[^\]\s]+)?\]"
                     r"|\([A-Za-z][\w.-]*-thread-\d+\)"  # Quarkus' and WildFly's "(executor-thread-14)"
                     r"|\[(?:Producer|Consumer|AdminClient) clientId=[^\]]*\]"
                     r"|\[[a-z][\w-]*: [^\]]*\]")  # a field a log line labels, WebLogic's "[partition-name: DOMAIN]"
_ARCHES = frozenset({"x86_64", "aarch64", "amd64", "arm64", "i686", "ppc64le", "s390x"})  # a machine, not a key


def entities(text: str) -> tuple[Entity, ...]:
    """Every entity ``text`` names, de-duplicated by (kind, value), sorted; ``()`` for a text that names none."""
    if not text or not text.strip():
        return ()
    if prompt := PROMPT.match(text):  # a shell prompt's user, host and context say where it ran, not what about;
        text = _PROGRAM.sub("", prompt.group("cmd"), count=1)  # its program ("systemd-analyze") is the tool used
    elif speaker := SPEAKER.match(text):
        text = text[speaker.end():]
    if _BANNER.search(text):  # a login banner names the OS and the last login's address on every ssh
        text = "\n".join(line for line in text.split("\n") if not _BANNER.match(line))
    found: dict[tuple[str, str], Entity] = {}
    taken: list[tuple[int, int]] = []  # spans read as hosts or keys, so their parts are not read again

    def free(m: re.Match) -> bool:
        return not any(lo < m.end() and m.start() < hi for lo, hi in taken)

    for pattern in (_EC2, _IPV4, _FQDN):
        for m in pattern.finditer(text):
            if free(m) and m.group(0).rsplit(".", 1)[-1].lower() not in _FILE_EXTENSIONS:
                _add(found, "host", m.group(0).lower())
                taken.append(m.span())
    for m in _ID_VALUE.finditer(text):
        _add(found, "id", m.group(1))
        taken.append(m.span())
    for m in _TICKET.finditer(text):
        if m.group(1) not in _NOT_TICKET and not m.group(1).isdigit():
            _add(found, "ticket", f"{m.group(1)}-{int(m.group(2))}")
            taken.append(m.span())
    for m in _GITHUB.finditer(text):
        if m.group(0)[0] == "#" and _COUNTED.search(text, max(0, m.start() - 12), m.start()):
            continue
        _add(found, "ticket", f"#{int(m.group(1))}")
        taken.append(m.span())
    for m in _FLAG.finditer(text):
        if m.group(1) not in _VIEW_FLAGS:
            _add(found, "config", m.group(1))
        taken.append(m.span())
    for m in _KEBAB_SET.finditer(text):
        if free(m) and m.group(1) not in _HYPHENATED_WORDS:
            _add(found, "config", m.group(1))
            taken.append(m.span(1))
    for pattern in (_DOTTED, _SNAKE, _UPPER_SNAKE):
        for m in pattern.finditer(text):
            key = m.group(0)
            if free(m) and key.rsplit(".", 1)[-1].lower() not in _FILE_EXTENSIONS \
                    and key.split(".", 1)[0] not in _PACKAGE_ROOTS and key.lower() not in _ARCHES:
                _add(found, "config", key)
                taken.append(m.span())
    taken += [m.span() for m in _THREAD.finditer(text)]  # a log's "[sync-worker-3]" is a thread of the process
    for m in _RESOURCE.finditer(text):  # (an id's value, "requestId=q-9e41d7c2", names no service: ``_ID_KEY``)
        _add(found, "service", workload(m.group(1)))
        taken.append(m.span())
    for m in _SERVICE.finditer(text):
        name = workload(m.group(0))
        # a number inside a name is a thread or worker index (pool-3-thread-7), not part of a service's name; and a
        # bare word left by an index (a log's [sched-1] or [consumer-4] thread) names a thread, not a service
        parts = m.group(0).lower().split("-")
        if free(m) and m.group(0) not in _HYPHENATED_WORDS and not any(p.isdigit() for p in name.split("-")) \
                and ("-" in name or name == m.group(0).lower()) and parts[0] not in _PREFIXES \
                and parts[-1] not in _PARTICLES and not _JOINERS.intersection(parts[1:-1]) \
                and sum(bool(_HEX_PART.match(p)) for p in parts) < 2 \
                and (len("".join(p for p in parts if not _HEX_PART.match(p))) >= 3  # "q-9e41d7c2": an id
                     or not any(map(_HEX_PART.match, parts))) and not _ID_KEY.search(text, 0, m.start()):
            _add(found, "service", name)
            if _POD_NAME.match(m.group(0)):  # one pod of it, named in full: where it ran, as a host is
                _add(found, "host", m.group(0).lower())
    for m in _CLASS.finditer(text):
        name = m.group(1) or m.group(2) or m.group(3)
        if not _THROWN.search(name):
            _add(found, "class", name)
    for m in _VERSION.finditer(text):
        if free(m):
            _add(found, "version", next(g for g in m.groups() if g))
    for entity in _signature_entities(text):
        found.setdefault((entity.kind, entity.value), entity)
    tickets = [key for key in found if key[0] == "ticket"]
    if len(tickets) > 1:  # "saved for DBA-88 / DBA-91": a text that lists tickets is about none of them alone
        for key in tickets:
            found[key] = Entity("ticket", key[1], WEIGHTS["ticket"] / len(tickets))
    return tuple(sorted(found.values()))
