"""``warm_litellm``: the fork server's warm-up completion goes nowhere, and leaves litellm able to call a real server."""

import subprocess
import sys
import textwrap

from poimen.testing.openai_server import text

SCRIPT = textwrap.dedent("""
    import asyncio, socket, sys
    from poimen.llm.client import LiteLLMClient, warm_litellm

    connect = socket.socket.connect
    def refused(self, *a, **k):
        raise AssertionError(f"the warm-up opened a connection to {a}")
    socket.socket.connect = refused
    warm_litellm()
    socket.socket.connect = connect
    # A forked step's first real completion runs in a new event loop after the warm-up's loop has closed.
    reply = asyncio.run(LiteLLMClient("openai/x", api_base=sys.argv[1]).complete("system", "user", 20))
    print(reply.text)
""")


def test_the_warm_up_makes_no_connection_and_a_real_call_follows_it(server):
    server.script(text("<check>no</check>"))
    done = subprocess.run([sys.executable, "-c", SCRIPT, server.api_base], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "<check>no</check>"
    assert server.calls == 1  # the real call only: the warm-up never reached the server
