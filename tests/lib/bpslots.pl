# Hardware breakpoint slots free to this process, counted by opening 8-byte write
# breakpoints until one fails: "COUNT ERRNO". Independent of dbtap (tests compare).
use strict; use POSIX ();
my %nr = (x86_64 => 298, aarch64 => 241);
my $arch = (POSIX::uname())[4];
my $NR = $nr{$arch} or die "unknown arch $arch\n";
my (@fds, $err);
for my $i (0..15) {
	# perf_event_attr, first 72 bytes: PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_W, len 8,
	# exclude_kernel | exclude_hv
	my $attr = pack("LLQQQQQLLQQ", 5, 72, 0, 1, 0, 0, (1 << 5) | (1 << 6), 0, 2,
			0x10000000 + 64 * $i, 8);
	my $fd = syscall($NR, $attr, 0, -1, -1, 0);
	if ($fd < 0) { $err = $! + 0; last }
	push @fds, $fd;
}
POSIX::close($_) for @fds;
printf "%d %d\n", scalar @fds, $err // 0;
