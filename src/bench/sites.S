/* dbtap bench: probe sites with exactly known first instructions (x86-64), USDT notes by hand. */

#ifdef __x86_64__

/*
 * Every site is a function the loop driver calls through a pointer. They are written
 * here rather than in C so that no compiler can change the instruction a uprobe lands
 * on: that instruction decides whether the kernel emulates it, optimizes it into a call
 * (a 5-byte nop) or must single-step it (a store).
 */

	.text

/* A USDT site: the classic single nop of <sys/sdt.h>, and its .note.stapsdt entry. */
#define USDT_NOTE(site, provider, name, sema)				\
	.pushsection .note.stapsdt,"?","note";				\
	.balign 4;							\
	.4byte 992f-991f, 994f-993f, 3;					\
991:	.asciz "stapsdt";						\
992:	.balign 4;							\
993:	.8byte site;							\
	.8byte _.stapsdt.base;						\
	.8byte sema;							\
	.asciz provider;						\
	.asciz name;							\
	.asciz "";							\
994:	.balign 4;							\
	.popsection

#define FUNC(n)				\
	.globl n;			\
	.type n, @function;		\
	.balign 16;			\
n:

#define END(n)	.size n, .-n

/* 1-byte nop at entry: the kernel emulates it. */
FUNC(bench_fn_nop)
	nop
	ret
END(bench_fn_nop)

/* push %rbp at entry, the usual frame-pointer prologue: emulated as well. */
FUNC(bench_fn_push)
	push	%rbp
	mov	%rsp, %rbp
	pop	%rbp
	ret
END(bench_fn_push)

/* 5-byte nop at entry: Linux 6.18+ rewrites it into a call to the uprobe trampoline. */
FUNC(bench_fn_nop5)
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00	/* nopl 0x0(%rax,%rax,1): gas would drop the disp8 */
	ret
END(bench_fn_nop5)

/*
 * The first instruction stores the argument into the watched global, as
 * `gcc -O3` compiles the overhead blog's trace_target_func: a uprobe here is
 * single-stepped, and a write watchpoint on bench_watched fires once per call.
 */
FUNC(bench_fn_store)
	mov	%rdi, bench_watched(%rip)
	ret
END(bench_fn_store)

/* A USDT site without a semaphore. */
FUNC(bench_fn_usdt)
990:	nop
	ret
	USDT_NOTE(990b, "dbtap_bench", "site", 0)
END(bench_fn_usdt)

/*
 * A USDT site guarded by its semaphore, as <sys/sdt.h> users write
 * `if (PROVIDER_NAME_ENABLED()) PROVIDER_NAME()`: the site only runs while a tracer
 * has raised the semaphore.
 */
FUNC(bench_fn_usdt_sema)
	cmpw	$0, dbtap_bench_sema_site_semaphore(%rip)
	je	1f
990:	nop
1:	ret
	USDT_NOTE(990b, "dbtap_bench", "sema_site", dbtap_bench_sema_site_semaphore)
END(bench_fn_usdt_sema)

/* The cheapest syscall that always enters the kernel: getpgid(0), inline. */
FUNC(bench_fn_syscall)
	mov	$121, %eax		/* __NR_getpgid */
	xor	%edi, %edi
	syscall
	ret
END(bench_fn_syscall)

/* What the USDT notes' addresses are relative to (prelink adjustment), as in sdt.h. */
	.ifndef _.stapsdt.base
	.pushsection .stapsdt.base,"aG","progbits",.stapsdt.base,comdat
	.weak _.stapsdt.base
	.hidden _.stapsdt.base
_.stapsdt.base:
	.space 1
	.size _.stapsdt.base, 1
	.popsection
	.endif

/* USDT semaphores live in .probes, where tracers expect them. */
	.pushsection .probes,"aw","progbits"
	.balign 2
	.globl dbtap_bench_sema_site_semaphore
	.type dbtap_bench_sema_site_semaphore, @object
dbtap_bench_sema_site_semaphore:
	.2byte 0
	.size dbtap_bench_sema_site_semaphore, 2
	.popsection

/* The watched global: 8 bytes, aligned to its length as a hardware breakpoint needs. */
	.data
	.balign 64
	.globl bench_watched
	.type bench_watched, @object
bench_watched:
	.quad 0
	.size bench_watched, 8
	.balign 64

#endif

	.section .note.GNU-stack,"",@progbits
