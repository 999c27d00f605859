"""Failures that a tool reports as a code or a reason: HTTP status, exit code, signal, errno, Kubernetes reason.

These are the cheapest signatures and the most reusable: an nginx 413 in a
curl trace, a ``status=413`` log field and a bare "413 Request Entity Too Large"
pasted as a query all yield ``http:413``. Exit codes and signals are mapped
both ways (128 + n <-> signal n) so a shell's ``exit 139`` and its
``Segmentation fault (core dumped)`` give the same key set.
"""

from __future__ import annotations

import re

from poimen.signatures.masking import span
from poimen.signatures.model import Found, Signature

_HTTP_REASON = (
    r"Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|Not Acceptable"
    r"|Proxy Authentication Required|Request Time-?out|Conflict|Gone|Length Required|Precondition Failed"
    r"|Request Entity Too Large|Payload Too Large|Content Too Large|Request-URI Too Long|URI Too Long"
    r"|Unsupported Media Type|Range Not Satisfiable|Expectation Failed|Misdirected Request"
    r"|Unprocessable (?:Entity|Content)|Locked|Failed Dependency|Too Early|Upgrade Required"
    r"|Precondition Required|Too Many Requests|Request Header Fields Too Large|Request Header Or Cookie Too Large"
    r"|Unavailable For Legal Reasons|Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable"
    r"|Service Temporarily Unavailable|Gateway Time-?out|HTTP Version Not Supported|Insufficient Storage"
    r"|Loop Detected|Network Authentication Required|Client Error|Server Error|Client Closed Request"
)
_HTTP = re.compile(
    r"HTTP/\d(?:\.\d)?\"? (?P<a>[45]\d\d)\b"  # status line, or the code after the request in an access log
    r"|<title>\s*(?P<b>[45]\d\d)\b"
    r"|\b(?:status(?:[_ ]?code)?|statusCode|http_status|response[_ ]code)[\"']?\s*[=:]?\s*[\"']?(?P<c>[45]\d\d)\b"
    r"|\b(?:returned|responded with|failed with|got|received)\s+(?:an?\s+)?(?:HTTP\s+|status\s+(?:code\s+)?)?(?P<d>[45]\d\d)\b(?!\s*(?:rows|items|results|records|bytes|lines|entries|objects|files|ms)\b)"
    r"|\bHTTP(?:\s+Error|\s+status)?:?\s+(?P<e>[45]\d\d)\b"
    rf"|(?<![\w.-])(?P<f>[45]\d\d)\s+(?:{_HTTP_REASON})\b",
    re.IGNORECASE,
)

SIGNALS = {
    1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
    8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
    14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ", 31: "SIGSYS",
}  # fmt: skip
_SIGNAL_NUMBER = {name: number for number, name in SIGNALS.items()}
_SIGNAL_NUMBER["SIGIOT"] = 6
_DEATH_PHRASES = {
    "segmentation fault": "SIGSEGV", "bus error": "SIGBUS", "floating point exception": "SIGFPE",
    "illegal instruction": "SIGILL", "aborted": "SIGABRT", "killed": "SIGKILL",
}  # fmt: skip
# A shell's report of a process that died: "Segmentation fault (core dumped)",
# bash's "line 1: 4242 Killed  python train.py", Go's "signal: killed".
_DEATH = re.compile(
    r"(?-i:\b(?P<phrase>Segmentation fault|Bus error|Floating point exception|Illegal instruction|Aborted)"
    r"(?=\s*\(core dumped\)|\s*$|\s+\S*\s*$))"
    r"|(?-i:(?:^|\s)\d+\s+(?P<job>Killed|Segmentation fault|Aborted)\b)"
    r"|(?-i:^\s*(?P<bare>Killed)\s*$)"
    r"|\bsignal:\s*(?P<go>killed|segmentation fault|aborted)\b"
    r"|\b(?:killed|terminated|died)\s+(?:by|with|on)\s+signal\s+(?P<num>\d{1,2})\b"
    r"|\b(?:killed|terminated|died)\s+(?:by|with|on)\s+(?:signal\s+)?(?:<Signals\.)?(?P<named>SIG[A-Z]+)\b",
    re.MULTILINE | re.IGNORECASE,
)
_SIGNAL_NAME = re.compile(r"\bSIG(?:HUP|INT|QUIT|ILL|TRAP|ABRT|IOT|BUS|FPE|KILL|USR1|SEGV|USR2|PIPE|ALRM|TERM|XCPU|XFSZ|SYS)\b")
_EXIT = re.compile(
    r"\bexit(?:ed)?\s+(?:with\s+)?(?:exit\s+)?(?:code|status)\s*[:=]?\s*\(?(?P<a>-?\d{1,3})\b"
    r"|\bexit\s+code\s*[:=]?\s*(?P<b>-?\d{1,3})\b"
    r"|\bnon-zero\s+exit\s+status\s+(?P<c>-?\d{1,3})\b"
    r"|\bExited\s+\((?P<d>\d{1,3})\)"
    r"|\breturn\s*code\s*[:=]?\s*(?P<e>-?\d{1,3})\b",
    re.IGNORECASE,
)

ERRNOS = frozenset(
    "EPERM ENOENT ESRCH EINTR EIO ENXIO E2BIG ENOEXEC EBADF ECHILD EAGAIN ENOMEM EACCES EFAULT EBUSY EEXIST"
    " EXDEV ENODEV ENOTDIR EISDIR EINVAL ENFILE EMFILE ENOTTY ETXTBSY EFBIG ENOSPC ESPIPE EROFS EMLINK EPIPE"
    " EDOM ERANGE EDEADLK ENAMETOOLONG ENOLCK ENOSYS ENOTEMPTY ELOOP EWOULDBLOCK ENOMSG EIDRM ENOSTR ENODATA"
    " ETIME ENOSR ENOLINK EPROTO EBADMSG EOVERFLOW EILSEQ EUSERS ENOTSOCK EDESTADDRREQ EMSGSIZE EPROTOTYPE"
    " ENOPROTOOPT EPROTONOSUPPORT ESOCKTNOSUPPORT EOPNOTSUPP ENOTSUP EPFNOSUPPORT EAFNOSUPPORT EADDRINUSE"
    " EADDRNOTAVAIL ENETDOWN ENETUNREACH ENETRESET ECONNABORTED ECONNRESET ENOBUFS EISCONN ENOTCONN"
    " ESHUTDOWN ETOOMANYREFS ETIMEDOUT ECONNREFUSED EHOSTDOWN EHOSTUNREACH EALREADY EINPROGRESS ESTALE"
    " EDQUOT ECANCELED EOWNERDEAD ENOTRECOVERABLE EAI_AGAIN EAI_NONAME ENOTFOUND".split()
)
# strerror(3) texts as glibc, Python and Go print them, for reports that name no errno (glibc's table, less the
# ones prose says without an error: "file exists", "is a directory", "not a directory").
_STRERROR = {
    "connection refused": "ECONNREFUSED", "connection timed out": "ETIMEDOUT",
    "connection reset by peer": "ECONNRESET", "no space left on device": "ENOSPC",
    "permission denied": "EACCES", "no such file or directory": "ENOENT", "broken pipe": "EPIPE",
    "too many open files": "EMFILE", "cannot allocate memory": "ENOMEM",
    "address already in use": "EADDRINUSE", "network is unreachable": "ENETUNREACH",
    "no route to host": "EHOSTUNREACH", "read-only file system": "EROFS",
    "disk quota exceeded": "EDQUOT", "operation not permitted": "EPERM",
    "device or resource busy": "EBUSY", "resource temporarily unavailable": "EAGAIN",
    "too many levels of symbolic links": "ELOOP", "file name too long": "ENAMETOOLONG",
    "exec format error": "ENOEXEC", "input/output error": "EIO", "bad file descriptor": "EBADF",
    "text file busy": "ETXTBSY", "directory not empty": "ENOTEMPTY", "stale file handle": "ESTALE",
    "stale nfs file handle": "ESTALE", "transport endpoint is not connected": "ENOTCONN",
    "software caused connection abort": "ECONNABORTED", "argument list too long": "E2BIG",
    "no buffer space available": "ENOBUFS", "too many open files in system": "ENFILE",
    "function not implemented": "ENOSYS", "operation not supported": "EOPNOTSUPP",
    "value too large for defined data type": "EOVERFLOW", "interrupted system call": "EINTR",
    "host is down": "EHOSTDOWN", "operation timed out": "ETIMEDOUT", "invalid argument": "EINVAL",
}  # fmt: skip
_ERRNO = re.compile(
    r"(?<![\w-])(?P<name>(?-i:E[A-Z][A-Z0-9_]{2,}))(?![\w-])|(?P<text>" + "|".join(map(re.escape, _STRERROR)) + r")\b",
    re.IGNORECASE,
)

K8S_REASONS = (
    "CrashLoopBackOff", "OOMKilled", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
    "CreateContainerError", "InvalidImageName", "RunContainerError", "ContainerCannotRun",
    "Evicted", "DeadlineExceeded", "FailedScheduling", "FailedMount", "FailedAttachVolume",
)  # fmt: skip
_K8S = re.compile(r"(?<![\w-])(" + "|".join(K8S_REASONS) + r")(?![\w-])")


def _line_at(text: str, start: int, end: int) -> str:
    return span(text[text.rfind("\n", 0, start) + 1 : _line_end(text, end)])


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def http_statuses(text: str) -> list[Found]:
    """4xx/5xx statuses; the tool is nginx when nginx served the page, else http."""
    tool = "nginx" if re.search(r"\bnginx\b", text, re.IGNORECASE) else "http"
    found = []
    for match in _HTTP.finditer(text):
        code = next(group for group in match.groups() if group)
        found.append((match.start(), Signature("http", tool, f"http:{code}", _line_at(text, *match.span()))))
    return found


def _exit_pair(code: int, offset: int, raw: str) -> list[Found]:
    """An exit code, plus the signal it encodes (128 + n, or a negative return code)."""
    if code < 0:
        code = 128 - code
    if code == 0:
        return []
    found = [(offset, Signature("exit", "shell", f"exit:{code}", raw))]
    if code - 128 in SIGNALS:
        found.append((offset, Signature("signal", "posix", f"signal:{SIGNALS[code - 128]}", raw)))
    return found


def exits_and_signals(text: str) -> list[Found]:
    """Non-zero exit codes, signal names, and a shell's report of a process a signal killed."""
    found: list[Found] = []
    for match in _EXIT.finditer(text):
        code = int(next(group for group in match.groups() if group))
        found.extend(_exit_pair(code, match.start(), _line_at(text, *match.span())))
    for match in _DEATH.finditer(text):
        raw = _line_at(text, *match.span())
        groups = match.groupdict()
        if groups["num"]:
            name = SIGNALS.get(int(groups["num"]))
        elif groups["named"]:
            name = groups["named"].upper() if groups["named"].upper() in _SIGNAL_NUMBER else None
        else:
            phrase = next(groups[k] for k in ("phrase", "job", "bare", "go") if groups[k])
            name = _DEATH_PHRASES[phrase.lower()]
        if name:
            found.extend(_exit_pair(128 + _SIGNAL_NUMBER[name], match.start(), raw)[::-1])
    # A signal named in passing ("received SIGTERM", Go's "[signal SIGSEGV: ...")
    # says nothing about how the process exited, so it gets no exit key.
    for match in _SIGNAL_NAME.finditer(text):
        name = "SIGABRT" if match.group() == "SIGIOT" else match.group()
        found.append((match.start(), Signature("signal", "posix", f"signal:{name}", _line_at(text, *match.span()))))
    return found


def errnos(text: str) -> list[Found]:
    """errno names (ECONNREFUSED) and the strerror texts that stand for them ("Connection refused")."""
    found = []
    for match in _ERRNO.finditer(text):
        if match.group("name"):
            name = match.group("name")
            if name not in ERRNOS:  # upper case only ("exec" is no name), and "EVENT" is no errno
                continue
        else:
            name = _STRERROR[match.group("text").lower()]
        found.append((match.start(), Signature("errno", "posix", f"errno:{name}", _line_at(text, *match.span()))))
    return found


def k8s_reasons(text: str) -> list[Found]:
    """Kubernetes container and pod reasons, as kubectl get/describe and events print them."""
    return [
        (match.start(), Signature("k8s", "kubernetes", f"k8s:{match.group(1)}", _line_at(text, *match.span())))
        for match in _K8S.finditer(text)
    ]
