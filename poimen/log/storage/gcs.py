"""A log on Google Cloud Storage (``gs://bucket/prefix``), through gcsfs and GCS's JSON API."""

from __future__ import annotations

import os
from urllib.parse import quote

from poimen.errors import PoimenError
from poimen.log.storage.object_store import ObjectStore


class GCSStore(ObjectStore):
    """A log under ``gs://bucket/prefix`` through gcsfs, speaking GCS's JSON API. Versions are generations:
    ``ifGenerationMatch=0`` creates, ``ifGenerationMatch=<generation>`` replaces, and a media download names the
    generation of the bytes it returns (``x-goog-generation``), so a read and its version come in one request.

    The endpoint is gcsfs's: ``STORAGE_EMULATOR_HOST`` or ``endpoint_url``; with an emulator and no ``token`` the
    client is anonymous, as Google's own clients are against one. gcsfs's plain ``GCSFileSystem`` is used, not its
    experimental zonal-bucket subclass, which probes each bucket over gRPC before the first request."""

    scheme = "gs"

    def __init__(self, uri: str, **storage_options):
        from gcsfs.core import GCSFileSystem

        super().__init__(uri)
        # gcsfs reads STORAGE_EMULATOR_HOST at each request, so a cached filesystem follows it; only the token
        # differs for an emulator
        if os.environ.get("STORAGE_EMULATOR_HOST") and "token" not in storage_options:
            storage_options = {**storage_options, "token": "anon"}
        self.fs = GCSFileSystem(**storage_options)

    def _call(self, method: str, path: str, *args, **kwargs):
        from fsspec.asyn import sync

        return sync(self.fs.loop, self.fs._call, method, path, *args, **kwargs)

    def _object(self, name: str) -> tuple[str, str]:
        return self.bucket, self._key(name)

    def _get(self, name: str) -> tuple[bytes, str] | None:
        try:
            headers, body = self._call("GET", self.fs.url(f"{self.bucket}/{self._key(name)}"))
        except FileNotFoundError:
            return None
        generation = headers.get("x-goog-generation")
        if not generation:
            raise PoimenError(f"{self.where(name)}: the server named no generation (x-goog-generation) for the "
                              "object it returned, so a commit could not be made conditional on it")
        return body, generation

    def exists_root(self) -> bool:
        return bool(self._call("GET", "b/{}/o", self.bucket, prefix=self.prefix, maxResults=1,
                               json_out=True).get("items"))

    def exists(self, name: str) -> bool:
        try:
            self._call("GET", "b/{}/o/{}", *self._object(name), json_out=True)
        except FileNotFoundError:
            return False
        return True

    def _upload(self, name: str, data: bytes, **condition) -> str:
        """One media upload (the whole object in one request); the new object's generation."""
        obj = self._call("POST", f"{self.fs._location}/upload/storage/v1/b/{quote(self.bucket, safe='')}/o",
                         uploadType="media", name=self._key(name), data=data, json_out=True,
                         headers={"Content-Type": "application/octet-stream"}, **condition)
        return str(obj["generation"])

    def put(self, name: str, data: bytes) -> None:
        self._upload(name, data)

    def _put_if(self, name: str, data: bytes, version: str | None) -> str | None:
        try:
            return self._upload(name, data, ifGenerationMatch=version or "0")
        except FileExistsError:  # gcsfs's name for a 412
            return None

    def _list(self, prefix: str, delimiter: bool) -> list[str]:
        out, token = [], None
        while True:
            resp = self._call("GET", "b/{}/o", self.bucket, prefix=self._key(prefix), pageToken=token,
                              delimiter="/" if delimiter else None, json_out=True)
            out += resp.get("prefixes", []) if delimiter else [o["name"] for o in resp.get("items", [])]
            token = resp.get("nextPageToken")
            if not token:
                return out

    def delete(self, name: str) -> None:
        self._delete_keys([self._key(name)])

    def _delete_keys(self, keys: list[str]) -> None:
        from fsspec.asyn import sync

        # gcsfs batches up to 100 deletes a request on GCS (an emulator gets one request each)
        results = sync(self.fs.loop, self.fs._delete_files, [f"{self.bucket}/{k}" for k in keys], 100)
        failed = [r for r in results if isinstance(r, Exception) and not isinstance(r, FileNotFoundError)]
        if failed:
            raise PoimenError(f"{self.uri}: deleting {len(failed)} of {len(keys)} objects failed: {failed[0]}")
