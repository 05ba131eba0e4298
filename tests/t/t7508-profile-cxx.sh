#!/bin/bash
test_description='dbtap profile: C++ frames demangled as c++filt prints them, --no-demangle as the binary has them'
. "$(dirname "$0")"/../lib/test-lib.sh
. "$TEST_LIB"/profile.sh

[ -x "$WORKLOADS/cxxloop" ] || test_bail "$WORKLOADS/cxxloop is not built: run make"
command -v c++filt >/dev/null || test_bail "c++filt is missing (binutils: make deps)"

CX_PID=
test_atexit 'workload_kill CX_PID'

# The hot path main -> dbtap_wl::inner::work -> Acc<long>::spin or twice<unsigned int>:
# its functions' names as the binary has them (nm), and as c++filt -p prints them (the
# form without parameters, which perf prints).
test_expect_success 'setup' '
	nm "$WORKLOADS/cxxloop" | awk "\$3 ~ /^_Z/ { print \$3 }" >mangled &&
	test "$(wc -l <mangled)" -ge 3 &&
	while read m; do printf "%s %s\n" "$m" "$(c++filt -p "$m")" || return 1; done <mangled >names &&
	cat names &&
	workload_start CX_PID cx.out cxxloop &&
	dbtap profile -p $CX_PID -F 499 -d 2 --user --folded >d.folded 2>d.err &&
	dbtap profile -p $CX_PID -F 499 -d 1 --user --no-demangle --folded >m.folded 2>>d.err &&
	workload_kill CX_PID
'

# A sample can also land in work'"'"'s own loop between its calls, or in main'"'"'s jump back to
# it: those stacks stop there. Below main only the C library'"'"'s start code may show.
check_stacks() {
	folded_py "
names = dict(l.split(\" \", 1) for l in open(\"names\").read().splitlines())
def name(mangled):
    return names[mangled] if \"$1\" == \"demangled\" else mangled
work = name(\"_ZN8dbtap_wl5inner4workEi\")
spin = name(\"_ZN8dbtap_wl5inner3AccIlE4spinEl\")
twice = name(\"_ZN8dbtap_wl5twiceIjEET_S1_\")
by = {}
for frames, c in stacks:
    i = frames.index(\"main\")
    assert all(f.startswith(\"__libc_start\") for f in frames[1:i]), frames
    assert frames[i + 1:] in ([], [work], [work, spin], [work, twice]), frames
    by[frames[-1]] = by.get(frames[-1], 0) + c
print(by)
assert by.get(spin, 0) >= 10 and by.get(twice, 0) >= 10, by
"
}

test_expect_success 'a namespaced function, a class template member, a function template: c++filt -p names' '
	check_stacks demangled <d.folded &&
	! grep -q ";_Z" d.folded
'

test_expect_success '--no-demangle: the names as the binary has them' '
	check_stacks mangled <m.folded
'

test_done
