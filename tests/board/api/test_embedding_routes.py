"""``/api/v1/embedding`` (``board/api/embeddings.py``, ``api/projector.py``) and the
``beside_file`` seam of the read surfaces: an embedding's points on its principal
components with its metadata columns, sampled to a bound; crafted files (ragged rows,
text, paths leaving the run, files too large) counted or refused with a message naming
them; and, over a real directory that torch's ``add_embedding`` wrote, the run list's
``embedding`` tags and the same points through the loader."""

from __future__ import annotations

import base64
import contextlib
import io
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.board import route_client, wait_until
from helpers.memory_surface import MemorySurface
from helpers.tb_logs import torch_every_method
from PIL import Image
from starlette.testclient import TestClient

from sumlens.board.api.embeddings import SPRITE_SIDE
from sumlens.board.data.loader import Loader
from sumlens.board.data.surface import BesideFileTooLarge

RNG = np.random.default_rng(0)
VECTORS = RNG.normal(size=(40, 5)) * [5.0, 3.0, 1.0, 0.5, 0.1]
CONFIG = """embeddings {
  tensor_name: "%s"
  tensor_path: "%s"
  metadata_path: "%s"
}
"""


def _tsv(rows: np.ndarray) -> bytes:
    return "".join("\t".join(str(v) for v in row) + "\n" for row in rows).encode()


def _points(answer: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(answer["coords"]), dtype=np.float32).reshape(-1, 3)


def _reference(vectors: np.ndarray) -> np.ndarray:
    """The first three principal components by numpy's SVD of the centred rows."""
    centred = vectors - vectors.mean(axis=0)
    return centred @ np.linalg.svd(centred, full_matrices=False)[2][:3].T


def _embedding(surface: MemorySurface, run: str, entries: list[tuple[str, str, str]]) -> None:
    config = "".join(CONFIG % entry for entry in entries)
    surface.add_beside_file(run, "projector_config.pbtxt", config.encode())


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    surface = MemorySurface()
    surface.add_scalars("./a", "loss", [1], [0.5])
    _embedding(surface, "./a", [("words:00001", "00001/words/tensors.tsv",
                                 "00001/words/metadata.tsv"),
                                ("plain:00000", "00000/plain/tensors.tsv", "")])  # fmt: skip
    surface.add_beside_file("./a", "00001/words/tensors.tsv", _tsv(VECTORS))
    rows = [f"{('even', 'odd')[i % 2]}\t{i}\tw{i}" for i in range(40)]
    metadata = "parity\tindex\tword\n" + "\n".join(rows) + "\n"
    surface.add_beside_file("./a", "00001/words/metadata.tsv", metadata.encode())
    surface.add_beside_file("./a", "00000/plain/tensors.tsv", _tsv(VECTORS[:, :2]))
    crafted = [
        ("ragged", "r/tensors.tsv", "r/metadata.tsv"),
        ("escape", "../../outside/tensors.tsv", ""),
        ("absolute", "/etc/passwd", ""),
        ("missing", "m/tensors.tsv", "m/metadata.tsv"),
        ("text", "t/tensors.tsv", ""),
    ]
    _embedding(surface, "./crafted", crafted)
    lines = [b"1\t2\t3", b"4\t5", b"x\t6\t7", b"nan\t1\t1", b"", b"7\t8\t9", b"1\t0\t2"]
    surface.add_beside_file("./crafted", "r/tensors.tsv", b"\r\n".join(lines))
    surface.add_beside_file("./crafted", "r/metadata.tsv", b"a\nb\nc\n")
    surface.add_beside_file("./crafted", "t/tensors.tsv", b"a\tb\nc\td\n")
    surface.add_beside_file("./broken", "projector_config.pbtxt", b"embeddings { nonsense")
    surface.add_beside_file("./huge", "projector_config.pbtxt", b"#" * (1 << 20) + b"\n#")
    surface.add_scalars("./none", "loss", [1], [0.5])
    with route_client(surface) as client:
        yield client


def _get(client: TestClient, run: str, tag: str, **params: int) -> dict:
    answer = client.get("/api/v1/embedding", params={"run": run, "tag": tag, **params})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_run_list_names_the_embeddings(client: TestClient) -> None:
    runs = {run["id"]: run for run in client.get("/api/v1/runs").json()["runs"]}
    assert runs["./a"]["tags"]["embedding"] == ["plain:00000", "words:00001"]
    assert "embedding" not in runs["./none"]["tags"]
    assert "embedding" not in runs["./broken"]["tags"]


def test_points_are_the_principal_components(client: TestClient) -> None:
    answer = _get(client, "./a", "words:00001")
    assert (answer["rows"], answer["dimension"], answer["shown"], answer["skipped_rows"]) == (
        40, 5, 40, 0)  # fmt: skip
    points, expected = _points(answer), _reference(VECTORS)
    for axis in range(3):  # a component's sign is a convention
        sign = np.sign(points[:, axis] @ expected[:, axis])
        np.testing.assert_allclose(points[:, axis], sign * expected[:, axis], rtol=1e-4, atol=1e-4)
    assert answer["variance"][0] > answer["variance"][1] > answer["variance"][2] > 0
    assert sum(answer["variance"]) < 1


def test_metadata_columns_are_typed(client: TestClient) -> None:
    parity, index, word = _get(client, "./a", "words:00001")["columns"]
    assert parity == {"name": "parity", "kind": "category", "categories": ["even", "odd"],
                      "codes": [i % 2 for i in range(40)]}  # fmt: skip
    assert (index["kind"], index["values"][:3]) == ("number", [0.0, 1.0, 2.0])
    assert (word["kind"], word["categories"][39]) == ("category", "w39")


def test_fewer_columns_than_components_are_padded(client: TestClient) -> None:
    answer = _get(client, "./a", "plain:00000")
    points = _points(answer)
    assert answer["columns"] == [] and answer["metadata_note"] == ""
    assert np.all(points[:, 2] == 0) and len(answer["variance"]) == 2
    assert answer["variance"] == pytest.approx([answer["variance"][0], 1 - answer["variance"][0]])


def test_sampling_is_bounded_and_the_same_each_time(client: TestClient) -> None:
    first = _get(client, "./a", "words:00001", points=7)
    assert (first["rows"], first["shown"]) == (40, 7)
    assert first == _get(client, "./a", "words:00001", points=7)
    assert len(first["columns"][0]["codes"]) == 7


def test_rows_that_are_no_vectors_are_counted(client: TestClient) -> None:
    answer = _get(client, "./crafted", "ragged")
    assert (answer["rows"], answer["shown"], answer["dimension"]) == (3, 3, 3)
    assert answer["skipped_rows"] == 4
    assert answer["skipped_reason"] == (
        "2 not of 3, 1 holding text that is not a number, 1 holding NaN or infinity"
    )
    (label,) = answer["columns"]  # rows 0, 5 and 6 of the tensors: the metadata has 3 rows
    assert label["categories"] == ["a", ""]
    assert "fewer than the tensors file" in answer["metadata_note"]


@pytest.mark.parametrize(
    ("run", "tag", "status", "detail"),
    [
        ("./crafted", "escape", 422, "leaves the run's directory"),
        ("./crafted", "absolute", 422, "is not a relative path inside the run's directory"),
        ("./crafted", "missing", 404, "the tensors file 'm/tensors.tsv' of run './crafted' is"),
        ("./crafted", "text", 422, "none of its rows is a vector of finite numbers"),
        ("./crafted", "nope", 404, "has no embedding tag='nope'; embeddings: ['ragged'"),
        ("./broken", "x", 422, "projector_config.pbtxt is not a projector config"),
        ("./huge", "x", 422, "is larger than 1,048,576 bytes, the most the embeddings view"),
        ("./none", "x", 404, "run='./none' has no projector_config.pbtxt"),
        ("./nope", "x", 404, "run='./nope' is not a run being served"),
    ],
)
def test_what_cannot_be_shown_is_said(
    client: TestClient, run: str, tag: str, status: int, detail: str
) -> None:
    answer = client.get("/api/v1/embedding", params={"run": run, "tag": tag})
    assert answer.status_code == status
    assert detail in answer.json()["detail"]


@pytest.mark.parametrize("points", [0, 100_001, "many"])
def test_bad_point_bounds_are_refused(client: TestClient, points: object) -> None:
    answer = client.get("/api/v1/embedding", params={"run": "./a", "tag": "x", "points": points})
    assert answer.status_code == 422
    assert "points" in str(answer.json()["detail"])


def test_memory_beside_files_keep_the_surface_rules() -> None:
    surface = MemorySurface()
    surface.add_beside_file("./a", "d/f.tsv", b"12345")
    assert surface.beside_file("./a", "d/./f.tsv", 5) == b"12345"
    assert surface.beside_file("./a", "d/g.tsv", 5) is None
    assert surface.beside_file("./b", "d/f.tsv", 5) is None
    with pytest.raises(BesideFileTooLarge, match="more than 4 bytes"):
        surface.beside_file("./a", "d/f.tsv", 4)
    for path in ("../a", "/abs", "d\\..\\..\\x", "", "C:/x"):
        with pytest.raises(ValueError, match="path="):
            surface.beside_file("./a", path, 5)


@pytest.fixture(scope="module")
def torch_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    base = tmp_path_factory.mktemp("embeddings")
    torch.manual_seed(0)
    with SummaryWriter(str(base / "run")) as writer:
        writer.add_scalar("loss", 0.5, 0)
        writer.add_embedding(torch.from_numpy(VECTORS), metadata=[f"w{i}" for i in range(40)],
                             tag="words", global_step=3)  # fmt: skip
        rows = [[i % 3, f"n{i}"] for i in range(40)]
        writer.add_embedding(torch.from_numpy(VECTORS[:, :3]), metadata=rows,
                             metadata_header=["cls", "name"], tag="two")  # fmt: skip
    torch_every_method(base / "every")
    return base


def test_the_loader_serves_what_torch_wrote(torch_base: Path, tmp_path: Path) -> None:
    loader = Loader(torch_base, tmp_path / "ws", reload_interval=0.2, watch=False)
    with route_client(loader) as client:

        def with_embeddings() -> dict[str, dict] | None:
            runs = client.get("/api/v1/runs").json()["runs"]
            found = {r["id"]: r for r in runs if "embedding" in r["tags"]}
            return found if {"./run", "./every"} <= set(found) else None

        runs = wait_until(with_embeddings)
        assert runs["./run"]["tags"]["embedding"] == ["two:00000", "words:00003"]
        assert runs["./every"]["tags"]["embedding"] == ["emb:00001"]
        words = _get(client, "./run", "words:00003")
        assert (words["rows"], words["dimension"], words["skipped_rows"]) == (40, 5, 0)
        expected = _reference(VECTORS.astype(np.float32).astype(np.float64))
        np.testing.assert_allclose(np.abs(_points(words)), np.abs(expected), atol=1e-3)
        assert words["columns"][0]["categories"][7] == "w7"
        cls, name = _get(client, "./run", "two:00000")["columns"]
        assert (cls["name"], cls["kind"], cls["values"][:4]) == ("cls", "number", [0, 1, 2, 0])
        assert (name["name"], name["codes"][5]) == ("name", 5)
        every = _get(client, "./every", "emb:00001")
        assert (every["rows"], every["dimension"]) == (6, 4)
        assert every["columns"][0]["categories"] == list("abcdef")
        assert loader.beside_file("./run", "00003/words/nothing.tsv", 10) is None
        with pytest.raises(BesideFileTooLarge):
            loader.beside_file("./run", "00003/words/tensors.tsv", 10)
        with pytest.raises(ValueError, match="leaves"):
            loader.beside_file("./run", "../every/projector_config.pbtxt", 10)


def test_a_rewritten_file_is_projected_again() -> None:
    """Answers are kept by the bytes they were made from: asking again gives the same
    answer, and a rewritten tensors or metadata file gives a new one, never a stale one."""
    surface = MemorySurface()
    _embedding(surface, "./a", [("w:00000", "w/tensors.tsv", "w/metadata.tsv")])
    surface.add_beside_file("./a", "w/tensors.tsv", _tsv(VECTORS))
    surface.add_beside_file("./a", "w/metadata.tsv", "".join(f"a{i}\n" for i in range(40)).encode())
    with route_client(surface) as client:
        first = _get(client, "./a", "w:00000")
        assert _get(client, "./a", "w:00000") == first
        surface.add_beside_file("./a", "w/tensors.tsv", _tsv(VECTORS[:10]))
        assert _get(client, "./a", "w:00000")["rows"] == 10
        surface.add_beside_file(
            "./a", "w/metadata.tsv", "".join(f"b{i}\n" for i in range(40)).encode()
        )
        assert _get(client, "./a", "w:00000")["columns"][0]["categories"][:2] == ["b0", "b1"]


def test_thumbnails_of_what_torch_wrote(torch_base: Path, tmp_path: Path) -> None:
    """``add_embedding(label_img=...)`` (torch's ``torch_every_method``: 6 points with 4x4
    thumbnails): the answer gives the thumbnail size and each point's tensors row, and the
    sprite route serves the sprite image torch wrote, byte for byte, as a PNG."""
    loader = Loader(torch_base, tmp_path / "ws", reload_interval=0.2, watch=False)
    with route_client(loader) as client:
        wait_until(lambda: _listed(client, "./every"))
        answer = _get(client, "./every", "emb:00001")
        sprite = answer["sprite"]
        assert (sprite["width"], sprite["height"]) == (4, 4)
        rows = np.frombuffer(base64.b64decode(sprite["rows"]), dtype="<u4")
        assert rows.tolist() == list(range(6))
        image = client.get(
            "/api/v1/embedding/sprite", params={"run": "./every", "tag": "emb:00001"}
        )
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"
        assert image.content == (torch_base / "every" / "00001" / "emb" / "sprite.png").read_bytes()
        assert "sprite" not in _get(client, "./run", "words:00003")


def _listed(client: TestClient, run: str) -> bool:
    runs = client.get("/api/v1/runs").json()["runs"]
    return any(r["id"] == run and "embedding" in r["tags"] for r in runs)


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


SPRITE_CONFIG = """embeddings {
  tensor_name: "%s"
  tensor_path: "v/tensors.tsv"
  sprite { image_path: "%s" %s }
}
"""


@pytest.fixture(scope="module")
def sprites() -> Iterator[TestClient]:
    """Embeddings whose sprites are fine, missing, not images, too large, or whose thumbnail
    size is not a width and a height."""
    surface = MemorySurface()
    entries = [
        ("fine", "fine.png", "single_image_dim: 2 single_image_dim: 3"),
        ("missing", "nothing.png", "single_image_dim: 2 single_image_dim: 2"),
        ("text", "text.png", "single_image_dim: 2 single_image_dim: 2"),
        ("huge", "huge.png", "single_image_dim: 2 single_image_dim: 2"),
        ("truncated", "truncated.png", "single_image_dim: 2 single_image_dim: 2"),
        ("one_dim", "fine.png", "single_image_dim: 2"),
        ("zero_dim", "fine.png", "single_image_dim: 0 single_image_dim: 4"),
    ]
    config = "".join(SPRITE_CONFIG % entry for entry in entries)
    config += 'embeddings { tensor_name: "plain" tensor_path: "v/tensors.tsv" }\n'
    surface.add_beside_file("./s", "projector_config.pbtxt", config.encode())
    surface.add_beside_file("./s", "v/tensors.tsv", _tsv(VECTORS))
    surface.add_beside_file("./s", "fine.png", _png(14, 21))
    surface.add_beside_file("./s", "text.png", b"not an image at all")
    surface.add_beside_file("./s", "huge.png", _png(SPRITE_SIDE + 1, 1))
    surface.add_beside_file("./s", "truncated.png", _png(8, 8)[:20])
    with route_client(surface) as client:
        yield client


def test_a_sprite_is_served_after_its_header_is_checked(sprites: TestClient) -> None:
    answer = _get(sprites, "./s", "fine")
    assert (answer["sprite"]["width"], answer["sprite"]["height"]) == (2, 3)
    image = sprites.get("/api/v1/embedding/sprite", params={"run": "./s", "tag": "fine"})
    assert image.status_code == 200 and image.content == _png(14, 21)


@pytest.mark.parametrize(
    ("tag", "status", "detail"),
    [
        ("missing", 404, "the sprite image 'nothing.png' of run './s' is not there"),
        ("text", 422, "is not a PNG, JPEG or GIF image"),
        ("huge", 422, f"is {SPRITE_SIDE + 1}x1 pixels, more than the {SPRITE_SIDE} a side"),
        ("truncated", 422, "'truncated.png' of run './s' cannot be read"),
        ("plain", 404, "the embedding 'plain' of run './s' has no sprite image"),
        ("absent", 404, "has no embedding tag='absent'"),
    ],
)
def test_a_sprite_that_cannot_be_drawn_is_refused(
    sprites: TestClient, tag: str, status: int, detail: str
) -> None:
    answer = sprites.get("/api/v1/embedding/sprite", params={"run": "./s", "tag": tag})
    assert answer.status_code == status
    assert detail in answer.json()["detail"]


@pytest.mark.parametrize("tag", ["one_dim", "zero_dim"])
def test_a_thumbnail_size_that_is_no_width_and_height_is_said(
    sprites: TestClient, tag: str
) -> None:
    answer = _get(sprites, "./s", tag)
    assert "sprite" not in answer
    assert "is not a width and height" in answer["sprite_note"]


def test_a_link_leading_out_of_the_run_is_not_followed(tmp_path: Path) -> None:
    """A projector file that is a symbolic link to a file outside its run's directory is
    refused by name (a run must not lead the dashboard to other files of the machine); a run
    directory that is itself a link, and a link inside the run, are read."""
    secret = tmp_path / "secret.tsv"
    secret.write_text("token\n" * 40)
    real_run = tmp_path / "elsewhere" / "run"
    real_run.mkdir(parents=True)
    (real_run / "v.tsv").write_bytes(_tsv(VECTORS))
    (real_run / "labels.tsv").write_text("".join(f"w{i}\n" for i in range(40)))
    (real_run / "inside.tsv").symlink_to(real_run / "labels.tsv")
    (real_run / "outside.tsv").symlink_to(secret)
    config = CONFIG % ("in", "v.tsv", "inside.tsv") + CONFIG % ("out", "v.tsv", "outside.tsv")
    (real_run / "projector_config.pbtxt").write_text(config)
    (real_run / "events.out.tfevents.1.host").write_bytes(b"")
    base = tmp_path / "base"
    base.mkdir()
    (base / "run").symlink_to(real_run, target_is_directory=True)
    loader = Loader(base, tmp_path / "ws", reload_interval=0.2, watch=False)
    with route_client(loader) as client:
        wait_until(lambda: _listed(client, "./run"))
        assert _get(client, "./run", "in")["columns"][0]["categories"][3] == "w3"
        answer = client.get("/api/v1/embedding", params={"run": "./run", "tag": "out"})
        assert answer.status_code == 422
        said = "path='outside.tsv' leads outside the run's directory through a link"
        assert said in answer.json()["detail"] and "token" not in answer.text


def test_a_pipe_in_place_of_a_projector_file_is_not_read(tmp_path: Path) -> None:
    """A crafted run whose metadata or tensors file is a named pipe: opening it would hold
    the request (and the projector's warm-up) until something writes to the pipe. It is
    not a file the projector reads: the answers come, naming what is not there."""
    run = tmp_path / "base" / "run"
    run.mkdir(parents=True)
    (run / "v.tsv").write_bytes(_tsv(VECTORS))
    os.mkfifo(run / "labels.tsv")
    os.mkfifo(run / "pipe.tsv")
    config = CONFIG % ("labels", "v.tsv", "labels.tsv") + CONFIG % ("vectors", "pipe.tsv", "")
    (run / "projector_config.pbtxt").write_text(config)
    (run / "events.out.tfevents.1.host").write_bytes(b"")
    loader = Loader(tmp_path / "base", tmp_path / "ws", reload_interval=0.2, watch=False)
    answers: dict[str, object] = {}

    def ask() -> None:
        with route_client(loader) as client:
            wait_until(lambda: _listed(client, "./run"))
            answers["direct"] = loader.beside_file("./run", "labels.tsv", 1000)
            for tag in ("labels", "vectors"):
                answers[tag] = client.get("/api/v1/embedding", params={"run": "./run", "tag": tag})

    asking = threading.Thread(target=ask, daemon=True)
    asking.start()
    asking.join(timeout=120)
    if asking.is_alive():  # a reader waits in open(): a writer that closes ends its wait
        for name in ("labels.tsv", "pipe.tsv"):
            with contextlib.suppress(OSError):
                os.close(os.open(run / name, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("a request reading a named pipe did not answer within 120 s")
    assert answers["direct"] is None
    labels, vectors = answers["labels"], answers["vectors"]
    assert labels.status_code == 200 and "labels.tsv' is not there" in labels.text
    assert vectors.status_code == 404 and "'pipe.tsv' of run './run' is not there" in vectors.text
