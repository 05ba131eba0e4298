/* The minimal BTF cut from the build machine's kernel, and that kernel's notes. */
	.section .rodata
	.balign 8
	.global min_core_btf_start
	.global min_core_btf_end
min_core_btf_start:
	.incbin "min_core.btf"
min_core_btf_end:
	.balign 8
	.global build_kernel_notes_start
	.global build_kernel_notes_end
build_kernel_notes_start:
	.incbin "kernel.notes"
build_kernel_notes_end:
	.section .note.GNU-stack,"",@progbits
