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
# standalone. Exit status: 0 when every screenshot was written, 1 when one failed, 2 for usage
# errors or when no Chromium is installed (Debian: apt-get install chromium).
# Environment: CHROMIUM (browser binary), HEIGHT (screenshot height in px, default 4000),
# WIDE and NARROW (the two widths in px, default 1400 and 800).
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
height=${HEIGHT:-4000}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT INT TERM
status=0

shoot() {  # absolute-page width png
    rm -f "$3"
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" --window-size="$2,$height" \
        --screenshot="$3" "file://$1" >"$profile/log" 2>&1 || true
    if [ -s "$3" ]; then
        echo "$3"
    else
        echo "error: Chromium wrote no screenshot for $1 (width $2):" >&2
        tail -n 5 "$profile/log" >&2
        status=1
    fi
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
