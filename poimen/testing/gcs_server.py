"""A local GCS JSON API for tests: gcp-storage-emulator on 127.0.0.1, in a process of its own, with the two things
the log's protocol needs of GCS that the emulator (2026.7.19) does not do.

1. **Generation preconditions on uploads.** The emulator ignores ``ifGenerationMatch``: a second create with
   ``ifGenerationMatch=0`` overwrites the object, and a commit made against a stale generation succeeds, so a lost
   update would go unnoticed. Here an upload (media or multipart; the log uses media) that carries
   ``ifGenerationMatch`` is checked against the object's current generation (0: absent) first, and a mismatch gets
   GCS's answer, 412 ``conditionNotMet``, with nothing stored. A resumable upload with a precondition gets 501
   rather than a check this harness does not make.
2. **``x-goog-generation`` on media downloads.** GCS names the generation of the bytes it returns; the emulator
   sends no such header. Here a download carries the generation the emulator stored with the object.

And two for speed, which change no answer: the emulator keeps its objects' metadata in memory but also rewrites
all of it as one JSON document after every write (each write cost grows with the number of objects, and a log
writes an object per journal turn), which an in-memory server does not need; and its buckets keep a soft-deleted
copy of each deleted object for 7 days (GCS's default policy), which a test bucket does not need: the bucket here
has soft delete off (``retentionDurationSeconds: 0``, a policy GCS allows), so the emulator deletes outright.

On GCS a conditional upload is atomic: the generation check and the write are one operation of the service.
Here the check and the emulator's store are two steps, and they make one only because this server handles one
request at a time (``http.server.HTTPServer``, not its threading variant: a second client waits in the listen
queue). The client is the real one (gcsfs over aiohttp), pointed here through ``STORAGE_EMULATOR_HOST``, so
forked and spawned writer processes find it too.
"""

from __future__ import annotations

import sys
from functools import partial
from http import HTTPStatus
from http.server import HTTPServer

from poimen.testing.local_server import BUCKET, LocalServer, serving


def environment(url: str) -> dict[str, str]:
    """The environment a client needs to reach the server at ``url`` (GCSStore goes anonymous with an emulator)."""
    return {"STORAGE_EMULATOR_HOST": url}


class LocalGCS(LocalServer):
    module = "poimen.testing.gcs_server"
    scheme = "gs"

    @property
    def env(self) -> dict[str, str]:
        return environment(self.url)


def _generation(storage, bucket: str, name: str) -> str:
    """The object's current generation, "0" if it does not exist (GCS's convention for ifGenerationMatch)."""
    from gcp_storage_emulator.exceptions import NotFound

    try:
        return str(storage.get_file_obj(bucket, name)["generation"])
    except NotFound:
        return "0"


def _upload_name(request) -> str | None:
    if "name" in request.query:
        return request.query["name"][0]
    data = request.data
    return data.get("meta", {}).get("name") if isinstance(data, dict) else None


def _preconditioned(insert):
    """The emulator's upload handler, checking ``ifGenerationMatch`` first (GCS's 412 ``conditionNotMet``)."""

    def handler(request, response, storage, *args, **kwargs):
        wanted = request.query.get("ifGenerationMatch", [None])[0]
        if wanted is not None:
            if request.query.get("uploadType", [""])[0] == "resumable":
                response.status = HTTPStatus.NOT_IMPLEMENTED
                response.json({"error": {"code": 501,
                                         "message": "resumable uploads with a precondition: not emulated"}})
                return None
            name = _upload_name(request)
            if _generation(storage, request.params["bucket_name"], name) != wanted:
                response.status = HTTPStatus.PRECONDITION_FAILED
                response.json({"error": {"code": 412, "message": "At least one of the pre-conditions you specified "
                                         "did not hold.", "errors": [{"reason": "conditionNotMet"}]}})
                return None
        return insert(request, response, storage, *args, **kwargs)

    return handler


def _with_generation(download):
    """The emulator's download handler, naming the generation of the bytes it returns (``x-goog-generation``)."""

    def handler(request, response, storage, *args, **kwargs):
        generation = _generation(storage, request.params["bucket_name"], request.params["object_id"])
        download(request, response, storage, *args, **kwargs)
        if response.status == HTTPStatus.OK:
            response["x-goog-generation"] = generation

    return handler


def _patch_handlers() -> None:
    """Wrap the emulator's upload and download handlers wherever its router finds them."""
    from gcp_storage_emulator import server
    from gcp_storage_emulator.handlers import objects

    wrapped = {objects.insert: _preconditioned(objects.insert), objects.download: _with_generation(objects.download)}
    for _, handlers in server.HANDLERS:
        for method, handler in handlers.items():
            handlers[method] = wrapped.get(handler, handler)
    objects.insert = wrapped[objects.insert]  # the router's fallback for uploads POSTed without /upload


def _memory_storage():
    """The emulator's in-memory storage, without the whole-metadata JSON rewrite after each write."""
    from gcp_storage_emulator.storage import Storage

    class InMemory(Storage):
        def _write_config_to_file(self):  # the metadata is in self.objects; nothing reads the copy
            pass

    return InMemory(use_memory_fs=True)


class _OneAtATime(HTTPServer):
    request_queue_size = 128  # concurrent writer processes wait in the queue, not in SYN retries


def serve(bucket: str) -> None:
    """Serve the emulator on a free port of 127.0.0.1, one request at a time, with ``bucket`` in memory; print the
    URL, then serve until killed."""
    from gcp_storage_emulator.handlers import buckets
    from gcp_storage_emulator.server import RequestHandler

    _patch_handlers()
    storage = _memory_storage()
    buckets.create_bucket(bucket, storage)
    storage.buckets[bucket]["softDeletePolicy"] = {"retentionDurationSeconds": "0"}  # delete outright
    httpd = _OneAtATime(("127.0.0.1", 0), partial(RequestHandler, storage))
    print(f"http://127.0.0.1:{httpd.server_address[1]}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    serving()
    serve(sys.argv[1] if len(sys.argv) > 1 else BUCKET)
