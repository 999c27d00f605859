"""CLI command groups beyond the write path. Each module here defines ``register(app)``; ``mem`` loads them all."""
