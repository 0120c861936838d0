"""The storage seam's moves and deletions (:class:`~sumlens.io.storage.MoveStorage`), on the
local disk and on a real S3 API (moto's server): all of a batch or none, a taken target
refused before anything moves, whole trees deleted whether or not they are there, and a
name that fsspec would read as a glob pattern (``exp[1]``) moving or deleting only its own
files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.s3 import bucket_server, s3_options

from sumlens.io.remote import FsspecStorage, open_storage
from sumlens.io.storage import LOCAL_STORAGE, MoveStorage

BUCKET = "moves"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[MoveStorage, str]:
    """A storage and a folder in it holding ``src/one``, ``src/sub/two`` and ``taken``."""
    if request.param == "local":
        root = tmp_path / "root"
        (root / "src" / "sub").mkdir(parents=True)
        for name in ("src/one", "src/sub/two", "taken"):
            (root / name).write_bytes(name.encode())
        return LOCAL_STORAGE, str(root)
    endpoint = request.getfixturevalue("endpoint")
    storage, root = open_storage(f"s3://{BUCKET}/{request.node.name[:-1]}", s3_options(endpoint))
    assert isinstance(storage, FsspecStorage)
    for name in ("src/one", "src/sub/two", "taken"):
        storage.put(f"{root}/{name}", name.encode())
    return storage, root


def contents(storage: MoveStorage, root: str) -> dict[str, bytes]:
    """Every file below ``root`` and its bytes."""
    if isinstance(storage, FsspecStorage):
        return {p[len(root) + 1 :]: storage.fs.cat_file(p) for p in storage.fs.find(root)}
    base = Path(root)
    return {str(p.relative_to(base)): p.read_bytes() for p in base.rglob("*") if p.is_file()}


def test_a_batch_moves_whole(store: tuple[MoveStorage, str]) -> None:
    storage, root = store
    storage.move_files([(f"{root}/src/one", f"{root}/dst/one"),
                        (f"{root}/src/sub/two", f"{root}/dst/sub/two")])  # fmt: skip
    storage.remove_empty_dirs(f"{root}/src")
    assert contents(storage, root) == {
        "dst/one": b"src/one",
        "dst/sub/two": b"src/sub/two",
        "taken": b"taken",
    }
    assert not Path(root, "src").exists()  # the folders it emptied are gone (locally)


def test_a_taken_target_moves_nothing(store: tuple[MoveStorage, str]) -> None:
    storage, root = store
    before = contents(storage, root)
    with pytest.raises(FileExistsError, match="1 target"):
        storage.move_files([(f"{root}/src/one", f"{root}/elsewhere/one"),
                            (f"{root}/src/sub/two", f"{root}/taken")])  # fmt: skip
    assert contents(storage, root) == before


def test_remove_tree_is_idempotent(store: tuple[MoveStorage, str]) -> None:
    storage, root = store
    storage.remove_tree(f"{root}/src")
    storage.remove_tree(f"{root}/src")
    storage.remove_tree(f"{root}/never-there")
    assert contents(storage, root) == {"taken": b"taken"}


def test_names_that_are_glob_patterns_touch_only_their_own_files(
    store: tuple[MoveStorage, str],
) -> None:
    """fsspec reads ``[ ] * ?`` in a path as a pattern (``exp[1]`` matches ``exp1``): a move
    and a deletion of such a name must touch that name only, never what it matches."""
    storage, root = store
    names = ("exp[1]/f", "exp1/f", "lr*/f", "lr0/f", "a?b/f", "axb/f", "gone[1]/f", "gone1/f")
    for name in names:
        if isinstance(storage, FsspecStorage):
            storage.put(f"{root}/{name}", name.encode())
        else:
            Path(root, name).parent.mkdir(exist_ok=True)
            Path(root, name).write_bytes(name.encode())
    before = contents(storage, root)

    storage.move_files([(f"{root}/{name}", f"{root}/moved/{name}")
                        for name in ("exp[1]/f", "lr*/f", "a?b/f")])  # fmt: skip
    storage.remove_tree(f"{root}/gone[1]")

    moved = {f"moved/{name}": name.encode() for name in ("exp[1]/f", "lr*/f", "a?b/f")}
    kept = {name: data for name, data in before.items()
            if name.partition("/")[0] not in ("exp[1]", "lr*", "a?b", "gone[1]")}  # fmt: skip
    assert contents(storage, root) == kept | moved
    assert {"exp1/f", "lr0/f", "axb/f", "gone1/f"} <= kept.keys()
