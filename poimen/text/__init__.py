"""Text: tokens (tiktoken), words and sentences, log-line levels."""
