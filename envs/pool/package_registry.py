"""Package registry: an internal package index with versions, maintainers and dependencies.

The agent acts as one registry user (`current_user`). What a real registry enforces is
the point: only maintainers publish, yank or deprecate and only owners manage who
maintains; version numbers follow semver, are never reused (even after a yank) and must
move forward within their major line; dependency ranges must resolve to a published,
unyanked version; new names may not imitate existing ones. Every change is audited.
"""

from __future__ import annotations

import random
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, ToolError, tool
from envs.timestamps import Timestamp

__all__ = ["PackageRegistry", "PackageRegistryState"]

Role = Literal["owner", "maintainer"]
License = Literal["MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0", "ISC", "MPL-2.0"]

_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?")
_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


class User(BaseModel):
    username: str
    name: str
    email: str
    verified: bool = True


class Package(BaseModel):
    name: str
    description: str
    license: License
    keywords: list[str] = Field(default_factory=list)
    created_at: Timestamp
    #: username -> role; every package has at least one owner
    maintainers: dict[str, Role]
    #: deprecation message shown to installers; empty when not deprecated
    deprecated: str = ""
    weekly_downloads: int = 0


class Version(BaseModel):
    package: str
    version: str
    published_at: Timestamp
    published_by: str
    #: requirements as "name@range", ranges "^1.2.0", "~1.2.0", ">=1.0.0", "1.2.3" or "*"
    #: (the same form publish_version takes, so a release's list can be reused as is)
    dependencies: list[str] = Field(default_factory=list)
    changelog: str = ""
    yanked: bool = False
    yank_reason: str = ""

    def requires(self) -> dict[str, str]:
        """Dependency name -> range."""
        return {name: wanted for name, _, wanted in (s.partition("@") for s in self.dependencies)}


class AuditEntry(BaseModel):
    id: str
    at: Timestamp
    actor: str
    action: str
    package: str
    detail: str = ""


# -- what the tools return ---------------------------------------------------------------


class PackageHit(TypedDict):
    name: str
    description: str
    latest: Annotated[str | None, Field(description="Newest stable unyanked version")]
    weekly_downloads: int
    deprecated: Annotated[str, Field(description="Deprecation message; empty if not")]


class VersionEntry(TypedDict):
    version: str
    published_at: Timestamp
    yanked: bool


class PackageRecord(Package):
    """A package with its versions, oldest first."""

    latest: str | None = Field(description="Newest stable unyanked version")
    versions: list[VersionEntry]


class Resolution(TypedDict):
    """The dependency tree of a release, resolved."""

    package: str
    version: str
    resolved: Annotated[dict[str, str], Field(description="Package -> chosen version")]
    problems: Annotated[list[str], Field(
        description="Unsatisfiable ranges and conflicting requirements")]


class Dependent(TypedDict):
    package: Annotated[str, Field(description="The depending package")]
    version: Annotated[str, Field(description="Its latest version")]
    range: Annotated[str, Field(description="The range it requires")]
    resolves_to: Annotated[str | None, Field(
        description="Version that range resolves to now (null if nothing matches)")]


class UserRecord(User):
    packages: dict[str, Role] = Field(description="Packages maintained: name -> role")


class Published(TypedDict):
    version: Version
    warnings: list[str]


class Yanked(TypedDict):
    version: Version
    broken_dependents: Annotated[list[str], Field(
        description="Packages whose latest release no longer resolves this dependency")]


class Maintainers(TypedDict):
    package: str
    maintainers: Annotated[dict[str, Role], Field(description="Username -> role")]


class Deprecated(TypedDict):
    package: str
    deprecated: Annotated[str, Field(description="The deprecation message")]


class PackageRegistryState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-09T09:00"
    current_user: str = "pnair"
    users: dict[str, User] = Field(default_factory=dict)
    packages: dict[str, Package] = Field(default_factory=dict)
    #: "name@version" -> version
    versions: dict[str, Version] = Field(default_factory=dict)
    audit_log: list[AuditEntry] = Field(default_factory=list)
    next_audit_id: int = 1


# -- semver ------------------------------------------------------------------------------

def _key(version: str) -> tuple[Any, ...]:
    """Sort key with semver precedence (a pre-release sorts before its release)."""
    m = _SEMVER.fullmatch(version)
    if m is None:
        raise ToolError(f"Invalid version {version!r}: versions look like MAJOR.MINOR.PATCH, "
                        "e.g. 1.4.2 (optionally -beta.1).")
    major, minor, patch, pre = int(m[1]), int(m[2]), int(m[3]), m[4]
    if pre is None:
        return (major, minor, patch, 1, ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (major, minor, patch, 0, parts)


def _is_prerelease(version: str) -> bool:
    return "-" in version


def _check_range(spec: str) -> None:
    base = spec[2:] if spec.startswith(">=") else spec.lstrip("^~")
    if spec != "*" and (_SEMVER.fullmatch(base) is None or spec.count("^") + spec.count("~")
                        > 1):
        raise ToolError(f"Invalid version range {spec!r}: use ^1.2.0, ~1.2.0, >=1.2.0, 1.2.0 "
                        "or *.")


def _satisfies(version: str, spec: str) -> bool:
    """npm-style range matching; pre-releases only match an exact range."""
    _check_range(spec)
    if spec == "*":
        return not _is_prerelease(version)
    if spec[0].isdigit():
        return version == spec
    if _is_prerelease(version):
        return False
    v = _key(version)[:3]
    if spec.startswith(">="):
        return v >= _key(spec[2:])[:3]
    low = _key(spec[1:])[:3]
    if spec[0] == "~":
        high = (low[0], low[1] + 1, 0)
    elif low[0] > 0:
        high = (low[0] + 1, 0, 0)
    elif low[1] > 0:
        high = (0, low[1] + 1, 0)
    else:
        high = (0, 0, low[2] + 1)
    return low <= v < high


# -- seed data ---------------------------------------------------------------------------

_USERS = [
    ("pnair", "Priya Nair"), ("mchen", "Marcus Chen"), ("salvarez", "Sofia Alvarez"),
    ("dokafor", "Daniel Okafor"), ("hkim", "Hannah Kim"), ("tnowak", "Tomasz Nowak"),
    ("gliu", "Grace Liu"), ("ohaddad", "Omar Haddad"), ("abello", "Aisha Bello"),
    ("lmeyer", "Lucas Meyer"), ("npetrova", "Nina Petrova"), ("vsantos", "Victor Santos"),
    ("mtanaka", "Mei Tanaka"), ("sgreene", "Samuel Greene"), ("nschmidt", "Noah Schmidt"),
    ("imoreno", "Isabel Moreno"), ("oramos", "Octavia Ramos"), ("kdarko", "Kwame Darko"),
    ("lberg", "Linnea Berg"), ("rkhan", "Rehan Khan"), ("bfoster", "Bianca Foster"),
    ("tvo", "Thanh Vo"), ("ffrost", "Finn Frost"), ("jdoe-dev", "Jamie Doe"),
]
_STAFF = 16  # the first users work at Northwind; the rest are outside contributors
_UNVERIFIED = {"ffrost", "jdoe-dev"}

# (name, description, keywords, license, maintainers, deprecated,
#  [(version, published, dependencies, yank reason)])
_ANCHORS: list[tuple[str, str, list[str], str, dict[str, str], str,
                     list[tuple[str, str, dict[str, str], str]]]] = [
    ("quill-log", "Structured logging with pluggable sinks.", ["logging", "json"], "MIT",
     {"hkim": "owner", "pnair": "maintainer"}, "",
     [("1.4.0", "2024-06-02", {}, ""), ("2.0.0", "2025-01-15", {}, ""),
      ("2.1.0", "2025-09-30", {}, "")]),
    ("gust-retry", "Retries with exponential backoff and jitter.", ["retry", "backoff"],
     "Apache-2.0", {"pnair": "owner", "mchen": "maintainer"}, "",
     [("1.0.0", "2024-03-11", {}, ""), ("1.1.0", "2024-10-02", {}, ""),
      ("1.2.0", "2025-05-20", {}, ""), ("1.2.3", "2026-01-12", {}, "")]),
    ("ember-config", "Layered configuration from files, environment and flags.",
     ["config", "env"], "MIT", {"tnowak": "owner"}, "",
     [("1.0.0", "2024-08-19", {}, ""), ("1.1.0", "2025-02-03", {}, ""),
      ("1.2.0", "2025-11-14", {}, "")]),
    ("nimbus-cache", "In-memory and Redis caching with TTLs.", ["cache", "redis"],
     "BSD-3-Clause", {"dokafor": "owner"}, "",
     [("2.4.0", "2024-12-01", {}, ""), ("2.5.1", "2025-06-09", {}, ""),
      ("3.0.0", "2025-12-02", {}, "Data loss on eviction under load"),
      ("3.0.1", "2026-01-20", {}, "Regression: TTLs ignored")]),
    ("tidewater", "Async HTTP client with retries, timeouts and connection pooling.",
     ["http", "client", "async"], "MIT", {"pnair": "owner", "nschmidt": "maintainer"}, "",
     [("2.9.1", "2024-11-05", {"gust-retry": "^1.0.0"}, ""),
      ("3.0.0", "2025-04-22", {"gust-retry": "^1.1.0", "quill-log": "^2.0.0"}, ""),
      ("3.1.0", "2025-08-30", {"gust-retry": "^1.1.0", "quill-log": "^2.0.0"}, ""),
      ("3.1.4", "2026-01-28", {"gust-retry": "^1.2.0", "quill-log": "^2.0.0"}, ""),
      ("3.2.0", "2026-03-04", {"gust-retry": "^1.2.0", "quill-log": "^2.1.0"}, "")]),
    ("harbor-cli", "Command-line client for Harbor deployments.", ["cli", "deploy"],
     "Apache-2.0", {"pnair": "owner"}, "",
     [("0.8.0", "2025-03-03", {"tidewater": "^3.0.0"}, ""),
      ("0.9.0", "2025-09-12", {"tidewater": "^3.1.0", "ember-config": "^1.1.0"}, ""),
      ("1.0.0", "2026-02-10", {"tidewater": "^3.1.0", "ember-config": "^1.2.0"}, "")]),
    ("lattice-orm", "A typed ORM with migrations and connection pooling.",
     ["orm", "database", "sql"], "MIT", {"salvarez": "owner", "pnair": "maintainer"}, "",
     [("1.5.0", "2025-01-09", {"nimbus-cache": "^2.4.0"}, ""),
      ("1.6.2", "2025-07-14", {"nimbus-cache": "^2.5.0", "quill-log": "^2.0.0"}, ""),
      ("2.0.0", "2026-02-26", {"nimbus-cache": "^3.0.0", "quill-log": "^2.1.0"}, "")]),
    ("velvet-ui", "Dashboard UI components.", ["ui", "components"], "MIT",
     {"mtanaka": "owner", "sgreene": "maintainer"},
     "No longer maintained; use plume-templates instead.",
     [("0.3.0", "2024-04-18", {}, ""), ("0.4.1", "2024-09-07", {}, "")]),
]
_GENERATED = [
    ("plume-templates", "Fast HTML templates with autoescaping.", ["templates", "html"]),
    ("glacier-store", "Content-addressed blob storage client.", ["storage", "s3"]),
    ("atlas-geo", "Geocoding and distance helpers.", ["geo", "maps"]),
    ("comet-metrics", "Counters, gauges and histograms with Prometheus export.",
     ["metrics", "prometheus"]),
    ("prism-color", "Color parsing and palette generation.", ["color", "design"]),
    ("ripple-events", "Typed in-process event bus.", ["events", "pubsub"]),
    ("tundra-crypto", "Safe wrappers for hashing, signing and key derivation.",
     ["crypto", "security"]),
    ("beacon-health", "Health-check endpoints for services.", ["health", "monitoring"]),
    ("kestrel-router", "Minimal HTTP router with middleware.", ["http", "router"]),
    ("marble-test", "Snapshot and property testing helpers.", ["testing"]),
    ("ferry-migrate", "Schema migrations for Postgres.", ["database", "migrations"]),
    ("sprocket-queue", "Durable job queue on Postgres.", ["queue", "jobs"]),
    ("cinder-auth", "Session and token authentication.", ["auth", "security"]),
    ("parsely", "Parser combinators for config files and DSLs.", ["parsing"]),
]
_LICENSES = ["MIT", "Apache-2.0", "BSD-3-Clause", "ISC", "MPL-2.0"]


def _seeded_state(seed: int) -> PackageRegistryState:
    rng = random.Random(seed)
    state = PackageRegistryState(seed=seed)
    for i, (username, name) in enumerate(_USERS):
        first, last = name.lower().split(" ", 1)
        domain = "northwind.io" if i < _STAFF else "mail.dev"
        state.users[username] = User(username=username, name=name,
                                     email=f"{first}.{last}@{domain}",
                                     verified=username not in _UNVERIFIED)
    entries: list[tuple[str, str, str, str, str]] = []  # (at, actor, action, package, detail)

    def add(name: str, description: str, keywords: list[str], license_: str,
            maintainers: dict[str, str], deprecated: str,
            versions: list[tuple[str, str, dict[str, str], str]]) -> None:
        owner = next(u for u, r in maintainers.items() if r == "owner")
        state.packages[name] = Package(
            name=name, description=description, license=license_,  # type: ignore[arg-type]
            keywords=keywords, created_at=f"{versions[0][1]}T10:00",
            maintainers=maintainers,  # type: ignore[arg-type]
            deprecated=deprecated, weekly_downloads=rng.randint(40, 90000))
        for version, day, deps, yank in versions:
            at = f"{day}T{rng.randint(8, 19):02d}:{rng.choice(['05', '20', '40'])}"
            state.versions[f"{name}@{version}"] = Version(
                package=name, version=version, published_at=at, published_by=owner,
                dependencies=[f"{dep}@{spec}" for dep, spec in deps.items()],
                yanked=bool(yank), yank_reason=yank)
            entries.append((at, owner, "publish", name, version))
            if yank:
                entries.append((f"{at[:10]}T23:00", owner, "yank", name, f"{version}: {yank}"))
        if deprecated:
            entries.append((f"{versions[-1][1]}T23:30", owner, "deprecate", name, deprecated))

    for anchor in _ANCHORS:
        add(*anchor)
    candidates = [u for u, _ in _USERS if u not in _UNVERIFIED and u != "pnair"]
    for name, description, keywords in _GENERATED:
        team = rng.sample(candidates, rng.randint(1, 3))
        maintainers = {u: "owner" if i == 0 else "maintainer" for i, u in enumerate(team)}
        major, minor, patch = rng.choice([(0, 1, 0), (1, 0, 0), (2, 3, 1)])
        month = rng.randint(0, 12)  # months after 2024-01
        versions = []
        for _ in range(rng.randint(2, 5)):
            day = f"{2024 + month // 12}-{month % 12 + 1:02d}-{rng.randint(1, 28):02d}"
            deps = {}
            for dep in rng.sample(sorted(state.packages), rng.randint(0, 2)):
                # only releases that existed then, so the history stays plausible
                usable = [v.version for v in state.versions.values()
                          if v.package == dep and not v.yanked and v.published_at < day]
                if usable:
                    pick = _key(rng.choice(usable))
                    deps[dep] = f"^{pick[0]}.{pick[1]}.0"
            versions.append((f"{major}.{minor}.{patch}", day, deps, ""))
            bump = rng.choice(["patch", "patch", "minor", "major"])
            major, minor, patch = {"patch": (major, minor, patch + 1),
                                   "minor": (major, minor + 1, 0),
                                   "major": (major + 1, 0, 0)}[bump]
            month += rng.randint(2, 6)
            if month >= 26:  # stay before March 2026
                break
        add(name, description, keywords, rng.choice(_LICENSES), maintainers, "", versions)
    for at, actor, action, package, detail in sorted(entries):
        state.audit_log.append(AuditEntry(id=f"A{state.next_audit_id:04d}", at=at, actor=actor,
                                          action=action, package=package, detail=detail))
        state.next_audit_id += 1
    return state


class PackageRegistry(Environment):
    """An internal package index: publish, yank, deprecate, resolve, manage maintainers."""

    name = "package_registry"
    description = ("An internal package registry: search packages, inspect versions and "
                   "dependency trees, publish and yank releases under semver rules, "
                   "and manage maintainers.")
    domain = "developer"
    State = PackageRegistryState
    state: PackageRegistryState

    @classmethod
    def default_state(cls, seed: int = 0) -> PackageRegistryState:
        """24 users, 22 packages with ~70 versions, dependency ranges between them, some
        yanked releases, one deprecated package and the audit trail of all of it."""
        return _seeded_state(seed)

    # -- helpers ----------------------------------------------------------------------

    def _me(self) -> str:
        return self.state.current_user

    def _package(self, name: str) -> Package:
        if name not in self.state.packages:
            raise ToolError(f"Package {name!r} not found.")
        return self.state.packages[name]

    def _version(self, package: str, version: str) -> Version:
        self._package(package)
        found = self.state.versions.get(f"{package}@{version}")
        if found is None:
            raise ToolError(f"Version {package}@{version} not found.")
        return found

    def _user(self, username: str) -> User:
        if username not in self.state.users:
            raise ToolError(f"User {username!r} not found.")
        return self.state.users[username]

    def _require(self, package: Package, role: Role) -> None:
        mine = package.maintainers.get(self._me())
        if role == "owner" and mine != "owner":
            raise ToolError(f"Permission denied: only owners of {package.name!r} can manage "
                            f"maintainers (you are {mine or 'not a maintainer'}).")
        if mine is None:
            raise ToolError(f"Permission denied: {self._me()} is not a maintainer of "
                            f"{package.name!r}.")

    def _versions_of(self, package: str) -> list[Version]:
        return sorted((v for v in self.state.versions.values() if v.package == package),
                      key=lambda v: _key(v.version))

    def _latest(self, package: str) -> Version | None:
        stable = [v for v in self._versions_of(package)
                  if not v.yanked and not _is_prerelease(v.version)]
        return stable[-1] if stable else None

    def _best_match(self, package: str, spec: str) -> Version | None:
        matches = [v for v in self._versions_of(package)
                   if not v.yanked and _satisfies(v.version, spec)]
        return matches[-1] if matches else None

    def _audit(self, action: str, package: str, detail: str) -> None:
        self.state.audit_log.append(AuditEntry(id=f"A{self.state.next_audit_id:04d}",
                                               at=self.state.now, actor=self._me(),
                                               action=action, package=package, detail=detail))
        self.state.next_audit_id += 1

    # -- read tools -------------------------------------------------------------------

    @tool
    def search_packages(self, query: str, limit: int = 10) -> list[PackageHit]:
        """Search packages by name, description or keyword, most downloaded first.

        Args:
            query: Text to look for (case-insensitive).
            limit: Most results to return (1-25).

        Returns:
            Packages with name, description, latest version, weekly downloads and
            deprecation message.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("Query must not be empty.")
        if not 1 <= limit <= 25:
            raise ToolError("limit must be between 1 and 25.")
        hits = [p for p in self.state.packages.values()
                if q in p.name or q in p.description.lower() or q in p.keywords]
        hits.sort(key=lambda p: (-p.weekly_downloads, p.name))
        out: list[PackageHit] = []
        for p in hits[:limit]:
            latest = self._latest(p.name)
            out.append({"name": p.name, "description": p.description,
                        "latest": latest.version if latest else None,
                        "weekly_downloads": p.weekly_downloads, "deprecated": p.deprecated})
        return out

    @tool
    def get_package(self, name: str) -> PackageRecord:
        """Show a package: description, license, maintainers and every version.

        Args:
            name: The package name, e.g. "tidewater".

        Returns:
            The package with its maintainers (username -> role), its versions oldest
            first (with yanked flags) and "latest" (newest stable unyanked version).
        """
        package = self._package(name)
        latest = self._latest(name)
        return PackageRecord(
            **package.model_dump(), latest=latest.version if latest else None,
            versions=[{"version": v.version, "published_at": v.published_at,
                       "yanked": v.yanked} for v in self._versions_of(name)])

    @tool
    def get_version(self, package: str, version: str) -> Version:
        """Show one release: dependencies, publisher, changelog and yank status.

        Args:
            package: The package name.
            version: The exact version, e.g. "3.1.4".

        Returns:
            The version record.
        """
        return self._version(package, version)

    @tool
    def resolve_dependencies(self, package: str, version: str | None = None
                             ) -> Resolution:
        """Resolve the full dependency tree of a release, as an installer would.

        Each range picks the newest unyanked version that satisfies it.

        Args:
            package: The package name.
            version: The release to install; omit for the latest.

        Returns:
            "resolved" (package -> version) and "problems": ranges no unyanked version
            satisfies, and packages required at incompatible versions.
        """
        root = self._version(package, version) if version else self._latest(package)
        if root is None:
            raise ToolError(f"Package {package!r} has no installable release.")
        resolved: dict[str, str] = {}
        problems: list[str] = []
        queue = [(root.package, name, spec) for name, spec in root.requires().items()]
        while queue:
            parent, name, spec = queue.pop(0)
            if name in resolved:
                if not _satisfies(resolved[name], spec):
                    problems.append(f"{parent} needs {name} {spec} but {resolved[name]} was "
                                    "already chosen")
                continue
            best = self._best_match(name, spec)
            if best is None:
                problems.append(f"{parent} needs {name} {spec}: no unyanked version matches")
                continue
            resolved[name] = best.version
            queue.extend((name, dep, s) for dep, s in best.requires().items())
        return {"package": root.package, "version": root.version, "resolved": resolved,
                "problems": problems}

    @tool
    def find_dependents(self, package: str) -> list[Dependent]:
        """Find packages whose latest release depends on this package.

        Args:
            package: The package name.

        Returns:
            Dependents with their latest version, the range they require and the version
            that range resolves to now (null if nothing matches).
        """
        self._package(package)
        out: list[Dependent] = []
        for name in sorted(self.state.packages):
            latest = self._latest(name)
            if latest and package in latest.requires():
                spec = latest.requires()[package]
                best = self._best_match(package, spec)
                out.append({"package": name, "version": latest.version, "range": spec,
                            "resolves_to": best.version if best else None})
        return out

    @tool
    def search_users(self, query: str) -> list[UserRecord]:
        """Find registry users by username, name or email, with the packages they maintain.

        Args:
            query: Part of a username, full name or email address (case-insensitive).

        Returns:
            Users with username, name, email, verified flag and packages (name -> role).
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("Query must not be empty.")
        return [UserRecord(**u.model_dump(),
                           packages={p.name: p.maintainers[u.username]
                                     for p in self.state.packages.values()
                                     if u.username in p.maintainers})
                for u in self.state.users.values()
                if q in u.username or q in u.name.lower() or q in u.email.lower()]

    @tool
    def get_audit_log(self, package: str, limit: int = 10) -> list[AuditEntry]:
        """Show the most recent audited changes to a package, newest first.

        Args:
            package: The package name.
            limit: Most entries to return (1-50).

        Returns:
            Entries with time, actor, action (publish, yank, unyank, deprecate,
            undeprecate, add_maintainer, remove_maintainer, create) and detail.
        """
        self._package(package)
        if not 1 <= limit <= 50:
            raise ToolError("limit must be between 1 and 50.")
        entries = [e for e in self.state.audit_log if e.package == package]
        return list(reversed(entries))[:limit]

    # -- write tools ------------------------------------------------------------------

    @tool(write=True)
    def create_package(self, name: str, description: str, license: License
                       ) -> PackageRecord:
        """Register a new, empty package that you own.

        Args:
            name: Lowercase letters, digits and single hyphens, 2-40 characters, starting
                with a letter; must not imitate an existing name.
            description: One-line description.
            license: SPDX license id.

        Returns:
            The new package.
        """
        if not (2 <= len(name) <= 40 and _NAME.fullmatch(name)):
            raise ToolError(f"Invalid package name {name!r}: use 2-40 lowercase letters, "
                            "digits and single hyphens, starting with a letter.")
        if name in self.state.packages:
            raise ToolError(f"Package {name!r} already exists.")
        squashed = name.replace("-", "")
        for other in self.state.packages:
            if other.replace("-", "") == squashed:
                raise ToolError(f"Package name {name!r} is too similar to existing package "
                                f"{other!r}.")
        if not description.strip():
            raise ToolError("Description must not be empty.")
        package = Package(name=name, description=description.strip(), license=license,
                          created_at=self.state.now, maintainers={self._me(): "owner"})
        self.state.packages[name] = package
        self._audit("create", name, f"license {license}")
        return PackageRecord(**package.model_dump(), latest=None, versions=[])

    @tool(write=True)
    def publish_version(self, package: str, version: str,
                        dependencies: list[str] | None = None,
                        changelog: str = "") -> Published:
        """Publish a new release of a package you maintain.

        Semver rules: the number is new (never reused, even if yanked) and newer than
        every existing release with the same major version.

        Args:
            package: The package name.
            version: New version, MAJOR.MINOR.PATCH with optional pre-release (2.0.0-rc.1).
            dependencies: Requirements as "name@range", e.g. ["gust-retry@^1.2.0"]; each
                range must match an unyanked release.
            changelog: What changed.

        Returns:
            The published version and warnings (e.g. deprecated dependencies).
        """
        pkg = self._package(package)
        self._require(pkg, "maintainer")
        if pkg.deprecated:
            raise ToolError(f"Package {package!r} is deprecated; remove the deprecation "
                            "before publishing.")
        key = _key(version)
        if f"{package}@{version}" in self.state.versions:
            raise ToolError(f"{package}@{version} already exists; a version number can never "
                            "be reused, even after yanking.")
        same_major = [v.version for v in self._versions_of(package)
                      if _key(v.version)[0] == key[0]]
        if same_major and key <= _key(same_major[-1]):
            raise ToolError(f"{package}@{version} is not newer than {same_major[-1]}, the "
                            f"latest {key[0]}.x release.")
        deps, warnings = self._parse_dependencies(package, dependencies or [])
        release = Version(package=package, version=version, published_at=self.state.now,
                          published_by=self._me(), dependencies=deps, changelog=changelog)
        self.state.versions[f"{package}@{version}"] = release
        self._audit("publish", package, version)
        return {"version": release, "warnings": warnings}

    def _parse_dependencies(self, package: str, specs: list[str]
                            ) -> tuple[list[str], list[str]]:
        """Validated "name@range" requirements, and warnings about them."""
        deps: dict[str, str] = {}
        warnings = []
        for spec in specs:
            name, sep, wanted = spec.partition("@")
            if not sep or not name or not wanted:
                raise ToolError(f"Invalid dependency {spec!r}: use name@range, e.g. "
                                "gust-retry@^1.2.0.")
            if name == package:
                raise ToolError(f"{package} cannot depend on itself.")
            if name in deps:
                raise ToolError(f"Dependency {name!r} is listed twice.")
            if name not in self.state.packages:
                raise ToolError(f"Dependency {name!r} does not exist in the registry.")
            if self._best_match(name, wanted) is None:
                raise ToolError(f"No unyanked release of {name} matches {wanted}.")
            if self.state.packages[name].deprecated:
                warnings.append(f"{name} is deprecated: {self.state.packages[name].deprecated}")
            deps[name] = wanted
        return [f"{name}@{wanted}" for name, wanted in deps.items()], warnings

    @tool(write=True)
    def yank_version(self, package: str, version: str, reason: str) -> Yanked:
        """Yank a release: installers skip it, but it stays readable and its number is used.

        Args:
            package: The package name.
            version: The release to yank.
            reason: Why, shown to anyone who pinned it.

        Returns:
            The yanked version and "broken_dependents": packages whose latest release
            now has no matching version of this package.
        """
        pkg = self._package(package)
        self._require(pkg, "maintainer")
        release = self._version(package, version)
        if release.yanked:
            raise ToolError(f"{package}@{version} is already yanked ({release.yank_reason}).")
        if not reason.strip():
            raise ToolError("Give a reason for yanking.")
        release.yanked, release.yank_reason = True, reason.strip()
        self._audit("yank", package, f"{version}: {release.yank_reason}")
        broken = [d["package"] for d in self.find_dependents(package)
                  if d["resolves_to"] is None]
        return {"version": release, "broken_dependents": broken}

    @tool(write=True)
    def unyank_version(self, package: str, version: str) -> Version:
        """Restore a yanked release so installers can choose it again.

        Args:
            package: The package name.
            version: The yanked release.

        Returns:
            The restored version.
        """
        pkg = self._package(package)
        self._require(pkg, "maintainer")
        release = self._version(package, version)
        if not release.yanked:
            raise ToolError(f"{package}@{version} is not yanked.")
        release.yanked, release.yank_reason = False, ""
        self._audit("unyank", package, version)
        return release

    @tool(write=True)
    def add_maintainer(self, package: str, username: str,
                       role: Role = "maintainer") -> Maintainers:
        """Give a user maintainer or owner rights on a package you own (or change their role).

        Args:
            package: The package name.
            username: The user's registry username.
            role: "maintainer" (publish, yank, deprecate) or "owner" (also manage people).

        Returns:
            The package's maintainers (username -> role).
        """
        pkg = self._package(package)
        self._require(pkg, "owner")
        user = self._user(username)
        if not user.verified:
            raise ToolError(f"User {username!r} has not verified their email address and "
                            "cannot maintain packages.")
        previous = pkg.maintainers.get(username)
        if previous == role:
            raise ToolError(f"{username} is already {role} of {package!r}.")
        if previous == "owner" and sum(r == "owner" for r in pkg.maintainers.values()) == 1:
            raise ToolError(f"{username} is the last owner of {package!r}; add another owner "
                            "first.")
        pkg.maintainers[username] = role
        self._audit("add_maintainer", package, f"{username} as {role}")
        return {"package": package, "maintainers": pkg.maintainers}

    @tool(write=True)
    def remove_maintainer(self, package: str, username: str) -> Maintainers:
        """Take a user's rights on a package away (owners may remove anyone, maintainers
        only themselves).

        Args:
            package: The package name.
            username: The maintainer to remove.

        Returns:
            The package's remaining maintainers (username -> role).
        """
        pkg = self._package(package)
        if username != self._me():
            self._require(pkg, "owner")
        role = pkg.maintainers.get(username)
        if role is None:
            raise ToolError(f"{username} is not a maintainer of {package!r}.")
        if role == "owner" and sum(r == "owner" for r in pkg.maintainers.values()) == 1:
            raise ToolError(f"{username} is the last owner of {package!r}; add another owner "
                            "first.")
        del pkg.maintainers[username]
        self._audit("remove_maintainer", package, username)
        return {"package": package, "maintainers": pkg.maintainers}

    @tool(write=True)
    def deprecate_package(self, package: str, message: str) -> Deprecated:
        """Deprecate a package with a message for installers, or lift the deprecation.

        A deprecated package cannot get new releases.

        Args:
            package: The package name.
            message: Why, and what to use instead; an empty message removes the deprecation.

        Returns:
            The package name and its deprecation message.
        """
        pkg = self._package(package)
        self._require(pkg, "maintainer")
        message = message.strip()
        if not message and not pkg.deprecated:
            raise ToolError(f"Package {package!r} is not deprecated.")
        if message and message == pkg.deprecated:
            raise ToolError(f"Package {package!r} is already deprecated with that message.")
        pkg.deprecated = message
        self._audit("deprecate" if message else "undeprecate", package, message)
        return {"package": package, "deprecated": message}
