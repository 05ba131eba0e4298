/* The minimal BTF cut from the build machine's kernel for dbtap's BPF programs. */
	.section .rodata
	.balign 8
	.global min_core_btf_start
	.global min_core_btf_end
min_core_btf_start:
	.incbin "min_core.btf"
min_core_btf_end:
	.section .note.GNU-stack,"",@progbits
