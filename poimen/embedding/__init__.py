"""Embedders: sentence-transformers, the numpy MiniLM port of the read path, the hash stand-in."""
