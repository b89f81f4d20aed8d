#!/bin/sh
# Render dpaudit HTML reports to PNG screenshots with headless Chromium, for a reader's-eye check.
#
# Usage: scripts/check_html.sh [-o SCREENSHOT_DIR] [--desktop-only] [--types] PATH [PATH ...]
#
# PATH is an HTML page or a report directory (its index.html, paper pages and every claim page
# under it). With --types, a report directory gives one page of each type only: the index, the
# first paper page, and the first claim that is violated, that holds and that is inconclusive
# (from its index.json); their screenshots are named index, paper, violated, holds, inconclusive.
# Each page gives SCREENSHOT_DIR/<name>.png (desktop, 1400 px wide) and, unless --desktop-only,
# SCREENSHOT_DIR/<name>.narrow.png (800 px wide); <name> is the page's path below the
# report directory with "/" replaced by "__". SCREENSHOT_DIR defaults to out/screenshots.
# Pages are opened as file:// URLs with networking disabled, which also shows that the reports are
# standalone. Every screenshot is full height, with the page's <details> opened (lemma
# counterexamples, "how it was checked", the table of all audited points; not the parameter box of
# each evidence row), so what a reader can unfold is looked at too (issue 35: 4000 px of
# pages that run to 10000 px left lemmas, findings and the reproduce command unseen). A page
# taller than MAX_HEIGHT is shot in parts, <name>.partN.png. The script prints the widest element
# overflowing a page's width ("overflow: ...") and exits 1 when one does.
# Exit status: 0 when every screenshot was written and no page overflows its width, 1 otherwise,
# 2 for usage errors or when no Chromium is installed (Debian: apt-get install chromium).
# Environment: CHROMIUM (browser binary), WIDE and NARROW (the two widths in px, default 1400
# and 800), MAX_HEIGHT (tallest single screenshot in px, default 12000).
set -eu

usage() {
    echo "usage: $0 [-o SCREENSHOT_DIR] [--desktop-only] PATH [PATH ...]" >&2
    exit 2
}

out=out/screenshots
narrow=yes
types=no
while [ "$#" -gt 0 ]; do
    case $1 in
        -o) [ "$#" -ge 2 ] || usage; out=$2; shift 2 ;;
        --desktop-only) narrow=no; shift ;;
        --types) types=yes; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ "$#" -ge 1 ] || usage

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
    for candidate in chromium chromium-browser google-chrome; do
        if command -v "$candidate" >/dev/null 2>&1; then
            browser=$candidate
            break
        fi
    done
fi
if [ -z "$browser" ]; then
    echo "error: no Chromium found; install it (Debian: apt-get install chromium) or set CHROMIUM" >&2
    exit 2
fi

mkdir -p "$out"
max_height=${MAX_HEIGHT:-12000}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT INT TERM
status=0

chrome() {  # width height extra-args... : headless Chromium on this machine's profile
    w=$1; h=$2; shift 2
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" --window-size="$w,$h" \
        --virtual-time-budget=10000 "$@" 2>>"$profile/log"
}

prepare() {  # absolute-page copy [offset]: a copy that opens its <details> and reports its size
    python3 - "$1" "$2" "${3:-0}" <<'PY'
import os, sys
page, copy, offset = sys.argv[1], sys.argv[2], int(sys.argv[3])
html = open(page, encoding="utf-8").read()
base = '<base href="file://%s/">' % os.path.dirname(page)
script = """<script>
for (const d of document.querySelectorAll('details')) {
  if (!d.matches('details.params')) d.open = true;
}
window.addEventListener('load', () => {
  const root = document.documentElement, width = root.clientWidth;
  let worst = null, widest = width;
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > widest + 1 && !el.closest('.table-wrap, pre')) {
      widest = r.right; worst = el;
    }
  }
  document.body.dataset.height = Math.ceil(root.scrollHeight);
  document.body.dataset.overflow = worst ? (worst.tagName.toLowerCase() + (worst.className ?
    '.' + String(worst.className).split(' ').join('.') : '') + ' reaches ' + Math.ceil(widest) +
    ' px of ' + width) : '';
  for (const w of document.querySelectorAll('.table-wrap, pre')) {
    if (w.scrollWidth > w.clientWidth + 1 && !document.body.dataset.overflow)
      document.body.dataset.overflow = w.tagName.toLowerCase() + '.' + w.className +
        ' scrolls: ' + w.scrollWidth + ' px of content in ' + w.clientWidth + ' px';
  }
});
</script>"""
shift = "<style>body{position:relative;top:-%dpx}</style>" % offset if offset else ""
html = html.replace("<head>", "<head>" + base + shift, 1).replace("</body>", script + "</body>", 1)
open(copy, "w", encoding="utf-8").write(html)
PY
}

measure() {  # copy width: prints "height<TAB>overflow" of the opened page at that width
    chrome "$2" 1000 --dump-dom "file://$1" > "$profile/dom" || true
    python3 - "$profile/dom" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
h = re.search(r'<body[^>]*data-height="(\d+)"', dom)
o = re.search(r'<body[^>]*data-overflow="([^"]*)"', dom)
print(h.group(1) if h else "0", html.unescape(o.group(1)) if o else "", sep="\t")
PY
}

shoot() {  # absolute-page width png
    rm -f "$3" "${3%.png}".part*.png
    copy="$profile/page.html"
    prepare "$1" "$copy"
    measured=$(measure "$copy" "$2")
    height=${measured%%"$(printf '\t')"*}
    overflow=${measured#*"$(printf '\t')"}
    if [ "${height:-0}" -le 0 ]; then
        echo "error: could not measure $1 at width $2:" >&2
        tail -n 5 "$profile/log" >&2
        status=1
        return
    fi
    if [ -n "$overflow" ]; then
        echo "overflow: $1 at $2 px: $overflow" >&2
        status=1
    fi
    if [ "$height" -le "$max_height" ]; then
        chrome "$2" "$height" --screenshot="$3" "file://$copy" >/dev/null || true
        shots=$3
    else
        part=1; offset=0; shots=""
        while [ "$offset" -lt "$height" ]; do
            png="${3%.png}.part$part.png"
            prepare "$1" "$copy" "$offset"
            chrome "$2" "$max_height" --screenshot="$png" "file://$copy" >/dev/null || true
            shots="$shots $png"
            part=$((part + 1)); offset=$((offset + max_height))
        done
    fi
    for png in $shots; do
        if [ -s "$png" ]; then
            echo "$png (${height} px tall)"
        else
            echo "error: Chromium wrote no screenshot for $1 (width $2):" >&2
            tail -n 5 "$profile/log" >&2
            status=1
        fi
    done
}

page() {  # page name
    abs=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    shoot "$abs" "${WIDE:-1400}" "$out/$2.png"
    if [ "$narrow" = yes ]; then
        shoot "$abs" "${NARROW:-800}" "$out/$2.narrow.png"
    fi
}

typed_pages() {  # report-dir: "name relative-path" lines, one page of each type
    python3 - "$1" <<'PY'
import json, os, sys
root = sys.argv[1]
index = json.load(open(os.path.join(root, "index.json"), encoding="utf-8"))
print("index index.html")
claims = index.get("claims", [])
pages = sorted({c.get("paper_page") for c in claims if c.get("paper_page")})
if pages:
    print("paper", pages[0])
for verdict in ("violated", "holds", "inconclusive"):
    hit = next((c for c in claims if c["verdict"] == verdict), None)
    if hit is not None:
        print(verdict, hit["report"])
    else:
        print(f"note: no {verdict} claim in {root}", file=sys.stderr)
PY
}

for path in "$@"; do
    if [ -d "$path" ] && [ "$types" = yes ]; then
        if [ ! -f "$path/index.json" ]; then
            echo "error: $path has no index.json (needed by --types)" >&2
            status=1
            continue
        fi
        typed_pages "$path" > "$profile/pages" || status=1
        while read -r name rel; do
            page "$path/$rel" "$name"
        done < "$profile/pages"
    elif [ -d "$path" ]; then
        found=no
        for html in $(cd "$path" && find . -name '*.html' | sed 's|^\./||' | sort); do
            found=yes
            page "$path/$html" "$(echo "${html%.html}" | sed 's|/|__|g')"
        done
        if [ "$found" = no ]; then
            echo "error: no HTML pages under $path" >&2
            status=1
        fi
    elif [ -f "$path" ]; then
        page "$path" "$(basename "$path" .html)"
    else
        echo "error: $path does not exist" >&2
        status=1
    fi
done
exit $status
