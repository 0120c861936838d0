"""A spool's manifest keeps no secret, at any depth (issue 40, item 13).

The manifest (``.sumlens-spool.json``) is written beside the spooled files, as readable as
they are, so it keeps only the storage options known to be safe (an endpoint, a region, a
profile's name ...), whatever the others are called, and lists the names of those it left
out (never their values). Checked with a real writer to moto's S3 server, with a secret
inside ``client_kwargs`` that s3fs hands to botocore, and with names no pattern of secret
words would catch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.s3 import REGION, bucket_server, s3_options

from sumlens import SummaryRecord
from sumlens.io import iter_events
from sumlens.io.spool import MANIFEST, kept_options, open_left, read_manifest

BUCKET = "secrets"
SECRETS = ("nested-secret-1", "nested-secret-2", "conn-secret", "bearer-secret")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


def test_a_nested_secret_is_not_written_down(endpoint: str, tmp_path: Path) -> None:
    url = f"s3://{BUCKET}/run"
    options = {
        "endpoint_url": endpoint,
        "client_kwargs": {  # the credentials as botocore's own arguments
            "region_name": REGION,
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "nested-secret-1",
        },
        "config_kwargs": {"connect_timeout": 5, "user_agent_extra": "nested-secret-2"},
        "skip_instance_cache": True,
    }
    spool_root = tmp_path / "spool"
    record = SummaryRecord(url, storage_options=options, spool_dir=spool_root, upload_secs=3600)
    try:
        record.add_value("scalar", "loss", 0.5)
        record.record(1)
        record.flush()  # the secrets work: the upload goes through
        (spool,) = spool_root.iterdir()
        text = (spool / MANIFEST).read_text()
    finally:
        record.close()
    for secret in SECRETS:
        assert secret not in text
    manifest = json.loads(text)
    assert manifest["options"] == {
        "endpoint_url": endpoint,
        "client_kwargs": {"region_name": REGION},
        "config_kwargs": {"connect_timeout": 5},
    }
    assert manifest["left_out"] == [
        "client_kwargs.aws_access_key_id",
        "client_kwargs.aws_secret_access_key",
        "config_kwargs.user_agent_extra",
        "skip_instance_cache",
    ]
    assert [e.step for e in iter_events(url, storage_options=s3_options(endpoint))] == [1]


def test_secrets_under_any_name_or_in_lists_are_left_out() -> None:
    options = {
        "connection_string": "AccountName=a;AccountKey=conn-secret",  # Azure: no secret word
        "headers": {"Authorization": "Bearer bearer-secret"},
        "client_kwargs": {
            "endpoint_url": "http://127.0.0.1:9000",
            "verify": [{"token": "nested-secret-1"}],  # a list where a plain value belongs
            "credentials": {"deep": {"deeper": "nested-secret-2"}},
        },
        "account_name": "team",
        "anon": False,
        "profile": object(),  # not a plain value: left out, never str()'d
    }
    kept, left_out = kept_options(options)
    assert kept == {
        "client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"},
        "account_name": "team",
        "anon": False,
    }
    assert left_out == [
        "client_kwargs.credentials",
        "client_kwargs.verify",
        "connection_string",
        "headers",
        "profile",
    ]
    assert not any(secret in json.dumps(kept) for secret in SECRETS)


def test_a_crafted_manifest_cannot_hand_fsspec_other_options(tmp_path: Path) -> None:
    """What ``sumlens upload`` takes from a manifest (anyone able to write the spool may have
    written it) is what a writer keeps: nothing else reaches the file system."""
    spool = tmp_path / "spool"
    spool.mkdir()
    manifest = {
        "url": "memory://bucket/run",
        "options": {"anon": True, "config_kwargs": {"proxies": {"https": "http://evil:1"}}},
        "pid": 0,
        "host": "elsewhere",
    }
    (spool / MANIFEST).write_text(json.dumps(manifest))
    assert read_manifest(spool)["options"] == manifest["options"]
    left = open_left(spool)
    assert left.storage.fs.storage_options == {"anon": True}
