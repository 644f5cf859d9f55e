"""Logins and roles: users file and MASC_USERS, Argon2 hashes, `masc-ui users add`, throttling, and the role rules
every use case applies (a rater calling an admin use case is refused, whatever calls it)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from masc_ui.errors import InputError
from masc_ui.settings import Settings
from masc_ui.workbench.users import (
    FREE_FAILURES,
    MAX_DELAY_S,
    MAX_NAME_DELAY_S,
    AccessDenied,
    Accounts,
    LoginThrottle,
    LoginThrottled,
    add_user,
    check_login,
    hash_password,
    is_local_address,
    startup_warnings,
)


def test_users_file_and_inline_logins_with_roles(tmp_path: Path):
    f = tmp_path / "users.txt"
    f.write_text(f"# logins\nalice:{hash_password('secret:with:colons')}:admin\n\nbob:{hash_password('pw-b')}:rater\n")
    accounts = Accounts.from_settings(Settings(users_file=f, users="bob:other-pw, carol:pw3:admin, dave:pw4"))
    assert accounts.names() == ["alice", "bob", "carol", "dave"]
    assert accounts.verify("alice", "secret:with:colons") and not accounts.verify("alice", "secret")
    assert accounts.verify("bob", "other-pw") and not accounts.verify("bob", "pw-b")  # MASC_USERS wins
    assert [accounts.role_of(n) for n in ("alice", "bob", "carol", "dave")] == ["admin", "rater", "admin", "rater"]
    assert not accounts.verify("mallory", "") and accounts.role_of(None) == "admin"
    assert not Accounts.from_settings(Settings()).logins_enabled


def test_plaintext_and_malformed_entries_are_refused_without_echoing_them(tmp_path: Path):
    f = tmp_path / "users.txt"
    f.write_text("alice:my-plain-password:admin\n")
    with pytest.raises(InputError, match="line 1: the password is not an Argon2 hash") as caught:
        Accounts.from_settings(Settings(users_file=f))
    assert "my-plain-password" not in str(caught.value)
    f.write_text("justapasswordhere\n")
    with pytest.raises(InputError, match="line 1: expected `name:password-hash:role`") as caught:
        Accounts.from_settings(Settings(users_file=f))
    assert "justapasswordhere" not in str(caught.value)
    f.write_text(f"alice:{hash_password('x')}:superuser\n")
    with pytest.raises(InputError, match="role must be one of admin, rater"):
        Accounts.from_settings(Settings(users_file=f))
    with pytest.raises(InputError, match="does not exist"):
        Accounts.from_settings(Settings(users_file=tmp_path / "missing.txt"))
    with pytest.raises(InputError, match="MASC_USERS, entry 2") as caught:
        Accounts.from_settings(Settings(users="a:pw,secretwithoutcolon"))
    assert "secretwithoutcolon" not in str(caught.value)
    with pytest.raises(InputError, match="MASC_USERS, entry 1: a login name"):
        Accounts.from_settings(Settings(users="../x:pw"))


def test_users_add_writes_a_private_hashed_line_and_replaces_it(tmp_path: Path):
    f = tmp_path / "conf" / "users.txt"
    assert add_user(f, "alice", "first-password", "admin")
    assert add_user(f, "bob", "bobs-password", "rater")
    assert not add_user(f, "alice", "second-password", "rater")
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    text = f.read_text()
    assert "first-password" not in text and "second-password" not in text and text.count("alice:") == 1
    accounts = Accounts.from_settings(Settings(users_file=f))
    assert accounts.verify("alice", "second-password") and accounts.role_of("alice") == "rater"
    with pytest.raises(InputError, match="shorter than 8"):
        add_user(f, "carol", "short", "rater")


def test_users_add_command_reads_the_password_from_stdin(tmp_path: Path, monkeypatch, capsys):
    import io

    from masc_ui.cli import main

    f = tmp_path / "users.txt"
    monkeypatch.setattr("sys.stdin", io.StringIO("a-long-password\n"))
    assert main(["users", "add", "alice", "--role", "admin", "--users-file", str(f), "--password-stdin"]) == 0
    assert "added alice (admin)" in capsys.readouterr().out
    assert Accounts.from_settings(Settings(users_file=f)).verify("alice", "a-long-password")


def test_throttle_backs_off_per_address_and_never_locks_a_name():
    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    accounts = Accounts.from_settings(Settings(users="alice:right-password:admin"))
    accounts.throttle = throttle
    for _ in range(FREE_FAILURES):
        assert not check_login(accounts, "alice", "wrong", "10.0.0.1")
    assert throttle.failed("alice", "10.0.0.1") == pytest.approx(2.0)  # the first failure beyond the free ones
    with pytest.raises(LoginThrottled) as caught:  # the address waits: the name's delay, then its own
        check_login(accounts, "alice", "right-password", "10.0.0.1")
    assert caught.value.wait_s == pytest.approx(4.0)
    with pytest.raises(LoginThrottled):  # that address waits for any name
        check_login(accounts, "bob", "x", "10.0.0.1")
    assert check_login(accounts, "alice", "right-password", "10.0.0.2")  # the owner elsewhere is never refused
    now[0] += 4.5
    assert check_login(accounts, "alice", "right-password", "10.0.0.1")
    assert throttle.wait_s("10.0.0.1") == 0
    delays = [throttle.failed("mallory", f"10.1.0.{i}") for i in range(40)]
    assert delays[:FREE_FAILURES] == [0.0] * FREE_FAILURES and delays[-1] == pytest.approx(MAX_NAME_DELAY_S)
    assert delays == sorted(delays)
    for _ in range(40):
        throttle.failed("x", "10.2.0.1")
    assert throttle.wait_s("10.2.0.1") == pytest.approx(MAX_NAME_DELAY_S + MAX_DELAY_S)


def test_role_rules_of_the_use_cases(demo_settings, tmp_path: Path):
    from masc_ui.workbench import build_workbench

    settings = demo_settings.replace(users="ada:pw-ada-1:admin,ron:pw-ron-1:rater")
    wb = build_workbench(settings)
    try:
        for call in (
            lambda: wb.samples.browse(user="ron"),
            lambda: wb.samples.filters(user="ron"),
            lambda: wb.samples.export("csv", user="ron", folder=tmp_path),
            lambda: wb.samples.open(1, user="ron"),
            lambda: wb.samples.latest_values(1, user="ron"),
            lambda: wb.agreement.view(user="ron", dataset=None, criterion="cp"),
            lambda: wb.database.check("ron"),
            lambda: wb.database.dump("ron", tmp_path / "d.json"),
            lambda: wb.scoring.score(None, user="ron"),
            lambda: wb.scoring.explain(None, user="ron"),
            lambda: wb.saving.save(None, user="ron", dataset="x"),
            lambda: wb.segmentation.sam_predict(None, [], None, user="ron"),
            lambda: wb.segmentation.segment_by_name(None, "cat", user="ron"),
            lambda: wb.samples.browse(user="stranger"),
            lambda: wb.ratings.next_task("stranger"),
            lambda: wb.ratings.next_task(None),
        ):
            with pytest.raises(AccessDenied):
                call()
        assert wb.samples.browse(user="ada").rows == [] and wb.ratings.next_task("ron") is None
        assert wb.samples.browse(user=None).rows == []  # a local process acts as admin
    finally:
        wb.close()


def test_export_file_names_are_chosen_by_the_server(demo_settings, tmp_path: Path):
    from masc_ui.workbench import build_workbench
    from masc_ui.workbench.browse import export_file_name

    assert export_file_name("../../../tmp/x/victim", "csv") == "masc-export-tmp-x-victim.csv"
    assert export_file_name(None, "jsonl") == "masc-export-all.jsonl"
    assert export_file_name("..", "csv") == "masc-export-dataset.csv"
    wb = build_workbench(demo_settings)
    try:
        wb.database.store.samples.ensure_dataset("../../evil")
        path, _ = wb.samples.export("csv", user=None, dataset="../../evil", folder=tmp_path / "out")
        assert path.parent == tmp_path / "out" and path.name == "masc-export-evil.csv"
    finally:
        wb.close()


def test_addresses_and_startup_warnings(tmp_path: Path):
    assert is_local_address("127.0.0.1") and is_local_address("::1") and is_local_address("localhost")
    assert not is_local_address("0.0.0.0") and not is_local_address("192.168.1.5")
    open_public = startup_warnings(Settings(host="0.0.0.0", data_dir=tmp_path), Accounts())
    assert len(open_public) == 1 and "acts as admin" in open_public[0]
    no_admin = Accounts.from_settings(Settings(users="r:pw-r-1234"))
    assert "none has the admin role" in startup_warnings(Settings(data_dir=tmp_path), no_admin)[0]
