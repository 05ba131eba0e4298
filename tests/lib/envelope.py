# tests/lib/envelope.py: checks dbtap's NDJSON against docs/json.md, the contract.
#
#	python3 envelope.py DOCS_JSON_MD FILE [KIND...]
#
# FILE is one command's -j output. Every line must carry the envelope of docs/json.md;
# the report kinds allowed are the ones its "Report kinds" table lists, so the page and
# the check cannot drift apart. KIND...: the kinds this command's lines must show (in
# any order; "summary" also last when given). With intervals and a summary, the
# intervals' interval_s must add up to the summary's duration_s (the partial last one
# included). Exits 1 naming the line and the rule.
import json, re, sys

doc, path, want = sys.argv[1], sys.argv[2], sys.argv[3:]
kinds = set()
in_kinds = False
for line in open(doc):
    if line.startswith("## "):
        in_kinds = line.strip() == "## Report kinds"
    m = re.match(r'\| `"([a-z_-]+)"` \|', line)
    if in_kinds and m:
        kinds.add(m.group(1))
assert {"interval", "summary"} <= kinds, kinds

BREAKDOWNS = {"processes": ("pid", "type", "user", "database"), "types": ("type",),
              "databases": ("database",), "users": ("user",), "statements": ("query",)}
ENDS = {"duration", "interrupted", "target exited"}
# a time without its unit, the old spellings, and a second unit for latencies
BAD_KEY = re.compile(r'^(time|duration|interval|summary|mean|p50|p90|p99|hist_unit)$|_ms$|(^|_)(mean|p\d\d)$')


def fail(n, why, obj):
    sys.exit("%s line %d: %s: %s" % (path, n, why, json.dumps(obj)[:300]))


def walk(n, v, where):
    if isinstance(v, dict):
        for k, x in v.items():
            if BAD_KEY.search(k):
                fail(n, "key %r at %s has no unit or an old name (docs/json.md: Units)" % (k, where), v)
            if k in BREAKDOWNS and isinstance(x, list):
                for e in x:
                    miss = [f for f in BREAKDOWNS[k] if not isinstance(e, dict) or f not in e]
                    if miss:
                        fail(n, "element of %r at %s lacks %s (docs/json.md: Breakdowns)" % (k, where, miss), e)
            walk(n, x, where + "." + k)
    elif isinstance(v, list):
        for x in v:
            walk(n, x, where + "[]")


lines = [l for l in open(path) if l.strip()]
if not lines:
    sys.exit("%s: no output" % path)
seen = []
for n, text in enumerate(lines, 1):
    try:
        obj = json.loads(text)
    except ValueError as e:
        sys.exit("%s line %d: not JSON (%s): %s" % (path, n, e, text[:200]))
    if not isinstance(obj, dict):
        fail(n, "not an object", obj)
    keys = list(obj)
    if keys[:2] != ["report", "time_s"]:
        fail(n, "does not begin with report, time_s", obj)
    kind, t = obj["report"], obj["time_s"]
    if kind not in kinds:
        fail(n, "report %r is not a kind docs/json.md lists (%s)" % (kind, sorted(kinds)), obj)
    if not isinstance(t, (int, float)) or isinstance(t, bool) or t < 0:
        fail(n, "time_s is not seconds", obj)
    if abs(t * 1e6 - round(t * 1e6)) > 1e-3:
        fail(n, "time_s finer than a microsecond", obj)
    if kind == "interval":
        if keys[2:3] != ["interval_s"] or not obj["interval_s"] >= 0:
            fail(n, "an interval's third key is not interval_s", obj)
    if kind == "summary":
        if keys[2:4] != ["duration_s", "end"] or not obj["duration_s"] >= 0:
            fail(n, "a summary does not go on with duration_s, end", obj)
        if obj["end"] not in ENDS:
            fail(n, "end %r is not one of %s" % (obj["end"], sorted(ENDS)), obj)
    if kind != "interval" and "interval_s" in obj:
        fail(n, "interval_s outside an interval", obj)
    walk(n, obj, "")
    seen.append(kind)
for k in want:
    if k not in seen:
        sys.exit("%s: no %r line (kinds seen: %s)" % (path, k, sorted(set(seen))))
if "summary" in want:
    if seen[-1] != "summary" or seen.count("summary") != 1:
        sys.exit("%s: the summary is not the one last line (%s)" % (path, seen))
    last = json.loads(lines[-1])["time_s"]
    if any(json.loads(l)["time_s"] > last + 1e-6 for l in lines):
        sys.exit("%s: a line's time_s is after the summary's" % path)
if "interval" in seen and "summary" in seen:
    # the last, partial interval is printed too: the intervals cover the whole run
    objs = [json.loads(l) for l in lines]
    spans = [o["interval_s"] for o in objs if o["report"] == "interval"]
    dur = objs[-1]["duration_s"] if objs[-1]["report"] == "summary" else None
    if dur is not None and abs(sum(spans) - dur) > 1e-6 * (len(spans) + 1):
        sys.exit("%s: the intervals cover %.6f s, the summary %.6f s (docs/json.md: the "
                 "intervals of a run add up to its summary)" % (path, sum(spans), dur))
print("%s: %d lines, kinds %s: as docs/json.md says" % (path, len(lines), sorted(set(seen))))
