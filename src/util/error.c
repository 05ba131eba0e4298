/* Error, hint and warning printers (git's error()/die() idiom, bpftool's HINT lines). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

bool verbose_on;

static void vreport(const char *prefix, const char *fmt, va_list ap, int errnum)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
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
