"""A vulnerability advisory id is a signature: the report that cites the same CVE is found by it, whatever its words.

Security reports in a tracker are worded alike ("Upgrade jackson-databind to
2.9.10.x") and differ by the advisory they answer. The earlier report of the
same problem may be worded quite differently ("update jackon-databind
version") and cite the id only in a link. The corpus goes through the log the
real way (gated loop with a scripted gate, ``build_projections`` with the
hash embedder), as in the specificity tests.
"""

from __future__ import annotations

import pytest

from poimen.index import MemoryIndex
from poimen.signatures import extract_signatures, signature_keys
from poimen.signatures.specificity import decisive
from poimen.testing.gate import scripted_gate
from index_helpers import index_of_sources

DECOYS = [f"Upgrade jackson-databind to 2.9.10.{i}\n\nNew RCE found in jackson-databind 2.0.0 through 2.9.10.{i - 1}. "
          f"See https://nvd.nist.gov/vuln/detail/CVE-2019-{14540 + i}. We should backport this to the lower branches."
          for i in range(1, 9)]
TARGET = ("update jackon-databind version\n\naccording to [CVE-2020-8840|https://cve.mitre.org/cgi-bin/cvename.cgi?"
          "name=CVE-2020-8840], maybe we should update to 2.9.10.3 or 2.10.x?")
QUERY = ("Upgrade jackson-databind to 2.9.10.3\n\nNew [RCE|https://nvd.nist.gov/vuln/detail/CVE-2020-8840] found in "
         "jackson-databind 2.0.0 through 2.9.10.2. Patched in 2.9.10.3. We should backport this to the lower branches.")

gate = scripted_gate(lambda p: None if p.memory.strip() else p.chunk)


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> MemoryIndex:
    sources = {f"decoy-{i}.txt": text for i, text in enumerate(DECOYS)} | {"target.txt": TARGET}
    return index_of_sources(tmp_path_factory.mktemp("advisories"), sources, gate, "Which report is this?", 400)


@pytest.mark.parametrize(("text", "keys"), [
    ("see https://nvd.nist.gov/vuln/detail/CVE-2020-8840", ["cve:CVE-2020-8840"]),
    ("fixes cve-2022-42003 and CVE-2022-42004.", ["cve:CVE-2022-42003", "cve:CVE-2022-42004"]),
    ("https://github.com/eclipse/jetty.project/security/advisories/GHSA-M6CP-vxjx-65j6", ["ghsa:GHSA-m6cp-vxjx-65j6"]),
    ("CVE-2021-123 is too short; XCVE-2020-1111 and CVE-2020-88401234 are not ids; 2020-8840 alone is a number", []),
])
def test_advisory_ids_are_keys_in_their_registry_case(text, keys):
    assert signature_keys(text) == keys
    assert all(s.kind == "advisory" for s in extract_signatures(text))


def test_an_advisory_id_is_decisive_until_many_streams_cite_it():
    assert decisive("cve:CVE-2020-8840", "advisory", 1, 600)
    assert not decisive("cve:CVE-2021-44228", "advisory", 40, 600)  # every dependency report cites log4shell


def test_the_report_citing_the_same_advisory_is_found_first(index):
    sources = lambda hit: {p.source for p in hit.evidence}  # noqa: E731
    # Premise: by words and vectors alone the decoys, worded like the query, come first.
    fused = index.search(QUERY, k=3, tiers=("fused",))
    assert sources(fused[0]) != {"target.txt"}
    hits = index.search(QUERY, k=3)
    assert hits[0].tier == "signature" and sources(hits[0]) == {"target.txt"}
    assert hits[0].signature_keys == ("cve:CVE-2020-8840",)
