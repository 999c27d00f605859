"""A local S3 API for tests and the bench: moto's server on 127.0.0.1, in a process of its own.

moto (5.2.5) honours ``If-None-Match: *`` and ``If-Match: <etag>`` on PutObject, but checks the
condition and stores the object in two steps, so two requests served by two threads could both
pass one ``If-Match``. S3 makes a conditional put atomic; this server gets the same guarantee by
serving one request at a time. The clients are the real ones (s3fs over aiobotocore), pointed here
through ``AWS_ENDPOINT_URL_S3``, so forked and spawned writer processes find it too.
"""

from __future__ import annotations

import os
import threading

from poimen.testing.local_server import LocalServer, serving


def credentials(url: str) -> dict[str, str]:
    """The environment a client needs to reach the server at ``url`` (fake keys: moto accepts any)."""
    return {"AWS_ENDPOINT_URL_S3": url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1"}


class LocalS3(LocalServer):
    module = "poimen.testing.s3_server"
    scheme = "s3"

    @property
    def env(self) -> dict[str, str]:
        return credentials(self.url)

    def started(self) -> None:
        import boto3

        boto3.client("s3", endpoint_url=self.url, **_keys()).create_bucket(Bucket=self.bucket)


def _keys() -> dict[str, str]:
    env = credentials("")
    return {"aws_access_key_id": env["AWS_ACCESS_KEY_ID"], "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
            "region_name": env["AWS_DEFAULT_REGION"]}


def serve() -> None:
    """Serve moto's S3 on a free port of 127.0.0.1, one request at a time; print the URL, then serve until killed."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    moto_app = DomainDispatcherApplication(create_backend_app)
    one_at_a_time = threading.Lock()

    def app(environ, start_response):
        with one_at_a_time:
            return list(moto_app(environ, start_response))

    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serving()
    os.environ.update(credentials(""))
    serve()
