"""``GET /api/v1/snapshot`` (``board/api/snapshot.py``) over an in-memory read surface
holding runs SummaryRecord wrote: the HTML file as a download, with the runs' annotations,
and bad choices as a 4xx naming the parameter."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from helpers.board import route_client
from helpers.memory_surface import MemorySurface
from helpers.snapshot_runs import IMAGE_TAG, write_runs
from starlette.testclient import TestClient

from sumlens.board.settings import BoardSettings
from sumlens.io import iter_events

BASE = "/runs/base"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    write_runs(tmp_path / "written", ["a", "b"], 50, 10)
    surface = MemorySurface(BASE)
    for name in ("a", "b"):
        surface.add_events(f"./{name}", iter_events(tmp_path / "written" / name))
    settings = BoardSettings(base_dir=Path(BASE), workspace=tmp_path / "ws")
    with route_client(surface, settings) as found:
        yield found


def test_the_snapshot_is_a_download_of_the_runs_and_tags_asked(client: TestClient) -> None:
    note = {"tags": ["baseline"], "note": "the first", "colour": None}
    assert client.put("/api/v1/annotation", params={"run": "./b"}, json=note).status_code == 200
    response = client.get("/api/v1/snapshot?run=./b&tag_regex=(?i)LOSS|digit")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-disposition"] == 'attachment; filename="sumlens-snapshot.html"'
    found = re.search(r'id="snapshot-data">(.*?)</script>', response.text)
    data = orjson.loads(found.group(1))
    assert [(run["id"], run["annotation"]) for run in data["runs"]] == [("./b", note)]
    assert [tag["tag"] for tag in data["scalars"]] == ["loss"]
    assert [tag["tag"] for tag in data["images"]] == [IMAGE_TAG]


def test_the_snapshot_keeps_the_smoothing_and_groups_asked(client: TestClient) -> None:
    """Grouped by run tag with a chosen group colour, smoothed: the file holds the group in
    that colour and each series' smoothed values."""
    for run in ("./a", "./b"):
        note = {"tags": ["seeds"], "note": "", "colour": None}
        assert client.put("/api/v1/annotation", params={"run": run}, json=note).status_code == 200
    colour = client.put(
        "/api/v1/group-colour", params={"group": "seeds"}, json={"colour": "#abcdef"}
    )
    assert colour.status_code == 200, colour.text
    query = "?tag=loss&smoothing=0.5&group_by=tag&stat=median&band=p25-75&members=hidden"
    response = client.get("/api/v1/snapshot" + query)
    assert response.status_code == 200, response.text
    data = orjson.loads(re.search(r'id="snapshot-data">(.*?)</script>', response.text).group(1))
    groups = data["groups"]
    assert (groups["by"], groups["stat"], groups["band"], groups["members"]) == (
        "tag", "median", "p25-75", "hidden")  # fmt: skip
    (group,) = groups["groups"]
    assert (group["name"], group["colour"], len(group["members"])) == ("seeds", "#abcdef", 2)
    assert data["smoothing"] == {"weight": 0.5, "method": "ema"}
    assert all("smoothed" in series for series in data["scalars"][0]["series"])


@pytest.mark.parametrize(
    ("query", "status", "said"),
    [
        ("?smoothing=0.5&method=median", 422, "method='median' is not one of ema, average"),
        ("?group_by=colour", 422, "by='colour' is not one of regex, tag, field"),
        ("?group_by=regex", 422, "group_regex='' is empty"),
        ("?group_by=tag&members=dim", 422, "members='dim' is not one of faint, hidden"),
        ("?tag_regex=(a", 400, "tag_regex='(a' is not a regular expression RE2 takes"),
        ("?run_regex=a(?=b)", 400, "run_regex='a(?=b)'"),
        ("?run=./zz", 404, "run='./zz' is not a run of this base directory"),
        ("?tag=nothing", 422, "no scalar or image tag of the 2 run(s) chosen is named 'nothing'"),
    ],
)
def test_bad_choices_are_refused_by_name(
    client: TestClient, query: str, status: int, said: str
) -> None:
    response = client.get("/api/v1/snapshot" + query)
    assert response.status_code == status
    assert said in response.json()["detail"]
