#!/usr/bin/env python3
"""Build conformance/census/wide.json: the most downloaded stdio MCP servers on npm and PyPI
that conformance/census/servers.json does not hold, as registry server.json entries.

    scripts/book/census_wide_listing.py PACKAGES_DIR [--count N] [--meta-cache DIR] > wide.json

PACKAGES_DIR holds npm.tsv (name, version, downloads a month, summary) and pypi.tsv (name,
version, month, rank among the 15,000 most downloaded, summary). Candidates are every package
whose name says `mcp` (or whose summary says it is an MCP server), most downloaded first. Each is
kept only when its registry metadata shows a server one launches (npm: a `bin` that `npx PKG`
runs and an `engines.node` the machine's Node 20 meets; PyPI: a README that launches it as
`uvx PKG` and a `requires_python` that Python 3.11 meets), and is not a library, SDK, proxy or
client by its name and description. Launch arguments and environment variables come from the
README's own client configuration (`"args": […]` after the package, `"env": {…}`): secrets (a
name saying KEY, TOKEN, SECRET, PASSWORD…) become required secrets, which the census gives a
placeholder; paths become a `{directory}` variable (default /tmp). The version is the one in
the .tsv (what the downloads counted). Registry metadata is cached in --meta-cache, so a second
run is offline and gives the same listing.
"""

import concurrent.futures
import csv
import io
import json
import os
import re
import sys
import tarfile
import urllib.parse
import urllib.request

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
META = "io.github.mcp-shutdown-conformance/census"
HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLED = os.path.join(HERE, "..", "..", "conformance", "census", "servers.json")

# Left out of the bundled census after trying them (conformance/census/README.md), and
# packages whose name says mcp but which are libraries, clients or proxies.
LEFT_OUT = {
    "@sentry/mcp-server", "firecrawl-mcp", "@apify/actors-mcp-server",
    "@wonderwhy-er/desktop-commander", "slack-mcp-server", "@bytebase/dbhub",
    "@azure-devops/mcp", "@modelcontextprotocol/server-gdrive", "office-word-mcp-server",
    "awslabs.aws-api-mcp-server", "awslabs-aws-api-mcp-server", "office-powerpoint-mcp-server",
    "pdf-tools-mcp", "yfmcp", "pagerduty-mcp", "dbt-mcp", "cli-mcp-server", "mcp-server-duckdb",
    "mcp-server-sqlite", "chroma-mcp", "mcp-scholarly", "@modelcontextprotocol/server-puppeteer",
    "@modelcontextprotocol/server-redis",
}
NOT_A_SERVER = re.compile(
    r"(^|[-/_.@])(sdk|framework|adapters?|client|inspector|proxy|remote|bridge|gateway|types|"
    r"utils?|core|tunnel|router|transports?|toolkit|create|template|plugin|middleware|"
    r"instrumentation|eslint|vite|webpack|evals?|test(ing)?|mock|hub|registry|host|"
    r"handler|ui|apps?|installer|config|schema|kit|lib|react|vue|next|nest|hono|express|cli|"
    r"generator|logger|envmcp|add-mcp)"
    r"($|[-/_.])"
)
NOT_A_SERVER_TEXT = re.compile(
    r"\b(sdk|framework|library|adapter|client sdk|proxy|bridge to|middleware|for building|"
    r"build mcp|create mcp|typescript types|instrumentation|internal use)\b", re.I)
# The machine's own environment: a README's example value would break the launch.
ENV_OF_THE_MACHINE = {"PATH", "NODE_PATH", "HOME", "USER", "SHELL", "PYTHONPATH"}
PLATFORM_BUILD = re.compile(r"[-_](linux|win32|windows|darwin|macos)[-_](x64|arm64|amd64|ia32)$")
SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASS|PAT|CREDENTIAL|AUTH|COOKIE|PRIVATE)", re.I)
PATHLIKE = re.compile(r"^(/|~|\.{1,2}/|[A-Za-z]:\\)|path/to|/Users/|/home/")
PLACEHOLDER_VALUE = re.compile(r"^(<.*>|\$\{.*\}|your[-_ ].*|YOUR_.*|\.\.\.|xxx.*|sk-\.\.\.)$", re.I)


def fetch_json(url, cache_dir):
    key = re.sub(r"[^A-Za-z0-9._-]", "_", url)
    path = os.path.join(cache_dir, key + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            doc = json.load(r)
    except Exception as e:  # a package gone from the registry is left out, and said so
        doc = {"_error": str(e)}
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f)
    os.replace(path + ".tmp", path)
    return doc


def fetch_readme(tarball, cache_dir):
    """The README inside an npm package's tarball (the registry's documents carry none here)."""
    key = re.sub(r"[^A-Za-z0-9._-]", "_", tarball)
    path = os.path.join(cache_dir, key + ".readme")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    text = ""
    try:
        with urllib.request.urlopen(tarball, timeout=120) as r:
            data = r.read(64 << 20)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            names = [m for m in tar.getmembers() if m.isfile()
                     and re.match(r"^[^/]+/readme(\.md|\.markdown|\.txt)?$", m.name, re.I)]
            if names:
                text = tar.extractfile(names[0]).read().decode("utf-8", "replace")
    except Exception as e:  # an unreadable tarball leaves the README empty, and said so
        print(f"no README from {tarball}: {e}", file=sys.stderr)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return text


def bundled_packages():
    with open(BUNDLED) as f:
        doc = json.load(f)
    return {p["identifier"].lower().replace("_", "-").replace(".", "-")
            for s in doc["servers"] for p in s["server"]["packages"]}


def norm(name):
    return name.lower().replace("_", "-").replace(".", "-")


def read_tsv(path):
    with open(path, newline="") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        yield from rows


def npm_candidates(packages_dir):
    out = []
    for row in read_tsv(os.path.join(packages_dir, "npm.tsv")):
        if len(row) < 3 or not row[2].isdigit():
            continue
        name, version, downloads = row[0], row[1], int(row[2])
        summary = row[3] if len(row) > 3 else ""
        says_server = re.search(r"\bmcp server\b|model context protocol server", summary, re.I)
        if "mcp" in name.lower() or says_server:
            out.append((downloads, name, version, summary))
    out.sort(key=lambda c: (-c[0], c[1]))
    return out


def pypi_candidates(packages_dir):
    out = []
    for row in read_tsv(os.path.join(packages_dir, "pypi.tsv")):
        if len(row) < 4 or not row[3].isdigit():
            continue
        name, version, rank = row[0], row[1], int(row[3])
        summary = row[4] if len(row) > 4 else ""
        if "mcp" in name.lower() or re.search(r"\bmcp server\b", summary, re.I):
            out.append((rank, name, version, summary))
    out.sort()
    return out


def repo_url(repository):
    url = repository.get("url", "") if isinstance(repository, dict) else str(repository or "")
    m = re.search(r"github\.com[/:]([^/]+)/([^/#?]+?)(\.git)?([/#?].*)?$", url)
    return (m.group(1), m.group(2)) if m else None


def server_name(official, package, repo):
    if official and re.match(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$", official):
        return official, True
    short = package.split("/")[-1]
    if repo:
        owner, name = repo
        return f"io.github.{owner}/{name}", False
    if package.startswith("@"):
        scope = re.sub(r"[^a-z0-9-]+", "-", package[1:].split("/")[0].lower()).strip("-")
        return f"com.npmjs.{scope}/{short}", False
    return f"com.npmjs/{short}", False


def config_block(readme, package, launcher):
    """The README's client configuration for this package: (args after it, env) or None."""
    for m in re.finditer(r'"args"\s*:\s*(\[[^\]]*\])', readme):
        try:
            args = json.loads(m.group(1))
        except ValueError:
            continue
        if not all(isinstance(a, str) for a in args):
            continue
        at = [i for i, a in enumerate(args) if re.sub(r"(@[^/@]+|==.+)$", "", a) == package]
        if not at:
            continue
        window = readme[max(0, m.start() - 300): m.end() + 600]
        if launcher not in window:
            continue
        env = {}
        e = re.search(r'"env"\s*:\s*(\{[^{}]*\})', readme[m.end(): m.end() + 600])
        if e:
            try:
                env = json.loads(e.group(1))
            except ValueError:
                env = {}
        return args[at[0] + 1:], {k: v for k, v in env.items() if isinstance(v, str)}
    return None


def is_placeholder(value):
    return bool(PLACEHOLDER_VALUE.match(value.strip()) or re.search(r"<[^>]*>|YOUR_|your[-_]|\$[A-Z_]", value))


def variable(out, name, secret):
    var = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "value"
    while any(var in a.get("variables", {}) for a in out):
        var += "_2"
    spec = {"isRequired": True, "isSecret": True} if secret else \
        {"isRequired": True, "default": "example"}
    return "{%s}" % var, {var: spec}


def arguments(args):
    """The README's arguments as packageArguments: paths become a directory variable, secrets
    and the README's own placeholders (`<your_app_id>`, `YOUR_TOKEN`) become variables."""
    out, dirs = [], 0
    for a in args:
        if a in ("-y", "--yes"):
            continue
        named = out[-1] if out and out[-1]["type"] == "named" and "value" not in out[-1] else None
        if a.startswith("-") and not named:
            name, eq, value = a.partition("=")
            out.append({"type": "named", "name": name})
            if eq:
                set_value(out, out[-1], value)
        elif a.startswith("-"):
            name, eq, value = a.partition("=")
            out.append({"type": "named", "name": name})
            if eq:
                set_value(out, out[-1], value)
        elif named:
            set_value(out, named, a)
        elif PATHLIKE.search(a) or re.search(r"<[^>]*(path|dir|vault|file|\.db)", a, re.I):
            dirs += 1
            var = "directory" if dirs == 1 else f"directory_{dirs}"
            out.append({"type": "positional", "value": "{%s}" % var, "valueHint": var,
                        "variables": {var: {"description": "A directory the server may use",
                                            "format": "filepath", "default": "/tmp",
                                            "isRequired": True}}})
        elif is_placeholder(a) or "{" in a:
            value, variables = variable(out, "argument", True)
            out.append({"type": "positional", "value": value, "valueHint": "argument",
                        "variables": variables})
        else:
            out.append({"type": "positional", "value": a, "valueHint": "argument"})
    return out


def set_value(out, arg, value):
    if SECRET.search(arg["name"]) or "{" in value:
        arg["value"], arg["variables"] = variable(out, arg["name"], True)
    elif is_placeholder(value):
        arg["value"], arg["variables"] = variable(out, arg["name"], False)
    elif PATHLIKE.search(value) and not re.match(r"^[a-z]+://", value):
        arg["value"] = "/tmp"
    else:
        arg["value"] = value


def environment(env):
    out = []
    for name, value in sorted(env.items()):
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) or name in ENV_OF_THE_MACHINE:
            continue
        if SECRET.search(name) or PLACEHOLDER_VALUE.match(value.strip()) or not value.strip():
            out.append({"name": name, "isRequired": True, "isSecret": True})
        elif PATHLIKE.search(value):
            out.append({"name": name, "isRequired": True, "default": "/tmp"})
        else:
            out.append({"name": name, "isRequired": True, "default": value})
    return out


def node_ok(engines):
    node = (engines or {}).get("node", "") if isinstance(engines, dict) else ""
    m = re.search(r">=?\s*v?(\d+)", node or "")
    return not m or int(m.group(1)) <= 20


def python_ok(spec):
    m = re.search(r">=\s*3\.(\d+)", spec or "")
    return not m or int(m.group(1)) <= 11


def npm_entry(cand, cache_dir):
    downloads, package, version, summary = cand
    doc = fetch_json("https://registry.npmjs.org/" + urllib.parse.quote(package, safe="@"),
                     cache_dir)
    if "_error" in doc or version not in doc.get("versions", {}):
        return None, "not in the registry at its version"
    v = doc["versions"][version]
    if v.get("deprecated"):
        return None, "deprecated"
    description = v.get("description") or summary or ""
    if NOT_A_SERVER.search(package.lower()) or NOT_A_SERVER_TEXT.search(description):
        return None, "a library, client or proxy by its name or description"
    if PLATFORM_BUILD.search(package):
        return None, "one platform's build of another package"
    bins = v.get("bin") or {}
    if isinstance(bins, str):
        bins = {package.split("/")[-1]: bins}
    if not bins or (len(bins) > 1 and package.split("/")[-1] not in bins):
        return None, "no single bin for npx"
    if not node_ok(v.get("engines")):
        return None, "needs a newer Node than 20"
    readme = doc.get("readme") or fetch_readme(v.get("dist", {}).get("tarball", ""), cache_dir)
    text = (description + " " + readme[:4000]).lower()
    if "mcp" not in text and "model context protocol" not in text:
        return None, "not an MCP server by its description"
    if not re.search(r"\bstdio\b|claude_desktop|mcpservers|\"command\"\s*:\s*\"npx\"", readme, re.I):
        return None, "its README shows no stdio launch"
    cfg = config_block(readme, package, "npx") or ([], {})
    if any(re.match(r"^(--)?(sse|http|streamable-http)$", a) for a in cfg[0]):
        return None, "its README launches it over HTTP"
    pkg = {"registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
           "identifier": package, "version": version, "transport": {"type": "stdio"},
           "runtimeHint": "npx"}
    name, official = server_name(v.get("mcpName"), package, repo_url(v.get("repository")))
    return entry(name, official, description, version, v.get("repository"), pkg, cfg,
                 {"npmDownloadsPerMonth": downloads}), None


def pypi_entry(cand, cache_dir):
    rank, package, version, summary = cand
    doc = fetch_json(f"https://pypi.org/pypi/{package}/json", cache_dir)
    if "_error" in doc:
        return None, "not in the registry"
    info = doc["info"]
    if version not in doc.get("releases", {}):
        version = info["version"]
    description = info.get("summary") or summary or ""
    if NOT_A_SERVER.search(package.lower()) or NOT_A_SERVER_TEXT.search(description):
        return None, "a library, client or proxy by its name or description"
    if not python_ok(info.get("requires_python")):
        return None, "needs a newer Python than 3.11"
    readme = info.get("description") or ""
    if not re.search(r"uvx\s+" + re.escape(package) + r"\b|\"uvx\"", readme, re.I):
        return None, "its README does not launch it with uvx"
    cfg = config_block(readme, package, "uvx")
    if cfg is None and not re.search(r"uvx\s+" + re.escape(package) + r"\b", readme, re.I):
        return None, "its README does not launch it with uvx"
    if re.search(r"--from[\s\",]+" + re.escape(package), readme):
        return None, "its README runs an executable of another name (uvx --from)"
    cfg = cfg or ([], {})
    if any(re.match(r"^(--)?(sse|http|streamable-http)$", a) for a in cfg[0]):
        return None, "its README launches it over HTTP"
    pkg = {"registryType": "pypi", "registryBaseUrl": "https://pypi.org",
           "identifier": package, "version": version, "transport": {"type": "stdio"},
           "runtimeHint": "uvx"}
    marker = re.search(r"mcp-name:\s*([A-Za-z0-9.-]+/[A-Za-z0-9._-]+)", readme)
    urls = info.get("project_urls") or {}
    repo = next((repo_url(u) for u in list(urls.values()) + [info.get("home_page") or ""]
                 if repo_url(u)), None)
    name, official = server_name(marker.group(1) if marker else None, package, repo)
    return entry(name, official, description, version, None if not repo else
                 {"url": f"https://github.com/{repo[0]}/{repo[1]}"}, pkg, cfg,
                 {"pypiRank": rank}), None


def entry(name, official, description, version, repository, pkg, cfg, popularity):
    args, env = cfg
    if args:
        pkg["packageArguments"] = arguments(args)
    if env:
        pkg["environmentVariables"] = environment(env)
    server = {"$schema": SCHEMA, "name": name,
              "description": (description[:99] + "…") if len(description) > 100 else description,
              "version": version}
    repo = repo_url(repository)
    if repo:
        server["repository"] = {"url": f"https://github.com/{repo[0]}/{repo[1]}",
                                "source": "github"}
    server["packages"] = [pkg]
    return {"server": server,
            "_meta": {META: {"popularity": popularity, "expect": "handshake",
                             "officialName": official}}}


def main():
    argv = sys.argv[1:]
    packages_dir = argv[0]
    count = int(argv[argv.index("--count") + 1]) if "--count" in argv else 340
    cache_dir = argv[argv.index("--meta-cache") + 1] if "--meta-cache" in argv \
        else os.path.expanduser("~/.cache/mcp-shutdown/census-wide-meta")
    os.makedirs(cache_dir, exist_ok=True)
    skip = bundled_packages() | {norm(p) for p in LEFT_OUT}
    npm = [c for c in npm_candidates(packages_dir) if norm(c[1]) not in skip]
    pypi = [c for c in pypi_candidates(packages_dir) if norm(c[1]) not in skip]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        py = list(pool.map(lambda c: pypi_entry(c, cache_dir), pypi))
        kept_py = [e for e, _ in py if e]
        # npm fills the rest, in order of downloads, looking only as far as it needs.
        kept_npm, checked = [], 0
        while len(kept_npm) + len(kept_py) < count and checked < len(npm):
            batch = npm[checked: checked + 64]
            checked += len(batch)
            for (e, why), c in zip(pool.map(lambda c: npm_entry(c, cache_dir), batch), batch):
                if e and len(kept_npm) + len(kept_py) < count:
                    kept_npm.append(e)
                elif why:
                    print(f"left out {c[1]}@{c[2]}: {why}", file=sys.stderr)
    for (e, why), c in zip(py, pypi):
        if why:
            print(f"left out {c[1]}=={c[2]}: {why}", file=sys.stderr)
    servers, seen = [], set()
    for e in kept_npm + kept_py:
        name = e["server"]["name"]
        if name in seen:  # a monorepo's second package: its own name under the owner
            owner = name.split("/")[0]
            short = re.sub(r"[^a-zA-Z0-9._-]", "-", e["server"]["packages"][0]["identifier"]
                           .split("/")[-1])
            name = f"{owner}/{short}"
            e["server"]["name"] = name
            e["_meta"][META]["officialName"] = False
        if name in seen:
            print(f"left out {name}: a second package under one name", file=sys.stderr)
            continue
        seen.add(name)
        servers.append(e)
    print(f"{len(kept_npm)} npm + {len(kept_py)} PyPI", file=sys.stderr)
    json.dump({"servers": servers, "metadata": {"count": len(servers)}}, sys.stdout,
              indent=2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
