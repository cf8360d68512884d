"""The package's PEP 517 build backend: the standard library only, so `pip install` works offline.

Why not setuptools: setuptools before 70.1 builds wheels only with the separate `wheel` package, which
a fresh Python (ensurepip gives pip and setuptools 65) does not have, so `pip install
--no-build-isolation --no-index clients/python` would fail with "invalid command 'bdist_wheel'". This
package is one pure-Python module and a marker file; a wheel of it is a zip with three metadata files.
The metadata comes from pyproject.toml's [project] table, read here without tomllib (3.11+ only).
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIR = os.path.join(ROOT, "src", "sagaboard")
# What an sdist carries: everything needed to build the wheel again and to run the tests.
SDIST_PARTS = ("pyproject.toml", "README.md", "build_backend", "src", "tests")


def _project() -> Dict[str, object]:
    """The [project] table's one-line strings and string lists (all this pyproject.toml uses)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", f.read(), re.M | re.S)
    if section is None:
        raise RuntimeError("pyproject.toml has no [project] table; the build reads name and version from it")
    table: Dict[str, object] = {}
    for key, value in re.findall(r"^([A-Za-z-]+)\s*=\s*(.+?)\s*$", section.group(1), re.M):
        if value.startswith("["):
            table[key] = re.findall(r'"([^"]*)"', value)
        elif value.startswith('"'):
            table[key] = value.strip('"')
    return table


def _names() -> Tuple[str, str]:
    project = _project()
    return str(project["name"]), str(project["version"])


def _metadata() -> str:
    project = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    classifiers = project.get("classifiers", [])
    lines += [f"Classifier: {c}" for c in (classifiers if isinstance(classifiers, list) else [])]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return "\n".join(lines + ["Description-Content-Type: text/markdown", "", readme])


def _dist_info(name: str, version: str) -> List[Tuple[str, bytes]]:
    wheel = "Wheel-Version: 1.0\nGenerator: sagaboard_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    folder = f"{name}-{version}.dist-info"
    return [(f"{folder}/METADATA", _metadata().encode()), (f"{folder}/WHEEL", wheel.encode())]


def _package_files() -> List[Tuple[str, bytes]]:
    files = []
    for entry in sorted(os.listdir(PACKAGE_DIR)):
        if entry.endswith(".py") or entry == "py.typed":
            with open(os.path.join(PACKAGE_DIR, entry), "rb") as f:
                files.append((f"sagaboard/{entry}", f.read()))
    return files


def _write_wheel(directory: str, files: List[Tuple[str, bytes]]) -> str:
    name, version = _names()
    files = files + _dist_info(name, version)
    record_path = f"{name}-{version}.dist-info/RECORD"
    record = []
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{record_path},,")
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as whl:
        for path, data in files + [(record_path, ("\n".join(record) + "\n").encode())]:
            whl.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return filename


# -- the PEP 517 / PEP 660 hooks -----------------------------------------------------------------
def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version = _names()
    for path, data in _dist_info(name, version):
        os.makedirs(os.path.join(metadata_directory, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(metadata_directory, path), "wb") as f:
            f.write(data)
    return f"{name}-{version}.dist-info"


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    """`pip install -e`: a .pth file that puts src/ on the path, so edits take effect without reinstalling."""
    return _write_wheel(wheel_directory, [("sagaboard_editable.pth", (os.path.join(ROOT, "src") + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version = _names()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for part in SDIST_PARTS:
            tar.add(os.path.join(ROOT, part), arcname=f"{base}/{part}", filter=_without_caches)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        pkg_info = _metadata().encode()
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
    return filename


def _without_caches(member: tarfile.TarInfo) -> Optional[tarfile.TarInfo]:
    return None if "__pycache__" in member.name or ".pytest_cache" in member.name else member
