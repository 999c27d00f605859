"""Inputs: what a stream is read as. Readers turn a file into records (each with its file lines); the chunker packs
records into L0 chunks; the incident stage groups records into episodes and incidents."""
