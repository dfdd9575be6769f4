"""Package registry environment: semver rules, every tool's success and failure paths,
atomic failed writes, snapshot round-trips and a deterministic seed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envs.base import ToolError
from envs.pool.package_registry import PackageRegistry, _key, _satisfies
from tests.envs.pool.helpers import fails, ok


@pytest.fixture
def env() -> PackageRegistry:
    return PackageRegistry()




@pytest.mark.parametrize(("version", "spec", "expected"), [
    ("1.4.2", "^1.2.0", True), ("2.0.0", "^1.2.0", False), ("1.1.9", "^1.2.0", False),
    ("0.2.5", "^0.2.0", True), ("0.3.0", "^0.2.0", False), ("0.0.3", "^0.0.3", True),
    ("0.0.4", "^0.0.3", False), ("1.2.9", "~1.2.0", True), ("1.3.0", "~1.2.0", False),
    ("5.0.0", ">=1.0.0", True), ("1.2.3", "1.2.3", True), ("1.2.4", "1.2.3", False),
    ("2.0.0-rc.1", "^1.0.0", False), ("2.0.0-rc.1", "2.0.0-rc.1", True),
    ("9.9.9", "*", True), ("1.0.0-beta", "*", False),
])
def test_semver_ranges(version: str, spec: str, expected: bool) -> None:
    assert _satisfies(version, spec) is expected


def test_semver_ordering_and_validation() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0",
               "1.0.1", "1.10.0", "2.0.0"]
    assert sorted(reversed(ordered), key=_key) == ordered
    for bad in ("1.2", "01.2.3", "v1.2.3", "1.2.3-"):
        with pytest.raises(ToolError, match="Invalid version"):
            _key(bad)
    for bad in ("^^1.0.0", "~1.0", "latest"):
        with pytest.raises(ToolError, match="Invalid version range"):
            _satisfies("1.0.0", bad)


def test_default_state_is_deterministic_and_rich() -> None:
    state = PackageRegistry.default_state()
    assert state == PackageRegistry.default_state()
    assert PackageRegistry.default_state(seed=5) != state
    for entity in (state.users, state.packages, state.versions, state.audit_log):
        assert len(entity) >= 20
    for package in state.packages.values():
        assert "owner" in package.maintainers.values()
        assert all(u in state.users for u in package.maintainers)
    for release in state.versions.values():
        for dep, spec in release.requires().items():
            assert any(v.package == dep and _satisfies(v.version, spec)
                       for v in state.versions.values())
    assert state.next_audit_id == len(state.audit_log) + 1


def test_metadata() -> None:
    assert PackageRegistry.name == "package_registry"
    assert PackageRegistry.domain == "developer"
    specs = {s.name: s for s in PackageRegistry.tool_specs()}
    assert 6 <= len(specs) <= 15
    assert not specs["resolve_dependencies"].write and specs["yank_version"].write


def test_snapshot_round_trip(env: PackageRegistry) -> None:
    ok(env, "yank_version", package="tidewater", version="3.2.0", reason="Broken retries")
    snap = env.snapshot()
    restored = PackageRegistry()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"package": "tidewater", "version": "3.2.1"}
    assert restored.call("publish_version", call) == env.call("publish_version", call)


def test_search_packages(env: PackageRegistry) -> None:
    hits = ok(env, "search_packages", query="http")
    assert {"tidewater", "kestrel-router"} <= {h["name"] for h in hits}
    downloads = [h["weekly_downloads"] for h in hits]
    assert downloads == sorted(downloads, reverse=True)
    assert ok(env, "search_packages", query="velvet")[0]["deprecated"].startswith("No longer")
    fails(env, "search_packages", "Query must not be empty", query="")
    fails(env, "search_packages", "limit must be between 1 and 25", query="a", limit=26)


def test_get_package_and_version(env: PackageRegistry) -> None:
    pkg = ok(env, "get_package", name="nimbus-cache")
    assert pkg["latest"] == "2.5.1" and [v["yanked"] for v in pkg["versions"]] == [
        False, False, True, True]
    release = ok(env, "get_version", package="tidewater", version="3.2.0")
    assert release["dependencies"] == ["gust-retry@^1.2.0", "quill-log@^2.1.0"]
    fails(env, "get_package", "Package 'left-pad' not found", name="left-pad")
    fails(env, "get_version", "Version tidewater@9.9.9 not found", package="tidewater",
          version="9.9.9")
    fails(env, "get_version", "Package 'nope' not found", package="nope", version="1.0.0")


def test_resolve_dependencies(env: PackageRegistry) -> None:
    out = ok(env, "resolve_dependencies", package="harbor-cli")
    assert out["version"] == "1.0.0" and out["problems"] == []
    assert out["resolved"] == {"tidewater": "3.2.0", "ember-config": "1.2.0",
                               "gust-retry": "1.2.3", "quill-log": "2.1.0"}
    broken = ok(env, "resolve_dependencies", package="lattice-orm", version="2.0.0")
    assert broken["problems"] == [
        "lattice-orm needs nimbus-cache ^3.0.0: no unyanked version matches"]
    ok(env, "create_package", name="status-page", description="Status page.", license="MIT")
    fails(env, "resolve_dependencies", "Package 'status-page' has no installable release",
          package="status-page")
    ok(env, "publish_version", package="status-page", version="1.0.0",
       dependencies=["quill-log@~2.0.0", "tidewater@^3.2.0"])
    assert ok(env, "resolve_dependencies", package="status-page")["problems"] == [
        "tidewater needs quill-log ^2.1.0 but 2.0.0 was already chosen"]


def test_find_dependents(env: PackageRegistry) -> None:
    dependents = {d["package"]: d for d in ok(env, "find_dependents", package="nimbus-cache")}
    assert dependents["lattice-orm"] == {"package": "lattice-orm", "version": "2.0.0",
                                         "range": "^3.0.0", "resolves_to": None}
    assert {d["package"] for d in ok(env, "find_dependents", package="tidewater")} == {
        "harbor-cli"}
    fails(env, "find_dependents", "Package 'x' not found", package="x")


def test_search_users(env: PackageRegistry) -> None:
    [victor] = ok(env, "search_users", query="Victor Santos")
    assert victor["username"] == "vsantos" and victor["packages"] == {}
    [me] = ok(env, "search_users", query="pnair")
    assert me["packages"]["tidewater"] == "owner" and me["packages"]["quill-log"] == "maintainer"
    fails(env, "search_users", "Query must not be empty", query=" ")


def test_get_audit_log(env: PackageRegistry) -> None:
    log = ok(env, "get_audit_log", package="nimbus-cache", limit=2)
    assert [e["action"] for e in log] == ["yank", "publish"]
    ok(env, "yank_version", package="tidewater", version="3.2.0", reason="Broken retries")
    latest = ok(env, "get_audit_log", package="tidewater")[0]
    assert (latest["actor"], latest["action"], latest["detail"], latest["at"]) == (
        "pnair", "yank", "3.2.0: Broken retries", "2026-03-09T09:00")
    fails(env, "get_audit_log", "limit must be between 1 and 50", package="tidewater",
          limit=0)
    fails(env, "get_audit_log", "Package 'zzz' not found", package="zzz")


def test_create_package(env: PackageRegistry) -> None:
    pkg = ok(env, "create_package", name="fjord-queue", description="Queues.", license="ISC")
    assert pkg["maintainers"] == {"pnair": "owner"} and pkg["latest"] is None
    fails(env, "create_package", "Invalid package name 'Fjord_Queue'", name="Fjord_Queue",
          description="x", license="MIT")
    fails(env, "create_package", "Package 'fjord-queue' already exists", name="fjord-queue",
          description="x", license="MIT")
    fails(env, "create_package", "'tide-water' is too similar to existing package 'tidewater'",
          name="tide-water", description="x", license="MIT")
    fails(env, "create_package", "Description must not be empty", name="new-thing",
          description=" ", license="MIT")
    fails(env, "create_package", "argument 'license'", name="new-thing", description="x",
          license="WTFPL")


def test_publish_version(env: PackageRegistry) -> None:
    out = ok(env, "publish_version", package="tidewater", version="3.2.1",
             dependencies=["gust-retry@^1.2.0", "velvet-ui@^0.4.0"], changelog="Fix retries")
    assert out["version"]["published_by"] == "pnair"
    assert out["warnings"] == ["velvet-ui is deprecated: No longer maintained; use "
                               "plume-templates instead."]
    assert ok(env, "get_package", name="tidewater")["latest"] == "3.2.1"
    ok(env, "publish_version", package="tidewater", version="2.9.2")  # backport
    ok(env, "publish_version", package="tidewater", version="4.0.0-rc.1")
    assert ok(env, "get_package", name="tidewater")["latest"] == "3.2.1"


@pytest.mark.parametrize(("args", "message"), [
    ({"package": "ember-config", "version": "1.3.0"},
     "Permission denied: pnair is not a maintainer of 'ember-config'"),
    ({"package": "nope"}, "Package 'nope' not found"),
    ({"version": "3.3"}, "Invalid version '3.3'"),
    ({"version": "3.1.0"}, "tidewater@3.1.0 already exists; a version number can never be reused"),
    ({"version": "3.1.5"}, "tidewater@3.1.5 is not newer than 3.2.0, the latest 3.x release"),
    ({"dependencies": ["gust-retry"]}, "Invalid dependency 'gust-retry': use name@range"),
    ({"dependencies": ["tidewater@^3.0.0"]}, "tidewater cannot depend on itself"),
    ({"dependencies": ["gust-retry@^1.0.0", "gust-retry@^1.2.0"]},
     "Dependency 'gust-retry' is listed twice"),
    ({"dependencies": ["left-pad@^1.0.0"]}, "Dependency 'left-pad' does not exist"),
    ({"dependencies": ["nimbus-cache@^3.0.0"]},
     "No unyanked release of nimbus-cache matches ^3.0.0"),
    ({"dependencies": ["gust-retry@^1.x"]}, "Invalid version range '^1.x'"),
])
def test_publish_version_failures(env: PackageRegistry, args: dict[str, Any],
                                  message: str) -> None:
    fails(env, "publish_version", message, **{"package": "tidewater", "version": "3.3.0",
                                              **args})


def test_publish_to_deprecated_package_fails(env: PackageRegistry) -> None:
    ok(env, "deprecate_package", package="gust-retry", message="Use tidewater's retries.")
    fails(env, "publish_version", "Package 'gust-retry' is deprecated", package="gust-retry",
          version="1.3.0")


def test_yank_and_unyank(env: PackageRegistry) -> None:
    ok(env, "yank_version", package="gust-retry", version="1.2.3", reason="Bad jitter")
    out = ok(env, "yank_version", package="gust-retry", version="1.2.0", reason="Bad jitter")
    assert out["version"]["yanked"] and out["broken_dependents"] == ["tidewater"]
    fails(env, "yank_version", "gust-retry@1.2.0 is already yanked (Bad jitter)",
          package="gust-retry", version="1.2.0", reason="again")
    fails(env, "yank_version", "Give a reason for yanking", package="gust-retry",
          version="1.1.0", reason="")
    fails(env, "yank_version", "Permission denied: pnair is not a maintainer of "
          "'nimbus-cache'", package="nimbus-cache", version="2.5.1", reason="x")
    fails(env, "yank_version", "Version gust-retry@7.0.0 not found", package="gust-retry",
          version="7.0.0", reason="x")
    assert ok(env, "unyank_version", package="gust-retry", version="1.2.3")["yanked"] is False
    fails(env, "unyank_version", "gust-retry@1.2.3 is not yanked", package="gust-retry",
          version="1.2.3")
    fails(env, "unyank_version", "not a maintainer of 'nimbus-cache'", package="nimbus-cache",
          version="3.0.1")


def test_add_maintainer(env: PackageRegistry) -> None:
    out = ok(env, "add_maintainer", package="harbor-cli", username="vsantos")
    assert out["maintainers"] == {"pnair": "owner", "vsantos": "maintainer"}
    assert ok(env, "add_maintainer", package="harbor-cli", username="vsantos",
              role="owner")["maintainers"]["vsantos"] == "owner"
    fails(env, "add_maintainer", "vsantos is already owner of 'harbor-cli'",
          package="harbor-cli", username="vsantos", role="owner")
    fails(env, "add_maintainer", "Permission denied: only owners of 'lattice-orm' can manage "
          "maintainers (you are maintainer)", package="lattice-orm", username="lmeyer")
    fails(env, "add_maintainer", "User 'ghost' not found", package="harbor-cli",
          username="ghost")
    fails(env, "add_maintainer", "User 'ffrost' has not verified their email address",
          package="harbor-cli", username="ffrost")
    fails(env, "add_maintainer", "pnair is the last owner of 'gust-retry'",
          package="gust-retry", username="pnair", role="maintainer")


def test_remove_maintainer(env: PackageRegistry) -> None:
    assert ok(env, "remove_maintainer", package="gust-retry", username="mchen")[
        "maintainers"] == {"pnair": "owner"}
    fails(env, "remove_maintainer", "pnair is the last owner of 'gust-retry'",
          package="gust-retry", username="pnair")
    fails(env, "remove_maintainer", "mchen is not a maintainer of 'gust-retry'",
          package="gust-retry", username="mchen")
    fails(env, "remove_maintainer", "Permission denied: only owners of 'lattice-orm'",
          package="lattice-orm", username="salvarez")
    assert "pnair" not in ok(env, "remove_maintainer", package="lattice-orm",
                             username="pnair")["maintainers"]


def test_deprecate_package(env: PackageRegistry) -> None:
    assert ok(env, "deprecate_package", package="harbor-cli", message="Use harbor2.") == {
        "package": "harbor-cli", "deprecated": "Use harbor2."}
    fails(env, "deprecate_package", "already deprecated with that message",
          package="harbor-cli", message="Use harbor2.")
    assert ok(env, "deprecate_package", package="harbor-cli", message="")["deprecated"] == ""
    assert ok(env, "get_audit_log", package="harbor-cli", limit=1)[0]["action"] == \
        "undeprecate"
    fails(env, "deprecate_package", "Package 'harbor-cli' is not deprecated",
          package="harbor-cli", message="")
    fails(env, "deprecate_package", "not a maintainer of 'velvet-ui'", package="velvet-ui",
          message="")
