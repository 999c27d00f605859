"""Vulnerability advisories: a CVE or GitHub advisory id names one known defect, as exactly as a status code.

A tracker's security reports ("upgrade jackson-databind for CVE-2020-8840",
"hadoop-client-runtime flagged for CVE-2020-36518") describe the same problem
in different words and with different versions, but cite the same advisory id,
and an id is never reworded. So an id is a signature: ``cve:CVE-2020-8840``,
``ghsa:GHSA-m6cp-vxjx-65j6``. It is found in prose and in links alike
(``nvd.nist.gov/vuln/detail/CVE-2020-8840``), and normalised to the case its
registry writes it in. Like every key it counts by how few streams hold it
(``poimen.signatures.specificity``), so an advisory every dependency report
cites stops deciding on its own.
"""

from __future__ import annotations

import re

from poimen.signatures.model import Found, Signature

_CVE = re.compile(r"(?<![\w-])CVE-(?P<year>(?:19|20)\d\d)-(?P<n>\d{4,7})(?!\d)", re.IGNORECASE)
_GHSA = re.compile(r"(?<![\w-])GHSA(?P<id>(?:-[23456789cfghjmpqrvwx]{4}){3})(?![\w])", re.IGNORECASE)


def advisories(text: str) -> list[Found]:
    """Each CVE id (``CVE-YYYY-NNNN``) and GitHub advisory id (``GHSA-xxxx-xxxx-xxxx``) in ``text``."""
    found: list[Found] = [(m.start(), Signature("advisory", "cve", f"cve:CVE-{m['year']}-{m['n']}", m.group()))
                          for m in _CVE.finditer(text)]
    found += [(m.start(), Signature("advisory", "ghsa", f"ghsa:GHSA{m['id'].lower()}", m.group()))
              for m in _GHSA.finditer(text)]
    return found
