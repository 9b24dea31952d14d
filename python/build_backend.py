"""A PEP 517 build backend that drives the project's CMake build, for `pip install .` without network
access: it needs nothing beyond the standard library, CMake and what the C++ build needs.

build_wheel configures build/python-wheel/ (Release, tests and benchmarks off, the interpreter running
pip as Python3_EXECUTABLE), builds the extension target and zips the package the build lays out in
<build>/python/sluice/. `pip install . -C build-dir=build/default` reuses a build folder already
configured (for this interpreter) instead. SLUICE_JOBS sets the build's parallelism.
"""
import base64
import csv
import hashlib
import io
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = "sluice"
# One version for the whole project: the top CMakeLists.txt's project(VERSION).
VERSION = re.search(r"project\(sluice VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{plat}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: A lazy tensor runtime for GPUs and CPUs in the lineage of tinygrad\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\n")


def _run(*cmd):
    print("build_backend:", " ".join(map(str, cmd)), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT)


def _build(config_settings):
    """Builds the extension; returns the folder holding the laid-out package."""
    given = (config_settings or {}).get("build-dir")
    build = ROOT / given if given else ROOT / "build" / "python-wheel"
    if not (given and (build / "CMakeCache.txt").exists()):
        _run("cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DSLUICE_BUILD_TESTS=OFF",
             "-DSLUICE_BUILD_BENCH=OFF", "-DSLUICE_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}")
    _run("cmake", "--build", build, "--target", "sluice_python", "-j", os.environ.get("SLUICE_JOBS", str(os.cpu_count())))
    package = build / "python" / NAME
    if not list(package.glob("_sluice*.so")):
        raise RuntimeError(f"build_backend: the CMake build did not produce the Python module in {package} (is "
                           "pybind11-dev installed? see the configure output above)")
    return package


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    package = _build(config_settings)
    dist_info = f"{NAME}-{VERSION}.dist-info"
    files = {f"{NAME}/{p.name}": p.read_bytes() for p in sorted(package.iterdir()) if p.is_file()}
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: sluice build_backend\nRoot-Is-Purelib: false\n"
                                   f"Tag: {_tag()}\n").encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow([name, f"sha256={digest}", len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    files[f"{dist_info}/RECORD"] = record.getvalue().encode()
    wheel = f"{NAME}-{VERSION}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files (git ls-files), plus PKG-INFO."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
    base = f"{NAME}-{VERSION}"
    out = pathlib.Path(sdist_directory) / f"{base}.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for n in filter(None, names):
            path = ROOT / n.decode()
            if path.is_file():
                tar.add(path, arcname=f"{base}/{n.decode()}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.name
