"""Publishing a build: the site folder is always a whole old or a whole new site, and builds take turns.

These tests drive :mod:`site_builder.publish` on small folders; the builds that
are killed, interrupted or run side by side are in ``test_site_build.py``.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from site_builder import publish
from site_builder.errors import FileAccessError


def site_with(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(text, encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "page.html").write_text(text, encoding="utf-8")
    return folder


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".site-") and not p.name.endswith(".lock"))


def test_on_linux_the_swap_is_one_exchange_with_no_moment_without_a_site(tmp_path, monkeypatch):
    site = site_with(tmp_path / "site", "old")
    staging = site_with(publish.staging_name(site), "new")

    def no_rename(*args):
        raise AssertionError("the site was renamed away instead of exchanged")

    monkeypatch.setattr(os, "rename", no_rename)
    warnings: list[str] = []
    publish.swap_in(staging, site, warnings.append)
    assert (site / "index.html").read_text(encoding="utf-8") == "new"
    assert leftovers(tmp_path) == [] and warnings == []


def test_without_an_exchange_call_the_two_renames_still_leave_a_whole_site(tmp_path, monkeypatch):
    monkeypatch.setattr(publish, "_renameat2", lambda: None)
    site = site_with(tmp_path / "site", "old")
    publish.swap_in(site_with(publish.staging_name(site), "new"), site, lambda line: None)
    assert (site / "index.html").read_text(encoding="utf-8") == "new" and leftovers(tmp_path) == []


def test_a_build_killed_between_the_two_renames_gets_its_old_site_back(tmp_path, monkeypatch):
    monkeypatch.setattr(publish, "_renameat2", lambda: None)
    site = site_with(tmp_path / "site", "old")
    staging = site_with(publish.staging_name(site), "new")
    real_rename = os.rename
    calls = []

    def dies_on_the_second(a, b):
        calls.append((a, b))
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process ends here, as under kill -9
        real_rename(a, b)

    monkeypatch.setattr(os, "rename", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        publish.swap_in(staging, site, lambda line: None)
    monkeypatch.setattr(os, "rename", real_rename)
    assert not site.exists() and len(leftovers(tmp_path)) == 2  # the old site aside, the new staging
    publish.clean_leftovers(site, lambda line: None)  # what the next build does first
    assert (site / "index.html").read_text(encoding="utf-8") == "old"
    assert leftovers(tmp_path) == []


def test_leftovers_of_killed_builds_are_removed_and_other_folders_are_not(tmp_path):
    site = site_with(tmp_path / "site", "current")
    site_with(tmp_path / ".site-site-0123456789ab", "partial staging")
    site_with(tmp_path / ".site-site-old-0123456789ab", "old site left aside")
    site_with(tmp_path / ".site-other-0123456789ab", "another site's staging")
    (tmp_path / ".site-site-notes").mkdir()
    publish.clean_leftovers(site, lambda line: None)
    assert leftovers(tmp_path) == [".site-other-0123456789ab", ".site-site-notes"]
    assert (site / "index.html").read_text(encoding="utf-8") == "current"


def test_a_read_only_old_site_is_removed_after_the_swap(tmp_path):
    site = site_with(tmp_path / "site", "old")
    for folder in (site / "sub", site):
        for child in folder.iterdir():
            child.chmod(stat.S_IRUSR)
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    warnings: list[str] = []
    publish.swap_in(site_with(publish.staging_name(site), "new"), site, warnings.append)
    assert (site / "index.html").read_text(encoding="utf-8") == "new"
    assert leftovers(tmp_path) == [] and warnings == []


def test_an_old_site_that_cannot_be_removed_is_one_warning_naming_it(tmp_path, monkeypatch):
    site = site_with(tmp_path / "site", "old")
    staging = site_with(publish.staging_name(site), "new")

    def refuse(path, onerror=None):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(publish.shutil, "rmtree", refuse)
    warnings: list[str] = []
    publish.swap_in(staging, site, warnings.append)
    assert (site / "index.html").read_text(encoding="utf-8") == "new"
    assert len(warnings) == 1 and "cannot remove a previous build: permission denied" in warnings[0]
    assert str(tmp_path / ".site-site-") in warnings[0] and "\n" not in warnings[0]


def test_a_site_path_that_is_a_file_is_one_line(tmp_path):
    site = tmp_path / "site"
    site.write_text("not a folder", encoding="utf-8")
    with pytest.raises(FileAccessError, match="site: is not a folder"):
        publish.swap_in(site_with(publish.staging_name(site), "new"), site, lambda line: None)


def test_builds_of_one_site_take_turns(tmp_path):
    site = tmp_path / "site"
    first = publish.SiteLock(site, lambda line: None)
    first.acquire()
    heard: list[str] = []
    second = publish.SiteLock(site, heard.append)
    done = threading.Event()

    def build() -> None:
        second.acquire()
        done.set()

    thread = threading.Thread(target=build)
    thread.start()
    while not heard:  # the second build says it waits, then waits
        thread.join(0.01)
    assert not done.is_set()
    assert "another build of" in heard[0] and ".site-site.lock" in heard[0]
    first.release()
    thread.join()
    assert done.is_set()
    second.release()


def test_a_lock_that_cannot_be_created_is_one_line(tmp_path):
    (tmp_path / "parent").write_text("a file where a folder should be", encoding="utf-8")
    with pytest.raises(FileAccessError, match="cannot create the build lock"):
        publish.SiteLock(tmp_path / "parent" / "site", lambda line: None).acquire()


def test_a_folder_that_could_not_be_opened_is_made_writable_and_removed_whole(tmp_path):
    old = site_with(tmp_path / ".site-site-old-0123456789ab", "old")
    (old / "sub").chmod(0)
    publish._writable_and_again(os.open, str(old / "sub"), None)  # what rmtree calls when it cannot open a folder
    assert not (old / "sub").exists()
    (old / "index.html").chmod(stat.S_IRUSR)
    old.chmod(stat.S_IRUSR | stat.S_IXUSR)
    publish._writable_and_again(os.unlink, str(old / "index.html"), None)
    assert not (old / "index.html").exists()
