/* XML escaping for the SVG writers (flame graph, timeline). */
#include "report/xml.h"

void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
		}
	}
}
