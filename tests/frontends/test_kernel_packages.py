"""Kernel files of published distributions (symlayout/frontends/kernels.py, ``symlayout dsl --package``):
found installed, else in a wheel downloaded with pip and unpacked (never installed, never imported), else a
one-line reason.  The downloads here are from a local directory (``PIP_NO_INDEX`` + ``PIP_FIND_LINKS``: a
wheel built by the test from the bundled ``copy_only.py`` kernel) or from an index that refuses the
connection: no network is needed."""
from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

from symlayout.cli import main
from symlayout.frontends.kernels import KernelNotFound, PackageSpec, locate, package_root, parse_package

KERNEL = Path(__file__).resolve().parents[1] / "data" / "dsl_kernels" / "copy_only.py"
DIST, VERSION, PKG = "symlayout-testkernel", "1.0", "skernel"


def make_wheel(where: Path, members: dict | None = None) -> Path:
    """A pure-Python wheel of ``DIST`` ``VERSION`` holding the package ``skernel`` with the bundled kernel."""
    info = f"symlayout_testkernel-{VERSION}.dist-info"
    members = members or {f"{PKG}/__init__.py": "", f"{PKG}/copy_only.py": KERNEL.read_text()}
    members = {**members,
               f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {DIST}\nVersion: {VERSION}\n",
               f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: symlayout-tests\nRoot-Is-Purelib: true\n"
                                "Tag: py3-none-any\n",
               f"{info}/RECORD": ""}
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"symlayout_testkernel-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """pip's index: the directory ``wheels/`` only (the user's pip configuration ignored); the cache in tmp."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("SYMLAYOUT_CACHE", str(tmp_path / "cache"))
    return wheels


def test_parse_package():
    assert parse_package("quack-kernels==0.6.5") == PackageSpec("quack-kernels", "0.6.5")
    assert parse_package(" flash-attn-4 ") == PackageSpec("flash-attn-4", None)
    with pytest.raises(ValueError, match="DIST or DIST==VERSION"):
        parse_package("quack>=0.6")


def test_an_installed_distribution_is_read_where_it_is_installed():
    found = locate("pytest", "pytest/__init__.py")
    assert found.source == "installed" and found.path.samefile(pytest.__file__)


def test_a_wheel_is_downloaded_unpacked_and_cached_without_being_imported(local_index, tmp_path):
    make_wheel(local_index)
    found = locate(f"{DIST}=={VERSION}", f"{PKG}/copy_only.py")
    assert found.source == "downloaded"
    assert found.path.read_text() == KERNEL.read_text()
    assert found.root == tmp_path / "cache" / "kernels" / f"{DIST}-{VERSION}"
    assert PKG not in sys.modules
    again = locate(f"{DIST}=={VERSION}", f"{PKG}/copy_only.py")
    assert again.source == "cache" and again.path == found.path


def test_without_a_version_nothing_is_downloaded(local_index):
    make_wheel(local_index)
    with pytest.raises(KernelNotFound, match=f"{DIST} is not installed: .*{DIST}==VERSION"):
        locate(DIST, f"{PKG}/copy_only.py")


def test_a_file_the_distribution_lacks_is_named(local_index):
    make_wheel(local_index)
    with pytest.raises(KernelNotFound, match=f"no file {PKG}/gemm.py"):
        locate(f"{DIST}=={VERSION}", f"{PKG}/gemm.py")


def test_a_wheel_with_a_member_outside_its_directory_is_not_unpacked(local_index, tmp_path):
    make_wheel(local_index, {f"{PKG}/__init__.py": "", "../escaped.py": "x = 1"})
    with pytest.raises(KernelNotFound, match="outside the wheel's directory"):
        locate(f"{DIST}=={VERSION}", f"{PKG}/__init__.py")
    assert not (tmp_path / "cache" / "escaped.py").exists() and not list((tmp_path / "cache").rglob("escaped.py"))


def test_offline_the_download_fails_with_pips_reason(tmp_path, monkeypatch):
    """An index that refuses the connection (what a machine without network gets): a reason, no hang."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("SYMLAYOUT_CACHE", str(tmp_path / "cache"))
    with pytest.raises(KernelNotFound, match=f"{DIST}=={VERSION}: not installed, and pip download failed: "):
        package_root(parse_package(f"{DIST}=={VERSION}"))
    assert not (tmp_path / "cache" / "kernels" / f"{DIST}-{VERSION}").exists()


def test_dsl_package_bad_spec_is_one_line(capsys):
    rc = main(["dsl", "--package", "quack>=1", "quack/rmsnorm.py", "--entry", "RMSNorm.__call__"])
    err = capsys.readouterr().err
    assert rc == 2 and "--package 'quack>=1': expected DIST or DIST==VERSION" in err and "Traceback" not in err


def test_dsl_package_offline_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("SYMLAYOUT_CACHE", str(tmp_path / "cache"))
    rc = main(["dsl", "--package", f"{DIST}=={VERSION}", f"{PKG}/copy_only.py", "--entry", "scale_rows"])
    err = capsys.readouterr().err
    assert rc == 2 and "pip download failed" in err and len(err.strip().splitlines()) == 1


@pytest.mark.usefixtures("cute")
def test_dsl_proves_a_kernel_of_a_downloaded_wheel(capsys, local_index):
    make_wheel(local_index)
    rc = main(["dsl", "--package", f"{DIST}=={VERSION}", f"{PKG}/copy_only.py", "--entry", "scale_rows",
               "--shape", "M=1024,N=1024", "--tensor", "mX=M,N", "--tensor", "mY=M,N", "--dtype", "f16", "-q"])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert f"{DIST}=={VERSION}: downloaded" in err
    assert f"kernels/{DIST}-{VERSION}/{PKG}/copy_only.py" in out and " 0 refuted," in out
