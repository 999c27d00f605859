"""The read side: the context builder and its lines, answers, lineage, the JSON shapes."""
