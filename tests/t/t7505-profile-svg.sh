#!/bin/bash
test_description='dbtap profile -o FILE.svg: valid XML, widths from the counts, hover titles and search sums in a real browser'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/trace.sh
. "$TEST_LIB"/profile.sh

[ -x "$WORKLOADS/profloop" ] || test_bail "$WORKLOADS/profloop is not built: run make"

# The layout the SVG must have, computed here from the folded stacks of the same run:
# a root "all", children in byte order of their names, width = count / total x 1180.
cat >check_svg.py <<'PY'
import sys, xml.etree.ElementTree as ET
svg_path, folded_path, reverse = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
stacks = []
for line in open(folded_path, encoding="utf-8"):
    frames, _, n = line.rstrip("\n").rpartition(" ")
    f = frames.split(";")
    stacks.append((f[::-1] if reverse else f, int(n)))
total = sum(n for _, n in stacks)
tree = {"all": [0, {}]}
def add(node, path, n):
    node[0] += n
    if path:
        kid = node[1].setdefault(path[0], [0, {}])
        add(kid, path[1:], n)
root = [0, {}]
for path, n in stacks:
    add(root, path, n)
want = {}
def lay(name, node, depth, off):
    want[(depth, off)] = (name, node[0])
    for k in sorted(node[1], key=lambda s: s.encode()):
        lay(k, node[1][k], depth + 1, off)
        off += node[1][k][0]
lay("all", root, 0, 0)
ns = {"s": "http://www.w3.org/2000/svg"}
doc = ET.parse(svg_path).getroot()
W = float(doc.get("data-w"))
assert int(doc.get("data-total")) == total, (doc.get("data-total"), total)
scale = W / total
seen = set()
for g in doc.iter("{http://www.w3.org/2000/svg}g"):
    if g.get("class") != "f":
        continue
    d, o, n = int(g.get("data-d")), int(g.get("data-o")), int(g.get("data-n"))
    name, count = want[(d, o)]
    assert (name, count) == (g.get("data-name"), n), ((d, o), name, count, g.get("data-name"), n)
    rect = g.find("s:rect", ns)
    assert abs(float(rect.get("width")) - n * scale) < 0.01, (name, rect.get("width"), n * scale)
    assert abs(float(rect.get("x")) - (10 + o * scale)) < 0.01, (name, rect.get("x"))
    title = g.find("s:title", ns).text
    assert title.startswith("%s (%d samples, " % (name, n)), title
    seen.add((d, o))
missing = [k for k, (name, c) in want.items() if c * scale >= 0.1 and k not in seen]
assert not missing, missing[:5]
print("frames", len(seen), "total", total)
PY

test_expect_success 'SVG and folded of one run: valid XML, every frame where the counts put it' '
	profloop_start pl1.out &&
	dbtap profile -p $PL_PID -d 2 -F 499 -o p1.svg --folded >p1.folded 2>p1.err &&
	dbtap profile -p $PL_PID -d 2 -F 499 -o p1r.svg --reverse --folded >p1r.folded 2>>p1.err &&
	profloop_stop &&
	python3 check_svg.py p1.svg p1.folded 0 &&
	python3 check_svg.py p1r.svg p1r.folded 1 &&
	test_grep "leaf first" p1r.svg &&
	# self-contained: nothing to fetch
	! grep -E "(src|href)=|@import|url\(" p1.svg
'

chromium_dom() {
	rm -rf "$TRASH/chromium-profile" &&
	timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run \
		--user-data-dir="$TRASH/chromium-profile" --dump-dom "file://$TRASH/$1" 2>chromium.err
}

test_expect_success 'in headless Chromium: a frame'"'"'s title through the DOM, the search sum' '
	command -v chromium >/dev/null || { echo "chromium missing: run make deps"; false; } &&
	chromium_dom "p1.svg#search=f_b" >dom1.html &&
	# the f_a frame holds every stack through main;loop;f_a (kernel frames above
	# it included); the search for f_b matches every stack with an f_b frame
	fa=$(awk "\$1 ~ /;main;loop;f_a(;|\$)/ { s += \$NF } END { print s }" p1.folded) &&
	fb=$(awk "\$1 ~ /;f_b(;|\$)/ { s += \$NF } END { print s }" p1.folded) &&
	test -n "$fa" && test -n "$fb" &&
	test_grep "<title>f_a ($fa samples, " dom1.html &&
	test_grep "id=\"matched\"[^>]*data-sum=\"$fb\"" dom1.html &&
	test_grep "matched $fb samples" dom1.html
'

test_expect_success 'search sums a recursive function once per sample, not once per frame' '
	command -v chromium >/dev/null || { echo "chromium missing: run make deps"; false; } &&
	profloop_start pl2.out -r 20 &&
	dbtap profile -p $PL_PID -d 1 -F 499 --user -o p2.svg --folded >p2.folded 2>p2.err &&
	profloop_stop &&
	deep=$(awk "/;deep;/ { s += \$NF } END { print s }" p2.folded) &&
	test "$deep" -gt 0 &&
	chromium_dom "p2.svg#search=%5Edeep%24" >dom2.html &&
	test_grep "id=\"matched\"[^>]*data-sum=\"$deep\"" dom2.html
'

test_done
