# tests/lib/bpfobj.sh: the BPF objects one process holds, and waiting for them to go.
#
#	bpf_objs_of PID      "prog ID", "map ID", "link ID" lines for every BPF object PID
#	                     holds an fd of (its /proc/PID/fdinfo), sorted
#	bpf_objs_gone FILE   waits (10 s at most) until no object listed in FILE (lines of
#	                     bpf_objs_of) exists any more; fails naming those left
#
# Objects are found by id, never by name: other tracers, other copies of dbtap among
# them, may run on the machine at the same time. The kernel frees a program a grace
# period after its last link is released, so a test waits for it instead of looking
# once right after dbtap exits.

bpf_objs_of() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null |
		sed -n 's/^\(prog\|map\|link\)_id:[[:space:]]*\([0-9]*\)$/\1 \2/p' | sort -u
}

bpf_objs_gone() {
	local i left
	for i in $(seq 1 100); do
		left=$(bpf_objs_left "$1") || return 1
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	echo "BPF objects still there 10 s later:" $left
	return 1
}

# The lines of FILE whose object still exists.
bpf_objs_left() {
	bpftool -j prog show >"$1.progs" && bpftool -j map show >"$1.maps" &&
		bpftool -j link show >"$1.links" || return 1
	python3 - "$1" <<-'PY'
	import json, sys
	f = sys.argv[1]
	have = set()
	for kind, suffix in (("prog", "progs"), ("map", "maps"), ("link", "links")):
	    for o in json.load(open(f + "." + suffix)):
	        have.add((kind, o["id"]))
	for line in open(f):
	    kind, i = line.split()
	    if (kind, int(i)) in have:
	        print(kind + ":" + i, end=" ")
	PY
}
