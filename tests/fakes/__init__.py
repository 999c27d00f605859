"""Typed fakes for the reliability suite: a loopback OpenAI-compatible server and a kill harness."""
