"""A log on S3 (``s3://bucket/prefix``), through s3fs."""

from __future__ import annotations

import os

from poimen.log.storage.object_store import ObjectStore


class S3Store(ObjectStore):
    """A log under ``s3://bucket/prefix`` through s3fs (credentials and endpoint: the usual AWS or fsspec settings).
    Versions are ETags: ``If-None-Match: *`` creates, ``If-Match: <etag>`` replaces."""

    scheme = "s3"

    def __init__(self, uri: str, **storage_options):
        import s3fs

        super().__init__(uri)
        # fsspec hands out one cached filesystem per set of arguments, and its client reads the endpoint from the
        # environment once: name the endpoint in the arguments, so a process whose environment names another
        # server (a test's, the bench's) gets a filesystem for that one.
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        if endpoint and "endpoint_url" not in storage_options:
            storage_options = {**storage_options, "endpoint_url": endpoint}
        self.fs = s3fs.S3FileSystem(**storage_options)

    def _call(self, method: str, **kwargs):
        return self.fs.call_s3(method, Bucket=self.bucket, **kwargs)

    def _get(self, name: str) -> tuple[bytes, str] | None:
        from fsspec.asyn import sync

        async def get():
            try:
                resp = await self.fs._call_s3("get_object", Bucket=self.bucket, Key=self._key(name))
            except FileNotFoundError:
                return None
            async with resp["Body"] as body:
                return await body.read(), resp["ETag"]

        return sync(self.fs.loop, get)

    def exists_root(self) -> bool:
        return bool(self._call("list_objects_v2", Prefix=self.prefix, MaxKeys=1).get("KeyCount"))

    def exists(self, name: str) -> bool:
        try:
            self._call("head_object", Key=self._key(name))
        except FileNotFoundError:
            return False
        return True

    def put(self, name: str, data: bytes) -> None:
        self._call("put_object", Key=self._key(name), Body=data)

    def _put_if(self, name: str, data: bytes, version: str | None) -> str | None:
        condition = {"IfMatch": version} if version else {"IfNoneMatch": "*"}
        try:
            return self._call("put_object", Key=self._key(name), Body=data, **condition)["ETag"]
        except Exception as exc:  # s3fs maps a 412 to FileExistsError or wraps it in OSError
            if precondition_failed(exc):
                return None
            raise

    def _list(self, prefix: str, delimiter: bool) -> list[str]:
        out, token = [], {}
        while True:
            resp = self._call("list_objects_v2", Prefix=self._key(prefix), **({"Delimiter": "/"} if delimiter else {}),
                              **token)
            out += [p["Prefix"] for p in resp.get("CommonPrefixes", [])] if delimiter else \
                [o["Key"] for o in resp.get("Contents", [])]
            if not resp.get("IsTruncated"):
                return out
            token = {"ContinuationToken": resp["NextContinuationToken"]}

    def delete(self, name: str) -> None:
        self._call("delete_object", Key=self._key(name))

    def _delete_keys(self, keys: list[str]) -> None:
        for i in range(0, len(keys), 1000):
            self._call("delete_objects", Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]], "Quiet": True})


def precondition_failed(exc: BaseException) -> bool:
    """True if ``exc`` (or what it wraps) is S3's answer to a failed condition: 412, or 409 for a concurrent one."""
    while exc is not None:
        if isinstance(exc, FileExistsError):
            return True
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
        if code in ("PreconditionFailed", "ConditionalRequestConflict"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
