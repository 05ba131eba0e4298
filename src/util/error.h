/* One error idiom for all of dbtap: lowercase message naming the input, then a hint. */
#ifndef DBTAP_UTIL_ERROR_H
#define DBTAP_UTIL_ERROR_H

#include <stdbool.h>

/* Exit statuses shared by every command. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

extern bool verbose_on;

/* "error: MSG" on stderr; returns -1 so callers can `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same with ": strerror(errno)" appended. */
int error_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "hint: MSG": what the user can do about the error just printed. */
void hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only with -v. */
void verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Bad command line: prints the error and returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
