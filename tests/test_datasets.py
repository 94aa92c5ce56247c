"""Benchmark datasets: local lookup, checksums, converters, and downloads from a loopback server."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import io
import re
import tarfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnreg import dataset_files
from attnreg import datasets as ds
from attnreg.exceptions import DataError, OptionError

from tests.conftest import shared_data_dir


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(scope="module")
def uci_dir() -> Path:
    d = shared_data_dir()
    if d is None or not (d / "uci").is_dir():
        pytest.skip("benchmark data not available (set ATTNREG_DATA)")
    return d / "uci"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests control every lookup location themselves."""
    monkeypatch.delenv("ATTNREG_DATA", raising=False)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    """A loopback HTTP server on a temporary directory: (base URL, directory, requested paths)."""
    root = tmp_path / "www"
    root.mkdir()
    hits: list[str] = []

    class Handler(_Quiet):
        def do_GET(self) -> None:
            hits.append(self.path)
            super().do_GET()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", root, hits
    finally:
        httpd.shutdown()
        httpd.server_close()


# ---------------------------------------------------------------- the shared reference files
@pytest.mark.parametrize("name", ds.dataset_names())
def test_load_each_dataset(name: str, uci_dir: Path, tmp_path: Path) -> None:
    info = ds.dataset_info(name)
    df = ds.load_dataset(name, data_dir=uci_dir.parent, cache_dir=tmp_path, download=False)
    assert df.shape == (info.n_rows, len(info.columns))
    assert tuple(df.columns) == info.columns and df.columns[-1] == ds.target_name(name)
    assert not df.isna().any().any()
    assert _sha((uci_dir / info.filename).read_bytes()) == info.sha256
    assert not any(tmp_path.iterdir())  # nothing was written to the cache


def test_checksums_match_the_readme(uci_dir: Path) -> None:
    text = (uci_dir / "README.md").read_text()
    listed = dict((f, h) for h, f in re.findall(r"^([0-9a-f]{64})  (\S+\.csv(?:\.gz)?)$", text, re.M))
    assert {d.filename: d.sha256 for d in ds.DATASETS.values()} == listed


def test_abalone_sex_kept_or_dropped(uci_dir: Path) -> None:
    full = ds.load_dataset("abalone", data_dir=uci_dir, download=False)
    assert full["Sex"].value_counts().to_dict() == {"M": 1528, "I": 1342, "F": 1307}
    num = ds.load_dataset("abalone", data_dir=uci_dir, download=False, numeric_only=True)
    assert "Sex" not in num and num.columns[-1] == "Rings"
    assert num["Rings"].min() == 1 and num["Rings"].max() == 29


RAW = [("yacht", "yacht_hydrodynamics.data", None), ("airfoil", "airfoil_self_noise.dat", None),
       ("abalone", "abalone.data", None), ("protein", "CASP.csv.gz", None),
       ("california", "cal_housing.data.gz", None), ("energy", "ENB2012_data.xlsx", "openpyxl"),
       ("concrete", "Concrete_Data.xls", "xlrd")]


@pytest.mark.parametrize(("name", "raw_file", "needs"), RAW)
def test_converters_reproduce_reference(name: str, raw_file: str, needs: str | None,
                                        uci_dir: Path) -> None:
    """Each source format converts the raw provenance copy into the reference CSV bit for bit."""
    if needs:
        pytest.importorskip(needs)
    path = uci_dir / "raw" / raw_file
    if not path.exists():
        pytest.skip(f"{path} not available")
    src, info = ds.SOURCES[name][-1], ds.DATASETS[name]
    raw = dataset_files.unpack(path.read_bytes(), None)
    assert _sha(raw) == src.sha256
    assert _sha(dataset_files.CONVERTERS[src.fmt](raw, info)) == info.csv_sha256


def test_corrupt_local_file_is_an_error(uci_dir: Path, tmp_path: Path) -> None:
    good = (uci_dir / "yacht.csv").read_text()
    (tmp_path / "yacht.csv").write_text(good.replace("0.568", "0.569", 1))
    with pytest.raises(DataError, match=r"fails its checksum.*verify=False"):
        ds.load_dataset("yacht", data_dir=tmp_path, download=False)
    df = ds.load_dataset("yacht", data_dir=tmp_path, download=False, verify=False)
    assert df.iloc[0, 1] == 0.569


def test_env_var_and_uci_subfolder(uci_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ATTNREG_DATA", str(uci_dir.parent))  # the parent, with uci/ inside
    assert ds.load_dataset("energy", cache_dir=tmp_path, download=False).shape == (768, 9)


def test_unknown_name() -> None:
    with pytest.raises(OptionError, match=r"'california'.*'protein'"):
        ds.load_dataset("boston")


# ---------------------------------------------------------------- downloads (loopback only)
FAKE_ROWS = "1 2 3 4 5 6 7.5\n-1 0.5 3 4 5 6 8\n\n2 2 2 2 2 2 2\n"


@pytest.fixture
def fake_yacht(server: tuple[str, Path, list[str]], monkeypatch: pytest.MonkeyPatch
               ) -> tuple[str, list[str], bytes]:
    """Yacht replaced by a 3-row whitespace table on the loopback server."""
    url, root, hits = server
    (root / "fake.data").write_text(FAKE_ROWS)
    info = ds.DATASETS["yacht"]
    csv = (",".join(info.columns) + "\n1,2,3,4,5,6,7.5\n-1,0.5,3,4,5,6,8\n2,2,2,2,2,2,2\n").encode()
    monkeypatch.setitem(ds.DATASETS, "yacht", dataclasses.replace(info, n_rows=3, csv_sha256=_sha(csv)))
    monkeypatch.setitem(ds.SOURCES, "yacht", (ds.Source(url + "fake.data", "table",
                                                        _sha(FAKE_ROWS.encode())),))
    return url, hits, csv


def test_download_verifies_converts_and_caches(fake_yacht: tuple[str, list[str], bytes],
                                               tmp_path: Path) -> None:
    _, hits, csv = fake_yacht
    df = ds.load_dataset("yacht", data_dir=tmp_path / "empty", cache_dir=tmp_path / "cache")
    assert df.shape == (3, 7) and df["residuary_resistance"].tolist() == [7.5, 8.0, 2.0]
    cached = tmp_path / "cache" / "uci" / "yacht.csv"
    assert cached.read_bytes() == csv and hits == ["/fake.data"]
    again = ds.load_dataset("yacht", cache_dir=tmp_path / "cache", download=False)
    pd.testing.assert_frame_equal(df, again)
    assert hits == ["/fake.data"]  # served from the cache


def test_damaged_cache_is_fetched_again(fake_yacht: tuple[str, list[str], bytes], tmp_path: Path) -> None:
    _, hits, csv = fake_yacht
    cached = tmp_path / "uci" / "yacht.csv"
    cached.parent.mkdir()
    cached.write_bytes(csv.replace(b"7.5", b"9.5"))
    with pytest.raises(DataError, match="fails its checksum"):
        ds.load_dataset("yacht", cache_dir=tmp_path, download=False)
    ds.load_dataset("yacht", cache_dir=tmp_path)
    assert cached.read_bytes() == csv and len(hits) == 1


def test_raw_checksum_mismatch(fake_yacht: tuple[str, list[str], bytes], tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    url, _, _ = fake_yacht
    monkeypatch.setitem(ds.SOURCES, "yacht", (ds.Source(url + "fake.data", "table", "0" * 64),))
    msg = r"checksum mismatch.*expected 0{64}.*To work offline, put yacht\.csv"
    with pytest.raises(DataError, match=msg):
        ds.load_dataset("yacht", cache_dir=tmp_path)
    assert not (tmp_path / "uci" / "yacht.csv").exists()


def test_converted_checksum_mismatch_then_fallback(fake_yacht: tuple[str, list[str], bytes],
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   server: tuple[str, Path, list[str]]) -> None:
    url, hits, _ = fake_yacht
    (server[1] / "other.data").write_text(FAKE_ROWS.replace("7.5", "7.25"))
    first = ds.Source(url + "missing.data", "table")  # 404
    second = ds.Source(url + "other.data", "table")  # raw checksum unknown; converted CSV differs
    monkeypatch.setitem(ds.SOURCES, "yacht", (first, second))
    with pytest.raises(DataError, match=r"(?s)missing\.data: HTTP Error 404.*after conversion"):
        ds.load_dataset("yacht", cache_dir=tmp_path)
    monkeypatch.setitem(ds.SOURCES, "yacht", (first, second, ds.Source(url + "fake.data", "table")))
    assert ds.load_dataset("yacht", cache_dir=tmp_path).shape == (3, 7)
    assert hits == ["/missing.data", "/other.data"] * 2 + ["/fake.data"]


def test_offline_error_message(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        ds.load_dataset("protein", data_dir=tmp_path / "mine", cache_dir=tmp_path / "c", download=False)
    msg = str(err.value)
    for part in ("'protein' was not found", "download=False", "protein.csv.gz",
                 ds.DATASETS["protein"].sha256, str(tmp_path / "c" / "uci"), "ATTNREG_DATA"):
        assert part in msg


def test_tar_archive_source(uci_dir: Path, server: tuple[str, Path, list[str]],
                            monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """California as scikit-learn fetches it: a .tgz with a member file, cached gzip-compressed."""
    raw = uci_dir / "raw" / "cal_housing.data.gz"
    if not raw.exists():
        pytest.skip("raw California file not available")
    body = gzip.decompress(raw.read_bytes()).split(b"\n", 1)[1]  # the StatLib file has no header
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        member = tarfile.TarInfo("CaliforniaHousing/cal_housing.data")
        member.size = len(body)
        tar.addfile(member, io.BytesIO(body))
    url, root, _ = server
    (root / "cal.tgz").write_bytes(buf.getvalue())
    src = dataclasses.replace(ds.SOURCES["california"][0], url=url + "cal.tgz", sha256=_sha(buf.getvalue()))
    monkeypatch.setitem(ds.SOURCES, "california", (src,))
    df = ds.load_dataset("california", cache_dir=tmp_path)
    ref = ds.load_dataset("california", data_dir=uci_dir, download=False)
    pd.testing.assert_frame_equal(df, ref)
    cached = tmp_path / "uci" / "california.csv.gz"
    assert _sha(gzip.decompress(cached.read_bytes())) == ds.DATASETS["california"].csv_sha256
    assert np.isclose(df["MedHouseVal"].mean(), 2.06856, atol=1e-5)
