"""An error of the store's client when a record is made is one clear line, raised at the
user's call, naming the argument and never the password (issue 40, item 19).

The README and :mod:`sumlens.io.remote` promise that a store that cannot be written fails
when the record is made, in one line naming the URL. Credentials inside the endpoint URL
(``http://user:password@host``) made s3fs's client fail after a minute of retries with a
100-line traceback of aiobotocore's frames; now they are refused before any request,
naming ``storage_options['endpoint_url']`` with the password masked, and any other error
of the client library (an invalid bucket name) is a one-line ``RemoteStorageError``.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from helpers.s3 import closed_port, moto_server, s3_options
from torch import nn

import sumlens
from sumlens import SummaryCollector, SummaryRecord, SummaryWriter
from sumlens.cli import main
from sumlens.io import RemoteStorageError

PASSWORD = "pw-" + "0123456789"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with moto_server() as url:
        yield url


def told(err: BaseException) -> str:
    """Everything Python prints for ``err`` when nobody catches it."""
    return "".join(traceback.format_exception(err))


def assert_one_clear_line(err: BaseException, *wanted: str) -> None:
    message = str(err)
    assert "\n" not in message, message
    assert all(part in message for part in wanted), message
    printed = told(err)
    assert PASSWORD not in printed
    assert "botocore" not in printed and "aiohttp" not in printed, printed
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)


WRITERS = {"record": SummaryRecord, "writer": SummaryWriter}


@pytest.mark.parametrize("where", ["top", "client_kwargs"])
@pytest.mark.parametrize("name", ["record", "writer"])
def test_credentials_in_the_endpoint_url_are_refused_in_one_line(
    tmp_path: Path, where: str, name: str
) -> None:
    endpoint = f"http://user:{PASSWORD}@127.0.0.1:{closed_port()}"
    options: dict[str, Any] = {"key": "k", "secret": "s"}
    if where == "top":
        options["endpoint_url"] = endpoint
    else:
        options["client_kwargs"] = {"endpoint_url": endpoint}
    option = "['endpoint_url']" if where == "top" else "['client_kwargs']['endpoint_url']"
    spool = tmp_path / "spool"
    with pytest.raises(ValueError) as raised:
        WRITERS[name]("s3://bucket/run", storage_options=options, spool_dir=spool)
    assert_one_clear_line(raised.value, f"storage_options{option}", "http://***@127.0.0.1:")
    assert not spool.exists()  # refused before anything was made


def test_the_collector_refuses_them_when_training_opens_its_record() -> None:
    options = {"endpoint_url": f"http://u:{PASSWORD}@127.0.0.1:1", "key": "k", "secret": "s"}
    collector = SummaryCollector("s3://bucket/run", storage_options=options)
    network = nn.Linear(2, 2)
    model = sumlens.Model(network, nn.MSELoss(), torch.optim.SGD(network.parameters(), lr=0.1))
    with pytest.raises(ValueError) as raised:
        model.train(1, [(torch.zeros(1, 2), torch.zeros(1, 2))], callbacks=[collector])
    assert_one_clear_line(raised.value, "storage_options['endpoint_url']")


def test_another_error_of_the_client_is_one_line_naming_the_url(
    endpoint: str, tmp_path: Path
) -> None:
    url = "s3://bad!bucket/run"
    with pytest.raises(RemoteStorageError) as raised:
        SummaryRecord(url, storage_options=s3_options(endpoint), spool_dir=tmp_path)
    assert str(raised.value).startswith(f"{url}: the store's client failed (")
    assert_one_clear_line(raised.value, "Invalid bucket name")


def test_the_command_line_says_it_in_one_line(capsys: Any) -> None:
    flag = f"endpoint_url=http://user:{PASSWORD}@127.0.0.1:1"
    assert main(["read", "s3://bucket/run", "--storage-option", flag]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "storage_options['endpoint_url']" in err
    assert PASSWORD not in err
