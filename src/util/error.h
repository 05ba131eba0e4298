/* One error idiom for all of dbtap: lowercase message naming the input, then a hint. */
#ifndef DBTAP_UTIL_ERROR_H
#define DBTAP_UTIL_ERROR_H

#include <stdbool.h>
#include <stdio.h>

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

/*
 * For work done on a second thread while the first may fail too: this thread's
 * messages are held from error_capture_begin() on, and error_capture_end() returns them
 * (malloc'd, NULL when none or when they could not be held and went to stderr), for the
 * caller to print in the order a sequential run would have, or to drop after an
 * earlier failure was said. error_stream() is where this thread's messages go now.
 */
void error_capture_begin(void);
char *error_capture_end(void);
FILE *error_stream(void);

#endif
