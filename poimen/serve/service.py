"""``ReadService``: lookup, context, ask and lineage over one log and index, each returning its JSON shape.

The CLI makes one per command (cold); ``mem serve --http`` makes one per process and keeps it (warm): the
embedder's model, the text vectors and the unit vectors are loaded once, and loaded again only when the index
file changes on disk (a rebuild, or a run that extends the index). Both paths run this same code, so a server's
answer is the answer the CLI would have computed.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from poimen.errors import IndexAltered, PoimenError
from poimen.read.shapes import Shape, answer_shape, context_shape, hit_shape
from poimen.settings import ModelConfig


class ReadService:
    """One log's reads. ``model`` chooses the model ``ask`` calls (its unset fields: the ``POIMEN_*`` settings):
    fixed when the service is made, so no caller of a server can point it elsewhere. ``namespace``, when given, is
    the only namespace whose typed-store writes ``show`` serves."""

    def __init__(self, root: Path, db_path: Path, embedder=None, sources: list[Path] | None = None,
                 model: ModelConfig = ModelConfig(), namespace: str | None = None):
        self.root, self.db_path = Path(root), Path(db_path)
        self.embedder = embedder  # None: the model that built the index, found when the index is first opened
        self.sources = sources
        self.model = model
        self.namespace = namespace
        self._client = None
        self._stamp: tuple | None = None
        self._index = None
        self._engine = None
        self._engine_error: PoimenError | None = None
        self._cards: dict | None = None
        self.lock = threading.Lock()  # one request at a time: the engines memoise scores between calls

    def _fresh(self) -> None:
        """Forget the loaded index when its file changed (the embedder, the expensive part, stays)."""
        try:
            st = self.db_path.stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._stamp, self._index, self._engine, self._engine_error, self._cards = stamp, None, None, None, None

    def index(self):
        from poimen.index import MemoryIndex

        self._fresh()
        if self._index is None:
            self._index = MemoryIndex.open(self.db_path, self.embedder)
            self.embedder = self.embedder or self._index.embedder
        return self._index

    def engine(self):
        """The context engine; an index built before the unit projections raises its ``IndexMissing``."""
        from poimen.read.context import ContextEngine

        self._fresh()
        if self._engine is None and self._engine_error is None:
            try:
                self._engine = ContextEngine.open(self.db_path, self.embedder)
                self.embedder = self.embedder or self._engine.scorer.embedder
            except PoimenError as exc:
                self._engine_error = exc
        if self._engine_error is not None:
            raise self._engine_error
        return self._engine

    def lookup(self, text: str, k: int = 10, explain: bool = False, lines: int = 4) -> list[Shape]:
        """Hits for ``text``, each with its ``lines`` best-matching lines that no higher hit shows (None: an index
        without units). The question is analysed once (``poimen.relevance.question``): the hits, the incidents and
        their lines read the same vectors and signatures."""
        index = self.index()
        question = index.question(text) if text.strip() and len(index) else None
        hits = index.search(question, k, explain) if question is not None else []
        try:
            engine = self.engine()
        except IndexAltered:
            raise  # an edited unit is never dropped quietly: it says the whole index is not the log's
        except PoimenError:
            engine = None  # an index from before the unit projections: the hits still stand, without lines
        if question is None:
            return []
        hits, incidents = self._incidents_first(question, hits, k, engine)
        if engine is None:
            return [hit_shape(h, None, i) for h, i in zip(hits, incidents)]
        # A card shows its incident, not lines: it draws on nothing the hits below it could show.
        shown = engine.hit_lines(question, [set() if i else explained_by(h) for h, i in zip(hits, incidents)], k=lines)
        return [hit_shape(h, s, i) for h, s, i in zip(hits, shown, incidents)]

    def cards(self) -> dict:
        """Every current incident card of the index (``poimen.read.incidents``), read once per index file."""
        from poimen.read.incidents import all_cards

        self._fresh()
        if self._cards is None:
            self._cards = all_cards(self.db_path)
        return self._cards

    def _incidents_first(self, question, hits: list, k: int, engine) -> tuple[list, list]:
        """The hits with the incidents that match ``text`` first (``leading_cards``: the best card, and the same
        failure's other incidents), each card shown as its incident; (hits, incident shapes or None per hit). The
        incidents of one failure are one answer and count as one of the ``k`` hits: `-k 1` on an error that happened
        twice and was fixed two ways shows both fixes, each under its own incident."""
        from poimen.read.incidents import incident_shape, incident_views, leading_cards

        index = self.index()
        lead = leading_cards(engine, question, self.cards()) if engine is not None else []
        first = [h for score, view in lead if (h := index.hit_for(view.sha, score, "incident",
                                                                  f"incident card: its lines score {score:.3f}"))]
        shown = {h.sha for h in first}
        hits = first + [h for h in hits if h.sha not in shown][:k - 1 if first else k]
        views = incident_views(self.db_path, [h.sha for h in hits if h.kind == "memory"])
        views.update({view.sha: view for _, view in lead})  # as ranked: with the raw line that matched, if one did
        return hits, [incident_shape(views[h.sha], question.text) if h.sha in views else None for h in hits]

    def context(self, question: str, budget: int = 2000) -> Shape:
        """The context for ``question``; when it is about a past incident (how it was fixed, or the error itself) the
        matched card comes first, whole, as one unit (``poimen.read.incidents.card_first``)."""
        from poimen.read.incidents import card_first

        engine = self.engine()
        first = card_first(self.db_path, question, self.index(), engine, self.cards())
        return context_shape(engine.context(question, budget, first))

    def ask(self, question: str | None = None, query: str | None = None, budget: int = 2000) -> Shape:
        """ψ over the context for a ``question``, or over a standing ``query``'s final memories."""
        from poimen.read.answer import answer_question
        from poimen.read.answer import ask as ask_query

        if (question is None) == (query is None):
            raise PoimenError("ask: give a question or a query, not both and not neither")
        client = self.client()
        if question is not None:
            answer = asyncio.run(answer_question(self.db_path, question, client, budget, engine=self.engine(),
                                                 index=self.index()))
        else:
            from poimen.log.store import EventLog  # only a standing query reads the log (and loads pyarrow)

            answer = asyncio.run(ask_query(EventLog(self.root), query, client))
        return answer_shape(answer, question, query)

    def client(self):
        """The model client of this service's own settings, made once."""
        from poimen.llm import client_for

        if self._client is None:
            self._client = client_for(self.model)
        return self._client

    def show(self, sha: str, kind: str | None = None):
        from poimen.read.lineage import lineage
        from poimen.inputs.source_lines import SourceFinder, default_roots, noted_readings_of

        return lineage(self.db_path, sha, SourceFinder(self.sources or default_roots(self.root), noted_readings_of(self.root)),
                       kind, namespace=self.namespace)

    def warm(self) -> None:
        """Load everything a first request would: the vectors, and the embedder's model (by embedding once)."""
        index = self.index()
        if index.embedder is not None:
            index.embedder.embed(["warm"])  # not through the query cache: a warm server keeps no extra state
        try:
            self.engine()
        except PoimenError:
            pass  # lookup still works; context and ask will say what is missing


def explained_by(hit) -> set[str]:
    """What a hit's lines are drawn from: its own text, and for a memory found by a failure signature its evidence
    chunks too. The signature is in the evidence, not necessarily in a line the memory kept (a memory of the first
    warnings of a stream can hold the chunk where a later FATAL line names the error): the user should see that line."""
    if hit.tier == "signature" and hit.kind == "memory":
        return {hit.sha} | {p.sha for p in hit.evidence}
    return {hit.sha}

