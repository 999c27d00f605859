"""Text helpers the benchmark sections share."""


def squash(text: str) -> str:
    """Whitespace collapsed to single spaces: how coverage and retention compare a context with gold text."""
    return " ".join(text.split())
