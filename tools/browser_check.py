"""Open every page of the built site in headless Chromium, offline, and check what a
reader gets.

usage: python tools/browser_check.py [--site _build/html] [--out _build/screenshots]
[--chromium /usr/bin/chromium] [--max-overflow-share 0.02]

The script serves the site on 127.0.0.1 (a server it starts and stops itself) and aborts
every request to any other host, so a page that would load a script, style, font or
image from elsewhere fails here. On every page it checks:

- math: every formula typeset by MathJax, no MathJax error, no raw TeX (`\\(`, `\\[`,
  `$$`) left in the text;
- no console error and no failed request; every image loaded; every code block
  highlighted;
- every internal link points to a file of the site, and every #anchor to an id on its
  page;
- solution dropdowns start closed and open on a click; chapter pages have the launch
  (Binder) buttons;
- the `<pre>` blocks that scroll sideways at 1280 px (solutions open): it fails when
  they are more than 2 % of all blocks (--max-overflow-share) and names each one (page,
  section, code or output, its longest line); every page's count and every such block
  are written to <out>/overflow.json.

A full-page screenshot of each page goes to <out>/<page>.png (solutions closed, as a
reader first sees it), and the intro's notation table to <out>/intro-notation.png.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1280, 900
# At most this share of the <pre> blocks may scroll sideways at WIDTH px.
MAX_OVERFLOW_SHARE = 0.02
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
]

# Runs in the page once MathJax has finished: what the reader sees of math, images and
# code.
INSPECT = """
async () => {
  const result = {};
  const maths = [...document.querySelectorAll('.math')];
  result.maths = maths.length;
  if (maths.length) {
    if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
      result.mathjax = 'MathJax did not load';
    } else {
      await MathJax.startup.promise;
      result.mathjax = 'ok';
    }
  }
  const untypeset = maths.filter(m => !m.querySelector('mjx-container'));
  result.untypeset = untypeset.slice(0, 5).map(m => m.textContent.slice(0, 80));
  result.untypesetCount = untypeset.length;
  result.mathErrors = document.querySelectorAll('mjx-merror, [data-mjx-error]').length;
  const raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      for (let e = node.parentElement; e; e = e.parentElement) {
        const skip = ['PRE', 'CODE', 'SCRIPT', 'STYLE', 'TEXTAREA', 'MJX-CONTAINER',
                      'KBD'];
        if (skip.includes(e.tagName)) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    }
  });
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    if (/\\\\\\(|\\\\\\[|\\$\\$/.test(text)) raw.push(text.trim().slice(0, 80));
  }
  result.rawTex = raw.slice(0, 5);
  result.rawTexCount = raw.length;
  const images = [...document.images];
  result.images = images.length;
  result.brokenImages = images.filter(i => !(i.complete && i.naturalWidth > 0))
    .map(i => i.getAttribute('src'));
  const plain = document.querySelectorAll('div.highlight-none, div.highlight-default');
  result.unhighlighted = [...plain].map(d => d.textContent.trim().slice(0, 60));
  result.links = [...document.querySelectorAll('a[href]')].map(a => a.href);
  result.ids = [...document.querySelectorAll('[id]')].map(e => e.id)
    .concat([...document.querySelectorAll('a[name]')].map(a => a.name));
  result.launch = [...document.querySelectorAll('.dropdown-launch-buttons a')]
    .map(a => a.href);
  result.solutions = document.querySelectorAll('div.solution').length;
  return result;
}
"""

# Seen by the reader: it takes up height and is not hidden (a closed dropdown's body has
# height 0, visibility hidden).
VISIBLE = "e => e.offsetHeight > 0 && getComputedStyle(e).visibility !== 'hidden'"

# Every visible <pre> block, and for each one that scrolls sideways: where it is (the
# section's id), what it is (a cell's code, its output, or a block of the text), how
# many pixels it lacks and its longest line.
OVERFLOW = """
() => {
  const pres = [...document.querySelectorAll('article pre, main pre')]
    .filter(p => !!(p.offsetWidth || p.offsetHeight || p.getClientRects().length));
  const wide = pres.filter(p => p.scrollWidth > p.clientWidth);
  const describe = p => {
    const lines = p.textContent.split('\\n');
    const longest = lines.reduce((a, b) => a.length >= b.length ? a : b, '');
    const section = p.closest('section[id]');
    const kind = p.closest('.cell_input') ? 'code'
      : p.closest('.cell_output') ? 'output' : 'text';
    return {section: section ? section.id : '', kind: kind,
            solution: !!p.closest('div.solution'),
            missing_px: p.scrollWidth - p.clientWidth,
            longest_chars: longest.length, longest: longest.slice(0, 100)};
  };
  return {blocks: pres.length, overflowing: wide.length, wide: wide.map(describe)};
}
"""


def overflow_report(pages: dict[str, dict], limit: float) -> tuple[dict, list[str]]:
    """The overflow over the whole site, and the problems when its share is too high.

    ``pages`` maps a page to what OVERFLOW measured on it. The report has the totals and
    the pages; the problems are empty when at most ``limit`` of the blocks scroll
    sideways, and otherwise say so and name every block that does.
    """
    if not 0 <= limit <= 1:
        raise ValueError(f"the overflow limit is a share from 0 to 1, got {limit!r}")
    blocks = sum(m["blocks"] for m in pages.values())
    wide = sum(m["overflowing"] for m in pages.values())
    share = wide / blocks if blocks else 0.0
    report = {
        "width": WIDTH,
        "limit": limit,
        "total": {"blocks": blocks, "overflowing": wide, "share": round(share, 3)},
        "pages": pages,
    }
    if share <= limit:
        return report, []
    problems = [
        f"{wide} of {blocks} <pre> blocks ({share:.1%}) scroll sideways at {WIDTH} px, "
        f"more than the {limit:.0%} allowed; the code or output that prints each of "
        "them must fit (the package's line length is in pyproject.toml):"
    ]
    for name, measured in pages.items():
        problems += [f"{name}: {describe_wide(block)}" for block in measured["wide"]]
    return report, problems


def describe_wide(block: dict) -> str:
    """One block that scrolls sideways, as a line of the report."""
    where = f"#{block['section']}" if block["section"] else ""
    kind = block["kind"] + (" in a solution" if block["solution"] else "")
    return (
        f"{where} {kind} lacks {block['missing_px']} px, longest line "
        f"{block['longest_chars']} characters: {block['longest'][:60]!r}"
    ).strip()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def serve(site: Path):
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def site_pages(site: Path) -> list[str]:
    skip = {"_static", "_sources", "_images", "_sphinx_design_static", ".doctrees"}
    return sorted(
        str(p.relative_to(site))
        for p in site.rglob("*.html")
        if not skip & set(p.relative_to(site).parts)
    )


def shot_name(page: str) -> str:
    return page.removesuffix(".html").replace("/", "__") + ".png"


def check_solutions(page, problems: list[str], name: str) -> int:
    """Every solution dropdown starts closed and opens on a click on its title. Returns
    how many."""
    solutions = page.locator("div.solution")
    for index in range(solutions.count()):
        solution = solutions.nth(index)
        label = solution.get_attribute("id") or f"solution {index + 1}"
        if "dropdown" not in (solution.get_attribute("class") or "").split():
            problems.append(
                f"{name}: {label} is not a dropdown (written without `:class: "
                "dropdown`)"
            )
            continue
        body = solution.locator("section").first
        if body.count() == 0:
            problems.append(f"{name}: {label} has no body")
            continue
        if body.evaluate(VISIBLE):
            problems.append(f"{name}: {label} is open before any click")
            continue
        solution.locator(".admonition-title").first.click()
        try:
            body_of = (
                f"document.getElementById({json.dumps(label)}).querySelector('section')"
            )
            page.wait_for_function(f"() => ({VISIBLE})({body_of})", timeout=3000)
        except Exception:  # noqa: BLE001 - playwright's timeout: report it as a failed check
            problems.append(f"{name}: {label} did not open on a click")
    return solutions.count()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "screenshots")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument(
        "--max-overflow-share",
        type=float,
        default=MAX_OVERFLOW_SHARE,
        help="fail when more than this share of the <pre> blocks scroll sideways",
    )
    args = parser.parse_args(argv)
    site = args.site.resolve()
    if not (site / "intro.html").is_file():
        raise SystemExit(f"no built site in {site}: run `make build` first")
    if not Path(args.chromium).is_file():
        raise SystemExit(
            f"no Chromium at {args.chromium}: install it with `apt-get install -y "
            "chromium` (as root)"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    server = serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems: list[str] = []
    links: list[tuple[str, str]] = []
    ids: dict[str, set[str]] = {}
    overflow: dict[str, dict] = {}
    totals = {"pages": 0, "maths": 0, "images": 0, "solutions": 0, "links": 0}
    pages = site_pages(site)
    seconds_page: dict[str, float] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS
            )
            context = browser.new_context(
                viewport={"width": WIDTH, "height": HEIGHT}, service_workers="block"
            )
            blocked: list[tuple[str, str, str]] = []
            current = {"page": ""}

            def route(request_route):
                request = request_route.request
                try:
                    if urllib.parse.urlsplit(request.url).hostname == "127.0.0.1":
                        request_route.continue_()
                    else:
                        blocked.append(
                            (current["page"], request.resource_type, request.url)
                        )
                        request_route.abort("blockedbyclient")
                except Exception:  # noqa: BLE001 - a request the page dropped while it navigated away
                    pass

            context.route("**/*", route)
            page = context.new_page()
            messages: list[str] = []
            page.on(
                "console",
                lambda m: (
                    messages.append(f"console {m.type}: {m.text}")
                    if m.type == "error"
                    else None
                ),
            )
            page.on("pageerror", lambda e: messages.append(f"page error: {e}"))
            page.on(
                "requestfailed",
                lambda r: (
                    messages.append(f"request failed: {r.url} ({r.failure})")
                    if urllib.parse.urlsplit(r.url).hostname == "127.0.0.1"
                    else None
                ),
            )
            page.on(
                "response",
                lambda r: (
                    messages.append(f"HTTP {r.status}: {r.url}")
                    if r.status >= 400
                    else None
                ),
            )
            for name in pages:
                current["page"] = name
                messages.clear()
                before = len(blocked)
                page_started = time.monotonic()
                refresh = re.search(
                    r'http-equiv="refresh" content="\d+; url=([^"]+)"',
                    (site / name).read_text(),
                    re.I,
                )
                page.goto(base + name, wait_until="load")
                # index.html: a redirect to the first page, which is checked on its own
                if refresh:
                    page.wait_for_url(
                        urllib.parse.urljoin(base + name, refresh.group(1)),
                        timeout=5000,
                    )
                    totals["pages"] += 1
                    problems += [f"{name}: {m}" for m in messages]
                    continue
                found = page.evaluate(INSPECT)
                page.wait_for_timeout(100)
                totals["pages"] += 1
                totals["maths"] += found["maths"]
                totals["images"] += found["images"]
                shown = page.url.removeprefix(base).split("#")[0]
                ids[shown] = set(found["ids"])
                links += [(name, link) for link in found["links"]]
                if found["maths"] and found.get("mathjax") != "ok":
                    problems.append(f"{name}: {found.get('mathjax')}")
                if found["untypesetCount"]:
                    problems.append(
                        f"{name}: {found['untypesetCount']} formulas not typeset, "
                        f"e.g. {found['untypeset']}"
                    )
                if found["mathErrors"]:
                    problems.append(f"{name}: {found['mathErrors']} MathJax errors")
                if found["rawTexCount"]:
                    problems.append(
                        f"{name}: raw TeX in the text {found['rawTexCount']} "
                        f"times, e.g. {found['rawTex']}"
                    )
                if found["brokenImages"]:
                    problems.append(
                        f"{name}: images not loaded: {found['brokenImages']}"
                    )
                if found["unhighlighted"]:
                    problems.append(
                        f"{name}: code blocks without highlighting: "
                        f"{found['unhighlighted']}"
                    )
                if name.startswith("chapters/") and not any(
                    "mybinder.org" in link for link in found["launch"]
                ):
                    problems.append(f"{name}: no Binder launch button")
                page.screenshot(path=str(args.out / shot_name(name)), full_page=True)
                if name == "intro.html":
                    page.locator("#notation table").first.screenshot(
                        path=str(args.out / "intro-notation.png")
                    )
                totals["solutions"] += check_solutions(page, problems, name)
                measured = page.evaluate(OVERFLOW)
                measured["share"] = (
                    round(measured["overflowing"] / measured["blocks"], 3)
                    if measured["blocks"]
                    else 0.0
                )
                overflow[name] = measured
                problems += [f"{name}: {m}" for m in messages]
                seconds_page[name] = time.monotonic() - page_started
                print(
                    f"  checked {name} in {seconds_page[name]:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
                problems += [
                    f"{name}: loads {kind} from another host: {url}"
                    for _, kind, url in blocked[before:]
                ]
            browser.close()
    finally:
        server.shutdown()
        server.server_close()

    for source, link in links:
        parts = urllib.parse.urlsplit(link)
        if parts.scheme not in ("http", "https") or parts.hostname != "127.0.0.1":
            continue
        totals["links"] += 1
        path = urllib.parse.unquote(parts.path).removeprefix("/")
        target = site / path
        if path == "" or target.is_dir():
            path = (path.rstrip("/") + "/index.html").removeprefix("/")
            target = site / path
        if not target.is_file():
            problems.append(f"{source}: link to a missing file: {link}")
            continue
        fragment = urllib.parse.unquote(parts.fragment)
        if fragment and path.endswith(".html") and fragment not in ids.get(path, set()):
            problems.append(f"{source}: link to a missing anchor: {link}")

    report, too_wide = overflow_report(overflow, args.max_overflow_share)
    total = report["total"]
    (args.out / "overflow.json").write_text(json.dumps(report, indent=1) + "\n")
    seconds = time.monotonic() - started
    print(
        f"browser: {totals['pages']} pages, {totals['maths']} formulas, "
        f"{totals['images']} images, "
        f"{totals['solutions']} solution dropdowns, {totals['links']} internal "
        f"links, in {seconds:.0f} s"
    )
    print(
        f"<pre> blocks scrolling sideways at {WIDTH} px: {total['overflowing']} of "
        f"{total['blocks']} ({total['share']:.1%}; at most "
        f"{args.max_overflow_share:.0%} allowed)"
    )
    for name, m in overflow.items():
        if m["blocks"]:
            print(
                f"  {name:45} {m['overflowing']:3} of {m['blocks']:3}  "
                f"({m['share']:4.0%})"
                f"   page checked in {seconds_page.get(name, 0):.1f} s"
            )
    print(f"screenshots and overflow.json in {args.out}")
    if not too_wide:
        for name, measured in overflow.items():
            for block in measured["wide"]:
                line = f"{name}: {describe_wide(block)}"
                print(f"  scrolls sideways (within the limit): {line}")
    problems += too_wide
    for problem in problems:
        print("FAIL", problem)
    if problems:
        print(f"{len(problems)} problems")
        return 1
    print(
        "every page: math typeset, no console error, nothing from another host, "
        "images, links and anchors, solutions closed and opening, launch buttons, "
        "code that fits"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
