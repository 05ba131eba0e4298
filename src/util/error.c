/* Error, hint and warning printers (git's error()/die() idiom, bpftool's HINT lines). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

bool verbose_on;

/* This thread's messages, held for later (error_capture_begin); NULL: stderr. */
static __thread FILE *capture;
static __thread char *capture_buf;
static __thread size_t capture_len;

FILE *error_stream(void)
{
	return capture ? capture : stderr;
}

void error_capture_begin(void)
{
	capture = open_memstream(&capture_buf, &capture_len); /* NULL: stderr after all */
}

char *error_capture_end(void)
{
	char *s;

	if (!capture)
		return NULL;
	fclose(capture);
	capture = NULL;
	s = capture_buf;
	capture_buf = NULL;
	return s;
}

static void vreport(const char *prefix, const char *fmt, va_list ap, int errnum)
{
	FILE *f = error_stream();

	fputs(prefix, f);
	vfprintf(f, fmt, ap);
	if (errnum)
		fprintf(f, ": %s", strerror(errnum));
	fputc('\n', f);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap, 0);
	va_end(ap);
	return -1;
}

int error_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap, e);
	va_end(ap);
	errno = e;
	return -1;
}

void hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("hint: ", fmt, ap, 0);
	va_end(ap);
}

void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap, 0);
	va_end(ap);
}

void verbose(const char *fmt, ...)
{
	va_list ap;
	if (!verbose_on)
		return;
	va_start(ap, fmt);
	vreport("dbtap: ", fmt, ap, 0);
	va_end(ap);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap, 0);
	va_end(ap);
	return EXIT_USAGE;
}
