/* The running kernel's build-id, from its ELF notes (/sys/kernel/notes). */
#ifndef DBTAP_TARGET_KNOTES_H
#define DBTAP_TARGET_KNOTES_H

#include <stddef.h>

#define KNOTES_PATH "/sys/kernel/notes"
#define KNOTES_MAX 4096 /* a kernel's notes are a few hundred bytes */

/*
 * The GNU build-id among len bytes of ELF notes (Elf_Nhdr, name and descriptor each
 * padded to 4 bytes): sets *id to its bytes inside notes and returns their count, or
 * returns -1 when there is none or the notes are malformed (every length is checked
 * against len before it is used).
 */
int knotes_build_id(const unsigned char *notes, size_t len, const unsigned char **id);

/* Reads at most max bytes of the notes file at path into buf: the count, or -1. */
int knotes_read(const char *path, unsigned char *buf, size_t max);

#endif
