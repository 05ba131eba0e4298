/* USDT notes (.note.stapsdt) of a binary: provider, name, site, semaphore, arguments. */
#ifndef DBTAP_TARGET_USDT_H
#define DBTAP_TARGET_USDT_H

#include <stdint.h>

struct usdt_note {
	char provider[64];
	char name[64];
	uint64_t pc;        /* ELF virtual address of the site */
	uint64_t base;      /* .stapsdt.base address as recorded in the note */
	uint64_t semaphore; /* ELF virtual address of the semaphore, 0 if none */
	char args[256];     /* e.g. "4@%ebx 8@-16(%rbp)" */
};

struct usdt_list {
	struct usdt_note *notes;
	int n;
};

/* Reads every note of path; 0 (possibly n == 0) or -1 with an error printed. */
int usdt_list_read(const char *path, struct usdt_list *list);
void usdt_list_free(struct usdt_list *list);
/* Number of distinct provider:name pairs and of providers. */
int usdt_list_count_probes(const struct usdt_list *list, int *providers);
/* First note matching provider (NULL: any) and name; NULL when none. */
const struct usdt_note *usdt_list_find(const struct usdt_list *list, const char *provider,
				       const char *name);

#endif
